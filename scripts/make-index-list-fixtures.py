#!/usr/bin/env python3
"""Generates fixtures/corpus/index_list/: advanced indexing with literal index
lists (`A[[1, 2, 4]] = 2.0`, `B[(0, 3), ] = -1.5`, `B[[1, 3]] += C`,
`D[[0, 3, 4]] += r`) on 2-D and 3-D float64 arrays. DaCe's Python frontend
turns each list into an int64 transient `__ind0_<array>` (`__ind0_B_0` for
the second list on B) that has the same name as an SDFG constant
(`constants_prop`) holding the list; a map reads the index from it
(`__ind_0 = __ind0_A[__i0]`) and indirectly reads or writes the indexed rows.
DaCe's generator never allocates such a transient: the name is the constant
(`constexpr int64_t __ind0_A[3] = {1, 2, 4};` at file scope). A compiler that
also allocates it as a transient shadows the constant with uninitialized
memory (in the external mode: with workspace bytes, poisoned by the tests).

After simplification the four statements are one state:

* `A[[1, 2, 4]] = 2.0`: rows 1, 2 and 4 of a 6 x 5 array set (a map over
  the 3 indices x 5 columns, index list `__ind0_A`);
* `B[(0, 3), ] = -1.5`: the tuple spelling of a list, on a 4 x 3 x 5 array
  (`__ind0_B`): planes 0 and 3 set;
* `B[[1, 3]] += C`: a read-modify-write through a second list on the same
  array (`__ind0_B_0`), C (3 x 5) broadcast over the indexed planes; plane 3
  was set by the statement before (the two maps are ordered through B's
  access node);
* `D[[0, 3, 4]] += r`: rows of a 5 x 4 array plus the row vector r
  (`__ind0_D`).

DaCe 2.x writes the outer memlets of the indirect writes with the size of
the index list (`A[0:3, 0:5]`, not the whole array): the rows written are
only known through the constant.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-index-list-fixtures.py
    build/venv-gt4py/bin/python scripts/make-index-list-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks
its outputs against the numpy references written here.
"""
import os
import sys

import numpy as np
import dace

from fixturelib import scratch_dir, write_array_case

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'index_list'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
F64 = dace.float64


@dace.program
def index_list(A: F64[6, 5], B: F64[4, 3, 5], C: F64[3, 5], D: F64[5, 4], r: F64[4]):
    A[[1, 2, 4]] = 2.0
    B[(0, 3), ] = -1.5
    B[[1, 3]] += C
    D[[0, 3, 4]] += r


def reference(A, B, C, D, r):
    """numpy's results (on copies)."""
    A, B, D = A.copy(), B.copy(), D.copy()
    A[[1, 2, 4]] = 2.0
    B[(0, 3), ] = -1.5
    B[[1, 3]] += C
    D[[0, 3, 4]] += r
    return {'A': A, 'B': B, 'D': D}


def build():
    sdfg = index_list.to_sdfg(simplify=True)
    # Each index list is a transient that is also a constant of the same name.
    lists = {'__ind0_A': [1, 2, 4], '__ind0_B': [0, 3], '__ind0_B_0': [1, 3], '__ind0_D': [0, 3, 4]}
    for name, values in lists.items():
        assert name in sdfg.constants_prop, (name, list(sdfg.constants_prop))
        assert sdfg.arrays[name].transient, name
        assert list(sdfg.constants[name]) == values, (name, sdfg.constants[name])
    return sdfg


def main():
    scratch_dir('make-index-list-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    rng = np.random.default_rng(20261205)
    ins = {'A': rng.random((6, 5)), 'B': rng.random((4, 3, 5)), 'C': rng.random((3, 5)),
           'D': rng.random((5, 4)), 'r': rng.random(4)}
    refs = reference(**ins)
    # DaCe's own code on the same inputs gives the references.
    got = {name: v.copy() for name, v in ins.items()}
    sdfg.compile()(**got)
    for name, ref in refs.items():
        assert np.allclose(got[name], ref, rtol=1e-12, atol=1e-12), (name, got[name], ref)
    write_array_case(OUT, VARIANT, sdfg, ins, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={}, features=['constant_array', 'constant_transient', 'transients', 'map'],
                     script='scripts/make-index-list-fixtures.py')
    saved = dace.SDFG.from_file(os.path.join(OUT, VARIANT))
    shared = sorted(set(saved.constants_prop) & {n for n, d in saved.arrays.items() if d.transient})
    assert len(shared) == 4, shared
    print('constants that are transients:', shared)

if __name__ == '__main__':
    sys.exit(main())
