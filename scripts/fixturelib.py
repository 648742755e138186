"""Helpers shared by the fixture generators (scripts/make-*-fixtures.py).

The generators import it as `import fixturelib` (Python puts the running
script's folder, scripts/, first on sys.path). Nothing here imports DaCe at
module level: it works under DaCe 1.0.2 and 2.x, and in a plain Python 3
(make-interstate-fixtures.py drives its DaCe venvs from one).
"""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

# C types of DaCe's generated signatures -> numpy dtype names.
CTYPES = {'double': 'float64', 'float': 'float32', 'int': 'int32', 'long long': 'int64',
          'int64_t': 'int64', 'int32_t': 'int32', 'bool': 'bool', 'uint8_t': 'uint8',
          'char': 'int8', 'short': 'int16', 'unsigned int': 'uint32', 'uint32_t': 'uint32',
          'uint64_t': 'uint64', 'dace::uint': 'uint32', 'dace::complex64': 'complex64', 'dace::complex128': 'complex128',
          'int8_t': 'int8', 'int16_t': 'int16', 'uint16_t': 'uint16', 'unsigned short': 'uint16',
          'unsigned char': 'uint8', 'dace::float16': 'float16'}


def parse_params(text):
    """`(name, ctype)` of each parameter of a C parameter list (`__restrict__`
    dropped, pointers written `T *`)."""
    out = []
    for prm in [x.strip() for x in text.split(',') if x.strip()]:
        prm = prm.replace('__restrict__', '').strip()
        m = re.match(r'^(.*?)([A-Za-z_][A-Za-z0-9_]*)$', prm)
        ctype, name = m.group(1).strip(), m.group(2)
        ctype = re.sub(r'\s*\*\s*$', ' *', ctype)
        out.append((name, ctype))
    return out


def abi_entry(sdfg, kinds=None, *, external=False, other_exports=False, expand_copy=False):
    """The exported functions of DaCe's generated code for `sdfg`, in the
    case.json `abi` format.

    kinds: argument name -> 'scalar'/'array'/'struct' (a dict, or case.json
    `args` entries); a non-pointer parameter named as a scalar there is a
    scalar, every other one a symbol; a pointer named as a struct is a
    `struct` parameter (a DaCe Structure). external: `char *` parameters are the
    workspace and the `__dace_*_external_memory_*` functions are listed
    (otherwise `external_memory` is empty). other_exports: add an empty
    `other_exports`. expand_copy: generate the code of a deep copy (code
    generation expands library nodes in place).
    """
    if isinstance(kinds, list):
        kinds = {a['name']: a['kind'] for a in kinds}
    kinds = kinds or {}
    code = '\n'.join(c.clean_code for c in (copy.deepcopy(sdfg) if expand_copy else sdfg).generate_code())
    # A pointer to `dace::vec<T, N>` elements is passed as one to T (sdfgc's
    # header names the element type; the pointer is the same).
    code = re.sub(r'dace::vec<([^,<>]+),\s*\d+>', r'\1', code)
    name = sdfg.name

    def fn(symbol, ret):
        m = re.search(r'DACE_EXPORTED\s+[^\n(]*\b' + re.escape(symbol) + r'\s*\(([^)]*)\)', code)
        assert m, symbol
        params = []
        for pname, ctype in parse_params(m.group(1)):
            if pname == '__state':
                params.append({'name': pname, 'ctype': ctype, 'kind': 'state'})
            elif external and ctype == 'char *':
                params.append({'name': pname, 'ctype': ctype, 'kind': 'workspace'})
            elif ctype.endswith('*') and kinds.get(pname) == 'struct':
                # A DaCe Structure: a pointer to its C struct.
                params.append({'name': pname, 'ctype': ctype, 'kind': 'struct'})
            elif ctype.endswith('*'):
                params.append({'name': pname, 'ctype': ctype, 'kind': 'array', 'dtype': CTYPES[ctype[:-1].strip()]})
            else:
                kind = 'scalar' if kinds.get(pname) == 'scalar' else 'symbol'
                params.append({'name': pname, 'ctype': ctype, 'kind': kind, 'dtype': CTYPES[ctype]})
        return {'symbol': symbol, 'return': ret, 'params': params}

    memory = []
    if external:
        for storage in sorted(set(re.findall(r'__dace_get_external_memory_size_([A-Za-z_]+)\s*\(', code))):
            memory.append({
                'storage': storage,
                'size': fn(f'__dace_get_external_memory_size_{storage}', 'size_t'),
                'set': fn(f'__dace_set_external_memory_{storage}', 'void'),
            })
    entry = {
        'sdfg_name': name,
        'state_struct': f'{name}_state_t',
        'init': fn(f'__dace_init_{name}', f'{name}_state_t *'),
        'program': fn(f'__program_{name}', 'void'),
        'exit': fn(f'__dace_exit_{name}', 'int'),
        'external_memory': memory,
    }
    if other_exports:
        entry['other_exports'] = []
    return entry


