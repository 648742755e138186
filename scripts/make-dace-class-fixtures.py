#!/usr/bin/env python3
"""Generates fixtures/corpus/<family>/ for constructs that DaCe's own code
generator builds and runs, found outside DaCe's shown tests (issue 39): one
family per class, each built through DaCe's frontend or SDFG API, run by
DaCe's generator and checked against numpy before it is written.

* `const_nested`: a constant array (`add_constant`, shadowing a transient of
  the same name) passed down through two levels of nested SDFGs to a map
  that reads it (DaCe's nested functions take it as `const double *`).
* `vector_wcr`: DaCe's `Vectorization` (vector length 4, with postamble) of
  a map whose tasklet writes with write-conflict resolution: `B[i] += 2 * a`
  (a vector output into as many elements) and `S[0] += a`, `M[0] = max(M[0],
  a)` (vector outputs into one element: the vector is combined first, as
  DaCe's `vreduce_atomic`).
* `fortran_intrinsics`: a Fortran subroutine through DaCe's Fortran frontend
  calling the intrinsics whose replacements are DaCe runtime functions
  (`dace/frontend/fortran/intrinsics.py`: MOD and MODULO of reals and
  integers -> `Mod_float`, `Modulo_float`, `Mod`, `Modulo`; EXPONENT ->
  `frexp`; NINT -> `iround`; AINT, ANINT, SCALE, FLOOR, SIGN, DBLE, INT,
  MIN, MAX), on negative and positive operands.
* `consume_chunks`: a consume scope with a chunk size above one
  (`add_consume(..., chunksize=4)`, 2 processing elements) draining a stream
  that a map filled; a C++ tasklet gets the chunk as `const double *` and
  reads DaCe's `__dace_<label>_numelems` (the last chunk may hold fewer
  elements), summing squares into a write-conflict-resolved scalar.
* `complex_rint`: `np.rint` of complex64 and complex128 arrays (DaCe's
  `round` overload of dace/math.h: each part rounded, halves away from zero).

Run with DaCe 1.0.2 (program.sdfg) and, where a family has one, DaCe 2.x
(program.v2.sdfg):
    build/venv-dace/bin/python scripts/make-dace-class-fixtures.py [FAMILY ...]
(default: every family).
"""
import os
import sys

import numpy as np
import dace

from fixturelib import corpus_case, scratch_dir, write_array_case

SCRIPT = 'scripts/make-dace-class-fixtures.py'
SEED = 20261207


def const_nested(rng):
    n = 10
    cval = rng.random(n)

    inner2 = dace.SDFG('inner2')
    inner2.add_array('a', [n], dace.float64)
    inner2.add_array('c', [n], dace.float64)
    st = inner2.add_state()
    st.add_mapped_tasklet('m', dict(i=f'0:{n}'), dict(x=dace.Memlet('c[i]'), y=dace.Memlet('a[i]')),
                          'z = x * 2 + y', dict(z=dace.Memlet('a[i]')), external_edges=True)

    inner1 = dace.SDFG('inner1')
    inner1.add_array('a', [n], dace.float64)
    inner1.add_array('c', [n], dace.float64)
    s1 = inner1.add_state()
    nn = s1.add_nested_sdfg(inner2, inner1, {'a', 'c'}, {'a'})
    s1.add_edge(s1.add_read('a'), None, nn, 'a', dace.Memlet(f'a[0:{n}]'))
    s1.add_edge(s1.add_read('c'), None, nn, 'c', dace.Memlet(f'c[0:{n}]'))
    s1.add_edge(nn, 'a', s1.add_write('a'), None, dace.Memlet(f'a[0:{n}]'))

    sdfg = dace.SDFG('const_nested')
    sdfg.add_array('a', [n], dace.float64)
    sdfg.add_array('C', [n], dace.float64, transient=True)
    sdfg.add_constant('C', cval, sdfg.arrays['C'])
    s0 = sdfg.add_state()
    nn = s0.add_nested_sdfg(inner1, sdfg, {'a', 'c'}, {'a'})
    s0.add_edge(s0.add_read('a'), None, nn, 'a', dace.Memlet(f'a[0:{n}]'))
    s0.add_edge(s0.add_read('C'), None, nn, 'c', dace.Memlet(f'C[0:{n}]'))
    s0.add_edge(nn, 'a', s0.add_write('a'), None, dace.Memlet(f'a[0:{n}]'))
    a = rng.random(n)
    return dict(sdfg=sdfg, starts={'a': a}, refs={'a': a + 2 * cval}, symbols={},
                features=['nested_sdfg', 'constant_array', 'constant_transient', 'parallel_map'])


