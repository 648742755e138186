#!/usr/bin/env python3
"""Generates fixtures/corpus/interstate_*/: programs whose interstate edges
assign non-integer values to symbols (`__tmp0 = x[i]` for `if x[i] < lo:`,
`a = x[i] * 0.5`, ...), at the top level and inside nested SDFGs, so that a
compiler that declares every interstate symbol as an integer truncates them.

Run with any Python 3:  python3 scripts/make-interstate-fixtures.py [OUTDIR]
(default OUTDIR: fixtures/corpus). It runs itself twice: with DaCe 1.0.2
(`/work/venv-dace1`, or $DACE1_PYTHON) for `program.sdfg`, the inputs, the
outputs and the case.json, then with DaCe 2.0.0a10 (`/work/venv-dace2`, or
$DACE2_PYTHON) for `program.v2.sdfg`. Each SDFG is saved, loaded back from
the file, compiled by DaCe and run; its outputs must match numpy (DaCe 2's
must also match DaCe 1's). The ABI entries are parsed from DaCe's generated
code; `dace_interstate_types` records the type DaCe's code generator gives
each interstate symbol of each SDFG (the generator checks that every case
has non-integer ones where it means to).
"""
import json
import os
import subprocess
import sys

from fixturelib import abi_entry, generator_info, out_dir, output_entry, scratch_dir, write_json

SEED = 20261201
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = 'scripts/make-interstate-fixtures.py'


def main():
    out = out_dir(os.path.join(HERE, '..', 'fixtures', 'corpus'))
    for stage, var, default in [('dace1', 'DACE1_PYTHON', '/work/venv-dace1/bin/python'),
                                ('dace2', 'DACE2_PYTHON', '/work/venv-dace2/bin/python')]:
        py = os.environ.get(var, default)
        env = dict(os.environ)
        # DaCe builds with CMake; the venvs ship it.
        env['PATH'] = os.path.dirname(py) + os.pathsep + env.get('PATH', '')
        subprocess.run([py, os.path.abspath(__file__), '--stage', stage, out], check=True, env=env)


# ----------------------------------------------------------------- stages --
# Everything below runs inside a DaCe venv.

def dace_interstate_types(sdfg):
    """Per SDFG (by name): the type DaCe's code generator declares each
    interstate symbol with (`DaCeCodeGenerator.generate_code`'s rule)."""
    import copy
    from dace import dtypes
    try:
        from dace.sdfg.type_inference import infer_expr_type  # DaCe 2
    except ImportError:
        from dace.codegen.tools.type_inference import infer_expr_type  # DaCe 1
    from dace.sdfg.state import LoopRegion
    from dace.transformation.passes.analysis import loop_analysis
    result = {}
    for sd in sdfg.all_sdfgs_recursive():
        known = copy.deepcopy(sd.symbols)
        known.update({k: v.dtype for k, v in sd.arrays.items()})
        found = {}
        for cfr in sd.all_control_flow_regions():
            if isinstance(cfr, LoopRegion) and cfr.loop_variable and cfr.init_statement is not None:
                v = cfr.loop_variable
                if v not in found:
                    if v in known:
                        found[v] = known[v]
                    else:
                        found[v] = dtypes.result_type_of(
                            infer_expr_type(loop_analysis.get_init_assignment(cfr), known),
                            infer_expr_type(loop_analysis.get_loop_stride(cfr), known),
                            infer_expr_type(loop_analysis.get_loop_end(cfr), known))
                known.setdefault(v, found[v])
            for e in cfr.dfs_edges(cfr.start_block):
                syms = e.data.new_symbols(sd, known)
                syms = {k: t if (k not in known or known[k] is None) else known[k] for k, t in syms.items()}
                found.update(syms)
                known.update(syms)
        result[sd.name] = {k: (t.to_string() if t is not None else None) for k, t in sorted(found.items())}
    return result


