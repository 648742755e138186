//! Every GPU fixture on a real NVIDIA GPU. Ignored by default (no GPU in CI);
//! `bash scripts/gpu-check.sh` runs it on a machine with a GPU and nvcc:
//! every `program.gpu*.sdfg`, `program.v2.gpu.sdfg`, gt4py
//! `gpu`/`gpu_external`/`gpu_persistent.sdfg` and `fixtures/gpu/*` case is
//! generated for CUDA in every memory mode (scoped, pool, persistent,
//! external, and external with 3 streams; the constant-array cases also with
//! `--constant-memory`), built with nvcc, and run by the harness's
//! real-device driver against the expected outputs, twice per run, with
//! every GPU workspace poisoned (0xFF) before every call and followed by a
//! guard zone, and (where the library has a GPU workspace) with the checked
//! setter made to refuse host memory. One line per run, then the pass count.
//!
//! Environment: `SDFGC_NVCC` (nvcc), `SDFGC_GPU_ARCH` (nvcc `-arch`,
//! default `native`), `SDFGC_ROOT` (the repository, default: where the test
//! was built), `SDFGC_GPU_FILTER` (only fixtures whose path contains it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::corpus::{case_files, nvcc, run_parallel};
use common::harness::{DeviceDriver, RunOptions, run_case};
use sdfgc::driver::{CompileOptions, Mode, Target};

/// A memory mode, a number of streams and `--constant-memory`.
type Config = (Mode, u32, bool);

const MODES: [(Mode, u32); 5] = [
    (Mode::Scoped, 1),
    (Mode::Pool, 1),
    (Mode::Persistent, 1),
    (Mode::External, 1),
    (Mode::External, 3),
];

fn config_name((mode, streams, cm): Config) -> String {
    let mut s = format!("{mode:?}").to_lowercase();
    if streams > 1 {
        s.push_str(&format!("-{streams}streams"));
    }
    if cm {
        s.push_str("+constant-memory");
    }
    s
}

/// The runs: (case directory, variant file, configuration).
fn runs() -> Vec<(PathBuf, String, Config)> {
    let filter = std::env::var("SDFGC_GPU_FILTER").unwrap_or_default();
    let mut out = Vec::new();
    for (dir, variant) in
        case_files(|n| n.ends_with(".sdfg") && n.contains("gpu") && !n.contains("static"))
    {
        if !dir.join(&variant).to_string_lossy().contains(&filter) {
            continue;
        }
        let constants = common::corpus::has_feature(&dir, "constant_array");
        for (m, s) in MODES {
            out.push((dir.clone(), variant.clone(), (m, s, false)));
            if constants {
                out.push((dir.clone(), variant.clone(), (m, s, true)));
            }
        }
    }
    out
}

fn run_one(
    dir: &Path,
    variant: &str,
    config: Config,
    nvcc: &Path,
    work: &Path,
) -> Result<String, String> {
    let (mode, streams, constant_memory) = config;
    let opts = CompileOptions {
        mode: Some(mode),
        streams,
        constant_memory,
        output: work.to_path_buf(),
        ..CompileOptions::new(Target::Cuda)
    };
    let outs =
        sdfgc::driver::generate(&dir.join(variant), &opts).map_err(|e| format!("generate: {e}"))?;
    sdfgc::driver::write_outputs(work, &outs).map_err(|e| e.to_string())?;
    let (name, text) = outs
        .iter()
        .find(|(n, _)| n.ends_with(".cu"))
        .ok_or("no .cu file")?;
    // The libraries the file calls (cuBLAS, cuSOLVER, ...), from its build line.
    let libs: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("// Build: "))
        .map(|l| {
            l.split_whitespace()
                .filter(|w| w.starts_with("-l"))
                .collect()
        })
        .unwrap_or_default();
    let lib = work.join("lib.so");
    let arch = std::env::var("SDFGC_GPU_ARCH").unwrap_or_else(|_| "native".into());
    let cc = Command::new(nvcc)
        .args([
            "-std=c++17",
            "-O2",
            &format!("-arch={arch}"),
            "-Xcompiler",
            "-fPIC",
            "-shared",
        ])
        .arg(work.join(name))
        .arg("-o")
        .arg(&lib)
        .args(&libs)
        .output()
        .map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !cc.status.success() {
        let err = String::from_utf8_lossy(&cc.stderr);
        return Err(format!(
            "nvcc failed: {}",
            err.lines().take(6).collect::<Vec<_>>().join(" | ")
        ));
    }
    let run = RunOptions {
        variant: variant.to_string(),
        poison: true,
        workspace_exact: true,
        repeat: 2,
        real_device: Some(DeviceDriver::Nvcc(nvcc.to_path_buf())),
        ..Default::default()
    };
    let report = run_case(dir, &lib, &run)?;
    if !report.ok {
        return Err(format!(
            "run failed: {}",
            report.message.replace('\n', " | ")
        ));
    }
    let mut note = String::new();
    for (storage, bytes) in &report.workspace_bytes {
        note.push_str(&format!(" workspace {storage}={bytes}B"));
    }
    if report.message.contains("SETTER refuses host memory") {
        note.push_str(" setter-refuses-host");
    }
    Ok(note)
}

/// Needs an NVIDIA GPU: `bash scripts/gpu-check.sh` runs it (this target has
/// `test = false` in Cargo.toml, so a plain `cargo test` does not).
#[test]
fn every_gpu_fixture_runs_on_the_gpu_in_every_mode() {
    let nvcc = nvcc();
    let runs = runs();
    assert!(!runs.is_empty(), "no GPU fixtures found");
    let started = Instant::now();
    let root = common::corpus::fixtures();
    let label = |(dir, variant, config): &(PathBuf, String, Config)| {
        format!(
            "{}/{variant} [{}]",
            dir.strip_prefix(&root).unwrap_or(dir).display(),
            config_name(*config)
        )
    };
    let failures = run_parallel(&runs, label, |(dir, variant, config), work| {
        let t = Instant::now();
        let r = run_one(dir, variant, *config, &nvcc, work);
        let what = label(&(dir.clone(), variant.clone(), *config));
        match &r {
            Ok(note) => println!("PASS {what} {:.1}s{note}", t.elapsed().as_secs_f64()),
            Err(e) => println!("FAIL {what} {:.1}s: {e}", t.elapsed().as_secs_f64()),
        }
        r.map(|_| ())
    });
    println!(
        "GPU runs: {} of {} passed in {:.0} s",
        runs.len() - failures.len(),
        runs.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
}
