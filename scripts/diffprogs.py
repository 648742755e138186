#!/usr/bin/env python3
"""Differential testing on programs written for it, not by it: a set of small
NumPy programs in DaCe's Python frontend (the shapes users write: slices,
reductions, broadcasting, masks, loops, conditionals, integer arithmetic,
views), each saved as an SDFG three ways (as parsed, simplified, and
auto-optimized for the CPU), then run through scripts/difftest.py: DaCe's own
library and sdfgc's, same inputs, outputs compared, in the default and the
external memory mode.

    <venv with DaCe>/bin/python scripts/diffprogs.py [--filter NAME] [--out DIR]
        [--variants parsed,simplified,autoopt] [--modes default,external]
    <venv with DaCe 1.0.2>/bin/python scripts/diffprogs.py --save-fixtures fixtures/programs

Prints one JSON line per run and a table; exit 0 iff every run agrees (a
program DaCe itself cannot parse or build is reported, not counted as sdfgc's).

--save-fixtures DIR writes each program as a case folder (case.json in the
corpus format, inputs, and the outputs of DaCe's own library on them):
`program.sdfg` (simplified), `program.parsed.sdfg` and `program.autoopt.sdfg`,
so that the test suite checks them on every run without DaCe. Run again with
DaCe 2.x (its venv's python) to add `program.v2.sdfg` and
`program.v2.autoopt.sdfg` to every case (DaCe 2's library must reproduce
the stored outputs).
"""
import argparse
import json
import os
import subprocess
import sys

import dace
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N, M, K = (dace.symbol(s) for s in "NMK")
PROGRAMS = {}
# Sizes a program's fixture uses instead of SYMBOLS (e.g. more elements than
# one tile of DaCe's auto-optimized maps, so that threads meet).
PROGRAM_SYMBOLS = {}
# case.json `features` of a program's fixture (`parallel_map`: the tests run
# every variant of it under ThreadSanitizer).
PROGRAM_FEATURES = {}
# Inputs a program's fixture needs instead of random ones (`inputs(rng,
# sizes)` returns the arguments to replace, e.g. a valid CSR structure), and
# an independent check of DaCe's outputs (`check(inputs, outputs, sizes)`
# raises on a difference, e.g. against scipy).
PROGRAM_INPUTS = {}
PROGRAM_CHECKS = {}


def program(f=None, features=(), inputs=None, check=None, **symbols):
    """Registers a DaCe program under its Python name (`@program(N=300)`:
    with its own fixture sizes)."""
    def register(g):
        PROGRAMS[g.__name__] = dace.program(g)
        PROGRAM_SYMBOLS[g.__name__] = symbols
        PROGRAM_FEATURES[g.__name__] = list(features)
        PROGRAM_INPUTS[g.__name__] = inputs
        PROGRAM_CHECKS[g.__name__] = check
        return g
    return register(f) if f is not None else register


class SdfgBuilder:
    """A program given as a function that builds its SDFG (library nodes
    expanded as DaCe's tests do) instead of a `@dace.program`."""

    def __init__(self, build):
        self.build = build

    def to_sdfg(self, simplify=True):
        sdfg = self.build()
        if simplify:
            sdfg.simplify()
        return sdfg


def sdfg_program(features=(), inputs=None, check=None, **symbols):
    """Registers an SDFG builder (see `SdfgBuilder`) like `program`."""
    def register(g):
        PROGRAMS[g.__name__] = SdfgBuilder(g)
        PROGRAM_SYMBOLS[g.__name__] = symbols
        PROGRAM_FEATURES[g.__name__] = list(features)
        PROGRAM_INPUTS[g.__name__] = inputs
        PROGRAM_CHECKS[g.__name__] = check
        return g
    return register


@program
def axpy_slices(x: dace.float64[N], y: dace.float64[N], a: dace.float64):
    y[1:] = a * x[:-1] + y[1:]


# 4-byte rows of 4,400 bytes: sdfgc pads the transient that each update
# goes through (rows of 4 KiB or more), which is then copied back row by
# row; the symbolic comparisons of the copy must not take the padded row
# for M (below 1,024 elements it is M).
@program(N=3, M=1100)
def padded_rows_copy(A: dace.int32[N, M], B: dace.float32[N, M]):
    A[:] = np.minimum(A, np.add.outer(A[:, 0], A[0, :]))
    B[:] = np.maximum(B, np.add.outer(B[:, 1], B[1, :]) * np.float32(0.5))


@program
def reverse_step(x: dace.float64[N], y: dace.float64[N]):
    y[:] = x[::-1]


@program
def strided_even(x: dace.float64[N], y: dace.float64[N]):
    y[::2] = x[::2] * 2.0


@program
def sum_axis0(A: dace.float64[N, M], s: dace.float64[M]):
    s[:] = np.sum(A, axis=0)


@program
def sum_axis1(A: dace.float64[N, M], s: dace.float64[N]):
    s[:] = np.sum(A, axis=1)


@program
def max_min_all(A: dace.float64[N, M], r: dace.float64[2]):
    r[0] = np.max(A)
    r[1] = np.min(A)


@program
def mean_std(A: dace.float64[N], r: dace.float64[2]):
    m = np.mean(A)
    r[0] = m
    r[1] = np.sqrt(np.sum((A - m) ** 2) / N)


@program
def broadcast_rows(A: dace.float64[N, M], v: dace.float64[M], B: dace.float64[N, M]):
    B[:] = A + v


