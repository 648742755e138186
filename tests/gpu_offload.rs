//! `--offload`: every CPU fixture (corpus `program.sdfg` / `program.v2.sdfg`,
//! gt4py `cpu*.sdfg`, NPBench `program.sdfg` / `program.autoopt.sdfg`) is
//! offloaded to CUDA and run on the emulated GPU runtime (tests/gpu_emu,
//! where device memory is unreadable outside kernels and copies, so a host
//! dereference of device memory crashes the run) with the case's inputs,
//! poisoned workspaces, in the default and the external memory mode, with
//! the program's own (host) C ABI.
//!
//! `--offload=device-args`: fixtures that host arguments cannot offload
//! (an argument's device twin cannot be sized) run with device arguments
//! instead (in one memory mode: external for an `*external*` variant, the
//! default otherwise), which the harness puts in device memory as it does
//! for GPU fixtures; and the external-mode runs of [`DEVICE_ARGS_CHECKS`] use
//! device arguments too (host reads of device arguments in conditions
//! included), as a check of the mode at no extra run.

mod common;

use std::path::{Path, PathBuf};

use common::corpus::{assert_all_passed, generate_offloaded, offload_variants, run_parallel};
use common::harness::{DeviceDriver, RunOptions, run_case};
use sdfgc::driver::{CompileOptions, Mode, OffloadArgs, Target};

/// Fixtures whose external-mode run uses `--offload=device-args` (their
/// interstate code reads arguments the kernels write).
const DEVICE_ARGS_CHECKS: [&str; 3] = [
    "corpus/control_flow_state_machine/program.sdfg",
    "corpus/interstate_float_cond/program.sdfg",
    "corpus/seidel_2d/program.sdfg",
];

/// True if the run of `dir/variant` in `mode` is one of [`DEVICE_ARGS_CHECKS`].
fn device_args_check(dir: &Path, variant: &str, mode: Option<Mode>) -> bool {
    let file = dir.join(variant);
    mode == Some(Mode::External) && DEVICE_ARGS_CHECKS.iter().any(|c| file.ends_with(c))
}

/// Runs one offloaded fixture; `Ok(Some(reason))` when sdfgc refuses it by name.
fn run_one(
    dir: &Path,
    variant: &str,
    (mode, streams): Config,
    work: &Path,
) -> Result<Option<String>, String> {
    let opts = CompileOptions {
        mode,
        streams,
        offload: true,
        offload_args: if device_args_check(dir, variant, mode) {
            OffloadArgs::DeviceArgs
        } else {
            OffloadArgs::HostArgs
        },
        check_pointers: true,
        output: work.to_path_buf(),
        ..CompileOptions::new(Target::Cuda)
    };
    // A fixture only device arguments offload runs in one mode (CI time):
    // external for an `*external*` variant, the default otherwise.
    let skip = |device_args: bool| {
        device_args
            && opts.offload_args == OffloadArgs::HostArgs
            && (mode == Some(Mode::External)) != variant.contains("external")
    };
    run_offloaded(dir, variant, &opts, work, skip)
}

/// Generates (host arguments, else device arguments where host ones cannot
/// be sized), builds and runs one fixture unless `skip(device arguments)`.
fn run_offloaded(
    dir: &Path,
    variant: &str,
    opts: &CompileOptions,
    work: &Path,
    skip: impl Fn(bool) -> bool,
) -> Result<Option<String>, String> {
    let (outs, device_arrays) = match generate_offloaded(&dir.join(variant), opts) {
        Ok(outs) => outs,
        Err(e) if e.kind == sdfgc::diag::ErrorKind::Unsupported => return Ok(Some(e.to_string())),
        Err(e) => return Err(format!("generate: {e}")),
    };
    // Device arguments: the harness passes device memory, as for GPU fixtures.
    let on_device = !device_arrays.is_empty();
    if skip(on_device) {
        return Ok(None);
    }
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
        emulated_device: !on_device,
        real_device: on_device.then(|| DeviceDriver::Emulated(common::emu::include_dir())),
        device_arrays,
        ..Default::default()
    };
    let report = run_case(dir, &lib, &run)?;
    if !report.ok {
        return Err(format!("run failed: {}", report.message));
    }
    Ok(None)
}

