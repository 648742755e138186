#!/usr/bin/env python3
"""Generates fixtures/corpus/tasklet_python/: explicit tasklets (`with dace.tasklet:`)
whose Python code uses if/elif/else, local variables, `for` over range(...),
augmented assignment, `pass`, comparison chains, min/max of several arguments
and the math functions DaCe's C++ runtime accepts, with a case.json in the
corpus format (see fixtures/corpus/README.md).

Run with DaCe 1.0.2:   /work/venv-dace1/bin/python scripts/make-tasklet-fixtures.py [OUTDIR]
Run with DaCe 2.0.0a10 afterwards to add program.v2.sdfg:
                       /work/venv-dace2/bin/python scripts/make-tasklet-fixtures.py [OUTDIR]
(default OUTDIR: fixtures/corpus). DaCe 1 writes the inputs, outputs and
case.json; DaCe 2 adds its SDFG and ABI entry. Both compile and run their
own SDFG (cmake on PATH) and check it against the numpy reference below.

The reference follows what DaCe's generated C++ computes, which is not
Python in every construct (checked against DaCe's compiled program):
* `a < b < c` is printed unchanged into C++, i.e. `(a < b) < c`;
* integer `//` and `/` are C's truncating division, `%` is `(a + b) % b`
  in C (the frontend's rewrite), float `//` is `(int)floor(a / b)`;
* `round` is C's (halfway cases away from zero);
* `math.asin`, `math.acos` and `math.atan` are left out: DaCe's runtime has
  no floating-point `dace::math::asin/acos/atan`, and its generated code
  silently computes something else (sdfgc refuses them; bare `asin` is fine);
* a local's type is what C++ `auto` deduces from its first assignment
  (`c = 0` is an `int`);
* `range` yields `int` and stops when its value equals the bound: a
  non-empty range whose length is no multiple of its step never ends under
  DaCe (the fixture uses none; sdfgc stops as Python does).
"""
import math
import os

import numpy as np
import dace

from fixturelib import (abi_entry, generator_info, load_case, out_dir, output_entry, scratch_dir, write_array_args,
                        write_json)

SEED = 20261201
OUT = out_dir(os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'corpus'))
V2 = dace.__version__.startswith('2')
N = dace.symbol('N')


@dace.program
def tasklet_python(a: dace.float64[N], k: dace.int64[N], o: dace.float64[N], p: dace.int64[N],
                   q: dace.float64[N]):
    for i in dace.map[0:N]:
        with dace.tasklet:
            x << a[i]
            kk << k[i]
            y >> o[i]
            z >> p[i]
            t = x * 2.0
            c = 0
            if x > 0.5:
                t += 1.0
            elif x < -0.5:
                t -= 1.0
                c = c - 1
            else:
                pass
            for j in range(3):
                c += j
            for j in range(1, 7, 2):
                c += j * kk
            for j in range(6, 0, -2):
                c -= j
            st = 2 if kk > 0 else -3
            for j in range(-5, 7 if st > 0 else -20, st):
                j = j * 100
                c += j // 100
            x += 0.25
            b = x > 1.0 and kk > 0
            if b:
                c += 1000
            if 0.0 < x < 1.0:
                t = t * 3
            m = min(x, 0.3, t)
            n = max(kk, 1, 2)
            d = kk // 3
            r = kk % 3
            w = kk / 2
            y = t + m
            y += abs(x) + x // 0.75
            z = c + d + r + n + abs(kk) + w
            z *= 2
            if kk > 50 and x > 0:
                z -= 1000
            elif not (kk < -50):
                z += 7
    for i in dace.map[0:N]:
        with dace.tasklet:
            x << a[i]
            kk << k[i]
            v >> q[i]
            ax = abs(x) + 1.0
            s = cbrt(x) + tgamma(ax) + lgamma(ax) + trunc(x) + floor(x) + ceil(x) + round(x)
            s += asinh(x) + acosh(ax) + atanh(x / 4.0) + erf(x) + erfc(x) + expm1(x / 4.0)
            s += log1p(ax) + exp2(x) + hypot(x, 2.0) + fmin(x, 0.1) + fmax(x, 0.1)
            s += math.sqrt(ax) + math.exp(x / 4.0) + math.log(ax) + math.log10(ax)
            s += math.sin(x) + math.cos(x) + math.tan(x / 4.0) + math.tanh(x)
            s += asin(x / 4.0) + acos(x / 4.0) + atan(x) + math.sinh(x / 4.0)
            s += math.cosh(x / 4.0) + math.pow(ax, 1.5) + math.ifloor(x * 1.5)
            s += sign(x) + reciprocal(ax) + copysign(1.0, x) + fmod(x, 0.7) + atan2(x, 1.5)
            s += log2(ax) + sqrt(ax) + exp(x / 4.0) + sin(x) + remainder(x, 0.7)
            if isfinite(x) and not isnan(x) and not isinf(x):
                s += 1.0
            if signbit(x):
                s -= 0.5
            for j in range(abs(kk) % 4):
                s += j * 0.25
            v = s + sign(kk) + min(kk, 5)


def c_round(x):
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


def int32(v):
    """C++ conversion of an int64 value into an `int` (wraps)."""
    return np.int64(np.int32(np.int64(v) & 0xFFFFFFFF if v >= 0 else v))


