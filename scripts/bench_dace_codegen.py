"""Helper of scripts/bench-vs-dace.sh: times DaCe's generate_code() per SDFG file,
in-process, a fresh dace.SDFG.from_file() load before each timed call (the load is
not timed; generate_code is), median of --reps. Prints "FILE<TAB>median_seconds".
"""
import statistics, sys, time, argparse, os
ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("files", nargs="+")
a = ap.parse_args()
import dace
for f in a.files:
    ts = []
    try:
        for _ in range(a.reps):
            sdfg = dace.SDFG.from_file(f)
            t0 = time.perf_counter()
            sdfg.generate_code()
            ts.append(time.perf_counter() - t0)
        print(f"{f}\t{statistics.median(ts):.6f}", flush=True)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"{f}\tERROR {type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}", flush=True)
