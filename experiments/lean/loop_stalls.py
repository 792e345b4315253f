"""Static stall counts of the longest loop of a SASS listing (cuobjdump -sass text): each
instruction's 4-bit stall field (bits 105-108 of the 128-bit word, bits 41-44 of the listing's
second hex word), summed, and per opcode. Usage: python loop_stalls.py /tmp/sass_BK8STAGES3.txt
"""
import re, sys, collections
d=open(sys.argv[1]).read().splitlines()
INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)(.*?);\s*/\* (0x[0-9a-f]{16}) \*/")
HI = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/")
rows=[]
for i,l in enumerate(d):
    g=INS.match(l)
    if g:
        h=HI.match(d[i+1]); hi=int(h.group(1),16)
        rows.append((int(g.group(1),16), g.group(3), g.group(4), hi))
loops=[]
for a,op,rest,hi in rows:
    t=re.search(r"0x([0-9a-f]+)",rest)
    if op=="BRA" and t and int(t.group(1),16)<a: loops.append((a-int(t.group(1),16),int(t.group(1),16),a))
_,s,e=max(loops)
body=[r for r in rows if s<=r[0]<=e]
stall=collections.Counter(); total=0; byop=collections.defaultdict(collections.Counter)
for a,op,rest,hi in body:
    st=(hi>>41)&0xf; yld=(hi>>45)&1
    byop[op.split('.')[0]][st]+=1
    total+=st
print(sys.argv[1], "instrs", len(body), "sum of stall counts", total, "cycles/instr %.3f"%(total/len(body)))
for op,c in sorted(byop.items(), key=lambda x:-sum(x[1].values()))[:6]: print("  ",op,dict(sorted(c.items())))