def vector_wcr(rng):
    from dace.transformation.dataflow import Vectorization
    N = dace.symbol('N')

    @dace.program
    def vector_wcr(A: dace.float32[N], B: dace.float32[N], S: dace.float32[1], M: dace.float32[1]):
        for i in dace.map[0:N]:
            with dace.tasklet:
                a << A[i]
                b >> B(1, lambda x, y: x + y)[i]
                s >> S(1, lambda x, y: x + y)[0]
                mx >> M(1, lambda x, y: max(x, y))[0]
                b = a * 2
                s = a
                mx = a

    sdfg = vector_wcr.to_sdfg(simplify=True)
    assert sdfg.apply_transformations(Vectorization, options=dict(vector_len=4, postamble=True)) == 1
    n = 23
    av = rng.integers(-50, 50, n).astype(np.float32)
    bv = rng.integers(-50, 50, n).astype(np.float32)
    sv = np.array([3], np.float32)
    mv = np.array([-1000], np.float32)
    return dict(sdfg=sdfg, starts={'A': av, 'B': bv, 'M': mv, 'S': sv},
                refs={'B': bv + 2 * av, 'S': sv + av.sum(), 'M': np.maximum(mv, av.max())}, symbols={'N': n},
                features=['vector', 'wcr', 'parallel_map'], tol=1e-6)


def consume_chunks(rng):
    N = dace.symbol('N')
    sdfg = dace.SDFG('consume_chunks')
    sdfg.add_array('A', [N], dace.float64)
    sdfg.add_array('out', [1], dace.float64)
    sdfg.add_stream('S', dace.float64, transient=True)
    fill = sdfg.add_state('fill')
    drain = sdfg.add_state_after(fill, 'drain')
    me, mx = fill.add_map('fill', dict(i='0:N'))
    push = fill.add_tasklet('push', {'x'}, {'y'}, 'y = x')
    fill.add_memlet_path(fill.add_read('A'), me, push, dst_conn='x', memlet=dace.Memlet('A[i]'))
    fill.add_memlet_path(push, mx, fill.add_access('S'), src_conn='y', memlet=dace.Memlet('S[0]', dynamic=True))
    ce, cx = drain.add_consume('cons', ('p', '2'), chunksize=4)
    t = drain.add_tasklet('sum_chunk', {'elems'}, {'o'},
                          'double acc = 0;\n'
                          'for (size_t i = 0; i < __dace_cons_numelems; ++i) acc += elems[i] * elems[i];\n'
                          'o = acc;', language=dace.Language.CPP)
    t.in_connectors['elems'] = dace.pointer(dace.float64)
    drain.add_edge(drain.add_access('S'), None, ce, 'IN_stream', dace.Memlet.from_array('S', sdfg.arrays['S']))
    drain.add_edge(ce, 'OUT_stream', t, 'elems', dace.Memlet('S[0]', dynamic=True))
    drain.add_edge(t, 'o', cx, 'IN_out', dace.Memlet('out[0]', wcr='lambda a, b: a + b'))
    drain.add_edge(cx, 'OUT_out', drain.add_write('out'), None, dace.Memlet('out[0]', wcr='lambda a, b: a + b'))
    cx.add_in_connector('IN_out')
    cx.add_out_connector('OUT_out')
    n = 1003  # not a multiple of the chunk
    av = rng.random(n)
    ov = np.array([0.5])
    return dict(sdfg=sdfg, starts={'A': av, 'out': ov}, refs={'out': ov + (av * av).sum()}, symbols={'N': n},
                features=['stream', 'consume', 'wcr', 'tasklet_cpp'], tol=1e-9)


FORTRAN_BODY = '''
r(1) = MOD(d(1), d(2))
r(2) = MOD(d(3), d(2))
r(3) = MODULO(d(1), d(2))
r(4) = MODULO(d(3), d(2))
r(5) = AINT(d(4))
r(6) = ANINT(d(4))
r(7) = SCALE(d(4), ki(1))
r(8) = FLOOR(d(3))
r(9) = SIGN(d(1), d(3))
r(10) = DBLE(ki(2))
r(11) = MIN(d(1), d(2), d(3))
r(12) = MAX(d(1), d(5))
k(1) = MOD(ki(3), ki(1))
k(2) = MOD(ki(4), ki(1))
k(3) = MODULO(ki(3), ki(1))
k(4) = MODULO(ki(4), ki(1))
k(5) = NINT(d(4))
k(6) = NINT(d(3))
k(7) = EXPONENT(d(4))
k(8) = INT(d(3))
k(9) = EXPONENT(d(5))
k(10) = FLOOR(d(4))
k(11) = NINT(d(6))
k(12) = MODULO(ki(4), ki(5))
'''