@program
def broadcast_cols(A: dace.float64[N, M], v: dace.float64[N], B: dace.float64[N, M]):
    for i in dace.map[0:N]:
        B[i, :] = A[i, :] * v[i]


@program
def outer_product(a: dace.float64[N], b: dace.float64[M], C: dace.float64[N, M]):
    C[:] = np.outer(a, b)


@program
def transpose_copy(A: dace.float64[N, M], B: dace.float64[M, N]):
    B[:] = np.transpose(A)


@program
def matmul_chain(A: dace.float64[N, K], B: dace.float64[K, M], C: dace.float64[M, N], D: dace.float64[N, N]):
    D[:] = A @ B @ C


@program
def matvec_T(A: dace.float64[N, M], x: dace.float64[N], y: dace.float64[M]):
    y[:] = A.T @ x


@program
def where_clip(x: dace.float64[N], y: dace.float64[N]):
    y[:] = np.where(x > 0.25, x, 0.25 - x)


@program
def minimum_maximum(x: dace.float64[N], z: dace.float64[N], y: dace.float64[N]):
    y[:] = np.maximum(np.minimum(x, z), -0.5)


@program
def abs_exp_log(x: dace.float64[N], y: dace.float64[N]):
    y[:] = np.log(np.abs(x) + 1.0) + np.exp(-x * x)


@program
def int_floor_mod(a: dace.int64[N], b: dace.int64[N], c: dace.int64[N], d: dace.int64[N]):
    for i in dace.map[0:N]:
        c[i] = (a[i] - 2) // (b[i] + 1)
        d[i] = (a[i] - 2) % (b[i] + 1)


@program
def int_pow_shift(a: dace.int32[N], c: dace.int32[N]):
    for i in dace.map[0:N]:
        c[i] = (a[i] ** 2) + (a[i] << 1) - (a[i] >> 1) + (a[i] & 1) + (a[i] | 2) + (a[i] ^ 3)


@program
def float_pow(x: dace.float64[N], y: dace.float64[N]):
    y[:] = x ** 3 + np.abs(x) ** 0.5


@program
def mixed_int_float(a: dace.int32[N], x: dace.float32[N], y: dace.float64[N]):
    y[:] = a / 3 + x * 2


@program
def bool_mask_count(x: dace.float64[N], c: dace.int64[1]):
    c[0] = 0
    for i in range(N):
        if x[i] > 0:
            c[0] += 1


@program
def scan_cumsum(x: dace.float64[N], y: dace.float64[N]):
    y[0] = x[0]
    for i in range(1, N):
        y[i] = y[i - 1] + x[i]


@program
def while_halving(x: dace.float64[N], r: dace.float64[1]):
    s = np.sum(np.abs(x)) + 1.0
    n = 0
    while s > 0.01:
        s = s / 2
        n += 1
    r[0] = s + n


@program
def loop_break(x: dace.float64[N], r: dace.int64[1]):
    r[0] = -1
    for i in range(N):
        if x[i] > 0.5:
            r[0] = i
            break


@program
def loop_continue(x: dace.float64[N], y: dace.float64[N]):
    for i in range(N):
        if x[i] < 0:
            continue
        y[i] = x[i] * 3.0


@program
def nested_loops_triangle(A: dace.float64[N, N], s: dace.float64[1]):
    s[0] = 0.0
    for i in range(N):
        for j in range(i + 1):
            s[0] += A[i, j]


@program
def stencil_2d(A: dace.float64[N, M], B: dace.float64[N, M]):
    B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])


@program
def time_steps(A: dace.float64[N], B: dace.float64[N], T: dace.int32):
    for _ in range(T):
        B[1:-1] = 0.5 * (A[:-2] + A[2:])
        A[1:-1] = 0.5 * (B[:-2] + B[2:])


@program
def temp_array(x: dace.float64[N], y: dace.float64[N]):
    t = np.empty_like(x)
    t[:] = x * x
    u = np.zeros((N,), dtype=np.float64)
    u[:] = t + 1.0
    y[:] = u / (t + 2.0)


@program
def scalar_return(x: dace.float64[N]) -> dace.float64[1]:
    r = np.ndarray((1,), dtype=np.float64)
    r[0] = np.sum(x) * 2.0
    return r


@program
def array_return(x: dace.float64[N]):
    return x * 2.0 + 1.0


@program
def conditional_branch(x: dace.float64[N], y: dace.float64[N], flag: dace.int32):
    if flag > 2:
        y[:] = x + 1.0
    elif flag == 2:
        y[:] = x - 1.0
    else:
        y[:] = -x


@program
def data_dependent_branch(x: dace.float64[N], y: dace.float64[N]):
    if np.sum(x) > 0:
        y[:] = x * 2.0
    else:
        y[:] = x * -2.0


@program
def argmax_loop(x: dace.float64[N], r: dace.int64[1]):
    best = x[0]
    idx = 0
    for i in range(1, N):
        if x[i] > best:
            best = x[i]
            idx = i
    r[0] = idx


@program(N=1000)
def histogram_wcr(a: dace.int64[N], h: dace.int64[8]):
    for i in dace.map[0:N]:
        with dace.tasklet:
            v << a[i]
            out >> h(1, lambda p, q: p + q)[:]
            out[v % 8] = 1


@program
def column_slice_view(A: dace.float64[N, M], y: dace.float64[N]):
    col = A[:, 1]
    y[:] = col * 2.0


@program
def row_slice_update(A: dace.float64[N, M]):
    A[0, :] = A[N - 1, :]
    A[:, 0] = A[:, M - 1]


