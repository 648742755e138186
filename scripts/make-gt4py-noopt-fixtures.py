#!/usr/bin/env python3
"""Adds `cpu_noopt.sdfg` to fixtures/gt4py/vertex_cell_skip_reduce/: the same
program translated by gt4py's DaCe backend without auto-optimisation
(gt4py's `run_dace_cpu_noopt`), where every reduction over a neighbor table
with skip values is gt4py's own library node `ReduceWithSkipValues`. It runs
on the case's existing inputs and reference outputs; its ABI entry is parsed
from DaCe's generated code.

    /work/venv-dace2/bin/python scripts/make-gt4py-noopt-fixtures.py
"""
import json
import os

import numpy as np
import gt4py.next as gtx
from gt4py.next import neighbor_sum, min_over
from gt4py.next.otf import arguments, toolchain
from gt4py.next.program_processors.runners.dace.workflow import backend as dace_backend

from fixturelib import abi_entry, load_case, write_json

HERE = os.path.dirname(os.path.abspath(__file__))

CASE = os.path.join(HERE, '..', 'fixtures', 'gt4py', 'vertex_cell_skip_reduce')
VARIANT = 'cpu_noopt.sdfg'

Vertex = gtx.Dimension('Vertex')
Cell = gtx.Dimension('Cell')
Edge = gtx.Dimension('Edge')
K = gtx.Dimension('K', kind=gtx.DimensionKind.VERTICAL)
V2CDim = gtx.Dimension('V2C', kind=gtx.DimensionKind.LOCAL)
C2VDim = gtx.Dimension('C2V', kind=gtx.DimensionKind.LOCAL)
E2VDim = gtx.Dimension('E2V', kind=gtx.DimensionKind.LOCAL)
V2C = gtx.FieldOffset('V2C', source=Cell, target=(Vertex, V2CDim))
C2V = gtx.FieldOffset('C2V', source=Vertex, target=(Cell, C2VDim))
E2V = gtx.FieldOffset('E2V', source=Vertex, target=(Edge, E2VDim))


@gtx.field_operator
def _reduce(cf: gtx.Field[[Cell, K], gtx.float64], w: gtx.Field[[Vertex, V2CDim], gtx.float64]):
    vsum = neighbor_sum(cf(V2C) * w, axis=V2CDim)
    vmin = min_over(cf(V2C), axis=V2CDim)
    cavg = neighbor_sum(vsum(C2V), axis=C2VDim) / 3.0
    egrad = vmin(E2V[1]) - vmin(E2V[0])
    return vsum, vmin, cavg, egrad


@gtx.program
def vertex_cell_skip_reduce(
    cf: gtx.Field[[Cell, K], gtx.float64],
    w: gtx.Field[[Vertex, V2CDim], gtx.float64],
    vsum: gtx.Field[[Vertex, K], gtx.float64],
    vmin: gtx.Field[[Vertex, K], gtx.float64],
    cavg: gtx.Field[[Cell, K], gtx.float64],
    egrad: gtx.Field[[Edge, K], gtx.float64],
):
    _reduce(cf, w, out=(vsum, vmin, cavg, egrad))


def load(case, name, out=False):
    a = next(x for x in case['args'] if x['name'] == name)
    raw = np.fromfile(os.path.join(CASE, a['out_file'] if out else a['file']), dtype=a['dtype'])
    return np.ascontiguousarray(np.lib.stride_tricks.as_strided(
        raw, shape=a['shape'], strides=[s * raw.itemsize for s in a['strides']]))


def main():
    case = load_case(os.path.join(CASE, 'case.json'))
    dims = {'cf': (Cell, K), 'w': (Vertex, V2CDim), 'vsum': (Vertex, K), 'vmin': (Vertex, K),
            'cavg': (Cell, K), 'egrad': (Edge, K)}
    fields = {n: gtx.as_field(d, load(case, n)) for n, d in dims.items()}
    conns = {
        'V2C': gtx.as_connectivity([Vertex, V2CDim], Cell, load(case, 'gt_conn_V2C'), skip_value=-1),
        'C2V': gtx.as_connectivity([Cell, C2VDim], Vertex, load(case, 'gt_conn_C2V')),
        'E2V': gtx.as_connectivity([Edge, E2VDim], Vertex, load(case, 'gt_conn_E2V')),
    }
    order = ['cf', 'w', 'vsum', 'vmin', 'cavg', 'egrad']
    # The program reproduces the case's reference outputs (gt4py's embedded execution).
    vertex_cell_skip_reduce(*[fields[n] for n in order], offset_provider=conns)
    for n in ('vsum', 'vmin', 'cavg', 'egrad'):
        ref = load(case, n, out=True)
        assert np.allclose(fields[n].asnumpy(), ref, rtol=1e-12, atol=0), n
    be = dace_backend.make_dace_backend(gpu=False, auto_optimize=False, async_sdfg_call=False,
                                        use_metrics=True)
    cargs = arguments.CompileTimeArgs.from_concrete(*[fields[n] for n in order], offset_provider=conns)
    art = toolchain.ConcreteArtifact(vertex_cell_skip_reduce.definition_stage, cargs)
    cpd = gtx.backend.DEFAULT_TRANSFORMS(art)
    src = be.executor.translation.step(cpd).source_code
    sdfg_json = src if isinstance(src, dict) else json.loads(src)
    with open(os.path.join(CASE, VARIANT), 'w') as fh:
        json.dump(sdfg_json, fh, indent=1)
    import dace
    sdfg = dace.SDFG.from_file(os.path.join(CASE, VARIANT))
    classes = {n.__class__.__name__ for n, _ in sdfg.all_nodes_recursive()}
    assert 'ReduceWithSkipValues' in classes, classes
    case['abi'][VARIANT] = abi_entry(sdfg, case['args'])
    # Range symbols this variant passes that the optimised ones do not.
    for prm in case['abi'][VARIANT]['program']['params']:
        name = prm['name']
        if prm['kind'] != 'symbol' or name in case['symbols']:
            continue
        arg, dim, which = name[2:].rsplit('_', 2)[0].rsplit('_', 1) + [name[-1]]
        assert name == f'__{arg}_{dim}_range_{which}', name
        rng = fields[arg].domain[dims[arg][[d.value for d in dims[arg]].index(dim)]].unit_range
        case['symbols'][name] = int(rng.stop if which == '1' else rng.start)
        case['symbol_dtypes'][name] = prm['dtype']
    case['variants'][VARIANT] = {
        'device': 'CPU',
        'description': 'run_dace_cpu_noopt config: no auto_optimize; reductions over V2C (skip values) '
                       "are gt4py's ReduceWithSkipValues library node (generated by "
                       'scripts/make-gt4py-noopt-fixtures.py)',
        'codegen': 'ok',
    }
    write_json(os.path.join(CASE, 'case.json'), case)
    print('wrote', VARIANT)


if __name__ == '__main__':
    main()
