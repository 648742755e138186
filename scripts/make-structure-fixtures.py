#!/usr/bin/env python3
"""Generates fixtures/corpus/structure_members/: a DaCe `Structure` argument
`S` (struct type `Mesh`) with array members of symbolic sizes (`vals`:
float64[N], `idx`: int32[M]), a scalar member (`shift`: int32) and a nested
structure `p` (type `Params`: `w`: float64[N], scalar `scale`: float64):

* `scale`: a parallel map reads three members (one of them a scalar of the
  nested structure): out[i] = S.vals[i] * S.p.scale + S.p.w[i];
* `gather`: a map reads S.vals indirectly through S.idx and adds the scalar
  member: gath[j] = S.vals[S.idx[j]] + S.shift;
* `update`: a map writes two members, one of the nested structure, from
  plain arrays and from itself: S.vals[i] = out[i] - 1, S.p.w[i] = 2 * S.p.w[i] + i.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-structure-fixtures.py
    build/venv-gt4py/bin/python scripts/make-structure-fixtures.py
Each run builds the SDFG with that DaCe's own code generator, calls it with
ctypes structs as DaCe's tests do, and checks its outputs against the numpy
references written here.

case.json: the member arrays and scalars are arguments of their own, named
by their dotted path (`S.vals`, `S.p.scale`); the structures are arguments
of kind `struct` (`ctype`: the struct type; `members`: each field in the
order of DaCe's struct definition, `arg` naming the argument it holds): the
run harness builds the C structs from them (array members and nested
structures as pointers, scalar members as values).
"""
import ctypes
import os
import re
import sys

import numpy as np
import dace
from dace import Memlet

from fixturelib import data_arg as fixture_arg, merge_variant, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'structure_members'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'
PAR = dace.ScheduleType.CPU_Multicore


def types():
    N, M = (dace.symbol(s, dace.int32) for s in 'NM')
    params = dace.data.Structure(dict(w=dace.float64[N], scale=dace.data.Scalar(dace.float64)), name='Params')
    mesh = dace.data.Structure(dict(vals=dace.float64[N], idx=dace.int32[M], shift=dace.data.Scalar(dace.int32),
                                    p=params), name='Mesh')
    return mesh, params


def build():
    mesh, _ = types()
    sdfg = dace.SDFG(NAME)
    sdfg.add_datadesc('S', mesh)
    sdfg.add_array('out', ['N'], dace.float64)
    sdfg.add_array('gath', ['M'], dace.float64)

    s0 = sdfg.add_state('scale')
    me, mx = s0.add_map('scale', dict(i='0:N'), schedule=PAR)
    t = s0.add_tasklet('scale', {'v', 'c', 'w'}, {'o'}, 'o = v * c + w')
    S = s0.add_read('S')
    s0.add_memlet_path(S, me, t, dst_conn='v', memlet=Memlet('S.vals[i]'))
    s0.add_memlet_path(S, me, t, dst_conn='c', memlet=Memlet('S.p.scale[0]'))
    s0.add_memlet_path(S, me, t, dst_conn='w', memlet=Memlet('S.p.w[i]'))
    s0.add_memlet_path(t, mx, s0.add_write('out'), src_conn='o', memlet=Memlet('out[i]'))

    s1 = sdfg.add_state_after(s0, 'gather')
    me, mx = s1.add_map('gather', dict(j='0:M'), schedule=PAR)
    t = s1.add_tasklet('gather', {'v', 'k', 'sh'}, {'o'}, 'o = v[k] + sh')
    S = s1.add_read('S')
    s1.add_memlet_path(S, me, t, dst_conn='v', memlet=Memlet('S.vals[0:N]'))
    s1.add_memlet_path(S, me, t, dst_conn='k', memlet=Memlet('S.idx[j]'))
    s1.add_memlet_path(S, me, t, dst_conn='sh', memlet=Memlet('S.shift[0]'))
    s1.add_memlet_path(t, mx, s1.add_write('gath'), src_conn='o', memlet=Memlet('gath[j]'))

    s2 = sdfg.add_state_after(s1, 'update')
    me, mx = s2.add_map('update', dict(i='0:N'), schedule=PAR)
    t = s2.add_tasklet('update', {'a', 'w'}, {'v', 'wo'}, 'v = a - 1\nwo = 2 * w + i')
    s2.add_memlet_path(s2.add_read('out'), me, t, dst_conn='a', memlet=Memlet('out[i]'))
    s2.add_memlet_path(s2.add_read('S'), me, t, dst_conn='w', memlet=Memlet('S.p.w[i]'))
    W = s2.add_write('S')
    s2.add_memlet_path(t, mx, W, src_conn='v', memlet=Memlet('S.vals[i]'))
    s2.add_memlet_path(t, mx, W, src_conn='wo', memlet=Memlet('S.p.w[i]'))
    sdfg.fill_scope_connectors()
    return sdfg


