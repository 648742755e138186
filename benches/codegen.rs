//! In-process code-generation time: load + validate + passes + emit
//! (`sdfgc::driver::generate`, cpp target, SDFG lifetimes) per fixture, and
//! the scaling benchmark on synthetic SDFGs (`benches/synth.rs`).
//!
//!     CARGO_TARGET_DIR=/tmp/target-bench cargo bench --bench codegen
//!     cargo bench --bench codegen -- fixtures      # only the fixtures
//!     cargo bench --bench codegen -- scaling       # only the synthetic sizes
//!     SDFGC_BENCH_MAX_NODES=10000 cargo bench --bench codegen -- scaling
//!
//! Criterion reports time per file (fixtures) and per SDFG of N nodes
//! (`scaling/<shape>/<N>`, with throughput in nodes/s). Peak memory per node
//! and the fitted exponent come from `scripts/bench-scaling.py` (one process
//! per size). See docs/performance.md.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sdfgc::driver::{CompileOptions, Target, generate};

mod synth;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    if let Ok(dirs) = std::fs::read_dir(root.join("corpus")) {
        let mut dirs: Vec<_> = dirs.flatten().map(|d| d.path()).collect();
        dirs.sort();
        for d in dirs {
            for f in ["program.sdfg", "program.v2.sdfg"] {
                if d.join(f).is_file() {
                    out.push(d.join(f));
                }
            }
        }
    }
    let mut stack = vec![root.join("gt4py")];
    let mut gt = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "cpu.sdfg") {
                gt.push(p);
            }
        }
    }
    gt.sort();
    out.extend(gt);
    out
}

fn short_name(p: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    p.strip_prefix(&root).unwrap_or(p).display().to_string()
}

fn bench_fixtures(c: &mut Criterion) {
    let opts = CompileOptions::new(Target::Cpp);
    let mut g = c.benchmark_group("fixtures");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(1));
    g.sample_size(20);
    for f in fixtures() {
        // Skip (and say so) what this version refuses, instead of failing the run.
        if let Err(e) = generate(&f, &opts) {
            eprintln!("skipped {}: {e}", short_name(&f));
            continue;
        }
        g.bench_with_input(BenchmarkId::from_parameter(short_name(&f)), &f, |b, f| {
            b.iter(|| generate(f, &opts).expect("generates"))
        });
    }
    g.finish();
}

fn bench_scaling(c: &mut Criterion) {
    let max: usize = std::env::var("SDFGC_BENCH_MAX_NODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = CompileOptions::new(Target::Cpp);
    for shape in synth::Shape::ALL {
        let mut g = c.benchmark_group(format!("scaling/{}", shape.name()));
        g.warm_up_time(Duration::from_millis(200));
        g.measurement_time(Duration::from_secs(2));
        g.sample_size(10);
        for n in [10usize, 100, 1_000, 10_000, 100_000] {
            if n > max {
                continue;
            }
            let s = synth::generate(shape, n);
            let path = dir.path().join(format!("{}-{n}.sdfg", shape.name()));
            std::fs::write(&path, &s.json).expect("write");
            g.throughput(Throughput::Elements(s.nodes as u64));
            g.bench_with_input(BenchmarkId::from_parameter(s.nodes), &path, |b, p| {
                b.iter(|| generate(p, &opts).expect("generates"))
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench_fixtures, bench_scaling);
criterion_main!(benches);
