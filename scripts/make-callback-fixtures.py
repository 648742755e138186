#!/usr/bin/env python3
"""Programs that call back into Python (DaCe's `callback` symbols), as
fixtures: fixtures/callbacks/<program>/program.sdfg (DaCe 1.0.2, simplified)
and program.v2.sdfg (DaCe 2.x), and the check that runs them.

    build/venv-dace/bin/python scripts/make-callback-fixtures.py --save fixtures/callbacks
    build/venv-gt4py/bin/python scripts/make-callback-fixtures.py --save fixtures/callbacks   # the v2 files
    build/venv-dace/bin/python scripts/make-callback-fixtures.py --check fixtures/callbacks [--mode M]
    build/venv-gt4py/bin/python scripts/make-callback-fixtures.py --check fixtures/callbacks      # the v2 files

`--check` builds each program.sdfg (program.v2.sdfg under DaCe 2.x) through sdfgc (`sdfgc.dace.load`: sdfgc
from $SDFGC, the package from this checkout), calls it through DaCe 1.0.2's
own `CompiledSDFG` (1.0.2 or 2.x) with Python functions for the callbacks, and compares
every output and every call the callbacks saw with plain Python's. Each
callback form DaCe's frontend writes is covered: arrays and scalars passed,
one scalar returned, arrays and several values returned through pointers,
a Python object passed between callbacks, a
callback called from a nested SDFG, callbacks in program order, and a
callback symbol called inside an expression of an explicit tasklet.
"""

import argparse
import os
import sys

import numpy as np

import dace

N = dace.symbol("N")

# What the callbacks saw, in order (reset before each run).
LOG = []


def dace_inhibitor(f):
    """DaCe's frontend calls a function with a decorator of this name back
    in Python instead of parsing it (as DaCe's own tests do)."""
    return f


@dace_inhibitor
def host_scale(a, s):
    LOG.append(("scale", float(s)))
    return a * s


@dace_inhibitor
def host_sum(a):
    LOG.append(("sum", a.shape))
    return float(np.sum(a))


@dace_inhibitor
def host_note(x):
    LOG.append(("note", round(float(x), 9)))


@dace_inhibitor
def host_minmax(a):
    LOG.append(("minmax",))
    return a - a.min(), float(a.max())


@dace_inhibitor
def host_bump(a):
    LOG.append(("bump", a.shape))
    a += 1.0


class Counter:

    def __init__(self, start):
        self.k = int(start)


@dace_inhibitor
def host_make(start):
    LOG.append(("make", int(start)))
    return Counter(start)


@dace_inhibitor
def host_next(c):
    c.k += 1
    LOG.append(("next", c.k))
    return c.k


@dace.program
def cb_arrays(A: dace.float64[N], B: dace.float64[N], s: dace.float64):
    tmp: dace.float64[N] = host_scale(A, s)
    B[:] = tmp + 1.0


@dace.program
def cb_scalar_return(A: dace.float64[N], B: dace.float64[N]):
    total: dace.float64 = host_sum(A)
    host_note(total)
    B[:] = A * total


@dace.program
def cb_tuple_return(A: dace.float64[N], B: dace.float64[N], C: dace.float64[1]):
    shifted: dace.float64[N]
    top: dace.float64
    shifted, top = host_minmax(A)
    B[:] = shifted
    C[0] = top


@dace.program
def cb_inner(A: dace.float64[N]):
    host_bump(A)
    A[:] = A * 2.0


@dace.program
def cb_nested(A: dace.float64[N], B: dace.float64[N]):
    cb_inner(A)
    host_bump(B)
    cb_inner(B)


@dace.program
def cb_pyobject(B: dace.int64[4], start: dace.int64):
    c = host_make(start)
    for i in range(4):
        v: dace.int64 = host_next(c)
        B[i] = v * 10


def host_triple(x):
    LOG.append(("host_triple", float(x)))
    return 3.0 * x


# A callback declared as a symbol and called inside an expression of an
# explicit tasklet (DaCe's C++ calls it there; sdfgc hoists the call).
cb_triple = dace.symbol("cb_triple", dace.callback(dace.float64, dace.float64))


