#!/usr/bin/env python3
"""Generates two corpus fixtures (fixtures/corpus/<case>/, format of
fixtures/corpus/README.md) for two classes of bug found on NPBench:

* `self_copy_boundary` (cavity_flow): copies between two parts of one
  container (`A[:, -1] = A[:, -2]`, `A[0, :] = A[1, :]`) inside a time loop:
  an access-node-to-access-node edge whose both ends name the same array.
* `loop_sized_transient` (durbin): a transient sized by the loop variable `k`
  (assigned by interstate edges), written in one state of the loop body, read
  in a later one, with a conditional state between them: it can only be
  allocated where `k` has its value (not at function entry, init or in the
  workspace).

Run with DaCe 1.0.2:  /work/venv-dace1/bin/python scripts/make-cfalloc-fixtures.py [OUTDIR]
(default OUTDIR: fixtures/corpus). Reference outputs come from numpy; DaCe's
own compiled CPU library is run on the same inputs and must reproduce them
(`dace_check` in case.json). The ABI entries are parsed from DaCe's code.
"""
import os

import numpy as np
import dace
from dace import Memlet

from fixturelib import abi_entry, generator_info, out_dir, output_entry, scratch_dir, write_json

SEED = 20261201
OUT = out_dir(os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'corpus'))


def externalize(sdfg):
    """program.external.sdfg: every array transient whose size is known at init
    (only free symbols of the SDFG) gets lifetime External."""
    assigned = set()
    for e in sdfg.all_interstate_edges():
        assigned |= set(e.data.assignments.keys())
    names = []
    for name, desc in sdfg.arrays.items():
        if (desc.transient and isinstance(desc, dace.data.Array) and not isinstance(desc, dace.data.View)
                and not ({str(s) for s in desc.free_symbols} & assigned)):
            desc.lifetime = dace.AllocationLifetime.External
            names.append(f'0:{name}')
    return names


def dace_run(sdfg, symbols, args, inputs):
    """Runs DaCe's own compiled library on copies of the inputs."""
    vals = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in inputs.items()}
    kwargs = dict(vals)
    kwargs.update(symbols)
    csdfg = sdfg.compile()
    if any(d.lifetime == dace.AllocationLifetime.External for d in sdfg.arrays.values()):
        csdfg.initialize(**kwargs)
        sizes = csdfg.get_workspace_sizes()
        workspace = np.full(sizes[dace.StorageType.CPU_Heap], 0xFF, np.uint8)
        csdfg.set_workspace(dace.StorageType.CPU_Heap, workspace)
    csdfg(**kwargs)
    return vals


def write_case(name, description, variants, symbols, inputs, expected, scalars, tol, features, notes=''):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    args = []
    for n in variants['program.sdfg'].arg_names:
        v = inputs[n]
        if n in scalars:
            f = f'{n}.in.bin'
            np.asarray(v, dtype=scalars[n]).tofile(os.path.join(d, f))
            args.append({'name': n, 'dtype': scalars[n], 'shape': [], 'kind': 'scalar', 'role': 'in',
                         'file': f, 'value': int(v) if 'int' in scalars[n] else float(v)})
            continue
        v.tofile(os.path.join(d, f'{n}.in.bin'))
        a = {'name': n, 'dtype': str(v.dtype), 'shape': list(v.shape), 'kind': 'array',
             'file': f'{n}.in.bin', 'role': 'in'}
        if n in expected:
            a['role'] = 'inout'
            a['out_file'] = f'{n}.out.bin'
        args.append(a)
    for n, v in expected.items():
        v.tofile(os.path.join(d, f'{n}.out.bin'))
    abi, checks, external = {}, {}, {}
    for fname, sdfg in variants.items():
        sdfg.save(os.path.join(d, fname))
        abi[fname] = abi_entry(sdfg, args, external=True, other_exports=True)
        external[fname] = [
            f'0:{k}' for k, v in sdfg.arrays.items() if v.transient and v.lifetime == dace.AllocationLifetime.External]
        if 'gpu' in fname:
            checks[fname] = 'DaCe code generation ok; not compiled or run (no GPU)'
            continue
        print('  running DaCe on', name, fname, flush=True)
        got = dace_run(sdfg, symbols, args, inputs)
        errs = {n: float(np.max(np.abs(got[n] - expected[n]))) for n in expected}
        ok = all(np.allclose(got[n], expected[n], rtol=tol[0], atol=tol[1]) for n in expected)
        assert ok, (fname, errs)
        checks[fname] = {'dace_compile': 'ok', 'outputs_match_numpy': ok, 'max_abs_err': errs}
    case = {
        'name': name,
        'description': description,
        'symbols': symbols,
        'args': args,
        'outputs': [output_entry(n, v, tol) for n, v in expected.items()],
        'abi': abi,
        'default_variant': 'program.sdfg',
        'variants': {f: True for f in variants},
        'external_arrays': {f: v for f, v in external.items() if v},
        'features': features,
        'notes': notes,
        'sdfg_name': variants['program.sdfg'].name,
        'dace_check': checks,
        'generator': generator_info('scripts/make-cfalloc-fixtures.py', SEED),
    }
    write_json(os.path.join(d, 'case.json'), case)
    print('wrote', d)


