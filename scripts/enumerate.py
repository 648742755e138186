#!/usr/bin/env python3
"""Enumeration from DaCe's own tables: one small program per cell (a table
entry crossed with a data type), made by DaCe's Python frontend, built and
run both ways (DaCe's generator, then sdfgc in the default and external
modes) on the same inputs, outputs compared.

    <venv with DaCe>/bin/python scripts/enumerate.py [--family ufunc,...]
        [--filter TEXT] [--dtypes int8,complex64,...] [--out build/enumerate]
        [--jobs 1] [--batch 16] [--list]

Families (a registry: `@family(name)` generators of `Cell`s, the shape of
YARPGen's and Csmith's generators) read DaCe's sources, not its tests:

  ufunc      every entry of `dace.frontend.python.replacements.ufuncs`
             (unary and binary), each called on arrays of every dtype
  operator   Python's unary and binary operators on arrays of every dtype
  math       the `math` module's functions (DaCe's tasklet code maps them to
             `dace::math` / `<cmath>`), called in a tasklet per element
  reduce     NumPy reductions (`sum`, `prod`, `min`, `max`, `mean`, ...,
             the ufuncs' `.reduce`) over every dtype
  power      `x ** k` for integer, negative and fractional literal exponents
             and array exponents, on every dtype
  controlflow  the control-flow shapes the frontend emits: if/elif chains,
             while and do-while loops with break/continue, loops and
             conditions inside maps, branches and loops that simplification
             removes, on every dtype
  vector     `dace.vector` data of every element type and widths 2, 4, 8
             in tasklets: with vectors, with scalars, from a scalar
  fortran    the intrinsics of DaCe's Fortran frontend (its tables in
             `dace.frontend.fortran.intrinsics`) on the Fortran types it maps

The cells of a family entry are built together: their SDFGs (each as DaCe's
frontend saves it, simplified) become the states of one outer SDFG, one
nested SDFG each, so one library per batch is built by each generator. A
batch that fails to build or crashes is split in halves until the failing
cells stand alone, so every cell gets its own verdict:

  pass               DaCe's and sdfgc's outputs agree (both modes)
  dace-frontend      DaCe's frontend refuses the program (counted as DaCe's)
  dace-build         DaCe's generator or its compiler fails (DaCe's)
  dace-run           DaCe's library crashes (DaCe's)
  dace-nondeterministic  DaCe's library disagrees with itself on the same
                     inputs (a parallel reduction that is not commutative)
  sdfgc-refused      sdfgc refuses the program by name
  sdfgc-build        sdfgc's code does not compile
  sdfgc-run          sdfgc's library crashes
  sdfgc-differs      outputs differ
The last four are sdfgc's: the table's goal is 0 of them.

Writes OUT/cells.jsonl (one line per cell) and prints a table by family and
status. Exit 0 iff no cell fails only through sdfgc.

--save-fixtures DIR turns each family entry that passes into a corpus case
(fixtures/corpus/enum_<family>_<entry>): the batch SDFG, its inputs and
DaCe's outputs, so the test suite runs it without DaCe.
"""
import argparse
import copy
import inspect
import json
import os
import subprocess
import sys
import tempfile
import re
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZE = 12

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]

FAMILIES = {}
# The families of the CI slice (`--ci`): those swept in full with no cell
# failing only through sdfgc (docs/enumeration.md).
CI_FAMILIES = ("ufunc", "operator", "math", "reduce", "power")
SAVE = None  # {"dir", "name"}: the one batch is saved as a corpus case


def family(name):
    """Registers a generator of cells under `name`."""
    def register(gen):
        FAMILIES[name] = gen
        return gen
    return register


class Cell:
    """One program: `key` (family/entry/dtype), its Python source (a function
    `prog` with annotated array arguments), and how to fill its inputs
    (`domain`: per argument, "any", "nonzero" or "small": shift counts)."""

    def __init__(self, fam, entry, dtype, source, domain=None):
        self.family, self.entry, self.dtype = fam, entry, dtype
        self.source = textwrap.dedent(source)
        self.domain = domain or {}

    @property
    def key(self):
        return f"{self.family}/{self.entry}/{self.dtype}"

    def to_json(self):
        return {"family": self.family, "entry": self.entry, "dtype": self.dtype,
                "source": self.source, "domain": self.domain}

    @staticmethod
    def from_json(d):
        return Cell(d["family"], d["entry"], d["dtype"], d["source"], d["domain"])


def _ann(dtype):
    return f"dace.{'bool_' if dtype == 'bool' else dtype}[{SIZE}]"


# ---------------------------------------------------------------- families

def _ufunc_table():
    from dace.frontend.python import replacements
    table = getattr(replacements, "ufuncs", None)
    if table is None:  # DaCe 2.x: a package
        from dace.frontend.python.replacements import ufunc as mod
        table = mod.ufuncs
    return table


