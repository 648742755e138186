//! What the end-to-end tests share: the fixture lists and a parallel runner.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The repository's `fixtures/` directory (under `$SDFGC_ROOT` when set, so
/// that a test binary built elsewhere can run on a copy of the repository).
pub fn fixtures() -> PathBuf {
    std::env::var_os("SDFGC_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("fixtures")
}

/// Every `(case directory, file name)` under `fixtures/` whose directory has a
/// `case.json` and whose name `keep` accepts, sorted. `fixtures/npbench` and
/// `fixtures/programs` are left out: their cases run in their own tests
/// ([`npbench_variants`], [`written_program_variants`]).
pub fn case_files(keep: impl Fn(&str) -> bool) -> Vec<(PathBuf, String)> {
    case_files_under(&fixtures(), keep)
        .into_iter()
        .filter(|(d, _)| {
            !d.starts_with(fixtures().join("npbench"))
                && !d.starts_with(fixtures().join("programs"))
        })
        .collect()
}

/// Whether the case in `dir` lists `feature` in its `case.json` features
/// (`constant_array`: kernels that read constant arrays).
pub fn has_feature(dir: &Path, feature: &str) -> bool {
    let text = std::fs::read_to_string(dir.join("case.json")).unwrap_or_default();
    let case: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    case["features"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == feature))
}

/// [`case_files`] below `root`, npbench included.
pub fn case_files_under(root: &Path, keep: impl Fn(&str) -> bool) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let is_case = entries
            .iter()
            .any(|p| p.file_name().unwrap() == "case.json");
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if is_case && keep(&name) {
                out.push((d.clone(), name));
            }
        }
    }
    out.sort();
    out
}

/// The CPU variants: the dev corpus's `program.sdfg`, `program.external.sdfg`,
/// `program.v2.sdfg`, and gt4py's `cpu*.sdfg`.
pub fn cpu_variants() -> Vec<(PathBuf, String)> {
    case_files(|n| {
        matches!(
            n,
            "program.sdfg" | "program.external.sdfg" | "program.v2.sdfg"
        ) || (n.starts_with("cpu") && n.ends_with(".sdfg"))
    })
}

/// The CPU variants of the NPBench kernels (`fixtures/npbench`): simplified,
/// external and auto-optimized SDFGs.
pub fn npbench_variants() -> Vec<(PathBuf, String)> {
    case_files_under(&fixtures().join("npbench"), |n| {
        matches!(
            n,
            "program.sdfg" | "program.external.sdfg" | "program.autoopt.sdfg"
        )
    })
}

/// The variants of the programs written for differential testing
/// (`fixtures/programs`, made by scripts/diffprogs.py): as parsed, simplified
/// and auto-optimized by DaCe 1.0.2, simplified and auto-optimized by DaCe 2.x.
pub fn written_program_variants() -> Vec<(PathBuf, String)> {
    case_files_under(&fixtures().join("programs"), |n| {
        matches!(
            n,
            "program.sdfg"
                | "program.parsed.sdfg"
                | "program.autoopt.sdfg"
                | "program.v2.sdfg"
                | "program.v2.autoopt.sdfg"
        )
    })
}

/// True for the refusal of `--offload` (host arguments) that
/// `--offload=device-args` lifts: an argument's device twin cannot be sized.
pub fn needs_device_args(e: &sdfgc::diag::Error) -> bool {
    e.kind == sdfgc::diag::ErrorKind::Unsupported
        && e.to_string().contains("which the program does not receive")
        && e.to_string().contains("the size of argument")
}

/// Generates an offloaded fixture with `opts` (`offload` set): with host
/// arguments, or, when sdfgc refuses those because an argument's twin
/// cannot be sized ([`needs_device_args`]), with `--offload=device-args`.
/// Also returns the array arguments taken on the device (empty with host
/// arguments), which a harness must put in device memory.
pub fn generate_offloaded(
    file: &Path,
    opts: &sdfgc::driver::CompileOptions,
) -> Result<(sdfgc::driver::Outputs, Vec<String>), sdfgc::diag::Error> {
    match sdfgc::driver::generate(file, opts) {
        Err(e) if needs_device_args(&e) => {
            let opts = sdfgc::driver::CompileOptions {
                offload_args: sdfgc::driver::OffloadArgs::DeviceArgs,
                ..opts.clone()
            };
            Ok((
                sdfgc::driver::generate(file, &opts)?,
                device_arrays(file, &opts)?,
            ))
        }
        Err(e) => Err(e),
        Ok(outs) if opts.offload_args == sdfgc::driver::OffloadArgs::DeviceArgs => {
            Ok((outs, device_arrays(file, opts)?))
        }
        Ok(outs) => Ok((outs, Vec::new())),
    }
}

/// The array arguments `--offload=device-args` takes on the device.
fn device_arrays(
    file: &Path,
    opts: &sdfgc::driver::CompileOptions,
) -> Result<Vec<String>, sdfgc::diag::Error> {
    let sdfg = sdfgc::driver::load_valid(file)?;
    let p = sdfgc::passes::prepare(sdfg, opts)?;
    Ok(p.offload.map(|o| o.device_args).unwrap_or_default())
}