# --------------------------------------------------------------- cases --

N = dace.symbol('N', dace.int32)
M = dace.symbol('M', dace.int32)


@dace.program
def self_copy_boundary(A: dace.float64[N, M], B: dace.float64[N, M], C: dace.float64[N, M], nt: dace.int64):
    T = np.empty_like(A)
    for t in range(nt):
        A[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]) + B[1:-1, 1:-1]
        A[:, -1] = A[:, -2]
        A[0, :] = A[1, :]
        A[:, 0] = A[:, 1]
        A[-1, :] = 0.5
        T[:] = A * 2.0
        C[:] = T + C


def self_copy_boundary_numpy(A, B, C, nt):
    for _ in range(nt):
        A[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:]) + B[1:-1, 1:-1]
        A[:, -1] = A[:, -2]
        A[0, :] = A[1, :]
        A[:, 0] = A[:, 1]
        A[-1, :] = 0.5
        T = A * 2.0
        C[:] = T + C


def make_self_copy_boundary(rng):
    n, m, nt = 12, 10, 6
    sdfg = self_copy_boundary.to_sdfg()
    sdfg.simplify()
    copies = [(st.label, str(e.data)) for st in sdfg.states() for e in st.edges()
              if isinstance(e.src, dace.nodes.AccessNode) and isinstance(e.dst, dace.nodes.AccessNode)
              and e.src.data == e.dst.data]
    assert len(copies) == 3, copies
    ext = dace.SDFG.from_json(sdfg.to_json())
    externalize(ext)
    gpu = dace.SDFG.from_json(sdfg.to_json())
    gpu.apply_gpu_transformations()
    gpu.simplify()
    inputs = {'A': rng.random((n, m)), 'B': rng.random((n, m)) * 0.1, 'C': rng.random((n, m)), 'nt': nt}
    ref = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    self_copy_boundary_numpy(ref['A'], ref['B'], ref['C'], nt)
    write_case('self_copy_boundary',
               'copies between parts of one array (A[:, -1] = A[:, -2], A[0, :] = A[1, :], A[:, 0] = A[:, 1]) '
               'after a stencil, in a time loop (the shape of NPBench cavity_flow): access node -> access node '
               'edges whose two ends name the same array',
               {'program.sdfg': sdfg, 'program.external.sdfg': ext, 'program.gpu.sdfg': gpu},
               {'N': n, 'M': m}, inputs, {'A': ref['A'], 'C': ref['C']}, {'nt': 'int64'},
               (1e-10, 1e-12), ['self_copy', 'stencil', 'loop', 'transients'],
               notes=f'self copies: {copies}')