@program
def reshape_flat(A: dace.float64[N, M], y: dace.float64[N * M]):
    y[:] = np.reshape(A, (N * M,)) + 1.0


@program
def float32_accum(x: dace.float32[N], r: dace.float32[1]):
    r[0] = np.sum(x * x)


@program
def complex_mul(a: dace.complex128[N], b: dace.complex128[N], c: dace.complex128[N]):
    c[:] = a * np.conj(b) + 1j


@program
def nested_call_inner(x: dace.float64[N], y: dace.float64[N]):
    y[:] = x * 0.5


@program
def nested_call(x: dace.float64[N], y: dace.float64[N], z: dace.float64[N]):
    nested_call_inner(x, y)
    nested_call_inner(y, z)


@program
def softmax_rows(A: dace.float64[N, M], B: dace.float64[N, M]):
    mx = np.max(A, axis=1)
    e = np.exp(A - mx[:, np.newaxis])
    s = np.sum(e, axis=1)
    B[:] = e / s[:, np.newaxis]


@program
def dot_norm(x: dace.float64[N], y: dace.float64[N], r: dace.float64[2]):
    r[0] = np.dot(x, y)
    r[1] = np.linalg.norm(x)


@program
def triangular_update(A: dace.float64[N, N]):
    for i in range(1, N):
        for j in dace.map[0:i]:
            A[i, j] = A[i, j] - A[i - 1, j] * 0.5


@program
def symbol_expr_sizes(x: dace.float64[2 * N + 1], y: dace.float64[N]):
    y[:] = x[1:2 * N:2] + x[0:2 * N:2]


@program
def max_reduce_int(a: dace.int32[N, M], r: dace.int32[M]):
    r[:] = np.max(a, axis=0)


@program
def bool_logic(x: dace.float64[N], y: dace.float64[N], r: dace.bool_[N]):
    r[:] = np.logical_and(x > 0, np.logical_not(y > 0)) | (x == y)


@program
def ones_fill_eye(A: dace.float64[N, N]):
    A[:] = np.eye(N) + np.ones((N, N)) * 0.5


@program(N=300)
def map_local_scalar(A: dace.float64[N, M], r: dace.float64[N]):
    for i in dace.map[0:N]:
        acc = 0.0
        for j in range(M):
            acc = acc + A[i, j] * A[i, j]
        r[i] = np.sqrt(acc)


@program
def copy_with_offset_scalar(x: dace.float64[N], y: dace.float64[N], off: dace.int32):
    for i in range(off, N):
        y[i] = x[i - off]


@program
def sign_floor_ceil(x: dace.float64[N], y: dace.float64[N]):
    y[:] = np.floor(x * 3.0) + np.ceil(x * 2.0) + np.sign(x)


@program
def int_division_true(a: dace.int64[N], b: dace.float64[N]):
    b[:] = a / 2


@program
def reverse_loop(x: dace.float64[N], y: dace.float64[N]):
    for i in range(N - 1, -1, -1):
        y[N - 1 - i] = x[i] * (i + 1)


@program
def step_loop_down(x: dace.float64[N], y: dace.float64[N]):
    for i in range(N - 1, 0, -2):
        y[i] = x[i] + x[i - 1]


@program
def augassign_slices(A: dace.float64[N, M], B: dace.float64[N, M]):
    A[1:, :] += B[:-1, :]
    A[:, 0] -= 1.0
    A *= 0.5


@program
def arange_linspace(y: dace.float64[N], z: dace.float64[N]):
    y[:] = np.arange(N) * 0.25
    z[:] = np.linspace(0.0, 1.0, N)


@program
def small_int_types(a: dace.int8[N], b: dace.int16[N], c: dace.uint8[N], r: dace.int32[N]):
    for i in dace.map[0:N]:
        r[i] = a[i] * 3 + b[i] * 2 - c[i]


@program
def uint_wrap(a: dace.uint32[N], r: dace.uint32[N]):
    for i in dace.map[0:N]:
        r[i] = a[i] - 2


@program
def int_abs_neg_mod(a: dace.int64[N], r: dace.int64[N]):
    for i in dace.map[0:N]:
        r[i] = abs(a[i] - 2) + (-(a[i] + 1)) % 3


@program
def nested_maps_3d(A: dace.float64[N, M, K], B: dace.float64[N, M, K]):
    for i, j, k in dace.map[0:N, 0:M, 0:K]:
        B[i, j, k] = A[i, j, k] * (i + 2 * j + 3 * k)


@program(N=300)
def wcr_max_map(A: dace.float64[N, M], r: dace.float64[M]):
    r[:] = -1e300
    for i, j in dace.map[0:N, 0:M]:
        with dace.tasklet:
            a << A[i, j]
            out >> r(1, lambda p, q: max(p, q))[j]
            out = a


@program
def while_data_cond(x: dace.float64[N], r: dace.int64[1]):
    i = 0
    while i < N and x[i] < 0.75:
        i += 1
    r[0] = i


@program
def matrix_power_loop(A: dace.float64[N, N], B: dace.float64[N, N]):
    B[:] = A
    for _ in range(3):
        B[:] = B @ A * 0.5


@program
def copy_fill(x: dace.float64[N], y: dace.float64[N], z: dace.float64[N]):
    y[:] = np.copy(x)
    z.fill(2.5)
    y[0] = z[1] + y[N - 1]


@program
def symbolic_index_offsets(x: dace.float64[N + 2], y: dace.float64[N]):
    for i in dace.map[0:N]:
        y[i] = x[i + 2] - 2.0 * x[i + 1] + x[i]


