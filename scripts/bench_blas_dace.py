"""Builds DaCe's library for an SDFG with its BLAS nodes on OpenBLAS
(helper of scripts/bench-blas.sh).

Usage: python bench_blas_dace.py SDFG_FILE BUILD_DIR
Prints the path of the shared library on the last line.
"""
import os
import sys

import dace
import dace.libraries.blas as blas


def main():
    path, build = sys.argv[1], os.path.abspath(sys.argv[2])
    blas.default_implementation = 'OpenBLAS'
    sdfg = dace.SDFG.from_file(path)
    sdfg.build_folder = build
    sdfg.expand_library_nodes()
    code = ''.join(c.clean_code for c in sdfg.generate_code())
    print('cblas calls in DaCe code:', code.count('cblas_'), file=sys.stderr)
    compiled = sdfg.compile()
    print(compiled._lib._library_filename)


if __name__ == '__main__':
    main()
