"""Compile bigtile's launch 0 with the knobs given (JSON, one per argument) for sm_90a on this
machine's NVRTC, and print its registers and the instruction mix of its longest loop (the
main loop, every path of it); the SASS goes to /tmp/sass_<knobs>.txt. LEAN and XSTEP need
lean-xstep.patch applied. Usage: python loop_count.py '{"BK": 8, "STAGES": 3}' ...
"""
import sys, json, re, collections
from gemmlab import registry
from gemmlab.cuda import sass
impl = registry.get("bigtile")
INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)(.*)")
for txt in sys.argv[1:]:
    spec = impl.launches[0].with_defines(json.loads(txt))
    m = spec.compile("sm_90a")
    res = m.resources[spec.entry]
    d = sass._dump(m.cubin)
    name = "/tmp/sass_" + (re.sub(r'\W', '', txt) or "base") + ".txt"
    open(name, "w").write(d)
    ins = [(int(g.group(1), 16), g.group(3), g.group(4)) for l in d.splitlines() if (g := INS.match(l))]
    loops = []
    for a, op, rest in ins:
        t = re.search(r"BRA\s+0x([0-9a-f]+)", op + rest)
        if op == "BRA" and t and int(t.group(1), 16) < a:
            loops.append((a - int(t.group(1), 16), int(t.group(1), 16), a))
    loops.sort(reverse=True)
    _, s, e = loops[0]
    body = [op for a, op, rest in ins if s <= a <= e]
    ops = collections.Counter(op.split(".")[0] for op in body)
    print(txt, name, "regs", res.registers, "spills", res.spills, "loop instrs", len(body), "non-FFMA", len(body) - ops["FFMA"])
    print("  ", dict(ops.most_common(20)))