/// A memory mode and a number of streams.
type Config = (Option<Mode>, u32);

/// The modes every fixture runs in: default and external; with
/// `SDFGC_OFFLOAD_ALL_MODES=1` (not in CI) every mode, and three streams.
fn modes() -> Vec<Config> {
    if std::env::var_os("SDFGC_OFFLOAD_ALL_MODES").is_some() {
        vec![
            (None, 1),
            (Some(Mode::Scoped), 1),
            (Some(Mode::Pool), 1),
            (Some(Mode::Persistent), 1),
            (Some(Mode::External), 1),
            (Some(Mode::External), 3),
        ]
    } else {
        vec![(None, 1), (Some(Mode::External), 1)]
    }
}

#[test]
fn every_cpu_fixture_offloads_and_runs_on_the_emulated_runtime() {
    let modes = modes();
    let tasks: Vec<(PathBuf, String, Config)> = offload_variants()
        .into_iter()
        .flat_map(|(d, v)| modes.iter().map(move |m| (d.clone(), v.clone(), *m)))
        .collect();
    let filtered = std::env::var_os("SDFGC_OFFLOAD_FILTER").is_some();
    assert!(
        filtered || tasks.len() >= 300,
        "only {} runs found",
        tasks.len()
    );
    let failures = run_parallel(
        &tasks,
        |(dir, variant, (mode, streams))| {
            format!(
                "{}/{variant} [{}, {streams} streams]",
                dir.file_name().unwrap().to_string_lossy(),
                mode.map_or("default".into(), |m| format!("{m:?}").to_lowercase())
            )
        },
        // Every CPU fixture offloads (those whose arguments cannot be sized
        // with device arguments): a refusal is a failure.
        |(dir, variant, mode), work| match run_one(dir, variant, *mode, work)? {
            Some(why) => Err(format!("refused: {why}")),
            None => Ok(()),
        },
    );
    assert_all_passed("offloaded runs", tasks.len(), &failures);
}

/// `--host-map`: the outer map stays a host loop and the maps (or the
/// nested SDFG's maps) below it become kernels launched per iteration.
#[test]
fn host_maps_launch_the_kernels_below_them_per_iteration() {
    let root = common::corpus::fixtures().join("corpus");
    let tasks = [
        ("nested_transient_parallel_map", "rows"),
        ("view_in_map_scope", "rows"),
    ];
    let failures = run_parallel(
        &tasks,
        |(case, label)| format!("{case} --host-map {label}"),
        |(case, label), work| {
            let opts = CompileOptions {
                offload: true,
                host_maps: vec![label.to_string()],
                output: work.to_path_buf(),
                ..CompileOptions::new(Target::Cuda)
            };
            match run_offloaded(&root.join(case), "program.sdfg", &opts, work, |_| false)? {
                Some(why) => Err(format!("refused: {why}")),
                None => Ok(()),
            }
        },
    );
    assert_all_passed("--host-map runs", tasks.len(), &failures);
}

/// `--offload=device-args --check-pointers`: host arrays passed as the
/// arguments are refused at entry (the program writes nothing).
#[test]
fn device_args_with_check_pointers_refuse_host_arrays() {
    let dir = common::corpus::fixtures().join("corpus/interstate_float_cond");
    let work = tempfile::tempdir().unwrap();
    let opts = CompileOptions {
        offload: true,
        offload_args: OffloadArgs::DeviceArgs,
        check_pointers: true,
        output: work.path().to_path_buf(),
        ..CompileOptions::new(Target::Cuda)
    };
    let outs = sdfgc::driver::generate(&dir.join("program.sdfg"), &opts).expect("generates");
    let (_, src) = outs.iter().find(|(n, _)| n.ends_with(".cu")).unwrap();
    let lib = work.path().join("lib.so");
    common::emu::build_library(src, work.path(), &lib).unwrap();
    // Host memory for every argument.
    let run = RunOptions {
        variant: "program.sdfg".into(),
        repeat: 1,
        emulated_device: true,
        ..Default::default()
    };
    let report = run_case(&dir, &lib, &run).unwrap();
    assert!(!report.ok, "host arrays were used: {}", report.message);
    assert!(
        report.message.contains("is not device memory"),
        "{}",
        report.message
    );
}
