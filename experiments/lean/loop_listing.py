"""Print the non-FFMA, non-LDS instructions of the longest loop of a SASS listing (cuobjdump -sass
text, e.g. one that loop_count.py wrote to /tmp), with the FFMA and LDS counts at the end.
Usage: python loop_listing.py /tmp/sass_BK8STAGES3.txt
"""
import re, sys
d=open(sys.argv[1]).read()
INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)(.*?);")
ins=[(int(g.group(1),16),(g.group(2) or '').strip(),g.group(3),g.group(4).strip()) for l in d.splitlines() if (g:=INS.match(l))]
loops=[]
for a,p,op,rest in ins:
    t=re.search(r"0x([0-9a-f]+)",rest)
    if op=="BRA" and t and int(t.group(1),16)<a: loops.append((a-int(t.group(1),16),int(t.group(1),16),a))
_,s,e=max(loops)
ffma=0; lds=0
for a,p,op,rest in ins:
    if s<=a<=e:
        if op.startswith('FFMA'): ffma+=1; continue
        if op.startswith('LDS'): lds+=1; continue
        print(hex(a),p,op,rest[:80])
print("FFMA",ffma,"LDS",lds)
