#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests
# (the integration tests build generated C++ with g++ and run it), and the
# Python package's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v g++ >/dev/null || { echo "error: g++ is required by the tests" >&2; exit 1; }
cargo fmt --all -- --check
cargo clippy --all-targets --release -- -D warnings
INSTA_UPDATE=no cargo test --release
# The Python package (python/sdfgc) against DaCe 1.0.2's own SDFG.compile().
SDFGC="$PWD/target/release/sdfgc" PYTHONPATH="$PWD/python" PATH="$PWD/build/venv-dace/bin:$PATH" \
    build/venv-dace/bin/python -m pytest -q -p no:cacheprovider python/tests
