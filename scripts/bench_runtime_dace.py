"""Build DaCe's own library for an SDFG file (helper of scripts/bench-runtime.sh).

Usage: python bench_runtime_dace.py SDFG_FILE BUILD_DIR
Loads the SDFG with DaCe, compiles it with DaCe's default CPU flags into
BUILD_DIR and prints the path of the shared library on the last line.
"""
import os
import sys

import dace


def main():
    path, build = sys.argv[1], os.path.abspath(sys.argv[2])
    sdfg = dace.SDFG.from_file(path)
    sdfg.build_folder = build
    compiled = sdfg.compile()
    lib = compiled._lib._library_filename
    print(lib)


if __name__ == '__main__':
    main()
