#!/usr/bin/env python3
"""Generates fixtures/corpus/symbol_external_init/: symbols that interstate
edges assign but that are read before any assignment (DaCe's
`used_before_assignment`): DaCe makes each such symbol a parameter of the
program (and of init), and the caller passes its start value. Here `i` and
`j` are loop variables of explicit state-machine loops that have no
initialization edge (they start where the caller says), and `k`, assigned
by the outer SDFG, is mapped into nested SDFGs whose own loops reassign
their copy without initializing it. A compiler that declares an assigned
symbol as a fresh local (or starts it at 0), or drops it from the
signature, gets every output wrong.

States, in order (N = 10, i = 4, j = 3 passed by the caller):

* `loop_i` (guard `guard_i`, body `body_i`): `while i < N: A[i] = i;
  i = i + 1` with no edge assigning `i` before the guard: A[4:10] = 4..9,
  A[0:4] keeps its input;
* `after_i`: E[0] = i, the value the loop left (N): the assigned symbol is
  read after the loop, outside it;
* `loop_t` (guard `guard_t`, body `body_t`): a loop over t = 0..3 (this
  one initialized) whose back edge also does `j = j + 2`; the body writes
  B[t] = j (the symbol in tasklet code) and D[j] = t (in a memlet): B[0:4] =
  3, 5, 7, 9 and D[3], D[5], D[7], D[9] = 0..3;
* `after_t`: E[1] = j (11 after the loop);
* `down` (entered by an edge assigning `k = N - 2`): a nested SDFG
  (`countdown`, symbol_mapping {'N': 'N', 'k': 'k'}) whose own loop
  `while k >= 0: X[k] = 2 * k + 1; k = k - 2` has no initialization edge
  inside the nested SDFG: k starts with the outer value 8 (X is C: C[8],
  C[6], ..., C[0] = 17, 13, 9, 5, 1, the odd elements keep their input);
* `up`: a second nested SDFG (`countup`) with a renamed symbol and an
  expression in the mapping ({'M': 'N', 'p': 'k - 5'}): its loop
  `while p < M: Y[p] = p; p = p + 3` starts at 3 (Y is G: G[3], G[6],
  G[9] = 3, 6, 9); k itself is not changed by the nested loops;
* `after_nested`: E[2] = k (still N - 2 = 8 in the outer SDFG).

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-symbol-init-fixtures.py
    build/venv-gt4py/bin/python scripts/make-symbol-init-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks
its outputs against the numpy references written here. The loops are
explicit state machines (guard states and interstate edges) in both DaCe
versions.
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import scratch_dir, write_array_case

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'symbol_external_init'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
F64 = dace.float64
I64 = dace.int64


def write_tasklet(state, label, code, out, ins=None):
    """A tasklet `label` in `state` with no inputs (or `ins`: connector ->
    memlet) and one output `o` written to the memlet `out`."""
    ins = ins or {}
    t = state.add_tasklet(label, {c: None for c in ins}, {'o': None}, code)
    for conn, memlet in ins.items():
        state.add_edge(state.add_read(memlet.data), None, t, conn, memlet)
    state.add_edge(t, 'o', state.add_write(out.data), None, out)
    return t


def loop(sdfg, prev, name, cond, back, entry=None):
    """An explicit state-machine loop after `prev`: `guard_<name>`, a body
    `body_<name>` (returned) and `after_<name>`. The edge into the guard
    assigns `entry` (None: nothing), the back edge `back`; the guard goes to
    the body while `cond` holds."""
    guard = sdfg.add_state(f'guard_{name}')
    body = sdfg.add_state(f'body_{name}')
    after = sdfg.add_state(f'after_{name}')
    sdfg.add_edge(prev, guard, dace.InterstateEdge(assignments=entry))
    sdfg.add_edge(guard, body, dace.InterstateEdge(cond))
    sdfg.add_edge(body, guard, dace.InterstateEdge(assignments=back))
    sdfg.add_edge(guard, after, dace.InterstateEdge(f'not ({cond})'))
    return body, after


def countdown():
    """`countdown`: while k >= 0: X[k] = 2 * k + 1; k = k - 2 (k not
    initialized in this SDFG: it comes from the symbol mapping)."""
    inner = dace.SDFG('countdown')
    inner.add_symbol('k', I64)
    inner.add_array('X', [dace.symbol('N', I64)], F64)
    start = inner.add_state('nstart', is_start_state=True)
    body, _ = loop(inner, start, 'k', 'k >= 0', {'k': 'k - 2'})
    write_tasklet(body, 'odd', 'o = 2 * k + 1', Memlet('X[k]'))
    return inner


def countup():
    """`countup`: while p < M: Y[p] = p; p = p + 3 (p from the mapping)."""
    inner = dace.SDFG('countup')
    inner.add_symbol('p', I64)
    inner.add_array('Y', [dace.symbol('M', I64)], F64)
    start = inner.add_state('ustart', is_start_state=True)
    body, _ = loop(inner, start, 'p', 'p < M', {'p': 'p + 3'})
    write_tasklet(body, 'step', 'o = p', Memlet('Y[p]'))
    return inner


def add_nested(state, sdfg, inner, conn, outer, mapping):
    """`inner` in `state`, its array `conn` bound to all of `outer` (in and out)."""
    if VARIANT == 'program.sdfg':
        ns = state.add_nested_sdfg(inner, sdfg, {conn: None}, {conn: None}, symbol_mapping=mapping)
    else:  # DaCe 2 has no `parent` argument
        ns = state.add_nested_sdfg(inner, {conn: None}, {conn: None}, symbol_mapping=mapping)
    state.add_edge(state.add_read(outer), None, ns, conn, Memlet(f'{outer}[0:N]'))
    state.add_edge(ns, conn, state.add_write(outer), None, Memlet(f'{outer}[0:N]'))
    return ns


def build():
    N = dace.symbol('N', I64)
    sdfg = dace.SDFG(NAME)
    for s in ('i', 'j', 'k', 't'):
        sdfg.add_symbol(s, I64)
    for a in ('A', 'C', 'D', 'G'):
        sdfg.add_array(a, [N], F64)
    sdfg.add_array('B', [4], I64)
    sdfg.add_array('E', [3], I64)

    start = sdfg.add_state('start', is_start_state=True)
    # (a) i is read by the guard before any edge assigns it.
    body, after = loop(sdfg, start, 'i', 'i < N', {'i': 'i + 1'})
    write_tasklet(body, 'ramp', 'o = i', Memlet('A[i]'))
    write_tasklet(after, 'last_i', 'o = i', Memlet('E[0]'))

    # (b) t is initialized, j is not: the back edge does j = j + 2.
    body, after = loop(sdfg, after, 't', 't < 4', {'t': 't + 1', 'j': 'j + 2'}, entry={'t': '0'})
    write_tasklet(body, 'bj', 'o = j', Memlet('B[t]'))
    write_tasklet(body, 'dj', 'o = t', Memlet('D[j]'))
    write_tasklet(after, 'last_j', 'o = j', Memlet('E[1]'))

    # (c) k assigned in the outer SDFG, reassigned by the nested loops.
    down = sdfg.add_state('down')
    sdfg.add_edge(after, down, dace.InterstateEdge(assignments={'k': 'N - 2'}))
    add_nested(down, sdfg, countdown(), 'X', 'C', {'N': 'N', 'k': 'k'})
    up = sdfg.add_state_after(down, 'up')
    add_nested(up, sdfg, countup(), 'Y', 'G', {'M': 'N', 'p': 'k - 5'})
    last = sdfg.add_state_after(up, 'after_nested')
    write_tasklet(last, 'last_k', 'o = k', Memlet('E[2]'))
    return sdfg


def main():
    scratch_dir('make-symbol-init-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n, i0, j0 = 10, 4, 3
    rng = np.random.default_rng(20261206)
    starts = {'A': rng.random(n), 'B': rng.integers(-100, 100, 4), 'C': rng.random(n),
              'D': rng.random(n), 'E': rng.integers(-100, 100, 3), 'G': rng.random(n)}
    refs = {name: v.copy() for name, v in starts.items()}
    refs['A'][i0:n] = np.arange(i0, n)
    j = j0
    for t in range(4):
        refs['B'][t] = j
        refs['D'][j] = t
        j += 2
    k = n - 2
    for p in range(k, -1, -2):
        refs['C'][p] = 2 * p + 1
    for p in range(k - 5, n, 3):
        refs['G'][p] = p
    refs['E'][:] = [n, j, k]
    # DaCe's own code on the same inputs gives the references.
    got = {name: v.copy() for name, v in starts.items()}
    sdfg.compile()(**got, N=n, i=i0, j=j0)
    for name, ref in refs.items():
        assert np.array_equal(got[name], ref), (name, got[name], ref)
    write_array_case(OUT, VARIANT, sdfg, starts, refs, name=NAME, description=__doc__.strip().split('\n\n')[0],
                     symbols={'N': n, 'i': i0, 'j': j0}, features=['loop', 'nested_sdfg', 'interstate_symbol', 'abi'],
                     script='scripts/make-symbol-init-fixtures.py', tol=0)

if __name__ == '__main__':
    sys.exit(main())