def arglist_abi(sdfg, code=None, scalars=False):
    """The exported functions in DaCe's calling convention, built from
    `sdfg.arglist()` (arrays, then scalars and symbols in DaCe's order).

    code: DaCe's generated code; the `__program_` signature there must list
    the same parameters in the same order. scalars: a non-array argument that
    is a data container of `sdfg` is a scalar (otherwise every one is a symbol).
    """
    import dace
    state = {"name": "__state", "ctype": f"{sdfg.name}_state_t *", "kind": "state"}
    params = [state]
    for name, desc in sdfg.arglist().items():
        if isinstance(desc, dace.data.Array):
            params.append({"name": name, "ctype": f"{desc.dtype.ctype} *", "kind": "array",
                           "dtype": desc.dtype.to_string()})
        else:
            kind = "scalar" if scalars and name in sdfg.arrays else "symbol"
            params.append({"name": name, "ctype": desc.dtype.ctype, "kind": kind, "dtype": desc.dtype.to_string()})
    if code is not None:
        head = code[code.index(f"void __program_{sdfg.name}("):]
        head = head[head.index("(") + 1: head.index(")")]
        got = [x.split()[-1] for x in head.split(",")[1:]]
        assert got == [p["name"] for p in params[1:]], (got, params)
    init = [p for p in params if p["kind"] == "symbol"]
    return {
        "sdfg_name": sdfg.name,
        "state_struct": f"{sdfg.name}_state_t",
        "init": {"symbol": f"__dace_init_{sdfg.name}", "return": f"{sdfg.name}_state_t *", "params": init},
        "program": {"symbol": f"__program_{sdfg.name}", "return": "void", "params": params},
        "exit": {"symbol": f"__dace_exit_{sdfg.name}", "return": "int", "params": [state]},
        "external_memory": [],
    }


def run_dace_cpu_code(code, case_dir, root):
    """Builds DaCe's generated CPU code (one file) with g++ against DaCe's
    runtime headers and runs it through fixtures/corpus/run_case.py on the
    case's stored inputs; it must reproduce the stored outputs."""
    import dace
    inc = os.path.join(os.path.dirname(dace.__file__), "runtime", "include")
    with tempfile.TemporaryDirectory() as tmp:
        # DaCe's file includes ../../include/hash.h (its build folder layout).
        os.makedirs(os.path.join(tmp, "src", "cpu"))
        os.makedirs(os.path.join(tmp, "include"))
        open(os.path.join(tmp, "include", "hash.h"), "w").close()
        src = os.path.join(tmp, "src", "cpu", "p.cpp")
        with open(src, "w") as f:
            f.write(code)
        lib = os.path.join(tmp, "libp.so")
        cc = subprocess.run(["g++", "-std=c++17", "-O2", "-fopenmp", "-fPIC", "-shared", f"-I{inc}", src, "-o", lib],
                            capture_output=True, text=True)
        assert cc.returncode == 0, cc.stderr[:3000]
        r = subprocess.run([sys.executable, os.path.join(root, "fixtures", "corpus", "run_case.py"),
                            "--lib", lib, "--case", case_dir], capture_output=True, text=True)
        print(r.stdout.strip())
        assert r.returncode == 0, r.stderr


def array_arg(name, value, role, file=None):
    """A case.json `args` entry for an array argument (contiguous `value`)."""
    entry = {'name': name, 'dtype': str(value.dtype), 'shape': list(value.shape), 'kind': 'array', 'role': role}
    if file is not None:
        entry['file'] = file
    return entry


def data_arg(d, name, value, role, scalar=False):
    """A case.json `args` entry for an array (or, `scalar`, a scalar passed
    by value) named `name`; its input is written to `d` as NAME.in.bin
    unless `role` is 'out'."""
    entry = {'name': name, 'dtype': str(value.dtype), 'shape': list(value.shape),
             'kind': 'scalar' if scalar else 'array', 'role': role}
    if role != 'out':
        entry['file'] = f'{name}.in.bin'
        value.tofile(os.path.join(d, entry['file']))
    return entry


def write_array_args(d, names, inputs, outputs):
    """Writes each named array (from `inputs`, else `outputs`) to `d` as
    NAME.in.bin / NAME.out.bin; returns their case.json `args` entries."""
    args = []
    for n in names:
        v = inputs.get(n, outputs.get(n))
        role = 'in' if n in inputs else 'out'
        f = f'{n}.{role}.bin'
        v.tofile(os.path.join(d, f))
        args.append(array_arg(n, v, role, f))
    return args


def output_entry(name, value, tol, file=None):
    """A case.json `outputs` entry; tol is (rtol, atol)."""
    return {'name': name, 'file': file or f'{name}.out.bin', 'dtype': str(value.dtype), 'shape': list(value.shape),
            'rtol': tol[0], 'atol': tol[1]}


def generator_info(script, seed=None, **extra):
    """The case.json `generator` entry: DaCe's and numpy's versions, the seed, the script."""
    import dace
    import numpy as np
    info = {'dace_version': dace.__version__, 'numpy_version': np.__version__}
    if seed is not None:
        info['seed'] = seed
    info['script'] = script
    info.update(extra)
    return info