@family("ufunc")
def ufunc_cells():
    for name, u in sorted(_ufunc_table().items()):
        nin = len(u["inputs"])
        args = ", ".join(f"a{i}: {{t}}" for i in range(nin))
        call = ", ".join(f"a{i}" for i in range(nin))
        for t in DTYPES:
            src = f"""
            def prog({args.format(t=_ann(t))}):
                return np.{name}({call})
            """
            dom = {"a1": "small" if name in ("left_shift", "right_shift", "ldexp") else "nonzero"}
            yield Cell("ufunc", name, t, src, dom)


UNARY_OPS = {"neg": "-a0", "pos": "+a0", "invert": "~a0", "not": "not a0", "abs": "abs(a0)"}
BINARY_OPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
              "pow": "**", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
              "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@family("operator")
def operator_cells():
    """Operators inside an explicit map's tasklet, element by element (the
    whole-array forms are the ufunc family)."""
    for name, expr in sorted(UNARY_OPS.items()):
        for t in DTYPES:
            src = f"""
            def prog(a0: {_ann(t)}, out: {_ann(t)}):
                for i in dace.map[0:{SIZE}]:
                    with dace.tasklet:
                        x << a0[i]
                        y >> out[i]
                        y = {expr.replace('a0', 'x')}
            """
            yield Cell("operator", name, t, src)
    for name, op in sorted(BINARY_OPS.items()):
        for t in DTYPES:
            src = f"""
            def prog(a0: {_ann(t)}, a1: {_ann(t)}, out: {_ann(t)}):
                for i in dace.map[0:{SIZE}]:
                    with dace.tasklet:
                        x << a0[i]
                        z << a1[i]
                        y >> out[i]
                        y = x {op} z
            """
            dom = {"a1": "small" if name in ("lshift", "rshift", "pow") else "nonzero"}
            yield Cell("operator", name, t, src, dom)


MATH_UNARY = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "erfc",
              "exp", "expm1", "fabs", "floor", "gamma", "lgamma", "log", "log10", "log1p", "log2",
              "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "isnan", "isinf", "isfinite",
              "degrees", "radians"]
MATH_BINARY = ["atan2", "copysign", "fmod", "hypot", "pow", "remainder", "ldexp"]
REAL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"]


@family("math")
def math_cells():
    """Python's `math` functions in tasklet code (real types: `math` has no
    complex functions)."""
    for name in MATH_UNARY + MATH_BINARY:
        nin = 2 if name in MATH_BINARY else 1
        for t in REAL_DTYPES:
            args = "".join(f"a{i}: {_ann(t)}, " for i in range(nin))
            reads = "".join(f"\n                        x{i} << a{i}[i]" for i in range(nin))
            call = ", ".join(f"x{i}" for i in range(nin))
            src = f"""
            def prog({args}out: {_ann('float64')}):
                for i in dace.map[0:{SIZE}]:
                    with dace.tasklet:{reads}
                        y >> out[i]
                        y = math.{name}({call})
            """
            yield Cell("math", name, t, src, {"a1": "small" if name == "ldexp" else "nonzero"})


REDUCTIONS = {"sum": "np.sum(a0)", "prod": "np.prod(a0)", "min": "np.min(a0)", "max": "np.max(a0)",
              "mean": "np.mean(a0)", "amax": "np.amax(a0)", "amin": "np.amin(a0)",
              "argmax": "np.argmax(a0)", "argmin": "np.argmin(a0)", "all": "np.all(a0)",
              "any": "np.any(a0)", "add_reduce": "np.add.reduce(a0)",
              "multiply_reduce": "np.multiply.reduce(a0)", "maximum_reduce": "np.maximum.reduce(a0)",
              "minimum_reduce": "np.minimum.reduce(a0)", "logical_and_reduce": "np.logical_and.reduce(a0)",
              "bitwise_or_reduce": "np.bitwise_or.reduce(a0)", "sum_axis": "np.sum(b0, axis=0)",
              "max_axis": "np.max(b0, axis=1)", "cumsum": "np.cumsum(a0)",
              "add_accumulate": "np.add.accumulate(a0)", "add_outer": "np.add.outer(a0, a0)"}


@family("reduce")
def reduce_cells():
    for name, expr in sorted(REDUCTIONS.items()):
        for t in DTYPES:
            arg = "b0" if "b0" in expr else "a0"
            shape = f"[3, {SIZE // 3}]" if arg == "b0" else f"[{SIZE}]"
            dt = "bool_" if t == "bool" else t
            src = f"""
            def prog({arg}: dace.{dt}{shape}):
                return {expr}
            """
            yield Cell("reduce", name, t, src)


POWERS = {"sq": "2", "cube": "3", "p4": "4", "p7": "7", "p0": "0", "p1": "1", "neg1": "-1",
          "neg2": "-2", "half": "0.5", "neghalf": "-0.5", "p2f": "2.0", "p1_5": "1.5"}