def fields(code, struct):
    """The field names of `struct` in DaCe's generated definition."""
    m = re.search(r'struct\s+' + struct + r'\s*\{([^}]*)\}', code)
    assert m, struct
    return re.findall(r'([A-Za-z_][A-Za-z0-9_]*)\s*;', m.group(1))


def main():
    scratch_dir('make-structure-fixtures', venv_cmake=True)
    mesh, params = types()
    sdfg = build()
    sdfg.validate()
    n, m = 37, 11
    rng = np.random.default_rng(20261203)
    vals = rng.random(n)
    idx = rng.integers(0, n, m).astype(np.int32)
    shift = np.array([3], np.int32)
    w = rng.random(n)
    scale = np.array([1.5])
    out = vals * scale[0] + w
    refs = {
        'out': out,
        'gath': vals[idx] + shift[0],
        'S.vals': out - 1,
        'S.p.w': 2 * w + np.arange(n),
    }
    # DaCe's own code on the same inputs, called as DaCe's tests do.
    got = {'vals': vals.copy(), 'w': w.copy(), 'out': np.zeros(n), 'gath': np.zeros(m), 'idx': idx.copy()}
    ptr = lambda a: a.__array_interface__['data'][0]
    inner = params.dtype._typeclass.as_ctypes()(w=ptr(got['w']), scale=scale[0])
    outer = mesh.dtype._typeclass.as_ctypes()(vals=ptr(got['vals']), idx=ptr(got['idx']), shift=int(shift[0]),
                                             p=ctypes.pointer(inner))
    sdfg.compile()(S=outer, out=got['out'], gath=got['gath'], N=n, M=m)
    for name, g in (('out', got['out']), ('gath', got['gath']), ('S.vals', got['vals']), ('S.p.w', got['w'])):
        assert np.allclose(g, refs[name], rtol=1e-12, atol=1e-12), (name, g, refs[name])
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))
    code = '\n'.join(c.clean_code for c in sdfg.generate_code())
    assert fields(code, 'Params') == ['w', 'scale'], fields(code, 'Params')
    assert fields(code, 'Mesh') == ['vals', 'idx', 'shift', 'p'], fields(code, 'Mesh')

    def data_arg(name, value, role, scalar=False):
        return fixture_arg(OUT, name, value, role, scalar)

    args = [
        {'name': 'S', 'kind': 'struct', 'ctype': 'Mesh', 'role': 'inout',
         'members': [{'name': 'vals', 'arg': 'S.vals'}, {'name': 'idx', 'arg': 'S.idx'},
                     {'name': 'shift', 'arg': 'S.shift'}, {'name': 'p', 'arg': 'S.p'}]},
        {'name': 'S.p', 'kind': 'struct', 'ctype': 'Params', 'role': 'inout',
         'members': [{'name': 'w', 'arg': 'S.p.w'}, {'name': 'scale', 'arg': 'S.p.scale'}]},
        data_arg('S.vals', vals, 'inout'),
        data_arg('S.idx', idx, 'in'),
        data_arg('S.shift', shift, 'in', scalar=True),
        data_arg('S.p.w', w, 'inout'),
        data_arg('S.p.scale', scale, 'in', scalar=True),
        data_arg('out', np.zeros(n), 'out'),
        data_arg('gath', np.zeros(m), 'out'),
    ]
    outputs = []
    for name, ref in refs.items():
        ref.tofile(os.path.join(OUT, f'{name}.out.bin'))
        outputs.append({'name': name, 'file': f'{name}.out.bin', 'dtype': str(ref.dtype), 'shape': list(ref.shape),
                        'rtol': 1e-12, 'atol': 1e-12})
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'N': n, 'M': m},
        'args': args,
        'outputs': outputs,
        'default_variant': 'program.sdfg',
        'features': ['structure', 'nested_structure', 'parallel_map', 'indirect_access'],
    }, VARIANT, sdfg, args, 'scripts/make-structure-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