@program
def scalar_dependent_loop(x: dace.float64[N], y: dace.float64[N], n: dace.int32):
    for i in range(n):
        y[i % N] += x[(i * 3) % N]


@program
def trig_math(x: dace.float64[N], y: dace.float64[N]):
    y[:] = np.sin(x) * np.cos(x) + np.arctan2(x, 1.5) + np.tanh(x) + np.sqrt(np.abs(x))


@program
def float32_math(x: dace.float32[N], y: dace.float32[N]):
    y[:] = np.exp(x) / (np.float32(1.0) + np.exp(x)) + x * np.float32(0.1)


@program
def bool_array_select(m: dace.bool_[N], x: dace.float64[N], y: dace.float64[N]):
    for i in dace.map[0:N]:
        y[i] = x[i] if m[i] else -x[i]


@program
def conditional_in_map(x: dace.float64[N], y: dace.float64[N]):
    for i in dace.map[0:N]:
        if x[i] > 0.3:
            y[i] = x[i] * 2.0
        elif x[i] < -0.3:
            y[i] = x[i] * 3.0
        else:
            y[i] = 0.0


@program
def loop_in_map_accumulate(A: dace.float64[N, M], r: dace.float64[N]):
    for i in dace.map[0:N]:
        s = 0.0
        for j in range(M):
            if A[i, j] > 0:
                s += A[i, j]
        r[i] = s


@program
def two_outputs_return(x: dace.float64[N]):
    return x + 1.0, x * 2.0


@program
def sum_of_slices_to_scalar(A: dace.float64[N, M], r: dace.float64[1]):
    r[0] = np.sum(A[1:, 2:]) - np.sum(A[:1, :2])


@program
def interstate_symbol_math(x: dace.float64[N], y: dace.float64[N]):
    h = N // 2
    for i in range(h):
        y[i] = x[i + h] if i + h < N else 0.0


@program
def negative_index(x: dace.float64[N], y: dace.float64[2]):
    y[0] = x[-1]
    y[1] = x[-2] + x[N - 3]


@program(O=3)
def matmul_unshared_symbols(A: dace.float64[N, K], B: dace.float64[dace.symbol('O'), M], C: dace.float64[N, M]):
    # B's rows are another symbol than A's columns (equal at run time):
    # DaCe's Gemm expansion iterates over A's shape and B's columns only, so
    # its argument list has no `O`.
    C[:] = A @ B


@program
def view_reinterpret(A: dace.int32[N, M], C: dace.int32[N, M], B: dace.int16[N, 2 * M],
                     x: dace.float32[N], y: dace.int32[N]):
    # `.view(dtype)`: views with another element type than the data they
    # view; the first one starts two rows into A (an offset in A's elements).
    r = A[2:, :]
    v = r.view(dace.int16)
    v += 3
    h = C.view(dace.int16)
    B[:, :] = h + 1
    xi = x.view(dace.int32)
    y[:] = xi


@program
def multi_dim_transpose_sum(A: dace.float64[N, M, K], B: dace.float64[K, N]):
    B[:] = np.transpose(np.sum(A, axis=1))


@program
def integer_matmul(A: dace.int64[N, M], B: dace.int64[M, K], C: dace.int64[N, K]):
    C[:] = A @ B


@program
def prod_and_any(x: dace.float64[N], r: dace.float64[2]):
    r[0] = np.prod(x + 2.0)
    r[1] = np.amax(np.abs(x)) - np.amin(x)


@program
def reduce_edge_values(x: dace.float64[N], r: dace.float64[4]):
    # Max of all -inf and min of all +inf: a parallel reduction must start
    # from infinity, not from the largest finite value.
    ninf = -np.inf * (np.abs(x) + 1.0)
    r[0] = np.max(ninf)
    r[1] = np.min(-ninf)
    r[2] = np.sum(x * 0.5)
    r[3] = np.max(x) - np.min(x)