@family("power")
def power_cells():
    for name, k in sorted(POWERS.items()):
        for t in DTYPES:
            src = f"""
            def prog(a0: {_ann(t)}):
                return a0 ** {k}
            """
            yield Cell("power", name, t, src)


# Control-flow shapes the Python frontend emits (conditions, loops with
# break/continue, loops inside maps, blocks that simplification removes),
# each over arrays of every dtype. `T` is the element type's annotation.
CONTROLFLOW = {
    "if_elif": """
        def prog(a0: T, out: T):
            for i in range(N):
                if a0[i] > 1:
                    out[i] = a0[i] + a0[i]
                elif a0[i] < 0:
                    out[i] = a0[i] * a0[i]
                elif a0[i] == 0:
                    out[i] = a0[i]
                else:
                    out[i] = a0[i] - a0[i]
        """,
    "if_scalar": """
        def prog(a0: T, out: T):
            if a0[0] > a0[1]:
                out[:] = a0
            else:
                out[:] = a0 + a0
        """,
    "ifexp_tasklet": """
        def prog(a0: T, a1: T, out: T):
            for i in dace.map[0:N]:
                with dace.tasklet:
                    x << a0[i]
                    z << a1[i]
                    y >> out[i]
                    y = x if x > z else z
        """,
    "while_break": """
        def prog(a0: T, out: T):
            i = 0
            while i < N:
                if a0[i] < 0:
                    break
                out[i] = a0[i]
                i += 1
        """,
    "while_continue": """
        def prog(a0: T, out: T):
            i = 0
            while i < N:
                i += 1
                if a0[i - 1] > 0:
                    continue
                out[i - 1] = a0[i - 1]
        """,
    "do_while": """
        def prog(a0: T, out: T):
            i = 0
            while True:
                out[i] = a0[i] + a0[i]
                i += 1
                if i >= N:
                    break
                if a0[i] < 0:
                    break
        """,
    "for_break_continue": """
        def prog(a0: T, out: T):
            for i in range(N):
                if a0[i] == 0:
                    continue
                if a0[i] < -3:
                    break
                out[i] = a0[i]
        """,
    "for_reverse": """
        def prog(a0: T, out: T):
            for i in range(N - 1, -1, -2):
                out[i] = a0[N - 1 - i]
        """,
    "nested_break": """
        def prog(a0: T, out: T):
            for i in range(3):
                for j in range(N // 3):
                    if a0[i * (N // 3) + j] < 0:
                        break
                    out[i * (N // 3) + j] = a0[i * (N // 3) + j]
        """,
    "loop_in_map": """
        def prog(a0: T, out: T):
            for i in dace.map[0:N]:
                s = a0[i]
                for j in range(3):
                    s = s + a0[(i + j) % N]
                out[i] = s
        """,
    "while_in_map": """
        def prog(a0: T, out: T):
            for i in dace.map[0:N]:
                j = 0
                while j < i % 4:
                    out[i] = out[i] + a0[j]
                    j += 1
        """,
    "cond_in_map": """
        def prog(a0: T, a1: T, out: T):
            for i in dace.map[0:N]:
                if a0[i] > a1[i]:
                    out[i] = a0[i]
                else:
                    out[i] = a1[i]
        """,
    "dead_branch": """
        def prog(a0: T, out: T):
            k = 2
            if k > 3:
                out[:] = a0 + a0
            elif k < 1:
                out[:] = a0 * a0
            else:
                out[:] = a0
            for i in range(N):
                if k == 5:
                    out[i] = a0[0]
        """,
    "empty_loop": """
        def prog(a0: T, out: T):
            out[:] = a0
            for i in range(0):
                out[i] = a0[i] + a0[i]
            for i in range(N):
                pass
        """,
}


@family("controlflow")
def controlflow_cells():
    for name, src in sorted(CONTROLFLOW.items()):
        for t in DTYPES:
            yield Cell("controlflow", name, t,
                       textwrap.dedent(src).replace("T,", _ann(t) + ",").replace("T)", _ann(t) + ")")
                       .replace("N", str(SIZE)))


# DaCe's Fortran frontend (`dace.frontend.fortran.intrinsics`): every
# intrinsic of its tables, called element by element in a DO loop (or on the
# whole array: the loop-based ones, SUM, ANY, MERGE, ...), crossed with the
# Fortran types the frontend maps (LOGICAL and INTEGER: int32, REAL:
# float32, DOUBLE PRECISION: float64).
FORTRAN_TYPES = {"logical": "logical", "integer": "integer", "real": "real", "double": "double precision"}
FORTRAN_BINARY = {"MIN", "MAX", "MOD", "MODULO", "ATAN2", "SCALE", "SIGN"}
FORTRAN_MASKS = {"ANY", "ALL", "COUNT"}