def build_loop_sized_transient():
    """for k in 1..N-1: T[0:k] = r[k-1::-1]; if k % 2 == 0: T[0] *= 2; y[k] += sum(T * y[0:k]).
    T has shape [k]: sized by the loop variable, used in three states of the body."""
    k = dace.symbol('k', dace.int64)
    sdfg = dace.SDFG('loop_sized_transient')
    sdfg.add_array('r', [N], dace.float64)
    sdfg.add_array('y', [N], dace.float64)
    sdfg.add_transient('T', [k], dace.float64)
    init = sdfg.add_state('init')
    guard = sdfg.add_state('guard')
    fill = sdfg.add_state('fill')
    double = sdfg.add_state('double')
    use = sdfg.add_state('use')
    end = sdfg.add_state('end')
    fill.add_mapped_tasklet('flip', dict(i='0:k'), inputs=dict(x=Memlet('r[k - 1 - i]')), code='o = x',
                            outputs=dict(o=Memlet('T[i]')), external_edges=True)
    t = double.add_tasklet('double', {'x'}, {'o'}, 'o = 2.0 * x')
    double.add_edge(double.add_read('T'), None, t, 'x', Memlet('T[0]'))
    double.add_edge(t, 'o', double.add_write('T'), None, Memlet('T[0]'))
    use.add_mapped_tasklet('dot', dict(i='0:k'), inputs=dict(a=Memlet('T[i]'), b=Memlet('y[i]')), code='o = a * b',
                           outputs=dict(o=Memlet('y[k]', wcr='lambda p, q: p + q')), external_edges=True)
    sdfg.add_edge(init, guard, dace.InterstateEdge(assignments={'k': '1'}))
    sdfg.add_edge(guard, fill, dace.InterstateEdge('k < N'))
    sdfg.add_edge(guard, end, dace.InterstateEdge('not (k < N)'))
    sdfg.add_edge(fill, double, dace.InterstateEdge('k % 2 == 0'))
    sdfg.add_edge(fill, use, dace.InterstateEdge('not (k % 2 == 0)'))
    sdfg.add_edge(double, use, dace.InterstateEdge())
    sdfg.add_edge(use, guard, dace.InterstateEdge(assignments={'k': 'k + 1'}))
    sdfg.arg_names = ['r', 'y']
    sdfg.validate()
    return sdfg


def make_loop_sized_transient(rng):
    n = 40
    sdfg = build_loop_sized_transient()
    ext = dace.SDFG.from_json(sdfg.to_json())
    assert externalize(ext) == []
    # No program.gpu.sdfg: DaCe 1.0.2's CUDA code generation fails on it
    # (KeyError 'Variable T has not been defined' in the state 'double').
    r = rng.random(n) / n
    y = rng.random(n)
    ref = y.copy()
    for k in range(1, n):
        t = r[:k][::-1].copy()
        if k % 2 == 0:
            t[0] *= 2.0
        ref[k] += np.sum(t * ref[:k])
    write_case('loop_sized_transient',
               'a transient of shape [k], k the loop variable of a state-machine loop (assigned on interstate '
               'edges), written in one state of the body, read in a later one, a conditional state between '
               'them (the shape of NPBench durbin): it is allocated where k has its value, in every memory mode',
               {'program.sdfg': sdfg},
               {'N': n}, {'r': r, 'y': y}, {'y': ref}, {}, (1e-10, 1e-12),
               ['loop', 'symbol_sized_transient', 'wcr', 'conditional'],
               notes='T cannot be External or Persistent (its size is only known inside the loop); '
                     'external and persistent modes allocate it during the call, like DaCe does. '
                     'No GPU variant: DaCe 1.0.2 cannot generate CUDA code for it '
                     '(KeyError: Variable T has not been defined)')


if __name__ == '__main__':
    scratch_dir('make-cfalloc-fixtures')  # DaCe writes .dacecache/ here
    rng = np.random.default_rng(SEED)
    make_self_copy_boundary(rng)
    make_loop_sized_transient(rng)
