#!/usr/bin/env python3
"""Adds `cpu_persistent.sdfg` to every gt4py fixture with a `cpu.sdfg`
(fixtures/gt4py/**): the SDFG gt4py 1.2.1's DaCe CPU backend builds in
`TransientMemoryMode.PERSISTENT`.

gt4py's auto-optimizer runs the same pipeline in every mode and sets the
transients' lifetime last (`gt_auto_optimize`: PERSISTENT calls
`gt_configure_transient_lifetime(sdfg, Persistent)`; POOL is a no-op on the
CPU, so `cpu.sdfg` is the SCOPED and the POOL program alike). This script
applies that last step to `cpu.sdfg` and serializes the result as gt4py's
`DaCeTranslator` does (`serialize_sdfg_as_json`: `to_json(hash=True)`, no
`guid`s). The variant runs on the case's inputs and reference outputs; its
ABI entry is parsed from DaCe's generated code, and it must equal
`cpu.sdfg`'s (a persistent transient lives in the state struct, not in a
signature). With the fixtures of `cpu.sdfg` (SCOPED, POOL) and
`cpu_external.sdfg` (EXTERNAL), every gt4py memory mode runs in
`tests/run_corpus.rs` (and the sanitizer tests).

    build/venv-icon/bin/python scripts/make-gt4py-persistent-fixtures.py
"""
import glob
import json
import os

import dace
from gt4py.next.program_processors.runners.dace.transformations import utils as gt_utils
from gt4py.next.program_processors.runners.dace.workflow.common import serialize_sdfg_as_json

from fixturelib import abi_entry, load_case, write_json

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', 'fixtures', 'gt4py')
VARIANT = 'cpu_persistent.sdfg'


def persistent_lifetimes(sdfg):
    """Names of the transients whose lifetime is Persistent, per SDFG."""
    return {s.name: sorted(n for n, d in s.arrays.items()
                           if d.transient and d.lifetime == dace.AllocationLifetime.Persistent)
            for s in sdfg.all_sdfgs_recursive()}


def main():
    for src in sorted(glob.glob(os.path.join(ROOT, '**', 'cpu.sdfg'), recursive=True)):
        case_dir = os.path.dirname(src)
        case_path = os.path.join(case_dir, 'case.json')
        case = load_case(case_path)
        if case is None:
            continue
        sdfg = dace.SDFG.from_file(src)
        changed = gt_utils.gt_configure_transient_lifetime(sdfg, dace.AllocationLifetime.Persistent)
        with open(os.path.join(case_dir, VARIANT), 'w') as fh:
            json.dump(serialize_sdfg_as_json(sdfg), fh)
        abi = abi_entry(dace.SDFG.from_file(os.path.join(case_dir, VARIANT)), case['args'])
        want = case['abi']['cpu.sdfg']
        differ = [k for k, v in abi.items() if v is not None and v != want.get(k)]
        assert not differ, f'{case_dir}: the ABI differs from cpu.sdfg in {differ}'
        case['abi'][VARIANT] = want  # with the fixture's other entries (exports per code object)
        case['variants'][VARIANT] = {
            'device': 'CPU',
            'description': 'CPU auto_optimize with transient_memory_mode=PERSISTENT: cpu.sdfg with '
                           "gt4py's gt_configure_transient_lifetime(sdfg, Persistent) applied (the last "
                           'step of gt_auto_optimize in that mode)',
            'codegen': 'ok',
        }
        case.setdefault('generator', {})[VARIANT] = {
            'dace_version': dace.__version__,
            'script': 'scripts/make-gt4py-persistent-fixtures.py',
        }
        write_json(case_path, case)
        n = sum(len(v) for v in changed.values())
        print(f'{os.path.relpath(case_dir, ROOT)}: {n} transients made persistent')


if __name__ == '__main__':
    main()
