#!/usr/bin/env python3
"""Generates fixtures/corpus/tasklet_cpp_semantics/: Python tasklet code
whose meaning is that of the C++ DaCe prints for it, from DaCe's own tests
(`arraywrite_result_test`, `state_transition_test`, `threadlocal_test`):

* `fetch` (a sequential map over k = 0..N-1): `v = o[5] = 1` where `o` is
  all of `output` with a sum write-conflict resolution: `o[5]` is increased
  by 1 and `v` gets the value it held before (DaCe's `reduce` returns it):
  values[k] = output[5] + k, output[5] += N;
* `last = o[2] = x * 2` without write-conflict resolution gives `last` the
  value stored (C++'s assignment expression): output[2] = last = 2 * x;
* a while loop `while i < 128` (guard `guard`, body `body`) whose only
  update is the tasklet's own `i *= 2` on the interstate symbol, which
  changes the program's variable as in DaCe's C++: starting from i = 16
  (an edge assignment), the body runs 3 times: count[0] = 3, count[1] = i =
  128 after the loop;
* `omp_get_thread_num()` and `omp_get_max_threads()` (OpenMP's queries,
  declared by the SDFG's global code `#include <omp.h>`), in a parallel
  map: flags[j] = (thread number >= 0) + (max threads >= 1) = 2;
* `rebind`: `out = a` on whole-array connectors (a << values[0:4], out >>
  y[0:4]) rebinds the name, as in Python and DaCe's C++ (a pointer): y
  keeps its input (DaCe's `create_out_transient_test` writes this).

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-tasklet-cpp-fixtures.py
    build/venv-gt4py/bin/python scripts/make-tasklet-cpp-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks its
outputs against the references written here.
"""
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import check_with_dace, corpus_case, scratch_dir, write_array_case

NAME = 'tasklet_cpp_semantics'
OUT, VARIANT = corpus_case(NAME)
F64, I64 = dace.float64, dace.int64


def build():
    N = dace.symbol('N', I64)
    sdfg = dace.SDFG(NAME)
    sdfg.add_symbol('i', I64)
    sdfg.add_array('output', [10], F64)
    sdfg.add_array('values', [N], F64)
    sdfg.add_array('x', [1], F64)
    sdfg.add_array('count', [2], I64)
    sdfg.add_array('flags', [8], I64)
    sdfg.add_array('y', [4], F64)
    sdfg.set_global_code('#include <omp.h>')

    fetch = sdfg.add_state('fetch', is_start_state=True)
    t = fetch.add_tasklet('fetch_add', {}, {'o': None, 'v': None}, 'v = o[5] = 1')
    me, mx = fetch.add_map('seq', dict(k='0:N'), schedule=dace.ScheduleType.Sequential)
    fetch.add_nedge(me, t, Memlet())
    fetch.add_memlet_path(t, mx, fetch.add_write('output'), src_conn='o',
                          memlet=Memlet('output[0:10]', wcr='lambda a, b: a + b', dynamic=True))
    fetch.add_memlet_path(t, mx, fetch.add_write('values'), src_conn='v', memlet=Memlet('values[k]'))

    store = sdfg.add_state_after(fetch, 'store')
    t = store.add_tasklet('store_twice', {'a': None}, {'o': None, 'last': None}, 'last = o[2] = a * 2')
    store.add_edge(store.add_read('x'), None, t, 'a', Memlet('x[0]'))
    out = store.add_write('output')
    store.add_edge(t, 'o', out, None, Memlet('output[0:10]', dynamic=True))
    store.add_edge(t, 'last', out, None, Memlet('output[3]'))

    init = sdfg.add_state('init')
    sdfg.add_edge(store, init, dace.InterstateEdge(assignments={'i': '16'}))
    t = init.add_tasklet('zero', {}, {'c': None}, 'c = 0')
    init.add_edge(t, 'c', init.add_write('count'), None, Memlet('count[0]'))
    guard = sdfg.add_state('guard')
    body = sdfg.add_state('body')
    after = sdfg.add_state('after')
    sdfg.add_edge(init, guard, dace.InterstateEdge())
    sdfg.add_edge(guard, body, dace.InterstateEdge('i < 128'))
    sdfg.add_edge(guard, after, dace.InterstateEdge('i >= 128'))
    sdfg.add_edge(body, guard, dace.InterstateEdge())
    t = body.add_tasklet('step', {'c_in': None}, {'c_out': None}, 'c_out = c_in + 1\ni *= 2')
    body.add_edge(body.add_read('count'), None, t, 'c_in', Memlet('count[0]'))
    body.add_edge(t, 'c_out', body.add_write('count'), None, Memlet('count[0]'))
    t = after.add_tasklet('final_i', {}, {'c': None}, 'c = i')
    after.add_edge(t, 'c', after.add_write('count'), None, Memlet('count[1]'))

    threads = sdfg.add_state_after(after, 'threads')
    threads.add_mapped_tasklet('query', {'j': '0:8'}, {},
                               'f = (omp_get_thread_num() >= 0) + (omp_get_max_threads() >= 1)',
                               {'f': Memlet('flags[j]')}, external_edges=True)

    rebind = sdfg.add_state_after(threads, 'rebind')
    t = rebind.add_tasklet('rebind', {'a': None}, {'out': None}, 'out = a')
    rebind.add_edge(rebind.add_read('values'), None, t, 'a', Memlet('values[0:4]'))
    rebind.add_edge(t, 'out', rebind.add_write('y'), None, Memlet('y[0:4]'))
    return sdfg


def main():
    scratch_dir('make-tasklet-cpp-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n = 7
    rng = np.random.default_rng(20261206)
    starts = {'output': rng.random(10), 'values': rng.random(n), 'x': rng.random(1),
              'count': rng.integers(-100, 100, 2), 'flags': rng.integers(-100, 100, 8), 'y': rng.random(4)}
    refs = {'output': starts['output'].copy(), 'values': starts['output'][5] + np.arange(n),
            'count': np.array([3, 128], np.int64), 'flags': np.full(8, 2, np.int64), 'y': starts['y'].copy()}
    refs['output'][5] += n
    refs['output'][2] = refs['output'][3] = 2 * starts['x'][0]
    check_with_dace(sdfg, starts, refs, N=n)
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={'N': n}, features=['map', 'parallel_map', 'wcr', 'loop', 'interstate_symbol', 'tasklet_assigns_symbol'],
                     script='scripts/make-tasklet-cpp-fixtures.py', tol=0)


if __name__ == '__main__':
    sys.exit(main())
