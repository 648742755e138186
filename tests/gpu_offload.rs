//! `--offload`: every CPU fixture (corpus `program.sdfg` / `program.v2.sdfg`,
//! gt4py `cpu*.sdfg`, NPBench `program.sdfg` / `program.autoopt.sdfg`) is
//! offloaded to CUDA and run on the emulated GPU runtime (tests/gpu_emu,
//! where device memory is unreadable outside kernels and copies, so a host
//! dereference of device memory crashes the run) with the case's inputs,
//! poisoned workspaces, in the default and the external memory mode, with
//! the program's own (host) C ABI.

mod common;

use std::path::{Path, PathBuf};

use common::corpus::{assert_all_passed, case_files_under, fixtures, run_parallel};
use common::harness::{RunOptions, run_case};
use sdfgc::driver::{CompileOptions, Mode, Target};

/// Every CPU fixture to offload: (case directory, variant).
pub fn offload_jobs() -> Vec<(PathBuf, String)> {
    let filter = std::env::var("SDFGC_OFFLOAD_FILTER").unwrap_or_default();
    let root = fixtures();
    case_files_under(&root, |n| {
        matches!(n, "program.sdfg" | "program.v2.sdfg" | "program.autoopt.sdfg")
            || (n.starts_with("cpu") && n.ends_with(".sdfg"))
    })
    .into_iter()
    .filter(|(d, n)| {
        let rel = d.strip_prefix(&root).unwrap_or(d);
        let family = rel.components().next().map(|c| c.as_os_str().to_string_lossy().to_string());
        let ok = match family.as_deref() {
            Some("corpus") => n == "program.sdfg" || n == "program.v2.sdfg",
            Some("gt4py") => n.starts_with("cpu"),
            Some("npbench") => n == "program.sdfg" || n == "program.autoopt.sdfg",
            _ => false,
        };
        ok && d.join(n).to_string_lossy().contains(&filter)
    })
    .collect()
}

fn run_one(dir: &Path, variant: &str, mode: Option<Mode>, work: &Path) -> Result<(), String> {
    let opts = CompileOptions {
        mode,
        offload: true,
        output: work.to_path_buf(),
        ..CompileOptions::new(Target::Cuda)
    };
    let outs =
        sdfgc::driver::generate(&dir.join(variant), &opts).map_err(|e| format!("generate: {e}"))?;
    let (_, src) = outs
        .iter()
        .find(|(n, _)| n.ends_with(".cu"))
        .ok_or("no GPU source")?;
    let lib = work.join("lib.so");
    common::emu::build_library(src, work, &lib)?;
    let run = RunOptions {
        variant: variant.to_string(),
        poison: true,
        workspace_exact: true,
        repeat: 2,
        emulated_device: true,
        ..Default::default()
    };
    let report = run_case(dir, &lib, &run)?;
    if !report.ok {
        return Err(format!("run failed: {}", report.message));
    }
    Ok(())
}

#[test]
fn every_cpu_fixture_offloads_and_runs_on_the_emulated_runtime() {
    let tasks: Vec<(PathBuf, String, Option<Mode>)> = offload_jobs()
        .into_iter()
        .flat_map(|(d, v)| {
            [None, Some(Mode::External)]
                .into_iter()
                .map(move |m| (d.clone(), v.clone(), m))
        })
        .collect();
    let filtered = std::env::var_os("SDFGC_OFFLOAD_FILTER").is_some();
    assert!(filtered || tasks.len() >= 300, "only {} runs found", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(dir, variant, mode)| {
            format!(
                "{}/{variant} [{}]",
                dir.file_name().unwrap().to_string_lossy(),
                mode.map_or("default".into(), |m| format!("{m:?}").to_lowercase())
            )
        },
        |(dir, variant, mode), work| run_one(dir, variant, *mode, work),
    );
    assert_all_passed("offloaded runs", tasks.len(), &failures);
}