def load_case(path, default=None):
    """case.json at `path`, or `default` where there is none yet."""
    if not os.path.exists(path):
        return default
    with open(path) as fh:
        return json.load(fh)


def write_json(path, doc):
    """Writes a case.json the way every fixture has it (indent 1, final newline)."""
    with open(path, 'w') as fh:
        json.dump(doc, fh, indent=1)
        fh.write('\n')


def merge_variant(case_dir, fields, variant, sdfg, args, script):
    """Adds one DaCe version's variant to `case_dir`/case.json (made if missing):
    `fields` replace the top-level entries; the variant's ABI entry (from
    DaCe's code for `sdfg`) and its generator entry are added."""
    import dace
    path = os.path.join(case_dir, 'case.json')
    case = load_case(path, {'abi': {}})
    case.update(fields)
    case['abi'][variant] = abi_entry(sdfg, args)
    case.setdefault('generator', {})[variant] = {'dace_version': dace.__version__, 'script': script}
    write_json(path, case)
    print('wrote', variant, json.dumps([p['name'] for p in case['abi'][variant]['program']['params']]))


def write_array_case(out, variant, sdfg, starts, refs, *, name, description, symbols, features, script, tol=1e-12):
    """Writes one DaCe version's variant of a fixture whose arguments are
    arrays: `sdfg` saved as `variant`; each of `starts` (name -> array the
    call starts from, in argument order) as `<name>.in.bin`, role `inout`
    with `<name>.out.bin` where `refs` (name -> expected array) has it, else
    `in`; the outputs compared within `tol`; case.json through
    merge_variant."""
    os.makedirs(out, exist_ok=True)
    sdfg.save(os.path.join(out, variant))
    args, outputs = [], []
    for n, start in starts.items():
        start.tofile(os.path.join(out, f'{n}.in.bin'))
        arg = {'name': n, 'dtype': str(start.dtype), 'shape': list(start.shape), 'kind': 'array', 'role': 'in',
               'file': f'{n}.in.bin'}
        if n in refs:
            refs[n].tofile(os.path.join(out, f'{n}.out.bin'))
            arg.update(role='inout', out_file=f'{n}.out.bin')
            outputs.append({'name': n, 'file': f'{n}.out.bin', 'dtype': str(start.dtype), 'shape': list(start.shape),
                            'rtol': tol, 'atol': tol})
        args.append(arg)
    merge_variant(out, {
        'name': name,
        'description': description,
        'symbols': symbols,
        'args': args,
        'outputs': outputs,
        'default_variant': 'program.sdfg',
        'features': features,
    }, variant, sdfg, args, script)


def out_dir(default, argv=None):
    """The output folder: the first command-line argument, else `default`."""
    argv = sys.argv if argv is None else argv
    return os.path.abspath(argv[1] if len(argv) > 1 else default)


def scratch_dir(name, venv_cmake=False):
    """Moves into a fresh temporary folder (DaCe writes .dacecache/ there);
    venv_cmake: puts the running venv's bin/ (its cmake) first on PATH."""
    if venv_cmake:
        os.environ['PATH'] = os.path.dirname(sys.executable) + os.pathsep + os.environ['PATH']
    os.chdir(tempfile.mkdtemp(prefix=f'{name}-'))


def corpus_case(name):
    """`(fixtures/corpus/<name>, the variant this DaCe writes)`: program.sdfg
    under DaCe 1.0.2, program.v2.sdfg under DaCe 2.x."""
    import dace
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'corpus', name)
    return out, 'program.v2.sdfg' if dace.__version__.startswith('2') else 'program.sdfg'


def check_with_dace(sdfg, starts, refs, **symbols):
    """Runs DaCe's own build of `sdfg` on copies of `starts` (name -> array)
    and asserts that every array of `refs` comes out exactly so."""
    import numpy as np
    got = {name: v.copy() for name, v in starts.items()}
    sdfg.compile()(**got, **symbols)
    for name, ref in refs.items():
        assert np.array_equal(got[name], ref), (name, got[name], ref)


def blamed_functions(error, which, valid):
    """The numbers of the batch members whose generated functions hold a
    compiler's errors: for each `file:line:col: error:` in `error`, the
    nearest line at or above it for which `which(text)` returns a number,
    which `valid` must accept. None where an error's file cannot be read or
    lies outside every member's function (then no member can be blamed
    alone)."""
    found = set()
    sources = {}
    for path, line in re.findall(r"(/\S+?\.(?:cpp|cu)):(\d+):\d+: error:", str(error)):
        if path not in sources:
            try:
                with open(path) as fh:
                    sources[path] = fh.read().splitlines()
            except OSError:
                return None
        member = next((m for m in map(which, reversed(sources[path][:int(line)])) if m is not None), None)
        if member is None or not valid(member):
            return None
        found.add(member)
    return found or None
