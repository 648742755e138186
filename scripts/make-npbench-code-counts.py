#!/usr/bin/env python3
"""Counts OpenMP parallel regions and atomic updates in DaCe 1.0.2's own
generated code for every NPBench CPU fixture (program.sdfg and
program.autoopt.sdfg) and writes fixtures/npbench/dace_code_counts.json.

    /work/venv-dace1/bin/python scripts/make-npbench-code-counts.py

tests/parallel_structure.rs checks that sdfgc's code for the same SDFGs has
no more of either (a structural check of OpenMP placement and of the
write-conflict rules, independent of timing).
"""
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARALLEL = re.compile(r"#pragma omp parallel\b")
ATOMIC = re.compile(r"#pragma omp atomic|#pragma omp critical|reduce_atomic\(")


def main():
    import dace

    base = os.path.join(ROOT, "fixtures", "npbench")
    out = {"dace": dace.__version__, "patterns": {"parallel": PARALLEL.pattern, "atomic": ATOMIC.pattern},
           "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        dace.Config.set("default_build_folder", value=tmp)
        for case in sorted(os.listdir(base)):
            for variant in ("program.sdfg", "program.autoopt.sdfg"):
                path = os.path.join(base, case, variant)
                if not os.path.exists(path):
                    continue
                sdfg = dace.SDFG.from_file(path)
                code = "\n".join(o.clean_code for o in sdfg.generate_code()
                                 if o.language == "cpp" and o.title != "SampleMain")
                out["cases"].setdefault(case, {})[variant] = {
                    "parallel": len(PARALLEL.findall(code)),
                    "atomic": len(ATOMIC.findall(code)),
                }
                print(case, variant, out["cases"][case][variant], file=sys.stderr)
    with open(os.path.join(base, "dace_code_counts.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