def _fortran_tables():
    from dace.frontend.fortran import intrinsics
    elementwise = dict(intrinsics.MathFunctions.INTRINSIC_TO_DACE)
    elementwise["SIGN"] = None  # renamed by FortranIntrinsics.replace_function_name
    return elementwise, sorted(intrinsics.FortranIntrinsics.IMPLEMENTATIONS_AST
                               if hasattr(intrinsics.FortranIntrinsics, "IMPLEMENTATIONS_AST")
                               else intrinsics.LoopBasedReplacement.INTRINSIC_TO_DACE)


def _fortran_result(rule, ftype):
    """The result's Fortran type: the table's return type of `rule`."""
    if isinstance(rule, dict):
        rule = rule.get({"double": "DOUBLE", "real": "REAL"}.get(ftype, "INTEGER"))
    ret = getattr(rule, "return_type", "FIRST_ARG")
    return {"INTEGER": "integer", "REAL": "real", "DOUBLE": "double"}.get(ret, ftype)


@family("fortran")
def fortran_cells():
    try:
        elementwise, loop_based = _fortran_tables()
    except ImportError:  # no fparser: DaCe's Fortran frontend cannot load
        return
    n = SIZE
    for name in sorted(set(elementwise) | set(loop_based)):
        for ft, decl in FORTRAN_TYPES.items():
            if name in elementwise:
                res = _fortran_result(elementwise[name], ft)
                args = "a0(i), a1(i)" if name in FORTRAN_BINARY else "a0(i)"
                body = f"do i = 1, {n}\n  res(i) = {name}({args})\nend do"
            else:
                res = "integer" if name == "COUNT" else "logical" if name in ("ANY", "ALL") else ft
                mask = "a0" if ft == "logical" else "a0 > a1"
                arg = {"MERGE": f"a0, a1, {mask}"}.get(name, mask if name in FORTRAN_MASKS else "a0")
                body = (f"res = MERGE({arg})" if name == "MERGE" else f"res(1) = {name}({arg})")
            decls = (f"{decl}, dimension({n}) :: a0\n{decl}, dimension({n}) :: a1\n"
                     f"{FORTRAN_TYPES[res]}, dimension({n}) :: res\n")
            src = (f"PROGRAM enum_test\nimplicit none\n{decls}CALL enum_test_function(a0, a1, res)\nend\n\n"
                   f"SUBROUTINE enum_test_function(a0, a1, res)\n{decls}integer :: i\n{body}\n"
                   f"END SUBROUTINE enum_test_function\n")
            yield Cell("fortran", name, ft, src, {"a1": "nonzero"})


# `dace.vector` data (`dace::vec<T, W>`) of every element type and widths
# 2, 4, 8, in a map's tasklet: vector with vector, vector with a scalar,
# a vector from a scalar; the dtype label is `<type>x<width>`.
VECTOR_OPS = {"copy": "x", "neg": "-x", "add": "x + x", "mul": "x * x2", "div": "x / x2",
              "mul_scalar": "x * z", "fma_scalar": "x * z + x2", "from_scalar": "z"}


@family("vector")
def vector_cells():
    for name, expr in sorted(VECTOR_OPS.items()):
        for t in DTYPES:
            for w in (2, 4, 8):
                dt = "bool_" if t == "bool" else t
                vec = f"dace.vector(dace.{dt}, {w})[{SIZE // 4}]"
                src = f"""
                def prog(a0: {vec}, a1: {vec}, s: dace.{dt}[{SIZE // 4}], out: {vec}):
                    for i in dace.map[0:{SIZE // 4}]:
                        with dace.tasklet:
                            x << a0[i]
                            x2 << a1[i]
                            z << s[i]
                            y >> out[i]
                            y = {expr}
                """
                yield Cell("vector", name, f"{t}x{w}", src, {"a1": "nonzero", "s": "nonzero"})


# ------------------------------------------------------------ building

def _inputs(cell, sdfg, rng):
    """Arguments by name (the cell's non-transient arrays that it reads)."""
    import numpy as np
    from dace import data as dt
    out = {}
    for name, desc in sdfg.arrays.items():
        if desc.transient or not isinstance(desc, dt.Array):
            continue
        npdt = desc.dtype.as_numpy_dtype()
        shape = tuple(int(s) for s in desc.shape)
        if npdt.subdtype is not None:  # a vector type: (element type, (width,))
            npdt, shape = npdt.subdtype[0], shape + npdt.subdtype[1]
        dom = cell.domain.get(name, "any")
        if np.issubdtype(npdt, np.bool_):
            v = rng.integers(0 if dom == "any" else 1, 2, size=shape)
        elif np.issubdtype(npdt, np.unsignedinteger):
            v = rng.integers(1 if dom != "any" else 0, 4 if dom == "small" else 9, size=shape)
        elif np.issubdtype(npdt, np.integer):
            if dom == "small":
                v = rng.integers(1, 4, size=shape)
            elif dom == "nonzero":
                v = rng.choice([-4, -3, -2, -1, 1, 2, 3, 4], size=shape)
            else:
                v = rng.integers(-4, 5, size=shape)
        elif np.issubdtype(npdt, np.complexfloating):
            v = rng.uniform(-2, 2, size=shape) + 1j * rng.uniform(-2, 2, size=shape)
        else:
            v = rng.uniform(-2, 2, size=shape)
            if dom == "small":
                v = rng.integers(1, 4, size=shape)
        out[name] = np.asarray(v).astype(npdt)
    return out