def fortran_intrinsics(rng):
    from dace.frontend.fortran import fortran_parser
    pad = ' ' * 20
    # Fixed-form source (a `C` in column 1 is a comment): every line indented.
    src = '\n'.join(pad + line for line in '''
PROGRAM intrinsic_math
implicit none
double precision, dimension(8) :: d
integer, dimension(8) :: ki
double precision, dimension(12) :: r
integer, dimension(12) :: k
CALL intrinsic_math_test_function(d, ki, r, k)
end

SUBROUTINE intrinsic_math_test_function(d, ki, r, k)
double precision, dimension(8) :: d
integer, dimension(8) :: ki
double precision, dimension(12) :: r
integer, dimension(12) :: k
'''.splitlines() + FORTRAN_BODY.splitlines() + ['END SUBROUTINE intrinsic_math_test_function'])
    # The frontend makes the program's arrays arguments only for a
    # subroutine named so (DaCe's own Fortran tests' convention).
    sdfg = fortran_parser.create_sdfg_from_string(src, 'intrinsic_math', False)
    sdfg.simplify()
    sdfg.name = 'fortran_intrinsics'
    d = np.array([7.5, -2.0, -7.5, 2.5, 1000.25, -2.5, 0, 0])
    ki = np.array([3, 5, -17, 17, -4, 0, 0, 0], np.int32)
    mod_f = lambda a, b: a - int(a / b) * b
    modulo_f = lambda a, b: a - np.floor(a / b) * b
    r = np.array([mod_f(d[0], d[1]), mod_f(d[2], d[1]), modulo_f(d[0], d[1]), modulo_f(d[2], d[1]),
                  np.trunc(d[3]), 3.0, d[3] * 2.0 ** ki[0], np.floor(d[2]), np.copysign(abs(d[0]), d[2]),
                  float(ki[1]), min(d[0], d[1], d[2]), max(d[0], d[4])])
    k = np.array([int(np.fmod(ki[2], ki[0])), int(np.fmod(ki[3], ki[0])), ki[2] % ki[0], ki[3] % ki[0],
                  3, -8, np.frexp(d[3])[1], int(d[2]), np.frexp(d[4])[1], np.floor(d[3]), -3, ki[3] % ki[4]],
                 np.int32)
    return dict(sdfg=sdfg, starts={'d': d, 'k': np.zeros(12, np.int32), 'ki': ki, 'r': np.zeros(12)},
                refs={'k': k, 'r': r}, symbols={}, features=['fortran', 'intrinsics', 'interstate'])


def complex_rint(rng):
    N = dace.symbol('N')

    @dace.program
    def complex_rint(A: dace.complex128[N], B: dace.complex128[N], C: dace.complex64[N], D: dace.complex64[N]):
        B[:] = np.rint(A)
        D[:] = np.rint(C)

    n = 9
    re = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -3.7, 12.2])
    av = (re + 1j * re[::-1]).astype(np.complex128)
    cv = av.astype(np.complex64)
    # halves away from zero, as C's round
    rnd = lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)
    ref = lambda z: (rnd(z.real) + 1j * rnd(z.imag)).astype(z.dtype)
    return dict(sdfg=complex_rint.to_sdfg(simplify=True),
                starts={'A': av, 'B': np.zeros(n, np.complex128), 'C': cv, 'D': np.zeros(n, np.complex64)},
                refs={'B': ref(av), 'D': ref(cv)}, symbols={'N': n}, features=['complex', 'ufunc'])


FAMILIES = {'complex_rint': complex_rint, 'consume_chunks': consume_chunks, 'const_nested': const_nested, 'vector_wcr': vector_wcr, 'fortran_intrinsics': fortran_intrinsics}


def main():
    scratch_dir('make-dace-class-fixtures', venv_cmake=True)
    wanted = sys.argv[1:] or list(FAMILIES)
    for name in wanted:
        rng = np.random.default_rng(SEED)
        case = FAMILIES[name](rng)
        sdfg = case['sdfg']
        sdfg.validate()
        tol = case.get('tol', 1e-12)
        got = {k: v.copy() for k, v in case['starts'].items()}
        sdfg.compile()(**got, **case['symbols'])
        for k, ref in case['refs'].items():
            assert np.allclose(got[k], ref, rtol=tol, atol=tol), (name, k, got[k], ref)
        out, variant = corpus_case(name)
        doc = [p for p in __doc__.split('\n* ') if p.startswith(f'`{name}`: ')][0].split(': ', 1)[1]
        doc = doc.split('\n\n')[0]
        write_array_case(out, variant, sdfg, case['starts'], case['refs'], name=name,
                         description=' '.join(doc.split()), symbols=case['symbols'],
                         features=case['features'], script=SCRIPT, tol=tol)
        complex_as_pairs(os.path.join(out, 'case.json'))


def complex_as_pairs(path):
    """A complex array of the case is described as the harness reads it:
    its real element type with a last dimension of 2 (the same bytes) and
    `complex_dtype`."""
    from fixturelib import load_case, write_json
    case = load_case(path)
    for entry in case['args'] + case['outputs']:
        if entry['dtype'] in ('complex64', 'complex128'):
            entry['complex_dtype'] = entry['dtype']
            entry['dtype'] = 'float32' if entry['dtype'] == 'complex64' else 'float64'
            entry['shape'] = entry['shape'] + [2]
    write_json(path, case)


if __name__ == '__main__':
    sys.exit(main())