@dace.program
def cb_in_expression(A: dace.float64[N], B: dace.float64[N]):
    for i in range(N):
        with dace.tasklet:
            a << A[i]
            b >> B[i]
            b = (cb_triple(a) + 1.0) * 2.0


def cb_in_expression_plain(A, B):
    for i in range(len(A)):
        B[i] = (host_triple(A[i]) + 1.0) * 2.0


def plain(f):
    """The program run as plain Python (DaCe's `.f`; a tasklet's, by hand)."""
    if f.f.__name__ == "cb_in_expression":
        return cb_in_expression_plain
    return f.f


def inputs(name, rng):
    n = 7
    a = rng.random(n)
    b = rng.random(n)
    if name == "cb_arrays":
        return dict(A=a, B=b, s=np.float64(2.5)), {"N": n}
    if name in ("cb_scalar_return", "cb_nested", "cb_in_expression"):
        return dict(A=a, B=b), {"N": n}
    if name == "cb_tuple_return":
        return dict(A=a, B=b, C=np.zeros(1)), {"N": n}
    if name == "cb_pyobject":
        return dict(B=np.zeros(4, np.int64), start=np.int64(5)), {}
    raise KeyError(name)


PROGRAMS = [cb_arrays, cb_scalar_return, cb_tuple_return, cb_nested, cb_pyobject, cb_in_expression]
CALLBACKS = dict(host_scale=host_scale, host_sum=host_sum, host_note=host_note, host_minmax=host_minmax,
                 host_bump=host_bump, host_make=host_make, host_next=host_next, cb_triple=host_triple)


def save(out):
    v2 = dace.__version__.startswith("2")
    for prog in PROGRAMS:
        name = prog.f.__name__
        sdfg = prog.to_sdfg(simplify=True)
        sdfg.name = name
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        sdfg.save(os.path.join(d, "program.v2.sdfg" if v2 else "program.sdfg"))
        print("saved", name, "(DaCe", dace.__version__ + ")")


def callback_args(sdfg):
    """The Python functions for the SDFG's callback symbols (a name DaCe
    made unique, `f_0`, is the function `f`)."""
    out = {}
    for k, t in sdfg.symbols.items():
        if isinstance(t, dace.dtypes.callback):
            base = k if k in CALLBACKS else k.rsplit("_", 1)[0]
            out[k] = CALLBACKS[base]
    return out


def check(folder, mode):
    import sdfgc.dace

    failures = 0
    for prog in PROGRAMS:
        name = prog.f.__name__
        v2 = dace.__version__.startswith("2")
        path = os.path.join(folder, name, "program.v2.sdfg" if v2 else "program.sdfg")
        sdfg = dace.SDFG.from_file(path)
        csdfg = sdfgc.dace.load(sdfg, mode=mode)
        args, syms = inputs(name, np.random.default_rng(0))
        ref = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
        LOG.clear()
        g = prog.f.__globals__
        symbol, g["N"] = g["N"], syms.get("N", g["N"])  # the plain run sees N's value
        try:
            plain(prog)(**ref)
        finally:
            g["N"] = symbol
        want_log = list(LOG)
        LOG.clear()
        csdfg(**args, **syms, **callback_args(sdfg))
        got_log = list(LOG)
        ok = got_log == want_log
        for k, v in ref.items():
            if isinstance(v, np.ndarray) and not np.allclose(args[k], v):
                ok = False
                print(f"{name}: {k} = {args[k]}, expected {v}")
        if got_log != want_log:
            print(f"{name}: callbacks saw {got_log}, expected {want_log}")
        print(("ok  " if ok else "FAIL"), name, mode or "default")
        failures += not ok
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--save", metavar="DIR")
    p.add_argument("--check", metavar="DIR")
    p.add_argument("--mode", help="sdfgc's memory mode for --check")
    args = p.parse_args()
    if args.save:
        save(args.save)
    if args.check:
        sys.exit(1 if check(args.check, args.mode) else 0)


if __name__ == "__main__":
    main()