def _cell_sdfg(cell):
    """The cell's SDFG as DaCe's frontend makes it (simplified)."""
    import dace
    if cell.family == "fortran":
        from dace.frontend.fortran import fortran_parser
        sdfg = fortran_parser.create_sdfg_from_string(cell.source, "enum_test", False)
        sdfg.simplify()
        sdfg.validate()
        return sdfg
    import numpy as np  # noqa: F401 - used by the cell's source
    import math  # noqa: F401
    with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="enum_", delete=False) as fh:
        fh.write("import dace\nimport math\nimport numpy as np\n\n" + cell.source)
        path = fh.name
    try:
        import importlib.util
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        prog = dace.program(mod.prog)
        sdfg = prog.to_sdfg(simplify=True)
        sdfg.validate()
        return sdfg
    finally:
        os.unlink(path)


def _interstate_reads(s, names):
    """The arrays of `names` that `s`'s control flow reads (interstate edges,
    loop and branch conditions): an integral element read in a condition
    is no data node after simplification."""
    texts = []
    edges = s.all_interstate_edges() if hasattr(s, "all_interstate_edges") else s.edges()
    for e in edges:
        texts.append(e.data.condition.as_string)
        texts += [str(v) for v in e.data.assignments.values()]
    for r in (s.all_control_flow_regions() if hasattr(s, "all_control_flow_regions") else []):
        for attr in ("loop_condition", "init_statement", "update_statement"):
            c = getattr(r, attr, None)
            if c is not None:
                texts.append(c.as_string)
        for cond, _ in getattr(r, "branches", []):
            if cond is not None:
                texts.append(cond.as_string)
    return {a for a in names if any(re.search(rf"\b{a}\b", t) for t in texts)}


def combine(name, sdfgs):
    """One SDFG running each of `sdfgs` in a state of its own (a nested
    SDFG); their arguments renamed `c<i>_<name>`."""
    import dace
    outer = dace.SDFG(name)
    prev = None
    for i, s in enumerate(sdfgs):
        st = outer.add_state(f"cell{i}")
        if prev is not None:
            outer.add_edge(prev, st, dace.InterstateEdge())
        prev = st
        reads, writes = set(), set()
        for state in (s.all_states() if hasattr(s, "all_states") else s.states()):
            for n in state.data_nodes():
                if s.arrays[n.data].transient:
                    continue
                if state.out_degree(n) > 0:
                    reads.add(n.data)
                if state.in_degree(n) > 0:
                    writes.add(n.data)
        args = {a for a, d in s.arrays.items() if not d.transient}
        reads |= _interstate_reads(s, args)
        reads |= args - reads - writes  # declared, never used (a Fortran dummy argument)
        for a, desc in s.arrays.items():
            if not desc.transient:
                outer.add_datadesc(f"c{i}_{a}", copy.deepcopy(desc))
        if "parent" in inspect.signature(st.add_nested_sdfg).parameters:  # DaCe 1.x
            node = st.add_nested_sdfg(s, outer, reads, writes)
        else:
            node = st.add_nested_sdfg(s, reads, writes)
        for a in sorted(reads):
            st.add_edge(st.add_read(f"c{i}_{a}"), None, node, a,
                        dace.Memlet.from_array(f"c{i}_{a}", outer.arrays[f"c{i}_{a}"]))
        for a in sorted(writes):
            st.add_edge(node, a, st.add_write(f"c{i}_{a}"), None,
                        dace.Memlet.from_array(f"c{i}_{a}", outer.arrays[f"c{i}_{a}"]))
    return outer


def _compare(ref, got):
    import numpy as np
    if ref.dtype != got.dtype or ref.shape != got.shape:
        return False
    if np.issubdtype(ref.dtype, np.inexact):
        rtol = {2: 2e-3, 4: 1e-5, 8: 1e-5, 16: 1e-11}[ref.dtype.itemsize]
        # The absolute tolerance scales with the reference's largest finite
        # magnitude: a fixed one (it was rtol) called every output below it
        # equal (np.spacing of float32 in double precision passed as 1e-16
        # against DaCe's 1e-7).
        r = ref.astype(np.complex128)
        finite = np.abs(r[np.isfinite(r)])
        scale = float(finite.max()) if finite.size else 0.0
        return bool(np.allclose(got.astype(np.complex128), r, rtol=rtol, atol=rtol * scale, equal_nan=True))
    return bool(np.array_equal(ref, got))


