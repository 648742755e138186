#!/usr/bin/env python3
"""Scaling of sdfgc on synthetic SDFGs, one process per run.

    python3 scripts/bench-scaling.py [--sdfgc PATH] [--synth PATH] [--reps 5]
        [--sizes 10,100,1000,10000,100000] [--shapes chain,states,tree,loops,machine]

Generates each synthetic SDFG with the `synth` example (benches/synth.rs),
runs `sdfgc FILE --target cpp -o DIR` REPS times, and reports per size the
median wall time, the median CPU time (user+sys, less sensitive to a loaded
machine), the peak RSS (ru_maxrss from wait4, i.e. VmHWM of the child), and
per node; then the log-log least-squares exponent of time and memory over the
sizes >= 1000 (smaller sizes are dominated by process start).

Build first:  cargo build --release --bin sdfgc --example synth
(binaries default to $CARGO_TARGET_DIR or ./target, release profile).
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{err}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def fit(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def main():
    tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(__file__), "..", "target"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sdfgc", default=os.path.join(tdir, "release", "sdfgc"))
    ap.add_argument("--synth", default=os.path.join(tdir, "release", "examples", "synth"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="10,100,1000,10000,100000")
    ap.add_argument("--shapes", default="chain,states,tree,loops,machine")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            pts = []
            for n in sizes:
                f = os.path.join(tmp, f"{shape}-{n}.sdfg")
                nodes = int(subprocess.check_output([a.synth, shape, str(n), f]).decode().strip())
                size = os.path.getsize(f)
                out = os.path.join(tmp, "out")
                runs = [run([a.sdfgc, f, "--target", "cpp", "-o", out]) for _ in range(a.reps)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                pts.append((nodes, wall, cpu, rss))
                rows.append((shape, nodes, size, wall, cpu, rss))
                print(f"{shape:7s} {nodes:7d} nodes {size/1e6:8.2f} MB json  wall {wall*1e3:9.1f} ms"
                      f"  cpu {cpu*1e3:9.1f} ms  {cpu/nodes*1e6:7.2f} us/node"
                      f"  rss {rss/2**20:8.1f} MiB  {rss/nodes/1024:6.2f} KiB/node", flush=True)
                os.remove(f)
            big = [p for p in pts if p[0] >= 1000]
            if len(big) >= 2:
                xs = [p[0] for p in big]
                print(f"{shape:7s} exponent (n>=1000): wall {fit(xs, [p[1] for p in big]):.3f}"
                      f"  cpu {fit(xs, [p[2] for p in big]):.3f}  rss {fit(xs, [p[3] for p in big]):.3f}",
                      flush=True)
    if a.markdown:
        print("\n| shape | nodes | JSON MB | wall ms | CPU ms | CPU us/node | peak RSS MiB | KiB/node |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for shape, nodes, size, wall, cpu, rss in rows:
            print(f"| {shape} | {nodes} | {size/1e6:.2f} | {wall*1e3:.1f} | {cpu*1e3:.1f} | "
                  f"{cpu/nodes*1e6:.2f} | {rss/2**20:.1f} | {rss/nodes/1024:.2f} |")


if __name__ == "__main__":
    main()