/// Every CPU fixture `--offload` is tested on: corpus `program.sdfg` and
/// `program.v2.sdfg`, gt4py `cpu*.sdfg`, NPBench `program.sdfg` and
/// `program.autoopt.sdfg` (only paths containing one of the comma-separated
/// parts of `$SDFGC_OFFLOAD_FILTER` when it is set); with
/// `SDFGC_OFFLOAD_PROGRAMS=1` (not in CI: CI time) also the written
/// programs' `program.sdfg`, `program.autoopt.sdfg` and `program.v2.sdfg`.
/// Cases with the feature `stream`, `vector`, `structure`, `struct_value`
/// or `reference` are left out (CPU only).
pub fn offload_variants() -> Vec<(PathBuf, String)> {
    let filter = std::env::var("SDFGC_OFFLOAD_FILTER").unwrap_or_default();
    let programs = std::env::var_os("SDFGC_OFFLOAD_PROGRAMS").is_some();
    let root = fixtures();
    case_files_under(&root, |n| {
        matches!(
            n,
            "program.sdfg" | "program.v2.sdfg" | "program.autoopt.sdfg"
        ) || (n.starts_with("cpu") && n.ends_with(".sdfg"))
    })
    .into_iter()
    .filter(|(d, n)| {
        let family = d
            .strip_prefix(&root)
            .ok()
            .and_then(|r| r.components().next())
            .map(|c| c.as_os_str().to_string_lossy().to_string());
        let ok = match family.as_deref() {
            Some("corpus") => n == "program.sdfg" || n == "program.v2.sdfg",
            Some("gt4py") => n.starts_with("cpu"),
            Some("npbench") => n == "program.sdfg" || n == "program.autoopt.sdfg",
            Some("programs") => programs,
            _ => false,
        };
        let path = d.join(n).to_string_lossy().to_string();
        // Streams, consume scopes, vector types, structures, structs held
        // by value, references, transients named as constants and tasklets
        // that assign an interstate symbol are CPU only (refused by name on
        // GPU targets).
        let cpu_only = [
            "stream",
            "vector",
            "structure",
            "struct_value",
            "reference",
            "constant_transient",
            "tasklet_assigns_symbol",
        ]
        .iter()
        .any(|f| has_feature(d, f));
        ok && !cpu_only && filter.split(',').any(|f| path.contains(f))
    })
    .collect()
}

/// Prints how many of `total` runs passed and fails with every failure's text;
/// fails too when nothing ran.
pub fn assert_all_passed(what: &str, total: usize, failures: &[String]) {
    // "0 of 0 passed" is no pass: a filter that matches nothing (or a
    // fixture tree not found) ran nothing.
    assert!(
        total > 0,
        "no {what} ran: does a SDFGC_*_FILTER match nothing?"
    );
    println!("{} of {total} {what} passed", total - failures.len());
    assert!(
        failures.is_empty(),
        "{} of {total} {what} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Runs `run(task, scratch dir)` for every task on all cores; returns the
/// failures as `"<label>: <error>"`, sorted. Each task gets a fresh scratch
/// directory, removed afterwards.
pub fn run_parallel<T: Clone + Send>(
    tasks: &[T],
    label: impl Fn(&T) -> String + Sync,
    run: impl Fn(&T, &Path) -> Result<(), String> + Sync,
) -> Vec<String> {
    let queue = Mutex::new(tasks.to_vec());
    let failures = Mutex::new(Vec::new());
    let scratch = tempfile::tempdir().unwrap();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let counter = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(task) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let k = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let work = scratch.path().join(format!("t{k}"));
                    std::fs::create_dir_all(&work).unwrap();
                    if let Err(e) = run(&task, &work) {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{}: {e}", label(&task)));
                    }
                    let _ = std::fs::remove_dir_all(&work);
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures
}

/// nvcc: `$SDFGC_NVCC`, else the one `scripts/install-gpu-toolchains.sh`
/// installs under `build/venv-cuda`. Panics (fails the test) when missing.
pub fn nvcc() -> PathBuf {
    if let Ok(p) = std::env::var("SDFGC_NVCC") {
        return PathBuf::from(p);
    }
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build/venv-cuda/lib");
    std::fs::read_dir(&lib)
        .ok()
        .and_then(|mut d| {
            d.find_map(|e| {
                e.ok()
                    .map(|e| e.path().join("site-packages/nvidia/cu13/bin/nvcc"))
                    .filter(|p| p.exists())
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "nvcc not found: run `bash scripts/install-gpu-toolchains.sh` (or set SDFGC_NVCC)"
            )
        })
}

/// Whether the tests run their whole mode matrices (`SDFGC_FULL_MATRIX=1`,
/// the sweep of docs/testing.md) rather than CI's sample.
#[allow(dead_code)] // not every test that includes this file samples modes
pub fn full_matrix() -> bool {
    std::env::var_os("SDFGC_FULL_MATRIX").is_some_and(|v| v != "0")
}

/// The modes the `i`-th entry of a sorted job list runs in: all of `modes`
/// with [`full_matrix`], else the first (the SDFG's own lifetimes) and one
/// of the others in turn, so that every entry runs and every mode runs on a
/// share of the entries (CI time on 2 cores).
#[allow(dead_code)] // not every test that includes this file samples modes
pub fn sampled_modes<T: Copy>(modes: &[T], i: usize) -> Vec<T> {
    if full_matrix() || modes.len() < 2 {
        return modes.to_vec();
    }
    vec![modes[0], modes[1 + i % (modes.len() - 1)]]
}