def _failing_cells(error, ncells):
    """The cells whose functions hold the compiler's errors (each cell's
    nested SDFG is named `cell<i>`, and both generators name its function
    after it), or None where an error lies outside every cell's function."""
    import re
    from fixturelib import blamed_functions

    def cell(text):
        m = re.search(r"\bvoid\s+\w*?cell(\d+)_\w*\(", text)
        return int(m.group(1)) if m else None
    return blamed_functions(error, cell, lambda c: c < ncells)


def _build(outer, name, who, mode, hook):
    """Builds `outer` as `name` with DaCe's generator or sdfgc."""
    g = copy.deepcopy(outer)
    g.name = name
    if who != "dace":
        hook.enable(mode=mode)
    try:
        return g, g.compile()
    finally:
        if who != "dace":
            hook.disable()


def _check_daces_side(verdict, cells, base, hook):
    """Cells that sdfgc failed to build: built with DaCe's generator alone;
    those it cannot build either are DaCe's (`dace-build`)."""
    failed = [(c, _cell_sdfg(c)) for c in cells if verdict.get(c.key, ("",))[0].startswith("sdfgc-")]
    while failed:
        for i, (_, s) in enumerate(failed):
            s.name = f"cell{i}"
        try:
            _build(combine(base, [s for _, s in failed]), f"{base}_sdfgc_failed_dace", "dace", None, hook)
            return
        except Exception as e:  # noqa: BLE001
            bad = _failing_cells(e, len(failed)) or set(range(len(failed)))
            for i in bad:
                verdict[failed[i][0].key] = ("dace-build", _last_line(e))
            failed = [x for i, x in enumerate(failed) if i not in bad]


def run_batch(cells, seed, workdir, save=None):
    """Child process: build the batch both ways and run it. Returns
    {key: (status, why)} for the cells settled, and `failed` = (side, why)
    when a build failed in a way no cell can be blamed for alone (the
    parent then splits the batch)."""
    import numpy as np
    import dace
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import sdfgc.dace as hook

    dace.Config.set("compiler", "cpu", "args",
                    value="-std=c++17 -fPIC -O2 -march=native -Wall -Wextra -Wno-unused-parameter -Wno-unused-label")
    dace.Config.set("default_build_folder", value=workdir)
    verdict, live = {}, []
    for c in cells:
        try:
            s = _cell_sdfg(c)
            live.append((c, s))
        except Exception as e:  # noqa: BLE001 - DaCe's own refusal, recorded
            verdict[c.key] = ("dace-frontend", _last_line(e))
    base = "enum_" + "_".join(sorted({c.entry for c in cells}))[:40]
    libs, attempt = {}, 0
    sides = (("sdfgc", None), ("sdfgc-external", "external"), ("dace", None))
    while live and len(libs) < len(sides):
        attempt += 1
        for i, (_, s) in enumerate(live):
            s.name = f"cell{i}"
        outer = combine(base, [s for _, s in live])
        libs = {}
        for who, mode in sides:
            try:
                libs[who] = _build(outer, f"{base}_{attempt}_{who.replace('-', '_')}", who, mode, hook)
            except Exception as e:  # noqa: BLE001
                if who == "dace":
                    side = "dace-build"
                else:
                    side = "sdfgc-refused" if _refused(e) else "sdfgc-build"
                bad = _failing_cells(e, len(live)) if side != "sdfgc-refused" else _refused_cells(e, len(live))
                if bad is None and len(live) == 1:
                    bad = {0}
                if bad is None:
                    # The cells settled so far are DaCe-checked before the
                    # parent splits the rest.
                    _check_daces_side(verdict, [c for c in cells if c.key in verdict], base, hook)
                    return verdict, (side, _last_line(e))
                for i in bad:
                    verdict[live[i][0].key] = (side, _last_line(e))
                live = [x for i, x in enumerate(live) if i not in bad]
                break
    _check_daces_side(verdict, cells, base, hook)
    if not live:
        return verdict, None
    rng = np.random.default_rng(seed)
    inputs = {}
    for i, (c, s) in enumerate(live):
        for a, v in _inputs(c, s, rng).items():
            inputs[f"c{i}_{a}"] = v
    outs = {}
    for who, (g, lib) in sorted(libs.items()):
        vals = {k: v.copy() for k, v in inputs.items()}
        for a, desc in g.arrays.items():
            if not desc.transient and a not in vals:
                npdt = desc.dtype.as_numpy_dtype()
                vals[a] = np.zeros(tuple(desc.shape) + (npdt.shape or ()), dtype=npdt.base)
        print(f"stage: {'dace-run' if who == 'dace' else 'sdfgc-run'}", flush=True)
        if who != "dace":
            hook.enable(mode="external" if who.endswith("external") else None)
        lib(**vals)
        hook.disable()
        outs[who] = vals
    for i, (c, _) in enumerate(live):
        bad = [a for a in outs["dace"] if a.startswith(f"c{i}_") and
               not all(_compare(outs["dace"][a], outs[w][a]) for w in ("sdfgc", "sdfgc-external"))]
        verdict[c.key] = ("sdfgc-differs", ",".join(b[len(f"c{i}_"):] for b in bad)) if bad else ("pass", "")
    # A cell whose outputs differ: DaCe's library run again on the same
    # inputs; if it disagrees with itself (a parallel reduction whose
    # combination is not commutative, e.g. argmax's ties), no generator's
    # output can be compared with it: DaCe's (`dace-nondeterministic`).
    differing = [i for i, (c, _) in enumerate(live) if verdict[c.key][0] == "sdfgc-differs"]
    g, lib = libs["dace"]
    for _ in range(8 if differing else 0):
        vals = {k: v.copy() for k, v in inputs.items()}
        for a, desc in g.arrays.items():
            if not desc.transient and a not in vals:
                npdt = desc.dtype.as_numpy_dtype()
                vals[a] = np.zeros(tuple(desc.shape) + (npdt.shape or ()), dtype=npdt.base)
        lib(**vals)
        for i in differing:
            c = live[i][0]
            if any(not _compare(outs["dace"][a], vals[a]) for a in vals if a.startswith(f"c{i}_")):
                verdict[c.key] = ("dace-nondeterministic", "DaCe's own outputs differ between runs")
    if save and all(verdict[c.key][0] == "pass" for c, _ in live):
        _save_fixture(save, libs["dace"][0], inputs, outs["dace"], [c for c, _ in live], seed)
    return verdict, None


