#!/usr/bin/env python3
"""Generates fixtures/corpus/struct_values/: transients whose element type is
a struct held by value (DaCe's `dace.struct`), as DaCe's `argmax_test` and
`struct_reduce_sdfg_test` use them:

* `argmax`: a parallel map builds `pair(idx=i, val=x[i])` and resolves it
  into the one-element transient `best` with a lambda on structs (the
  larger `val` wins); `best` starts as a struct whose fields a tasklet sets
  one by one; then a tasklet reads its fields into `idx_out` and `val_out`;
* `points`: a map fills `pts: vec3d[N]` (a symbol-sized transient: 12 bytes
  an element, C's layout) with struct values, a sequential map sums them
  field by field into `acc` (a lambda building a struct), and a map reads
  two fields of each element (`s[i] = pts[i].x + pts[i].z`).

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-record-fixtures.py
    build/venv-gt4py/bin/python scripts/make-record-fixtures.py
Each run builds the SDFG with that DaCe's own code generator and checks its
outputs against the numpy references written here. The arguments are plain
arrays: the structs live in transients only (every memory mode lays them out).
"""
import os
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import merge_variant, output_entry, scratch_dir, write_array_args

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'struct_values'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
PAR = dace.ScheduleType.CPU_Multicore
SEQ = dace.ScheduleType.Sequential

pair = dace.struct('pair', idx=dace.int32, val=dace.float64)
vec3d = dace.struct('vec3d', x=dace.float32, y=dace.float32, z=dace.float32)


def build():
    sdfg = dace.SDFG(NAME)
    sdfg.add_array('x', ['N'], dace.float64)
    sdfg.add_array('a', ['N'], dace.float32)
    sdfg.add_array('idx_out', [1], dace.int32)
    sdfg.add_array('val_out', [1], dace.float64)
    sdfg.add_array('sums', [3], dace.float32)
    sdfg.add_array('s', ['N'], dace.float32)
    sdfg.add_transient('best', [1], pair)
    sdfg.add_transient('pts', ['N'], vec3d)
    sdfg.add_transient('acc', [1], vec3d)

    s0 = sdfg.add_state('argmax')
    t = s0.add_tasklet('init', {}, {'o'}, 'o.idx = -1\no.val = -1e38')
    best = s0.add_access('best')
    s0.add_edge(t, 'o', best, None, Memlet('best[0]'))
    me, mx = s0.add_map('argmax', dict(i='0:N'), schedule=PAR)
    t = s0.add_tasklet('cand', {'v'}, {'o'}, 'o = pair(idx=i, val=v)')
    s0.add_memlet_path(s0.add_read('x'), me, t, dst_conn='v', memlet=Memlet('x[i]'))
    best2 = s0.add_access('best')
    s0.add_memlet_path(t, mx, best2, src_conn='o', memlet=Memlet(
        'best[0]', wcr='lambda p, q: pair(val=max(p.val, q.val), idx=(p.idx if p.val > q.val else q.idx))'))
    s0.add_edge(best, None, me, None, Memlet())
    t = s0.add_tasklet('unpack', {'b'}, {'i_o', 'v_o'}, 'i_o = b.idx\nv_o = b.val')
    s0.add_edge(best2, None, t, 'b', Memlet('best[0]'))
    s0.add_edge(t, 'i_o', s0.add_write('idx_out'), None, Memlet('idx_out[0]'))
    s0.add_edge(t, 'v_o', s0.add_write('val_out'), None, Memlet('val_out[0]'))

    s1 = sdfg.add_state_after(s0, 'points')
    me, mx = s1.add_map('fill', dict(i='0:N'), schedule=PAR)
    t = s1.add_tasklet('fill', {'v'}, {'p'}, 'p = vec3d(x=v, y=2 * v, z=float(i))')
    s1.add_memlet_path(s1.add_read('a'), me, t, dst_conn='v', memlet=Memlet('a[i]'))
    pts = s1.add_access('pts')
    s1.add_memlet_path(t, mx, pts, src_conn='p', memlet=Memlet('pts[i]'))
    t = s1.add_tasklet('zero', {}, {'z'}, 'z = vec3d(x=0, y=0, z=0)')
    acc = s1.add_access('acc')
    s1.add_edge(t, 'z', acc, None, Memlet('acc[0]'))
    me, mx = s1.add_map('sum', dict(i='0:N'), schedule=SEQ)
    t = s1.add_tasklet('sum', {'p'}, {'o'}, 'o = p')
    s1.add_memlet_path(pts, me, t, dst_conn='p', memlet=Memlet('pts[i]'))
    s1.add_edge(acc, None, me, None, Memlet())
    acc2 = s1.add_access('acc')
    s1.add_memlet_path(t, mx, acc2, src_conn='o', memlet=Memlet(
        'acc[0]', wcr='lambda u, w: vec3d(x=u.x + w.x, y=u.y + w.y, z=u.z + w.z)'))
    t = s1.add_tasklet('unpack', {'c'}, {'o'}, 'o[0] = c.x\no[1] = c.y\no[2] = c.z')
    s1.add_edge(acc2, None, t, 'c', Memlet('acc[0]'))
    s1.add_edge(t, 'o', s1.add_write('sums'), None, Memlet('sums[0:3]'))
    me, mx = s1.add_map('read', dict(i='0:N'), schedule=PAR)
    t = s1.add_tasklet('read', {'p'}, {'o'}, 'o = p.x + p.z')
    s1.add_memlet_path(pts, me, t, dst_conn='p', memlet=Memlet('pts[i]'))
    s1.add_memlet_path(t, mx, s1.add_write('s'), src_conn='o', memlet=Memlet('s[i]'))
    sdfg.fill_scope_connectors()
    return sdfg


def main():
    scratch_dir('make-record-fixtures', venv_cmake=True)
    sdfg = build()
    sdfg.validate()
    n = 45
    rng = np.random.default_rng(20261203)
    x = rng.random(n)
    a = rng.random(n).astype(np.float32)
    refs = {
        'idx_out': np.array([np.argmax(x)], np.int32),
        'val_out': np.array([x.max()]),
        'sums': np.array([a.sum(dtype=np.float32), (2 * a).sum(dtype=np.float32),
                          np.arange(n, dtype=np.float32).sum()], np.float32),
        's': (a + np.arange(n, dtype=np.float32)).astype(np.float32),
    }
    got = {'x': x.copy(), 'a': a.copy(), **{k: np.zeros_like(v) for k, v in refs.items()}}
    sdfg.compile()(**got, N=n)
    for k, ref in refs.items():
        assert np.allclose(got[k], ref, rtol=1e-5, atol=1e-5), (k, got[k], ref)
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    names = list(sdfg.arglist())
    names = [k for k in names if k in got]
    args = write_array_args(OUT, names, {'x': x, 'a': a}, refs)
    outputs = [output_entry(k, v, (1e-5, 1e-5)) for k, v in refs.items()]
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'N': n},
        'args': args,
        'outputs': outputs,
        'default_variant': 'program.sdfg',
        'features': ['struct_value', 'custom_wcr', 'parallel_map', 'symbol_sized_transient'],
    }, VARIANT, sdfg, args, 'scripts/make-record-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