def run_dace(path, inputs, outputs, symbols):
    """Loads `path`, compiles it with DaCe and runs it on copies of the inputs."""
    import dace
    import numpy as np
    sdfg = dace.SDFG.from_file(path)
    args = {k: (np.copy(v) if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    for k, v in outputs.items():
        args[k] = np.zeros_like(v)
    sdfg(**args, **symbols)
    return {k: args[k] for k in outputs}


def close(a, b, tol):
    import numpy as np
    if a.dtype.kind in 'fc':
        return bool(np.allclose(a, b, rtol=tol[0], atol=tol[1]))
    return bool(np.array_equal(a, b))


class Case:
    """One fixture: an SDFG builder (called once per DaCe version), inputs,
    numpy reference outputs, tolerances, the SDFGs that must have
    non-integer interstate symbols."""

    def __init__(self, name, description, build, symbols, inputs, outputs, tol, features, want_float):
        self.name, self.description, self.build = name, description, build
        self.symbols, self.inputs, self.outputs = symbols, inputs, outputs
        self.tol, self.features, self.want_float = tol, features, want_float


def check_types(case, types, variant):
    """Every SDFG named in `want_float` (a prefix) has a floating-point interstate symbol."""
    for prefix in case.want_float:
        ok = any(name.startswith(prefix) and any(t in ('float32', 'float64') for t in syms.values())
                 for name, syms in types.items())
        assert ok, f'{case.name} {variant}: no float interstate symbol in an SDFG named {prefix}*: {types}'


def stage(version, out):
    import dace
    import numpy as np
    rng = np.random.default_rng(SEED)
    scratch_dir('make-interstate-fixtures')  # DaCe writes .dacecache/ here
    for case in cases(dace, np, rng):
        d = os.path.join(out, case.name)
        os.makedirs(d, exist_ok=True)
        sdfg = case.build()
        sdfg.validate()
        variant = 'program.sdfg' if version == 'dace1' else 'program.v2.sdfg'
        path = os.path.join(d, variant)
        sdfg.save(path)
        types = dace_interstate_types(dace.SDFG.from_file(path))
        check_types(case, types, variant)
        got = run_dace(path, case.inputs, case.outputs, case.symbols)
        check = {}
        for k, want in case.outputs.items():
            check[k] = {'ok': close(got[k], want, case.tol),
                        'max_abs_err': float(np.max(np.abs(got[k].astype(np.float64) - want.astype(np.float64))))}
            assert check[k]['ok'], f'{case.name} {variant}: DaCe output {k} differs from numpy: {check[k]}'
        kinds = {k: ('scalar' if not isinstance(v, np.ndarray) else 'array') for k, v in case.inputs.items()}
        abi = abi_entry(dace.SDFG.from_file(path), kinds, other_exports=True)
        cj = os.path.join(d, 'case.json')
        if version == 'dace1':
            args = []
            for n in sdfg.arg_names:
                if n in case.inputs:
                    v = case.inputs[n]
                    if isinstance(v, np.ndarray):
                        f = f'{n}.in.bin'
                        v.tofile(os.path.join(d, f))
                        args.append({'name': n, 'dtype': str(v.dtype), 'shape': list(v.shape), 'kind': 'array',
                                     'role': 'in', 'file': f})
                    else:
                        f = f'{n}.in.bin'
                        v.tofile(os.path.join(d, f))
                        args.append({'name': n, 'dtype': str(v.dtype), 'shape': [], 'kind': 'scalar',
                                     'role': 'in', 'file': f, 'value': v.item()})
                else:
                    v = got[n]
                    f = f'{n}.out.bin'
                    v.tofile(os.path.join(d, f))
                    args.append({'name': n, 'dtype': str(v.dtype), 'shape': list(v.shape), 'kind': 'array',
                                 'role': 'out', 'file': f})
            doc = {
                'name': case.name,
                'description': case.description,
                'symbols': case.symbols,
                'args': args,
                'outputs': [output_entry(n, v, case.tol) for n, v in case.outputs.items()],
                'abi': {variant: abi},
                'features': case.features,
                'variants': {variant: True},
                'sdfg_name': sdfg.name,
                'dace_interstate_types': {variant: types},
                'numpy_reference_check': check,
                'generator': generator_info(SCRIPT, SEED),
            }
        else:
            with open(cj) as fh:
                doc = json.load(fh)
            for k in case.outputs:
                stored = np.fromfile(os.path.join(d, f'{k}.out.bin'), dtype=case.outputs[k].dtype)
                assert close(got[k].reshape(-1), stored, case.tol), f'{case.name}: DaCe 2 differs from DaCe 1 on {k}'
            doc['abi'][variant] = abi
            doc['variants'][variant] = True
            doc['dace_interstate_types'][variant] = types
            doc['v2'] = {'dace_version': dace.__version__, 'numpy_reference_check': check,
                         'reproduces_dace1_outputs': True,
                         'abi_vs_dace1': 'identical' if abi == doc['abi']['program.sdfg'] else 'differs'}
        write_json(cj, doc)
        print(version, 'wrote', os.path.join(d, variant))


# ------------------------------------------------------------------ cases --

def cases(dace, np, rng):
    N = dace.symbol('N')
    M = dace.symbol('M')
    n, m = 37, 11
    out = []

    # 1. `if x[i] < lo:` at the top level, float64 and float32.
    @dace.program
    def interstate_float_cond(x: dace.float64[N], xf: dace.float32[N], y: dace.float64[N], yf: dace.float32[N],
                              lo: dace.float64, lof: dace.float32):
        for i in range(N):
            if x[i] < lo:
                y[i] = lo - x[i]
            else:
                y[i] = x[i] * 0.5
            if xf[i] >= lof:
                yf[i] = xf[i] + lof
            else:
                yf[i] = -xf[i]

    x = rng.uniform(-2.0, 2.0, n)
    xf = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    lo, lof = np.float64(0.375), np.float32(-0.625)
    out.append(Case(
        'interstate_float_cond',
        '`for i in range(N): if x[i] < lo:` on float64 and float32 arrays (DaCe assigns `__tmp = x[i]` on an '
        'interstate edge: a symbol of the element type, truncated if declared as an integer)',
        lambda: interstate_float_cond.to_sdfg(simplify=True),
        {'N': n}, {'x': x, 'xf': xf, 'lo': lo, 'lof': lof},
        {'y': np.where(x < lo, lo - x, x * 0.5), 'yf': np.where(xf >= lof, xf + lof, -xf).astype(np.float32)},
        (1e-6, 1e-6), ['interstate_symbol', 'float_symbol', 'loop', 'branch', 'scalar_arg'],
        ['interstate_float_cond']))

    # 2. The same inside nested @dace.programs: one called per map iteration
    #    (stays a NestedSDFG) and one called at the top level.
    @dace.program
    def row_clip(row: dace.float32[M], out: dace.float32[M], lo: dace.float32):
        for j in range(M):
            if row[j] < lo:
                out[j] = lo
            else:
                out[j] = row[j] * 2.0

    @dace.program
    def scan_sign(v: dace.float64[N], w: dace.float64[N], hi: dace.float64):
        for i in range(N):
            if v[i] > hi:
                w[i] = v[i] - hi
            else:
                w[i] = hi

    @dace.program
    def interstate_nested_cond(a: dace.float32[N, M], b: dace.float32[N, M], lo: dace.float32,
                               v: dace.float64[N], w: dace.float64[N], hi: dace.float64):
        for i in dace.map[0:N]:
            row_clip(a[i], b[i], lo)
        scan_sign(v, w, hi)

    a = rng.uniform(-1.5, 1.5, (n, m)).astype(np.float32)
    v = rng.uniform(-3.0, 3.0, n)
    lo2, hi = np.float32(0.25), np.float64(-0.5)
    out.append(Case(
        'interstate_nested_cond',
        'nested @dace.programs with `if row[j] < lo:` (float32, called per map iteration: a NestedSDFG) and '
        '`if v[i] > hi:` (float64, called once)',
        lambda: interstate_nested_cond.to_sdfg(simplify=True),
        {'N': n, 'M': m}, {'a': a, 'lo': lo2, 'v': v, 'hi': hi},
        {'b': np.where(a < lo2, lo2, a * np.float32(2.0)).astype(np.float32), 'w': np.where(v > hi, v - hi, hi)},
        (1e-6, 1e-6), ['interstate_symbol', 'float_symbol', 'nested_sdfg', 'program_call', 'map', 'loop', 'branch'],
        ['interstate_nested_cond_']))

    # 3. Integer and bool conditions (int32, int64 beyond 32 bits, uint8, bool).
    @dace.program
    def interstate_int_bool(k: dace.int32[N], big: dace.int64[N], small: dace.uint8[N], flags: dace.bool[N],
                            o: dace.int64[N], t: dace.int32, bt: dace.int64):
        for i in range(N):
            if big[i] > bt:
                o[i] = big[i] - bt
            elif flags[i]:
                o[i] = k[i]
            elif small[i] >= 128:
                o[i] = small[i] + t
            else:
                o[i] = k[i] * t

    k = rng.integers(-1000, 1000, n).astype(np.int32)
    big = rng.integers(4_000_000_000, 6_000_000_000, n).astype(np.int64)
    small = rng.integers(0, 256, n).astype(np.uint8)
    flags = rng.integers(0, 2, n).astype(np.bool_)
    t, bt = np.int32(7), np.int64(5_000_000_000)
    o = np.where(big > bt, big - bt,
                 np.where(flags, k.astype(np.int64),
                          np.where(small >= 128, small.astype(np.int64) + t, k.astype(np.int64) * t)))
    out.append(Case(
        'interstate_int_bool',
        '`if big[i] > bt: ... elif flags[i]: ... elif small[i] >= 128:` on int64 (values beyond 32 bits), '
        'bool and uint8 arrays',
        lambda: interstate_int_bool.to_sdfg(simplify=True),
        {'N': n}, {'k': k, 'big': big, 'small': small, 'flags': flags, 't': t, 'bt': bt}, {'o': o},
        (0, 0), ['interstate_symbol', 'loop', 'branch', 'scalar_arg'], []))

    # 4. Arithmetic results assigned on interstate edges, read by tasklets.
    ARITH = {
        'fa': 'x[i] * 0.5',              # float64
        'fb': 'xf[i] * 2',               # float32 (float * int64)
        'fc': 'xf[i] * 0.5',             # float64 (float * double)
        'ka': 'n[i] // 3',               # int64
        'kb': 'n[i] * 2 + 1',            # int64
        'fd': 'float(n[i]) / 4',         # float64
        'fe': 'max(x[i], 0.25)',         # float64
        'ff': 'abs(xf[i])',              # float32
        'bg': 'x[i] > lo',               # bool
    }

    def arith():
        sdfg = dace.SDFG('interstate_arith')
        sdfg.add_array('x', [N], dace.float64)
        sdfg.add_array('xf', [N], dace.float32)
        sdfg.add_array('n', [N], dace.int32)
        sdfg.add_scalar('lo', dace.float64)
        sdfg.add_array('o', [N, 9], dace.float64)
        sdfg.add_array('of', [N, 2], dace.float32)
        before = sdfg.add_state('before', is_start_block=True)
        head = sdfg.add_state('head')
        body = sdfg.add_state('body')
        after = sdfg.add_state('after')
        sdfg.add_edge(head, body, dace.InterstateEdge(assignments=dict(ARITH)))
        code = '\n'.join([f'o{j} = {s}' for j, s in enumerate(['fa', 'fc', 'ka', 'kb', 'fd', 'fe', 'bg'])] +
                         ['p0 = fb', 'p1 = ff', 'o7 = fa + fb', 'o8 = fc * ka'])
        outs = {f'o{j}' for j in range(9)} | {'p0', 'p1'}
        tk = body.add_tasklet('use', {}, outs, code)
        ow, ofw = body.add_write('o'), body.add_write('of')
        for j in range(9):
            body.add_edge(tk, f'o{j}', ow, None, dace.Memlet(f'o[i, {j}]'))
        for j in range(2):
            body.add_edge(tk, f'p{j}', ofw, None, dace.Memlet(f'of[i, {j}]'))
        sdfg.add_loop(before, head, after, 'i', '0', 'i < N', 'i + 1', body)  # loop_end_state (DaCe 1), loop_end_block (DaCe 2)
        sdfg.arg_names = ['x', 'xf', 'n', 'lo', 'o', 'of']
        return sdfg

    x4 = rng.uniform(-2.0, 2.0, n)
    xf4 = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    n4 = rng.integers(0, 100, n).astype(np.int32)  # DaCe's `//` on interstate edges truncates: keep n >= 0
    lo4 = np.float64(0.125)
    fa, fb = x4 * 0.5, xf4 * np.float32(2)
    fc = xf4.astype(np.float64) * 0.5
    ka = (n4 // 3).astype(np.int64)
    kb = n4.astype(np.int64) * 2 + 1
    fd = n4.astype(np.float64) / 4
    fe = np.maximum(x4, 0.25)
    ff = np.abs(xf4)
    bg = (x4 > lo4).astype(np.float64)
    o4 = np.stack([fa, fc, ka, kb, fd, fe, bg, fa + fb, fc * ka], axis=1).astype(np.float64)
    of4 = np.stack([fb, ff], axis=1).astype(np.float32)
    out.append(Case(
        'interstate_arith',
        'interstate edges assign arithmetic results (`fa = x[i] * 0.5`, `fb = xf[i] * 2`, `ka = n[i] // 3`, '
        '`fd = float(n[i]) / 4`, `fe = max(x[i], 0.25)`, `bg = x[i] > lo`, ...) that a tasklet reads',
        arith, {'N': n}, {'x': x4, 'xf': xf4, 'n': n4, 'lo': lo4}, {'o': o4, 'of': of4},
        (1e-6, 1e-6), ['interstate_symbol', 'float_symbol', 'loop', 'scalar_arg'], ['interstate_arith']))

    # 5. A float symbol passed into a nested SDFG through its symbol mapping
    #    (declared there as float64 and as float32), and used on the nested
    #    SDFG's own interstate edges.
    def nested_symbols():
        inner = dace.SDFG('scale_inner')
        inner.add_symbol('s', dace.float64)
        inner.add_symbol('sf', dace.float32)
        inner.add_array('v', [N], dace.float64)
        inner.add_array('w', [N, 2], dace.float64)
        ib = inner.add_state('ibefore', is_start_block=True)
        ih = inner.add_state('ihead')
        ibody = inner.add_state('ibody')
        ia = inner.add_state('iafter')
        inner.add_edge(ih, ibody, dace.InterstateEdge(assignments={'t': 'v[j] * s', 'tf': 'sf + 1'}))
        tk = ibody.add_tasklet('use', {}, {'o0', 'o1'}, 'o0 = t\no1 = tf * sf')
        iw = ibody.add_write('w')
        ibody.add_edge(tk, 'o0', iw, None, dace.Memlet('w[j, 0]'))
        ibody.add_edge(tk, 'o1', iw, None, dace.Memlet('w[j, 1]'))
        inner.add_loop(ib, ih, ia, 'j', '0', 'j < N', 'j + 1', ibody)

        sdfg = dace.SDFG('interstate_nested_symbols')
        sdfg.add_array('x', [N], dace.float64)
        sdfg.add_array('y', [N, 2], dace.float64)
        s0 = sdfg.add_state('s0', is_start_block=True)
        s1 = sdfg.add_state('s1')
        sdfg.add_edge(s0, s1, dace.InterstateEdge(assignments={'sc': 'x[0] * 0.5 + 0.25'}))
        mapping = {'N': 'N', 's': 'sc', 'sf': 'sc'}
        if dace.__version__.startswith('1.'):
            ns = s1.add_nested_sdfg(inner, sdfg, {'v'}, {'w'}, symbol_mapping=mapping)
        else:
            ns = s1.add_nested_sdfg(inner, {'v'}, {'w'}, symbol_mapping=mapping)
        s1.add_edge(s1.add_read('x'), None, ns, 'v', dace.Memlet('x[0:N]'))
        s1.add_edge(ns, 'w', s1.add_write('y'), None, dace.Memlet('y[0:N, 0:2]'))
        sdfg.arg_names = ['x', 'y']
        return sdfg

    x5 = rng.uniform(-2.0, 2.0, n)
    sc = x5[0] * 0.5 + 0.25
    sf = np.float32(sc)
    tf = sf + np.float32(1)
    y5 = np.stack([x5 * sc, np.full(n, np.float64(tf * sf))], axis=1)
    out.append(Case(
        'interstate_nested_symbols',
        'an interstate symbol `sc = x[0] * 0.5 + 0.25` (float64) passed into a nested SDFG through its symbol '
        'mapping, declared there as float64 `s` and float32 `sf`, which the nested SDFG\'s own interstate edges '
        'use (`t = v[j] * s`, `tf = sf + 1`)',
        nested_symbols, {'N': n}, {'x': x5}, {'y': y5},
        (1e-6, 1e-6), ['interstate_symbol', 'float_symbol', 'nested_sdfg', 'symbol_mapping', 'loop'],
        ['interstate_nested_symbols', 'scale_inner']))
    return out


if __name__ == '__main__':
    if len(sys.argv) > 2 and sys.argv[1] == '--stage':
        stage(sys.argv[2], sys.argv[3])
    else:
        main()
