#!/usr/bin/env bash
# Builds sdfgc, compiles a shipped SDFG to C++, builds the library with g++
# and runs it on the case's inputs with the reference checker.
set -euo pipefail
cd "$(dirname "$0")/.."
case_dir=fixtures/corpus/jacobi_1d
out=build/example
cargo build --release --quiet
./target/release/sdfgc check "$case_dir/program.sdfg"
./target/release/sdfgc "$case_dir/program.sdfg" --mode external --target cpp -o "$out"
name=cases_dev_jacobi_1d
g++ -std=c++17 -O2 -fopenmp -fPIC -shared "$out/$name.cpp" -o "$out/lib$name.so"
echo "built $out/lib$name.so from $case_dir/program.sdfg (external workspace mode)"
python3 -c "import numpy" 2>/dev/null || python3 -m pip install --quiet numpy
python3 fixtures/corpus/run_case.py --lib "$out/lib$name.so" --case "$case_dir" --poison