@program
def reduce_int_ops(a: dace.int64[N], s: dace.int64[4], f: dace.float32[2]):
    s[0] = np.max(a)
    s[1] = np.min(a)
    s[2] = np.sum(a % 5)
    s[3] = np.max(a % 7) - np.min(a // 3)
    f[0] = np.sum(a.astype(np.float32) * np.float32(0.25))
    f[1] = np.max(a.astype(np.float32))


@program(N=2)
def wcr_max_from_minus_inf(x: dace.float64[N], r: dace.float64[2]):
    # The element starts at -inf and every value is -inf (and fewer
    # iterations than the tests' three threads): a parallel reduction
    # whose threads start from the largest finite value would return it.
    r[0] = -np.inf
    r[1] = np.inf
    for i in dace.map[0:N]:
        with dace.tasklet:
            v << x[i]
            hi >> r(1, lambda a, b: max(a, b))[0]
            lo >> r(1, lambda a, b: min(a, b))[1]
            hi = -np.inf * (abs(v) + 1.0)
            lo = np.inf * (abs(v) + 1.0)


@dace.program
def _accumulate_into_local(x: dace.float64[N]):
    acc = np.zeros([1], dtype=np.float64)
    for i in dace.map[0:N]:
        with dace.tasklet:
            v << x[i]
            o >> acc(1, lambda a, b: a + b)[0]
            o = v
    return acc[0] * 2.0


@program(N=2000, features=["parallel_map"])
def nested_shared_accumulator(x: dace.float64[N], r: dace.float64[1]):
    # As parsed, the call is a nested SDFG whose own parallel map adds into
    # its transient `acc`: one copy per call, shared by that map's threads.
    r[0] = _accumulate_into_local(x)


@program
def ufunc_float_runtime(a: dace.float64[N], b: dace.float64[N], c: dace.float64[N], d: dace.float32[N],
                        e: dace.float32[N], s: dace.float32[N]):
    # NumPy ufuncs whose DaCe tasklets call DaCe's runtime functions
    # (py_floor, py_mod, cpp_mod, np_float_pow, heaviside, deg2rad, rad2deg,
    # nextafter, ldexp): Python's floor and modulo on floats, C's fmod.
    c[:] = (np.floor_divide(a, b) + np.mod(a, b) + np.fmod(a, b) + np.float_power(np.abs(a), b)
            + np.heaviside(a, b) + np.deg2rad(a) + np.rad2deg(b) + np.ldexp(a, 3))
    # `nextafter(x, inf) - x` (np.spacing) of float32 steps by a float's ulp.
    s[:] = np.spacing(d) * np.float32(1e6) + np.nextafter(d, e)


@program
def ufunc_int_runtime(a: dace.int64[N], b: dace.int64[N], c: dace.int64[N]):
    # Integer py_floor and py_mod (rounding toward negative infinity), gcd, lcm.
    bb = b - 2
    bb[:] = np.where(bb == 0, 3, bb)
    c[:] = np.floor_divide(a - 2, bb) * 100 + np.mod(a - 2, bb) * 10 + np.gcd(a, b) + np.lcm(a, b) * 1000


@program
def ufunc_two_outputs(f: dace.float64[N], g: dace.float64[N], q: dace.float64[N], r: dace.float64[N],
                      e: dace.int32[N]):
    # The ufuncs with two outputs (DaCe's py_divmod, np_modf, np_frexp).
    q[:], r[:] = np.divmod(f * 3.0, g + 1.5)
    i, h = np.modf(f * 3.0)
    m, e[:] = np.frexp(f * 5.0)
    g[:] = i * 10.0 + h + m * 100.0


@program
def optional_array_branch(a: dace.float64[N], b: dace.float64[N], out: dace.float64[N]):
    # `is None` / `is not None` of arrays become interstate conditions
    # (`b == nullptr` in DaCe's C++); here both are given.
    if b is None:
        out[:] = a
    elif a is not None:
        out[:] = a + b
    else:
        out[:] = b


@program
def tasklet_lambda_printf(a: dace.float64[N], o: dace.float64[N]):
    # A lambda assigned in a tasklet (a C++ lambda in DaCe's code) and a
    # printf with a string literal (output on stdout; the data is checked).
    for i in dace.map[0:N]:
        with dace.tasklet:
            x << a[i]
            y >> o[i]
            sq = lambda x: x * x + 1.0
            y = sq(x) + sq(2.0 * x)
            if y > 100.0:
                printf("big value %f\n", y)


# Dynamic map ranges (map inputs that are values read from memory: CSR row
# pointers). Their inputs are valid CSR structures; the outputs are checked
# against scipy.sparse.
@dace.program
def _sum_of_products(x: dace.float64[N], y: dace.float64[N], r: dace.float64[1]):
    r[0] = 0.0
    for i in range(N):
        r[0] += x[i] * y[i]


@program
def same_array_twice(A: dace.float64[M, N], out: dace.float64[M]):
    # One row handed to both read-only parameters of a called program (the
    # nested SDFG's function gets the same pointer twice: no __restrict__).
    for k in range(M):
        _sum_of_products(A[k], A[k], out[k:k + 1])


R = dace.symbol("R")


@program(R=3, K=4)
def symbolic_power_size(x: dace.float64[R**K], y: dace.float64[R**K], s: dace.float64[R]):
    # Sizes, ranges and indices written as a power of symbols (FFT lengths
    # R**K): integers in C++, not pow()'s double.
    y[:] = x * 2.0 + 1.0
    for i in range(R):
        s[i] = np.sum(x[i * R**(K - 1):(i + 1) * R**(K - 1)])


NNZ = dace.symbol("NNZ")


def _csr_inputs(rows="rowptr", cols="col", nrows="N", ncols="M", index=np.int64):
    def make(rng, sizes):
        n, m, nnz = sizes[nrows], sizes[ncols], sizes["NNZ"]
        ptr = np.sort(rng.integers(0, nnz + 1, size=n + 1))
        ptr[0], ptr[-1] = 0, nnz
        return {rows: ptr.astype(index), cols: rng.integers(0, m, size=nnz).astype(index)}
    return make


def _csr(inputs, sizes, rows="rowptr", cols="col", vals="val"):
    from scipy.sparse import csr_matrix
    return csr_matrix((inputs[vals], inputs[cols], inputs[rows]), shape=(sizes["N"], sizes["M"]))


def _check_spmv(inputs, outputs, sizes):
    want = inputs["y"] + _csr(inputs, sizes) @ inputs["x"]
    assert np.allclose(outputs["y"], want, rtol=1e-12, atol=1e-12), "differs from scipy.sparse"


def _check_spmm(inputs, outputs, sizes):
    want = inputs["C"] + _csr(inputs, sizes) @ inputs["B"]
    assert np.allclose(outputs["C"], want, rtol=1e-12, atol=1e-12), "differs from scipy.sparse"


@program(N=9, M=6, NNZ=20, inputs=_csr_inputs(), check=_check_spmv)
def dyn_map_range(rowptr: dace.int64[N + 1], col: dace.int64[NNZ], val: dace.float64[NNZ],
                  x: dace.float64[M], y: dace.float64[N]):
    # y += A @ x, A in CSR: the inner map's range is `rowptr[i]:rowptr[i+1]`
    # (two dynamic map inputs).
    for i in dace.map[0:N]:
        for j in dace.map[rowptr[i]:rowptr[i + 1]]:
            y[i] += val[j] * x[col[j]]


def _outer_bound_inputs(rng, sizes):
    return {"n": np.array([sizes["N"] - 2], dtype=np.int64)}


@program(inputs=_outer_bound_inputs)
def dyn_map_outer_bound(x: dace.float64[N], y: dace.float64[N], n: dace.int64[1]):
    # A top-level map whose bound is an array element.
    for i in dace.map[0:n[0]]:
        y[i] = x[i] * 2.0 + i


@program(N=8, M=5, K=3, NNZ=17, inputs=_csr_inputs(), check=_check_spmm)
def dyn_map_nested_symbol(rowptr: dace.int64[N + 1], col: dace.int64[NNZ], val: dace.float64[NNZ],
                          B: dace.float64[M, K], C: dace.float64[N, K]):
    # C += A @ B, A in CSR: a symbol-sized map inside the dynamic one.
    for i in dace.map[0:N]:
        for j in dace.map[rowptr[i]:rowptr[i + 1]]:
            for k in dace.map[0:K]:
                C[i, k] += val[j] * B[col[j], k]


def _csrmv_sdfg(name, alpha, beta, dtype):
    """DaCe's CSRMV library node (dace.libraries.sparse) with its pure
    expansion, as tests/library/sparse/csrmv_test.py builds it."""
    from dace.libraries.sparse import CSRMV
    sdfg = dace.SDFG(name)
    sdfg.add_array("A_val", shape=(NNZ, ), dtype=dtype)
    sdfg.add_array("A_row", shape=(N + 1, ), dtype=dace.int32)
    sdfg.add_array("A_col", shape=(NNZ, ), dtype=dace.int32)
    sdfg.add_array("C", shape=(N, ), dtype=dtype)
    sdfg.add_array("B", shape=(M, ), dtype=dtype)
    state = sdfg.add_state("state", is_start_block=True)
    node = CSRMV("csrmv", alpha=alpha, beta=beta)
    node.implementation = "pure"
    state.add_node(node)
    for conn, data in [("_a_vals", "A_val"), ("_a_rows", "A_row"), ("_a_cols", "A_col"), ("_b", "B")]:
        state.add_edge(state.add_access(data), None, node, conn, dace.Memlet.from_array(data, sdfg.arrays[data]))
    state.add_edge(node, "_c", state.add_access("C"), None, dace.Memlet.from_array("C", sdfg.arrays["C"]))
    if beta != 0:
        state.add_edge(state.add_access("C"), None, node, "_cin", dace.Memlet.from_array("C", sdfg.arrays["C"]))
    sdfg.expand_library_nodes()
    sdfg.validate()
    return sdfg


def _check_csrmv(alpha, beta):
    def check(inputs, outputs, sizes):
        a = _csr(inputs, sizes, rows="A_row", cols="A_col", vals="A_val")
        want = alpha * (a @ inputs["B"]) + beta * inputs["C"]
        single = inputs["C"].dtype == np.float32
        tol = 1e-5 if single else 1e-12
        assert np.allclose(outputs["C"], want, rtol=tol, atol=tol), "differs from scipy.sparse"
    return check


_CSRMV_INPUTS = _csr_inputs(rows="A_row", cols="A_col", index=np.int32)


@sdfg_program(N=10, M=7, NNZ=23, inputs=_CSRMV_INPUTS, check=_check_csrmv(1.0, 0.0))
def csrmv_pure():
    return _csrmv_sdfg("csrmv_pure", 1.0, 0.0, dace.float64)


@sdfg_program(N=10, M=7, NNZ=23, inputs=_CSRMV_INPUTS, check=_check_csrmv(2.0, 2.0))
def csrmv_alpha_beta():
    return _csrmv_sdfg("csrmv_alpha_beta", 2.0, 2.0, dace.float32)


def save_variants(name, prog, out, variants):
    """Writes the program's SDFG variants; returns [(variant, path)]."""
    from dace.transformation.auto import auto_optimize as aopt
    # DaCe picks MKL or OpenBLAS where they are installed and expands the
    # nodes into calls of them (refused by sdfgc by name); the fixtures keep
    # the machine-independent choice.
    aopt.find_fast_library = lambda device: ["pure"]
    auto_optimize = aopt.auto_optimize
    paths = []
    for v in variants:
        sdfg = prog.to_sdfg(simplify=(v != "parsed"))
        if v == "autoopt":
            sdfg = auto_optimize(sdfg, dace.DeviceType.CPU)
        sdfg.name = f"{name}_{v}"
        p = os.path.join(out, f"{name}.{v}.sdfg")
        sdfg.save(p)
        paths.append((v, p))
    return paths


SYMBOLS = {"N": 7, "M": 5, "K": 3}
FIXTURE_VARIANTS = {"simplified": "program.sdfg", "parsed": "program.parsed.sdfg",
                    "autoopt": "program.autoopt.sdfg"}


def run_dace(path, lib_name, inputs, symbols):
    """Builds DaCe's own library of the SDFG at `path` (named `lib_name`)
    and calls it on a copy of `inputs`; returns the arguments after the call."""
    import copy
    sdfg = dace.SDFG.from_file(path)
    sdfg.name = lib_name
    lib = sdfg.compile()
    vals = copy.deepcopy(inputs)
    wanted = lib._sdfg.arglist()
    lib(**vals, **{k: v for k, v in symbols.items() if k in wanted and k not in vals})
    return vals


def save_fixture(name, prog, root):
    """Writes fixtures `root`/NAME: the three variants, random inputs (seeded
    by the name), DaCe's outputs on them and case.json."""
    import hashlib
    import shutil
    import tempfile
    from dace import data as dt

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import difftest
    import fixturelib

    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    paths = dict(save_variants(name, prog, d, list(FIXTURE_VARIANTS)))
    for v, p in paths.items():
        os.replace(p, os.path.join(d, FIXTURE_VARIANTS[v]))
    base = dace.SDFG.from_file(os.path.join(d, "program.sdfg"))
    sizes = dict(SYMBOLS, **PROGRAM_SYMBOLS.get(name, {}))
    symbols = {k: v for k, v in sizes.items() if k in set(map(str, base.free_symbols)) | set(base.symbols)}
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    args, inputs = [], {}
    for an, desc in base.arglist().items():
        if an in symbols and not isinstance(desc, dt.Array):
            continue
        npdt = desc.dtype.as_numpy_dtype()
        shape = [int(dace.symbolic.evaluate(x, symbols)) for x in desc.shape] if isinstance(desc, dt.Array) else []
        v = difftest.random_values(rng, npdt, shape)
        inputs[an] = v if shape else npdt.type(v)
    if PROGRAM_INPUTS.get(name):
        for an, v in PROGRAM_INPUTS[name](rng, sizes).items():
            inputs[an] = v.astype(inputs[an].dtype)
    outs = {}
    with tempfile.TemporaryDirectory(prefix="diffprogs-") as tmp:
        dace.Config.set("default_build_folder", value=tmp)
        for v, f in FIXTURE_VARIANTS.items():
            outs[v] = run_dace(os.path.join(d, f), f"{name}_{v}_dace", inputs, symbols)
    # A variant on which DaCe's own library disagrees with the simplified one
    # (a DaCe transformation bug) is left out, and the reason recorded.
    ref = outs["simplified"]
    if PROGRAM_CHECKS.get(name):
        PROGRAM_CHECKS[name](inputs, ref, sizes)
    dropped = {}
    for v, vals in outs.items():
        for an, x in vals.items():
            single = isinstance(x, np.ndarray) and x.dtype in (np.float32, np.complex64)
            rtol, atol = (1e-5, 1e-6) if single else (1e-9, 1e-12)
            if isinstance(x, np.ndarray) and not np.allclose(x, ref[an], rtol=rtol, atol=atol, equal_nan=True):
                dropped[FIXTURE_VARIANTS[v]] = f"DaCe's own library of this variant differs from program.sdfg's on {an}"
    for f in dropped:
        os.remove(os.path.join(d, f))

    def stored(x):
        if np.iscomplexobj(x):
            return np.ascontiguousarray(np.stack([x.real, x.imag], axis=-1))
        return np.ascontiguousarray(x)

    outputs = []
    for an, x in inputs.items():
        entry = {"name": an, "dtype": str(stored(x).dtype), "shape": list(stored(x).shape)}
        if np.iscomplexobj(x):
            entry["complex_dtype"] = str(x.dtype)
        if isinstance(x, np.ndarray):
            stored(x).tofile(os.path.join(d, f"{an}.in.bin"))
            entry.update(kind="array", role="inout", file=f"{an}.in.bin")
            if not np.array_equal(ref[an], x, equal_nan=True):
                stored(ref[an]).tofile(os.path.join(d, f"{an}.out.bin"))
                tol = (0.0, 0.0) if not np.issubdtype(x.dtype, np.inexact) else \
                    ((1e-5, 1e-6) if x.dtype in (np.float32, np.complex64) else (1e-9, 1e-12))
                out = {k: entry[k] for k in ("name", "dtype", "shape")}
                out.update(file=f"{an}.out.bin", rtol=tol[0], atol=tol[1])
                if "complex_dtype" in entry:
                    out["complex_dtype"] = entry["complex_dtype"]
                outputs.append(out)
        else:
            np.array([x]).tofile(os.path.join(d, f"{an}.in.bin"))
            entry.update(kind="scalar", role="in", file=f"{an}.in.bin", value=x.item())
        args.append(entry)
    if not outputs:
        raise RuntimeError("no output changed")
    case = {
        "name": name,
        "description": f"scripts/diffprogs.py program `{name}` (DaCe Python frontend), outputs from DaCe's own library",
        "symbols": symbols,
        "args": args,
        "outputs": outputs,
        "variants": {f: f not in dropped for f in FIXTURE_VARIANTS.values()},
        "dropped_variants": dropped,
        "default_variant": "program.sdfg",
        "generator": fixturelib.generator_info("scripts/diffprogs.py --save-fixtures", seed),
        "abi": {},
    }
    if PROGRAM_FEATURES.get(name):
        case["features"] = PROGRAM_FEATURES[name]
    kinds = {a["name"]: a["kind"] for a in args}
    for f in FIXTURE_VARIANTS.values():
        if f in dropped:
            continue
        sdfg = dace.SDFG.from_file(os.path.join(d, f))
        case["abi"][f] = fixturelib.abi_entry(sdfg, kinds, expand_copy=True)
    fixturelib.write_json(os.path.join(d, "case.json"), case)
    return [o["name"] for o in outputs]


V2_VARIANTS = {"simplified": "program.v2.sdfg", "autoopt": "program.v2.autoopt.sdfg"}


def add_v2_variants(name, prog, root):
    """With DaCe 2.x: adds `program.v2.sdfg` and `program.v2.autoopt.sdfg`
    to the case `root`/NAME made by DaCe 1.0.2; DaCe 2's own library must
    reproduce the stored outputs from the stored inputs."""
    import tempfile

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import fixturelib

    d = os.path.join(root, name)
    case = fixturelib.load_case(os.path.join(d, "case.json"))
    if case is None:
        raise RuntimeError("no DaCe 1.0.2 case to add to")
    paths = dict(save_variants(name, prog, d, list(V2_VARIANTS)))
    for v, p in paths.items():
        os.replace(p, os.path.join(d, V2_VARIANTS[v]))

    def load(a):
        dt_ = np.dtype(a.get("complex_dtype", a["dtype"]))
        raw = np.fromfile(os.path.join(d, a["file"]), dtype=np.dtype(a["dtype"]))
        if "complex_dtype" in a:
            raw = raw.view(dt_)
            shape = a["shape"][:-1]
        else:
            shape = a["shape"]
        return raw.reshape(shape).copy() if a["kind"] == "array" else dt_.type(raw[0])

    inputs = {a["name"]: load(a) for a in case["args"]}
    expected = {o["name"]: load(dict(o, kind="array")) for o in case["outputs"]}
    dropped = {}
    with tempfile.TemporaryDirectory(prefix="diffprogs-") as tmp:
        dace.Config.set("default_build_folder", value=tmp)
        for v, f in V2_VARIANTS.items():
            vals = run_dace(os.path.join(d, f), f"{name}_{v}_dace2", inputs, case["symbols"])
            for on, ref in expected.items():
                o = next(x for x in case["outputs"] if x["name"] == on)
                if not np.allclose(vals[on], ref, rtol=max(o["rtol"], 1e-12), atol=max(o["atol"], 1e-15),
                                   equal_nan=True):
                    dropped[f] = f"DaCe 2's own library of this variant does not reproduce {on}"
    for f in dropped:
        os.remove(os.path.join(d, f))
    if len(dropped) == len(V2_VARIANTS):
        raise RuntimeError("; ".join(dropped.values()))
    kinds = {a["name"]: a["kind"] for a in case["args"]}
    case.setdefault("dropped_variants", {}).update(dropped)
    for f in V2_VARIANTS.values():
        case["variants"][f] = f not in dropped
        if f in dropped:
            continue
        sdfg = dace.SDFG.from_file(os.path.join(d, f))
        case["abi"][f] = fixturelib.abi_entry(sdfg, kinds, expand_copy=True)
    case["generator_v2"] = fixturelib.generator_info("scripts/diffprogs.py --save-fixtures")
    fixturelib.write_json(os.path.join(d, "case.json"), case)
    return list(expected)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "diffprogs"))
    ap.add_argument("--variants", default="parsed,simplified,autoopt")
    ap.add_argument("--modes", default="default,external")
    ap.add_argument("--symbol", action="append", default=["N=7", "M=5", "K=3", "T=3"])
    ap.add_argument("--save-fixtures", metavar="DIR")
    ap.add_argument("--skip-existing", action="store_true", help="with --save-fixtures: keep cases already there")
    args = ap.parse_args()
    if args.save_fixtures:
        bad = 0
        for name, prog in PROGRAMS.items():
            if args.filter not in name:
                continue
            v2 = dace.__version__.startswith("2")
            done = "program.v2.sdfg" if v2 else "case.json"
            if args.skip_existing and os.path.exists(os.path.join(args.save_fixtures, name, done)):
                continue
            try:
                save = add_v2_variants if v2 else save_fixture
                print(name, "outputs", save(name, prog, args.save_fixtures), flush=True)
            except Exception as e:  # noqa: BLE001 - DaCe cannot make this case
                import shutil
                if v2:
                    for f in V2_VARIANTS.values():
                        if os.path.exists(os.path.join(args.save_fixtures, name, f)):
                            os.remove(os.path.join(args.save_fixtures, name, f))
                else:
                    shutil.rmtree(os.path.join(args.save_fixtures, name), ignore_errors=True)
                print(name, "skipped:", str(e).strip().splitlines()[-1][:200] if str(e).strip() else repr(e),
                      flush=True)
                bad += 1
        return 0
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name, prog in PROGRAMS.items():
        if args.filter not in name:
            continue
        try:
            paths = save_variants(name, prog, args.out, args.variants.split(","))
        except Exception as e:  # noqa: BLE001 - DaCe's frontend, reported
            rows.append({"file": name, "status": "dace-parse-failed", "error": str(e)[:200]})
            print(json.dumps(rows[-1]), flush=True)
            continue
        for variant, path in paths:
            for mode in args.modes.split(","):
                cmd = [sys.executable, os.path.join(ROOT, "scripts", "difftest.py"), path]
                cmd += [f"--symbol={s}" for s in args.symbol]
                if mode != "default":
                    cmd += ["--mode", mode]
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
                line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
                try:
                    res = json.loads(line)
                except ValueError:
                    res = {"file": path, "status": "error",
                           "error": (r.stderr.strip().splitlines() or ["?"])[-1][:300]}
                res["mode"] = mode
                rows.append(res)
                print(json.dumps(res), flush=True)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("\n| status | runs |\n|---|---|")
    for k, v in sorted(counts.items()):
        print(f"| {k} | {v} |")
    ok = ("agree", "dace-failed", "dace-parse-failed")
    return 0 if all(r["status"] in ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