def _save_fixture(save, sdfg, inputs, refs, cells, seed):
    """The batch as a corpus case: DaCe's SDFG, inputs, DaCe's outputs."""
    import dace
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fixturelib
    sdfg = copy.deepcopy(sdfg)
    sdfg.name = save["name"]
    starts = {}
    for a in sdfg.arglist():
        desc = sdfg.arrays[a]
        npdt = desc.dtype.as_numpy_dtype()
        starts[a] = inputs.get(a, np.zeros(tuple(desc.shape) + (npdt.shape or ()), dtype=npdt.base))
    written = {e.data.data for st in sdfg.states() for n in st.nodes()
               if isinstance(n, dace.nodes.NestedSDFG) for e in st.out_edges(n)}
    written = {a: refs[a] for a in starts if a in written}
    variant = "program.sdfg" if dace.__version__.startswith("1.") else "program.v2.sdfg"
    fixturelib.write_array_case(
        os.path.join(save["dir"], save["name"]), variant, sdfg, starts, written, name=save["name"],
        description="Enumerated cells (scripts/enumerate.py), one nested SDFG each: "
                    + ", ".join(c.key for c in cells),
        symbols={}, features=[], script=f"scripts/enumerate.py --save-fixture (seed {seed})", tol=1e-5)
    # The corpus format's complex data: (real, imag) pairs of the real type;
    # float16 data: their bits.
    path = os.path.join(save["dir"], save["name"], "case.json")
    case = fixturelib.load_case(path)
    for entry in case["outputs"]:  # the absolute tolerance scaled as in _compare
        ref = np.asarray(written[entry["name"]]).astype(np.complex128)
        finite = np.abs(ref[np.isfinite(ref)])
        entry["atol"] = entry["rtol"] * (float(finite.max()) if finite.size else 0.0)
    for entry in case["args"] + case["outputs"]:
        if entry["dtype"] == "float16":  # compared bit for bit, as uint16
            entry["dtype"] = "uint16"
        if entry["dtype"].startswith("complex"):
            entry["complex_dtype"] = entry["dtype"]
            entry["dtype"] = {"complex64": "float32", "complex128": "float64"}[entry["dtype"]]
            entry["shape"] = entry["shape"] + [2]
    fixturelib.write_json(path, case)


def _refused_cells(e, ncells):
    """The cell that sdfgc's refusal names: its message points at an outer
    argument `c<i>_...` or into the nested SDFG `cell<i>`; None if neither."""
    m = re.search(r"\bc(\d+)_\w+|\bcell(\d+)\b", str(e))
    if not m:
        return None
    i = int(m.group(1) or m.group(2))
    return {i} if i < ncells else None


def _refused(e):
    text = str(e)
    return ("unsupported" in text or "refuse" in text or "sdfgc: error" in text) and "g++" not in text


def _last_line(e):
    lines = [x for x in str(e).strip().splitlines() if x.strip()]
    for x in lines:
        if "error:" in x:
            return x.strip()[:300]
    return (lines[-1] if lines else repr(e))[:300]


