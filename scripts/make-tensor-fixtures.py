#!/usr/bin/env python3
"""Generates fixtures/corpus/tensor_csr/: a DaCe `Tensor` argument `A` (CSR
format, `TensorIndexDense` then `TensorIndexCompressed`, struct type
`CSR_Tensor`) expanded into a dense `B` by a map over rows whose inner
range reads the row pointers (`A.idx1_pos[i]:A.idx1_pos[i+1]`), as DaCe's
`tensor_test.py::test_read_csr_tensor` does. DaCe derives the members from
the format: `order` (a scalar), `dim_sizes`, `value_count` (a symbolic
member: a scalar field no container holds), `values`, `idx1_pos`,
`idx1_crd`; the struct has all six fields in that order.

Run with DaCe 1.0.2 (program.sdfg) and DaCe 2.x (program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-tensor-fixtures.py
    build/venv-gt4py/bin/python scripts/make-tensor-fixtures.py
Each run builds the SDFG with that DaCe's own code generator, calls it with
a ctypes struct as DaCe's test does, and checks B against the numpy
reference written here. case.json: the struct's members are arguments of
their own named by their dotted path (fixtures/corpus/README.md).
"""
import os
import sys

import numpy as np
import dace

from fixturelib import data_arg as fixture_arg, merge_variant, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = 'tensor_csr'
OUT = os.path.join(HERE, '..', 'fixtures', 'corpus', NAME)
VARIANT = 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'


def build():
    M, N, nnz = (dace.symbol(s) for s in ('M', 'N', 'nnz'))
    csr = dace.data.Tensor(dace.float32, (M, N), [(dace.data.TensorIndexDense(), 0),
                                                  (dace.data.TensorIndexCompressed(), 1)], nnz, 'CSR_Tensor')
    sdfg = dace.SDFG(NAME)
    sdfg.add_datadesc('A', csr)
    sdfg.add_array('B', [M, N], dace.float32)
    for v, m in (('vpos', 'idx1_pos'), ('vcrd', 'idx1_crd'), ('vval', 'values')):
        sdfg.add_view(v, csr.members[m].shape, csr.members[m].dtype)
    st = sdfg.add_state()
    A, B = st.add_access('A'), st.add_access('B')
    pos, crd, val = st.add_access('vpos'), st.add_access('vcrd'), st.add_access('vval')
    for node, m in ((pos, 'idx1_pos'), (crd, 'idx1_crd'), (val, 'values')):
        st.add_edge(A, None, node, 'views', dace.Memlet.from_array(f'A.{m}', csr.members[m]))
    ime, imx = st.add_map('i', dict(i='0:M'))
    jme, jmx = st.add_map('idx', dict(idx='start:stop'))
    jme.add_in_connector('start')
    jme.add_in_connector('stop')
    t = st.add_tasklet('scatter', {'j', '__val'}, {'__out'}, '__out[i, j] = 2 * __val')
    st.add_memlet_path(pos, ime, jme, memlet=dace.Memlet(data='vpos', subset='i'), dst_conn='start')
    st.add_memlet_path(pos, ime, jme, memlet=dace.Memlet(data='vpos', subset='i+1'), dst_conn='stop')
    st.add_memlet_path(crd, ime, jme, t, memlet=dace.Memlet(data='vcrd', subset='idx'), dst_conn='j')
    st.add_memlet_path(val, ime, jme, t, memlet=dace.Memlet(data='vval', subset='idx'), dst_conn='__val')
    st.add_memlet_path(t, jmx, imx, B, memlet=dace.Memlet(data='B', subset='0:M, 0:N', volume=1), src_conn='__out')
    return sdfg, csr


def main():
    scratch_dir('make-tensor-fixtures', venv_cmake=True)
    sdfg, csr = build()
    sdfg.validate()
    m, n = 13, 17
    rng = np.random.default_rng(20261203)
    dense = np.where(rng.random((m, n)) < 0.2, rng.random((m, n)), 0).astype(np.float32)
    pos = np.zeros(m + 1, np.int32)
    crd, vals = [], []
    for i in range(m):
        js = np.nonzero(dense[i])[0]
        crd += list(js)
        vals += list(dense[i, js])
        pos[i + 1] = len(crd)
    crd, vals = np.array(crd, np.int32), np.array(vals, np.float32)
    nnz = len(vals)
    order = np.array([2], np.int32)
    dims = np.array([m, n], np.int32)
    count = np.array([nnz], np.int32)
    ref = (2 * dense).astype(np.float32)
    B = np.zeros((m, n), np.float32)
    ptr = lambda a: a.__array_interface__['data'][0]
    arg = csr.dtype._typeclass.as_ctypes()(order=2, dim_sizes=ptr(dims), value_count=nnz, values=ptr(vals),
                                           idx1_pos=ptr(pos), idx1_crd=ptr(crd))
    sdfg.compile()(A=arg, B=B, M=m, N=n, nnz=nnz)
    assert np.allclose(B, ref), (B, ref)
    os.makedirs(OUT, exist_ok=True)
    sdfg.save(os.path.join(OUT, VARIANT))

    def data_arg(name, value, role, scalar=False):
        return fixture_arg(OUT, name, value, role, scalar)

    members = ['order', 'dim_sizes', 'value_count', 'values', 'idx1_pos', 'idx1_crd']
    args = [
        {'name': 'A', 'kind': 'struct', 'ctype': 'CSR_Tensor', 'role': 'in',
         'members': [{'name': k, 'arg': f'A.{k}'} for k in members]},
        data_arg('A.order', order, 'in', scalar=True),
        data_arg('A.dim_sizes', dims, 'in'),
        data_arg('A.value_count', count, 'in', scalar=True),
        data_arg('A.values', vals, 'in'),
        data_arg('A.idx1_pos', pos, 'in'),
        data_arg('A.idx1_crd', crd, 'in'),
        data_arg('B', np.zeros((m, n), np.float32), 'inout'),  # the program writes the nonzeros only
    ]
    ref.tofile(os.path.join(OUT, 'B.out.bin'))
    merge_variant(OUT, {
        'name': NAME,
        'description': __doc__.strip().split('\n\n')[0],
        'symbols': {'M': m, 'N': n, 'nnz': nnz},
        'args': args,
        'outputs': [{'name': 'B', 'file': 'B.out.bin', 'dtype': 'float32', 'shape': [m, n], 'rtol': 1e-6,
                     'atol': 1e-6}],
        'default_variant': 'program.sdfg',
        'features': ['structure', 'tensor', 'dynamic_map_range', 'indirect_access'],
    }, VARIANT, sdfg, args, 'scripts/make-tensor-fixtures.py')


if __name__ == '__main__':
    sys.exit(main())
