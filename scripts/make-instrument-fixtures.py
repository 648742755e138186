"""Writes fixtures/instrument/: SDFGs with DaCe's data instrumentation, for
python/tests/test_data_instrument.py. Run with DaCe 1.0.2:

    build/venv-dace/bin/python scripts/make-instrument-fixtures.py

save.sdfg: every access node `Save`s (the one in the loop only when
`i == 1`, a Python condition), every state saves its symbols. restore.sdfg:
the same program whose access nodes of `A` `Restore` instead.
"""
import os

import dace
from dace.properties import CodeBlock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "instrument")
N = dace.symbol("N")


@dace.program
def dinstr(A: dace.float64[N], B: dace.float64[N]):
    tmp = A + 1
    for i in range(3):
        B[i] = tmp[i] * 2


def program(kind):
    sdfg = dinstr.to_sdfg(simplify=True)
    for node, state in sdfg.all_nodes_recursive():
        if isinstance(node, dace.nodes.AccessNode):
            if kind == "save":
                node.instrument = dace.DataInstrumentationType.Save
                if state.label.startswith("for_"):  # the loop body's nodes
                    node.instrument_condition = CodeBlock("i == 1", language=dace.Language.Python)
            elif node.data == "A":
                node.instrument = dace.DataInstrumentationType.Restore
    if kind == "save":
        for state in sdfg.states():
            state.symbol_instrument = dace.DataInstrumentationType.Save
    return sdfg


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for kind in ("save", "restore"):
        sdfg = program(kind)
        sdfg.save(os.path.join(OUT, f"{kind}.sdfg"))
        print("wrote", os.path.join(OUT, f"{kind}.sdfg"))
