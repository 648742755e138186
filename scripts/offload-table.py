#!/usr/bin/env python3
"""Offloading compared with DaCe's (not CI).

For every fixture with a CPU `program.sdfg` and DaCe's own offloading of it,
`program.gpu.sdfg` (the CPU program after `apply_gpu_transformations()`),
prints: kernels, host<->device copy sites and their bytes (each site once,
at the case's symbol values), for `sdfgc --target cuda --offload` and for
DaCe. With --markdown FILE, writes the table with totals.

    python3 scripts/offload-table.py [--sdfgc target/debug/sdfgc] [--markdown docs/offloading.md]

DaCe's side is read with DaCe 1.0.2 (/work/venv-dace1/bin/python, or
$DACE_PYTHON): kernels are `GPU_Device` maps at the top of a state (plus
DaCe's own one-thread wraps, which are maps too); copies are edges between a
host and a device access node.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DACE_SIDE = r'''
import json, sys
import dace
from dace import dtypes, nodes
out = {}
for path, syms in json.loads(sys.stdin.read()):
    try:
        sdfg = dace.SDFG.from_file(path)
    except Exception as e:
        out[path] = {"error": str(e)[:200]}
        continue
    kernels = 0
    copies = 0
    nbytes = 0
    ok = True
    gpu = (dtypes.StorageType.GPU_Global, dtypes.StorageType.GPU_Shared)
    for node, parent in sdfg.all_nodes_recursive():
        if isinstance(node, nodes.MapEntry) and node.map.schedule in (dtypes.ScheduleType.GPU_Device, dtypes.ScheduleType.GPU_Default):
            if parent.entry_node(node) is None:
                kernels += 1
    for state in (st for sd in sdfg.all_sdfgs_recursive() for st in sd.all_states()):
        s = state.sdfg
        for e in state.edges():
            if not (isinstance(e.src, nodes.AccessNode) and isinstance(e.dst, nodes.AccessNode)):
                continue
            if e.data.data is None:
                continue
            a, b = e.src.desc(s), e.dst.desc(s)
            if (a.storage in gpu) == (b.storage in gpu):
                continue
            copies += 1
            try:
                vol = e.data.volume
                v = dace.symbolic.evaluate(vol, {k: v for k, v in syms.items()})
                nbytes += int(v) * s.arrays[e.data.data].dtype.bytes
            except Exception:
                ok = False
    out[path] = {"kernels": kernels, "copies": copies, "bytes": nbytes if ok else None}
print(json.dumps(out))
'''


def sdfgc_side(sdfgc, path, syms):
    with tempfile.TemporaryDirectory() as tmp:
        stats = Path(tmp) / "s.json"
        cmd = [sdfgc, str(path), "--target", "cuda", "--offload", "--stats-json", str(stats)]
        for k, v in syms.items():
            if isinstance(v, int):
                cmd += ["--symbol", f"{k}={v}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:200]}
        o = json.loads(stats.read_text())[0]["offload"]
    sites = o["copy_in"] + o["copy_out"] + o["host_reads"]
    vals = [c["bytes_value"] for c in sites]
    return {
        "kernels": o["kernels"],
        "copies": len(sites),
        "bytes": None if any(v is None for v in vals) else sum(vals),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdfgc", default=str(ROOT / "target/debug/sdfgc"))
    ap.add_argument("--markdown")
    ap.add_argument("--dace-python", default=os.environ.get("DACE_PYTHON", "/work/venv-dace1/bin/python"))
    args = ap.parse_args()
    cases = []
    for fam in ("corpus", "npbench"):
        for d in sorted((ROOT / "fixtures" / fam).iterdir()):
            if (d / "program.sdfg").exists() and (d / "program.gpu.sdfg").exists():
                syms = json.loads((d / "case.json").read_text()).get("symbols", {})
                cases.append((f"{fam}/{d.name}", d, syms))
    dace_in = json.dumps([[str(d / "program.gpu.sdfg"), s] for _, d, s in cases])
    r = subprocess.run([args.dace_python, "-c", DACE_SIDE], input=dace_in, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("DaCe side failed:\n" + r.stderr[-2000:])
    dace = json.loads(r.stdout.strip().splitlines()[-1])
    rows = []
    tot = {"sk": 0, "sc": 0, "sb": 0, "dk": 0, "dc": 0, "db": 0}
    for name, d, syms in cases:
        s = sdfgc_side(args.sdfgc, d / "program.sdfg", syms)
        g = dace[str(d / "program.gpu.sdfg")]
        rows.append((name, s, g))
        if "error" in s or "error" in g:
            continue
        tot["sk"] += s["kernels"]
        tot["sc"] += s["copies"]
        tot["sb"] += s["bytes"] or 0
        tot["dk"] += g["kernels"]
        tot["dc"] += g["copies"]
        tot["db"] += g["bytes"] or 0

    def cell(x, k):
        if "error" in x:
            return "error"
        v = x[k]
        return "?" if v is None else str(v)

    lines = [
        "| fixture | kernels sdfgc | kernels DaCe | copies sdfgc | copies DaCe | bytes sdfgc | bytes DaCe |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s, g in rows:
        lines.append(
            f"| {name} | {cell(s, 'kernels')} | {cell(g, 'kernels')} | {cell(s, 'copies')} | "
            f"{cell(g, 'copies')} | {cell(s, 'bytes')} | {cell(g, 'bytes')} |"
        )
    lines.append(
        f"| **total ({len(rows)})** | {tot['sk']} | {tot['dk']} | {tot['sc']} | {tot['dc']} | {tot['sb']} | {tot['db']} |"
    )
    more = sum(1 for _, s, g in rows if "error" not in s and "error" not in g
               and s["bytes"] is not None and g["bytes"] is not None and s["bytes"] > g["bytes"])
    less = sum(1 for _, s, g in rows if "error" not in s and "error" not in g
               and s["bytes"] is not None and g["bytes"] is not None and s["bytes"] < g["bytes"])
    summary = f"sdfgc copies more bytes than DaCe in {more} fixtures, fewer in {less}."
    text = "\n".join(lines)
    print(text)
    print(summary)
    if args.markdown:
        doc = Path(args.markdown)
        head = doc.read_text().split("<!-- table -->")[0] if doc.exists() else ""
        doc.write_text(head + "<!-- table -->\n\n" + text + "\n\n" + summary + "\n")


if __name__ == "__main__":
    main()
