#!/usr/bin/env python3
"""Generates fixtures/corpus/stream_consume/: DaCe Stream containers and
consume scopes on the CPU, one state each:

* `select`: a sequential map pushes the elements of A above 0.5 into a
  stream that DaCe makes an array stream view of `sel` (pushes append to it);
* `tree`: the input array `iv` is pushed into a queue (its first element by
  a copy, the others by a map) that a consume scope
  of 3 processing elements drains; each element s > 1 pushes s - 1 and
  s // 2 back, and every element adds 1 to `count` and s to `total` (WCR);
* `twice`: a parallel map pushes 2 * A[i] into a queue; a consume scope of
  2 processing elements sums it into `dsum`;
* `nested` and `drain`: a nested SDFG pushes i * i (i < 3) into a queue of
  the top-level SDFG (its stream argument), which the next state pops into `r3`;
* `local`: a parallel map fills a stream view of its own 4-element array
  (one element: i + 100 for even i, i for odd), pushes what the view appended
  into a queue, which a consume scope of the next state sums into `lsum`.

Every output is independent of the order the threads push and pop in.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-stream-fixtures.py
    build/venv-gt4py/bin/python scripts/make-stream-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks
its outputs against the numpy references written here.
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import merge_variant, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'stream_consume'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
SEQ = dace.ScheduleType.Sequential
PAR = dace.ScheduleType.CPU_Multicore
SUM = 'lambda a, b: a + b'


def dyn(expr, wcr=None):
    return Memlet(expr, wcr=wcr, dynamic=True)


def consume_input(st, stream, entry, tasklet, conn):
    """The stream into a consume entry (`IN_stream`) and its elements to the tasklet (`OUT_stream`)."""
    st.add_edge(stream, None, entry, 'IN_stream', Memlet(f'{stream.data}[0]'))
    st.add_edge(entry, 'OUT_stream', tasklet, conn, Memlet(f'{stream.data}[0]'))


def nested_pusher():
    inner = dace.SDFG('pusher')
    inner.add_stream('sout', dace.int64)
    st = inner.add_state('push')
    me, mx = st.add_map('sq', dict(j='0:3'), schedule=SEQ)
    t = st.add_tasklet('sq', set(), {'o'}, 'o = j * j')
    st.add_nedge(me, t, Memlet())
    st.add_memlet_path(t, mx, st.add_write('sout'), src_conn='o', memlet=dyn('sout[0]'))
    return inner


def build():
    N, K, M = (dace.symbol(s, dace.int64) for s in 'NKM')
    sdfg = dace.SDFG(NAME)
    sdfg.add_symbol('M', dace.int64)
    sdfg.add_array('A', [N], dace.float64)
    sdfg.add_array('iv', [K], dace.int64)
    sdfg.add_array('sel', [N], dace.float64)
    sdfg.add_array('count', [1], dace.int64)
    sdfg.add_array('total', [1], dace.int64)
    sdfg.add_array('dsum', [1], dace.float64)
    sdfg.add_array('r3', [3], dace.int64)
    sdfg.add_array('lsum', [1], dace.int64)
    for s, t in (('V', dace.float64), ('S', dace.int64), ('Q', dace.float64), ('R', dace.int64),
                 ('G', dace.int64)):
        sdfg.add_stream(s, t, transient=True)

    # select: A[i] > 0.5 appended to sel through a stream view.
    s0 = sdfg.add_state('select')
    me, mx = s0.add_map('pick', dict(i='0:N'), schedule=SEQ)
    t = s0.add_tasklet('pick', {'a'}, {'o'}, 'if a > 0.5:\n    o = a')
    s0.add_memlet_path(s0.add_read('A'), me, t, dst_conn='a', memlet=Memlet('A[i]'))
    v = s0.add_access('V')
    s0.add_memlet_path(t, mx, v, src_conn='o', memlet=dyn('V[0]'))
    s0.add_nedge(v, s0.add_write('sel'), Memlet('sel[0:N]'))

    # tree: a consume scope that pushes back into the stream it drains.
    s1 = sdfg.add_state_after(s0, 'tree')
    s_in = s1.add_access('S')
    # A copy into a stream pushes as many elements as the memlet's subset of
    # the stream has: iv[0] here; a map pushes the others.
    s1.add_nedge(s1.add_read('iv'), s_in, Memlet('S[0]', other_subset='0:K'))
    me, mx = s1.add_map('rest', dict(i='1:K'), schedule=SEQ)
    t = s1.add_tasklet('rest', {'v'}, {'o'}, 'o = v')
    s1.add_memlet_path(s1.add_read('iv'), me, t, dst_conn='v', memlet=Memlet('iv[i]'))
    s1.add_memlet_path(t, mx, s_in, src_conn='o', memlet=dyn('S[0]'))
    s_src = s1.add_access('S')
    ce, cx = s1.add_consume('tree', ('p', '3'))
    t = s1.add_tasklet('node', {'s'}, {'back', 'c', 'tot'},
                       'c = 1\ntot = s\nif s > 1:\n    back = s - 1\n    back = s // 2')
    consume_input(s1, s_src, ce, t, 's')
    s1.add_memlet_path(t, cx, s1.add_write('S'), src_conn='back', memlet=dyn('S[0]'))
    s1.add_memlet_path(t, cx, s1.add_write('count'), src_conn='c', memlet=dyn('count[0]', SUM))
    s1.add_memlet_path(t, cx, s1.add_write('total'), src_conn='tot', memlet=dyn('total[0]', SUM))

    # twice: a parallel map pushes, a consume scope sums.
    s2 = sdfg.add_state_after(s1, 'twice')
    me, mx = s2.add_map('dbl', dict(i='0:N'), schedule=PAR)
    t = s2.add_tasklet('dbl', {'a'}, {'o'}, 'o = 2 * a')
    s2.add_memlet_path(s2.add_read('A'), me, t, dst_conn='a', memlet=Memlet('A[i]'))
    s2.add_memlet_path(t, mx, s2.add_write('Q'), src_conn='o', memlet=dyn('Q[0]'))
    ce, cx = s2.add_consume('add', ('p', '2'))
    t = s2.add_tasklet('add', {'q'}, {'o'}, 'o = q')
    consume_input(s2, s2.add_read('Q'), ce, t, 'q')
    s2.add_memlet_path(t, cx, s2.add_write('dsum'), src_conn='o', memlet=dyn('dsum[0]', SUM))

    # nested, drain: a nested SDFG's stream argument; popped in the next state.
    s3 = sdfg.add_state_after(s2, 'nested')
    if VARIANT == 'program.sdfg':
        ns = s3.add_nested_sdfg(nested_pusher(), sdfg, set(), {'sout'})
    else:  # DaCe 2 has no `parent` argument
        ns = s3.add_nested_sdfg(nested_pusher(), set(), {'sout'})
    s3.add_edge(ns, 'sout', s3.add_write('R'), None, dyn('R[0]'))
    s4 = sdfg.add_state_after(s3, 'drain')
    s4.add_nedge(s4.add_read('R'), s4.add_write('r3'), Memlet('R[0]', other_subset='0:3'))

    # local: a view of a map iteration's own array, pushed into a queue.
    s5 = sdfg.add_state_after(s4, 'local')
    sdfg.add_transient('la', [4], dace.int64)
    sdfg.add_stream('ls', dace.int64, transient=True)
    me, mx = s5.add_map('fill', dict(i='0:M'), schedule=PAR)
    # One element per iteration: DaCe 1.0.2 pushes the elements the view
    # appended, DaCe 2 the memlet's one element (the same here).
    t = s5.add_tasklet('fill', set(), {'o'}, 'if i % 2 == 0:\n    o = i + 100\nelse:\n    o = i')
    ls, la = s5.add_access('ls'), s5.add_access('la')
    s5.add_nedge(me, t, Memlet())
    s5.add_edge(t, 'o', ls, None, dyn('ls[0]'))
    s5.add_nedge(ls, la, Memlet('la[0:4]'))
    g = s5.add_access('G')
    s5.add_memlet_path(la, mx, g, memlet=Memlet('G[0]'))
    # (In the same state, DaCe's is_array_stream_view fails on G: an array
    # writes it and code reads it.)
    s6 = sdfg.add_state_after(s5, 'lsum')
    ce, cx = s6.add_consume('lsum', ('p', '2'))
    t = s6.add_tasklet('lsum', {'x'}, {'o'}, 'o = x')
    consume_input(s6, s6.add_read('G'), ce, t, 'x')
    s6.add_memlet_path(t, cx, s6.add_write('lsum'), src_conn='o', memlet=dyn('lsum[0]', SUM))
    sdfg.fill_scope_connectors()
    return sdfg


def tree(values):
    count, total, todo = 0, 0, list(values)
    while todo:
        s = todo.pop()
        count, total = count + 1, total + s
        if s > 1:
            todo += [s - 1, s // 2]
    return count, total


def main():
    scratch_dir('make-stream-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n, k, m = 40, 5, 9
    rng = np.random.default_rng(20261203)
    a = rng.random(n)
    iv = np.array([7, 1, 0, 9, 4], np.int64)
    sel = np.zeros(n)
    picked = a[a > 0.5]
    sel[:len(picked)] = picked
    count, total = tree(iv)
    lsum = sum(i + 100 if i % 2 == 0 else i for i in range(m))
    refs = {'sel': sel, 'count': np.array([count], np.int64), 'total': np.array([total], np.int64),
            'dsum': np.array([2 * a.sum()]), 'r3': np.array([0, 1, 4], np.int64), 'lsum': np.array([lsum], np.int64)}
    zeros = {'sel': np.zeros(n), 'count': np.zeros(1, np.int64), 'total': np.zeros(1, np.int64),
             'dsum': np.zeros(1), 'r3': np.zeros(3, np.int64), 'lsum': np.zeros(1, np.int64)}
    # DaCe's own code on the same inputs gives the references.
    got = {k: v.copy() for k, v in zeros.items()}
    sdfg.compile()(A=a.copy(), iv=iv.copy(), **got, N=n, K=k, M=m)
    for name, ref in refs.items():
        assert np.allclose(got[name], ref, rtol=1e-12, atol=1e-12), (name, got[name], ref)
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    a.tofile(os.path.join(OUT, 'A.in.bin'))
    iv.tofile(os.path.join(OUT, 'iv.in.bin'))
    args = [
        {'name': 'A', 'dtype': 'float64', 'shape': [n], 'kind': 'array', 'role': 'in', 'file': 'A.in.bin'},
        {'name': 'iv', 'dtype': 'int64', 'shape': [k], 'kind': 'array', 'role': 'in', 'file': 'iv.in.bin'},
    ]
    outputs = []
    for name, ref in refs.items():
        zeros[name].tofile(os.path.join(OUT, f'{name}.in.bin'))
        ref.tofile(os.path.join(OUT, f'{name}.out.bin'))
        args.append({'name': name, 'dtype': str(ref.dtype), 'shape': list(ref.shape), 'kind': 'array',
                     'role': 'inout', 'file': f'{name}.in.bin', 'out_file': f'{name}.out.bin'})
        outputs.append({'name': name, 'file': f'{name}.out.bin', 'dtype': str(ref.dtype), 'shape': list(ref.shape),
                        'rtol': 1e-12, 'atol': 1e-12})
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'N': n, 'K': k, 'M': m},
        'args': args,
        'outputs': outputs,
        'default_variant': 'program.sdfg',
        'features': ['stream', 'consume', 'array_stream_view', 'nested_sdfg', 'parallel_map', 'wcr'],
    }, VARIANT, sdfg, args, 'scripts/make-stream-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