def reference(a, k):
    n = len(a)
    o = np.zeros(n)
    p = np.zeros(n, dtype=np.int64)
    q = np.zeros(n)
    for i in range(n):
        x, kk = float(a[i]), int(k[i])
        t = x * 2.0
        c = 0
        if x > 0.5:
            t += 1.0
        elif x < -0.5:
            t -= 1.0
            c = c - 1
        for j in range(3):
            c += j
        for j in range(1, 7, 2):
            c = int(np.int32(c + j * kk))
        for j in range(6, 0, -2):
            c -= j
        st = 2 if kk > 0 else -3
        for j in range(-5, 7 if st > 0 else -20, st):
            j = j * 100
            c += int(j / 100)
        x += 0.25
        b = x > 1.0 and kk > 0
        if b:
            c += 1000
        if float(0.0 < x) < 1.0:  # C++: (0.0 < x) < 1.0
            t = t * 3
        m = x if x < min(0.3, t) else min(0.3, t)
        nn = max(kk, 1, 2)
        d = int(kk / 3)  # C truncation
        r = math.fmod(kk + 3, 3)  # C % of (kk + 3)
        w = int(kk / 2)
        y = t + m
        y += abs(x) + math.floor(x / 0.75)
        z = c + d + int(r) + nn + abs(kk) + w
        z *= 2
        if kk > 50 and x > 0:
            z -= 1000
        elif not (kk < -50):
            z += 7
        o[i], p[i] = y, z
        x = float(a[i])
        ax = abs(x) + 1.0
        s = (np.cbrt(x) + math.gamma(ax) + math.lgamma(ax) + math.trunc(x) + math.floor(x) + math.ceil(x)
             + float(c_round(x)))
        s += math.asinh(x) + math.acosh(ax) + math.atanh(x / 4.0) + math.erf(x) + math.erfc(x) + math.expm1(x / 4.0)
        s += math.log1p(ax) + 2.0**x + math.hypot(x, 2.0) + min(x, 0.1) + max(x, 0.1)
        s += math.sqrt(ax) + math.exp(x / 4.0) + math.log(ax) + math.log10(ax)
        s += math.sin(x) + math.cos(x) + math.tan(x / 4.0) + math.tanh(x)
        s += math.asin(x / 4.0) + math.acos(x / 4.0) + math.atan(x) + math.sinh(x / 4.0)
        s += math.cosh(x / 4.0) + ax**1.5 + math.floor(x * 1.5)
        s += float(np.sign(x)) + 1.0 / ax + math.copysign(1.0, x) + math.fmod(x, 0.7) + math.atan2(x, 1.5)
        s += math.log2(ax) + math.sqrt(ax) + math.exp(x / 4.0) + math.sin(x) + math.remainder(x, 0.7)
        s += 1.0
        if math.copysign(1.0, x) < 0:
            s -= 0.5
        for j in range(abs(kk) % 4):
            s += j * 0.25
        q[i] = s + np.sign(kk) + min(kk, 5)
    return o, p, q


def main():
    name = 'tasklet_python'
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(SEED)
    special = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.0, -0.7, 0.2, 0.9, 0.75, -0.75])
    n = 64
    a = np.concatenate([special, rng.uniform(-3.0, 3.0, n - len(special))])
    k = rng.integers(-100, 101, n).astype(np.int64)
    k[:6] = [-7, -3, 0, 3, 7, 100]
    o, p, q = reference(a, k)
    inputs = {'a': a, 'k': k}
    outputs = {'o': o, 'p': p, 'q': q}

    sdfg = tasklet_python.to_sdfg(simplify=True)
    variant = 'program.v2.sdfg' if V2 else 'program.sdfg'
    sdfg.save(os.path.join(d, variant))
    # DaCe's own compiled program must agree with the reference.
    got = {'o': np.zeros(n), 'p': np.zeros(n, dtype=np.int64), 'q': np.zeros(n)}
    sdfg(a=a.copy(), k=k.copy(), N=n, **got)
    for key, want in outputs.items():
        assert np.allclose(got[key], want, rtol=1e-12, atol=1e-12), (key, got[key] - want)
    print(f'DaCe {dace.__version__} agrees with the reference')

    case_file = os.path.join(d, 'case.json')
    if V2:
        case = load_case(case_file)
        case['abi'][variant] = abi_entry(sdfg)
        case['v2'] = {'dace_version': dace.__version__, 'status': {variant: 'ok'}}
    else:
        args = write_array_args(d, list(inputs) + list(outputs), inputs, outputs)
        case = {
            'name': name,
            'description': __doc__.split('\n\n')[0].replace('\n', ' '),
            'symbols': {'N': n},
            'args': args,
            'outputs': [output_entry(nm, v, (1e-12, 1e-12)) for nm, v in outputs.items()],
            'abi': {variant: abi_entry(sdfg)},
            'features': ['tasklet_if', 'tasklet_for_range', 'tasklet_locals', 'augmented_assignment',
                         'comparison_chain', 'math_functions', 'int_floordiv', 'int_mod'],
            'notes': ('Reference computed as DaCe\'s C++ computes it (see the generator\'s docstring); '
                      'DaCe\'s compiled program agrees.'),
            'generator': generator_info('scripts/make-tasklet-fixtures.py', SEED),
        }
    write_json(case_file, case)
    print('wrote', d)


if __name__ == '__main__':
    scratch_dir('make-tasklet-fixtures')  # DaCe writes .dacecache/ here
    main()