def settle(cells, seed, workdir, py):
    """Runs `cells` in a child; splits the batch while one side fails as a
    whole, until each cell stands alone."""
    if not cells:
        return {}
    payload = json.dumps({"cells": [c.to_json() for c in cells], "seed": seed, "workdir": workdir,
                          "save": SAVE})
    r = subprocess.run([py, __file__, "--child"], input=payload, capture_output=True, text=True,
                       timeout=1800)
    res = None
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            res = json.loads(line)
            break
    if res is None:  # crashed: whose library was running?
        stages = [x[7:] for x in r.stdout.splitlines() if x.startswith("stage: ")]
        why = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:300]
        res = {"verdict": {}, "failed": [stages[-1] if stages else "crash", why]}
    verdict = {k: tuple(v) for k, v in res["verdict"].items()}
    failed = res["failed"]
    rest = [c for c in cells if c.key not in verdict]
    if failed and rest:
        if len(rest) == 1:
            verdict[rest[0].key] = tuple(failed)
        else:
            mid = len(rest) // 2
            verdict.update(settle(rest[:mid], seed, workdir, py))
            verdict.update(settle(rest[mid:], seed, workdir, py))
    return verdict


def child():
    d = json.loads(sys.stdin.read())
    cells = [Cell.from_json(c) for c in d["cells"]]
    verdict, failed = run_batch(cells, d["seed"], d["workdir"], d.get("save"))
    print(json.dumps({"verdict": verdict, "failed": failed}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", default="", help="families, comma-separated (default: all; with --ci: "
                    + ",".join(CI_FAMILIES) + ")")
    ap.add_argument("--filter", default="", help="a regular expression on family/entry/dtype")
    ap.add_argument("--dtypes", default="", help="only these dtypes (default: every dtype of every family)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "enumerate"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--group", choices=("entry", "family"), default="entry",
                    help="batch the cells of one table entry (default) or of a whole family together "
                         "(fewer, larger builds: faster on a busy machine)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--save-fixture", metavar="DIR/NAME",
                    help="run the selected cells as one batch and save it as the corpus case DIR/NAME")
    ap.add_argument("--ci", action="store_true",
                    help="the CI slice: every 23rd cell of every family (in key order, float16 left out: "
                         "sdfgc refuses it by name on CPUs), in batches of 24")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child()
    fams = args.family.split(",") if args.family else list(CI_FAMILIES if args.ci else FAMILIES)
    dtypes = set(args.dtypes.split(",")) if args.dtypes else None
    cells = [c for f in fams for c in FAMILIES[f]()
             if (dtypes is None or c.dtype in dtypes) and re.search(args.filter, c.key)]
    if args.ci:
        cells = sorted((c for c in cells if c.dtype != "float16"), key=lambda c: c.key)[::23]
        args.batch = 24
    if args.list:
        for c in cells:
            print(c.key)
        print(f"{len(cells)} cells")
        return 0
    os.makedirs(args.out, exist_ok=True)
    workdir = os.path.join(args.out, "build")
    os.makedirs(workdir, exist_ok=True)
    log = open(os.path.join(args.out, "cells.jsonl"), "a")
    by_entry = {}
    if args.save_fixture:
        global SAVE
        SAVE = {"dir": os.path.dirname(os.path.abspath(args.save_fixture)),
                "name": os.path.basename(args.save_fixture)}
        args.batch = len(cells)
    for c in cells:
        by_entry.setdefault(("+".join(sorted({x.family for x in cells})), "all") if SAVE else
                            (c.family, "ci") if args.ci else
                            (c.family, "all") if args.group == "family" else (c.family, c.entry), []).append(c)
    totals = {}
    for (fam, entry), group in by_entry.items():
        for k in range(0, len(group), args.batch):
            part = group[k:k + args.batch]
            verdict = settle(part, args.seed, workdir, sys.executable)
            for c in part:
                status, why = verdict.get(c.key, ("crash", "no verdict"))
                row = {"cell": c.key, "status": status, "why": why}
                log.write(json.dumps(row) + "\n")
                log.flush()
                totals.setdefault(fam, {}).setdefault(status, 0)
                totals[fam][status] += 1
                if not (status == "pass" or status.startswith("dace-")):
                    print(json.dumps(row), flush=True)
        print(f"# {fam}/{entry}: " + json.dumps({s: n for s, n in sorted(totals[fam].items())}),
              file=sys.stderr, flush=True)
    statuses = sorted({s for t in totals.values() for s in t})
    print("\n| family | cells | " + " | ".join(statuses) + " |")
    print("|---|---|" + "---|" * len(statuses))
    for fam, t in totals.items():
        print(f"| {fam} | {sum(t.values())} | " + " | ".join(str(t.get(s, 0)) for s in statuses) + " |")
    sdfgc_side = sum(n for t in totals.values() for s, n in t.items() if s.startswith("sdfgc") or s == "crash")
    return 0 if sdfgc_side == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
