//! Every GPU fixture compiles with nvcc (sm_80, and sm_90 in the SDFG's own
//! lifetimes; warnings as errors) and with hipcc (gfx90a), and the resulting
//! library loads with dlopen without unresolved symbols. The toolchains are
//! installed by scripts/install-gpu-toolchains.sh; a missing toolchain fails
//! the test (it never skips).
//!
//! One nvcc call costs about 4 s of fixed work (CUDA's headers, twice), so
//! by default each file compiles once per toolchain, in a memory mode that
//! rotates with the file's place in the sorted list: every mode is compiled
//! by both toolchains on a fifth of the files, and the emulated runtime
//! (gpu_emulated.rs) builds and runs every file with g++ (in every mode with
//! `SDFGC_FULL_MATRIX=1`).
//! `SDFGC_GPU_COMPILE_ALL=1` compiles the whole matrix (the sweep of
//! docs/testing.md).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::corpus::{assert_all_passed, nvcc, offload_variants, run_parallel};
use common::harness::{DeviceDriver, RunOptions, build_case_driver};
use sdfgc::driver::{Blas, CompileOptions, Mode, Target};

/// (memory mode, streams) combinations a GPU fixture compiles in: the
/// SDFG's own lifetimes (`None`) and the four modes.
const MODES: [(Option<Mode>, u32); 5] = [
    (None, 1),
    (Some(Mode::Scoped), 1),
    (Some(Mode::Pool), 1),
    (Some(Mode::Persistent), 1),
    (Some(Mode::External), 1),
];

/// Whether the whole matrix compiles (`SDFGC_GPU_COMPILE_ALL=1`) rather than
/// one rotating mode per file and toolchain.
fn whole_matrix() -> bool {
    std::env::var_os("SDFGC_GPU_COMPILE_ALL").is_some_and(|v| v != "0")
}

/// The modes the `i`-th entry of a sorted list compiles in: all of `modes`
/// for the whole matrix, else the one `i` picks in turn.
fn rotation<T: Copy>(modes: &[T], i: usize) -> Vec<T> {
    if whole_matrix() {
        modes.to_vec()
    } else {
        vec![modes[i % modes.len()]]
    }
}

/// Sources already compiled by this process, by (target, text): the modes
/// often generate the same file, which needs no second compile.
fn first_time(target: Target, source: &Path) -> Result<bool, String> {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashSet<(u8, String)>>> = OnceLock::new();
    let text = std::fs::read_to_string(source).map_err(|e| e.to_string())?;
    Ok(SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .insert((target as u8, text)))
}

/// Several streams (events, forks and joins) on every 8th fixture: the
/// stream code does not depend on the program, so a sample suffices.
const MULTI_STREAM: (Option<Mode>, u32) = (Some(Mode::Pool), 3);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn hipcc() -> PathBuf {
    let p = std::env::var("SDFGC_HIPCC")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("hipcc"));
    let ok = Command::new(&p)
        .arg("--version")
        .env("HIP_PLATFORM", "amd")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "hipcc not found: run `bash scripts/install-gpu-toolchains.sh` (or set SDFGC_HIPCC)"
    );
    p
}

/// GPU fixtures: (file, target). HIP files compile for HIP, the others for
/// CUDA and HIP. Only paths containing `$SDFGC_GPU_FILTER` when it is set.
fn jobs() -> Vec<(PathBuf, Target)> {
    let filter = std::env::var("SDFGC_GPU_FILTER").unwrap_or_default();
    let mut out = Vec::new();
    let mut stack = vec![root().join("fixtures")];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                // NPBench kernels have their own test (run_corpus.rs).
                if !p.ends_with("fixtures/npbench") {
                    stack.push(p);
                }
            } else if name == "hip.sdfg" {
                out.push((p, Target::Hip));
            } else if name.ends_with(".sdfg") && name.contains("gpu") && !name.contains("static") {
                // DaCe's own cuBLAS calls (CUDA only, no libcublas to load
                // here) have their own test: cublas_calls_compile_with_nvcc.
                if std::fs::read_to_string(&p)
                    .is_ok_and(|t| t.contains("environments.cublas.cuBLAS"))
                {
                    continue;
                }
                // cuSOLVER, cuSPARSE and cuFFT calls (CUDA only, no
                // libraries to load here) have their own test:
                // solver_sparse_fft_calls_compile_with_nvcc.
                if std::fs::read_to_string(&p).is_ok_and(|t| {
                    t.contains("\"cuSolverDn\"")
                        || t.contains("environments.cusparse.cuSPARSE")
                        || t.contains("environments.cufft.cuFFT")
                }) {
                    continue;
                }
                out.push((p.clone(), Target::Cuda));
                out.push((p, Target::Hip));
            }
        }
    }
    out.retain(|(p, _)| p.to_string_lossy().contains(&filter));
    out.sort_by(|a, b| (&a.0, a.1 as u8).cmp(&(&b.0, b.1 as u8)));
    out
}

fn build(src: &Path, target: Target, lib: &Path, nvcc: &Path, hipcc: &Path) -> Result<(), String> {
    build_for(
        src,
        target,
        lib,
        nvcc,
        hipcc,
        &["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90"],
    )
}

/// Builds with nvcc for the given `-gencode` values, or with hipcc.
fn build_for(
    src: &Path,
    target: Target,
    lib: &Path,
    nvcc: &Path,
    hipcc: &Path,
    gencode: &[&str],
) -> Result<(), String> {
    let mut cmd = match target {
        Target::Cuda => {
            let mut c = Command::new(nvcc);
            c.arg("-std=c++17");
            for g in gencode {
                c.args(["-gencode", g]);
            }
            // Host code unoptimised: nvcc's checks are its front end's, and
            // the host compiler's -O3 (nvcc's default) is half of each call.
            c.args([
                "-Werror",
                "all-warnings",
                "-Xcompiler",
                "-fPIC,-O0",
                "-shared",
            ]);
            c
        }
        _ => {
            let mut c = Command::new(hipcc);
            c.env("HIP_PLATFORM", "amd").args([
                "-std=c++17",
                "--offload-arch=gfx90a",
                "-fPIC",
                "-shared",
                "-Wall",
                "-Werror",
                "-Wno-unused-function",
                "-Wno-unused-variable",
                "-Wno-unused-result",
            ]);
            c
        }
    };
    let out = cmd
        .arg(src)
        .arg("-o")
        .arg(lib)
        .output()
        .map_err(|e| format!("cannot run the compiler: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err
            .lines()
            .filter(|l| l.contains("error"))
            .take(6)
            .collect::<Vec<_>>()
            .join("\n"));
    }
    // dlopen with RTLD_NOW: every symbol must resolve.
    let check = Command::new("python3")
        .arg("-c")
        .arg("import ctypes,sys; ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL|2)")
        .arg(lib)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !check.status.success() {
        return Err(format!(
            "dlopen failed: {}",
            String::from_utf8_lossy(&check.stderr).trim()
        ));
    }
    Ok(())
}

#[test]
fn every_gpu_fixture_compiles_with_nvcc_and_hipcc_in_every_mode() {
    let (nvcc, hipcc) = (nvcc(), hipcc());
    let jobs = jobs();
    // A file's CUDA and HIP entries are neighbours: they rotate to different modes.
    let mut tasks: Vec<(PathBuf, Target, (Option<Mode>, u32))> = jobs
        .iter()
        .enumerate()
        .flat_map(|(i, (f, t))| {
            rotation(&MODES, i)
                .into_iter()
                .map(move |m| (f.clone(), *t, m))
        })
        .collect();
    tasks.extend(
        jobs.iter()
            .step_by(8)
            .map(|(f, t)| (f.clone(), *t, MULTI_STREAM)),
    );
    let filtered = std::env::var_os("SDFGC_GPU_FILTER").is_some();
    let least = if whole_matrix() { 1300 } else { 280 };
    assert!(
        filtered || tasks.len() >= least,
        "only {} compiles found",
        tasks.len()
    );
    let failures = run_parallel(
        &tasks,
        |(file, target, (mode, streams))| {
            format!(
                "{} [{target:?} {mode:?}, {streams} streams]",
                file.strip_prefix(root()).unwrap_or(file).display()
            )
        },
        |(file, target, (mode, streams)), work| {
            let opts = CompileOptions {
                mode: *mode,
                streams: *streams,
                output: work.to_path_buf(),
                ..CompileOptions::new(*target)
            };
            let (_, source) = generate_into(file, &opts)?;
            if !first_time(*target, &source)? {
                return Ok(());
            }
            // Both architectures in the SDFG's own lifetimes; the other
            // modes change host code and allocation, not what ptxas sees
            // per architecture: sm_80 is enough there (CI time).
            if mode.is_none() && *streams == 1 {
                build(&source, *target, &work.join("lib.so"), &nvcc, &hipcc)
            } else {
                build_one_arch(&source, *target, &work.join("lib.so"), &nvcc, &hipcc)
            }
        },
    );
    assert_all_passed("GPU compiles", tasks.len(), &failures);
}

/// The real-GPU driver of the run harness (scripts/gpu-check.sh) builds with
/// nvcc for cases with host arguments (corpus), device arguments and a GPU
/// workspace (gt4py) and constant arrays (fixtures/gpu). Without a GPU this
/// is as far as CI can go.
#[test]
fn the_real_device_driver_compiles_with_nvcc() {
    let nvcc = nvcc();
    for (case, variant) in [
        ("corpus/jacobi_1d", "program.gpu.sdfg"),
        ("corpus/atax", "program.gpu.external.sdfg"),
        ("gt4py/vertical_integral_scans", "gpu_external.sdfg"),
        ("gpu/const_table_2d", "program.gpu.sdfg"),
    ] {
        let opts = RunOptions {
            variant: variant.to_string(),
            poison: true,
            workspace_exact: true,
            real_device: Some(DeviceDriver::Nvcc(nvcc.clone())),
            ..Default::default()
        };
        let dir = root().join("fixtures").join(case);
        let driver =
            build_case_driver(&dir, &opts).unwrap_or_else(|e| panic!("{case}/{variant}: {e}"));
        assert!(driver.is_file(), "{}", driver.display());
    }
}

/// Generates `file` into `opts.output`; the outputs and the GPU source's path.
fn generate_into(
    file: &std::path::Path,
    opts: &CompileOptions,
) -> Result<(sdfgc::driver::Outputs, PathBuf), String> {
    let outs = sdfgc::driver::generate(file, opts).map_err(|e| e.to_string())?;
    let source = write_gpu_source(&outs, &opts.output)?;
    Ok((outs, source))
}

/// Writes `outs` into `dir`; the path of the GPU source among them.
fn write_gpu_source(outs: &sdfgc::driver::Outputs, dir: &Path) -> Result<PathBuf, String> {
    sdfgc::driver::write_outputs(dir, outs).map_err(|e| e.to_string())?;
    let (name, _) = outs
        .iter()
        .find(|(n, _)| n.ends_with(".cu") || n.ends_with(".hip"))
        .ok_or("no GPU source")?;
    Ok(dir.join(name))
}

/// The constant-array fixtures (fixtures/gpu) also compile with
/// `--constant-memory` (`__constant__` arrays, `*MemcpyToSymbol` at init)
/// for both toolchains.
#[test]
fn constant_array_fixtures_compile_with_constant_memory() {
    let (nvcc, hipcc) = (nvcc(), hipcc());
    let tasks: Vec<(PathBuf, Target, Mode)> = jobs()
        .into_iter()
        .filter(|(f, _)| {
            f.parent()
                .is_some_and(|d| common::corpus::has_feature(d, "constant_array"))
        })
        .flat_map(|(f, t)| [Mode::Pool, Mode::External].map(|m| (f.clone(), t, m)))
        .collect();
    assert!(tasks.len() >= 12, "only {} compiles found", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(file, target, mode)| format!("{} [{target:?} {mode:?}]", file.display()),
        |(file, target, mode), work| {
            let opts = CompileOptions {
                mode: Some(*mode),
                constant_memory: true,
                output: work.to_path_buf(),
                ..CompileOptions::new(*target)
            };
            let (outs, source) = generate_into(file, &opts)?;
            if !outs.iter().any(|(_, t)| t.contains("__constant__ ")) {
                return Err("no __constant__ array".into());
            }
            build(&source, *target, &work.join("lib.so"), &nvcc, &hipcc)
        },
    );
    assert_all_passed("--constant-memory compiles", tasks.len(), &failures);
}

/// Every CPU fixture offloaded (`--offload`) compiles with nvcc (sm_80,
/// default memory mode) and with hipcc (external mode), and loads. Fixtures
/// sdfgc refuses by name are counted, not compiled; those host arguments
/// cannot size compile with `--offload=device-args`.
#[test]
fn every_offloaded_cpu_fixture_compiles_with_nvcc_and_hipcc() {
    let (nvcc, hipcc) = (nvcc(), hipcc());
    // Each file with one toolchain in turn (both with SDFGC_GPU_COMPILE_ALL=1).
    let toolchains = [(Target::Cuda, None), (Target::Hip, Some(Mode::External))];
    let tasks: Vec<(PathBuf, Target, Option<Mode>)> = offload_variants()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (d, v))| {
            let f = d.join(v);
            rotation(&toolchains, i)
                .into_iter()
                .map(move |(t, m)| (f.clone(), t, m))
        })
        .collect();
    let filtered = std::env::var_os("SDFGC_OFFLOAD_FILTER").is_some();
    let least = if whole_matrix() { 300 } else { 150 };
    assert!(
        filtered || tasks.len() >= least,
        "only {} compiles found",
        tasks.len()
    );
    let failures = run_parallel(
        &tasks,
        |(file, target, mode)| {
            format!(
                "{} [{target:?} {mode:?}, --offload]",
                file.strip_prefix(root()).unwrap_or(file).display()
            )
        },
        |(file, target, mode), work| {
            let mut opts = CompileOptions {
                mode: *mode,
                offload: true,
                output: work.to_path_buf(),
                ..CompileOptions::new(*target)
            };
            // Host arguments, or device arguments where those cannot be sized
            // (every CPU fixture offloads: a refusal is a failure too).
            let mut outs =
                common::corpus::generate_offloaded(file, &opts).map_err(|e| e.to_string())?;
            if !outs.1.is_empty() && *target == Target::Hip {
                // Device arguments change only the host code: nvcc is enough.
                if whole_matrix() {
                    return Ok(());
                }
                opts = CompileOptions {
                    target: Target::Cuda,
                    mode: None,
                    ..opts
                };
                outs =
                    common::corpus::generate_offloaded(file, &opts).map_err(|e| e.to_string())?;
            }
            let source = write_gpu_source(&outs.0, &opts.output)?;
            build_one_arch(&source, opts.target, &work.join("lib.so"), &nvcc, &hipcc)
        },
    );
    assert_all_passed("offloaded compiles", tasks.len(), &failures);
}

/// [`build`] for sm_80 only with nvcc (one architecture is enough to check
/// the offloaded code; the fixtures' own GPU files cover sm_90).
fn build_one_arch(
    src: &Path,
    target: Target,
    lib: &Path,
    nvcc: &Path,
    hipcc: &Path,
) -> Result<(), String> {
    build_for(
        src,
        target,
        lib,
        nvcc,
        hipcc,
        &["arch=compute_80,code=sm_80"],
    )
}

/// cuBLAS calls compile with nvcc against the real cuBLAS headers (the
/// nvidia-cublas wheel's include/, installed next to nvcc's by
/// scripts/install-gpu-toolchains.sh): `--blas cublas` on every GPU fixture
/// whose BLAS nodes become cuBLAS calls, and DaCe's own cuBLAS tasklets
/// (NPBench's auto-optimized GPU files). Object files only (`nvcc -c`, no
/// libcublas to link), several files per nvcc call (CI time).
#[test]
fn cublas_calls_compile_with_nvcc() {
    let nvcc = nvcc();
    let fixtures = common::corpus::fixtures();
    let gpu = |n: &str| n.ends_with(".sdfg") && n.contains("gpu") && !n.contains("static");
    // Files that may call cuBLAS (`hint` in their JSON: generating every
    // GPU fixture would cost more than compiling these).
    let sources = |blas: Blas, hint: &str, marker: &str| -> Vec<(String, String)> {
        common::corpus::case_files_under(&fixtures, gpu)
            .into_iter()
            .filter(|(d, v)| std::fs::read_to_string(d.join(v)).is_ok_and(|t| t.contains(hint)))
            .filter_map(|(d, v)| {
                let opts = CompileOptions {
                    blas,
                    ..CompileOptions::new(Target::Cuda)
                };
                let outs = sdfgc::driver::generate(&d.join(&v), &opts).ok()?;
                let (_, text) = outs.into_iter().find(|(n, _)| n.ends_with(".cu"))?;
                text.contains(marker)
                    .then(|| (format!("{}/{v}", d.display()), text))
            })
            .collect()
    };
    // Only sdfgc's calls name the call in their status check.
    let ours = sources(Blas::Cublas, "\"LibraryNode\"", "\"cublasSetStream (");
    let dace = sources(
        Blas::None,
        "environments.cublas.cuBLAS",
        "__state->cublas_handle.Get(",
    );
    assert!(
        ours.len() >= 12,
        "only {} files with --blas cublas calls",
        ours.len()
    );
    assert!(
        dace.len() >= 9,
        "only {} files with DaCe's cuBLAS tasklets",
        dace.len()
    );
    for (name, text) in ours.iter().chain(&dace) {
        assert!(
            text.contains(" -lcublas\n"),
            "{name}: the build line does not link cuBLAS"
        );
    }
    // Four batches (two cores), one nvcc call each. DaCe's NPBench files
    // have tasklet inputs their code never reads (nvcc's warning 177,
    // unrelated to cuBLAS), allowed there only.
    let halves = |v: &[(String, String)], dace: bool| {
        [
            (v.iter().step_by(2).cloned().collect::<Vec<_>>(), dace),
            (v.iter().skip(1).step_by(2).cloned().collect(), dace),
        ]
    };
    let batches: Vec<(Vec<(String, String)>, bool)> =
        [halves(&ours, false), halves(&dace, true)].concat();
    let failures = run_parallel(
        &batches,
        |(b, _)| format!("{} files from {}", b.len(), b[0].0),
        |(batch, unused_inputs), work| {
            let mut cmd = Command::new(&nvcc);
            cmd.args(["-std=c++17", "-gencode", "arch=compute_80,code=sm_80"])
                .args(["-Werror", "all-warnings", "-Xcompiler", "-fPIC,-O0", "-c"])
                .arg("-odir")
                .arg(work);
            if *unused_inputs {
                cmd.args(["-diag-suppress", "177"]);
            }
            for (i, (_, text)) in batch.iter().enumerate() {
                let src = work.join(format!("f{i}.cu"));
                std::fs::write(&src, text).map_err(|e| e.to_string())?;
                cmd.arg(src);
            }
            let out = cmd.output().map_err(|e| format!("cannot run nvcc: {e}"))?;
            if out.status.success() {
                return Ok(());
            }
            let err = String::from_utf8_lossy(&out.stderr);
            let which: Vec<String> = batch
                .iter()
                .enumerate()
                .map(|(i, (n, _))| format!("f{i}.cu = {n}"))
                .collect();
            Err(format!(
                "nvcc failed (library headers: scripts/install-gpu-toolchains.sh):\n{}\n{}",
                err.lines()
                    .filter(|l| l.contains("error"))
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n"),
                which.join("\n")
            ))
        },
    );
    assert_all_passed("cuBLAS compiles", batches.len(), &failures);
}

/// The files whose code calls cuSOLVER, cuSPARSE or cuFFT (DaCe's library
/// nodes and tasklets of those environments) compile with the real nvcc
/// against the libraries' headers (installed by
/// scripts/install-gpu-toolchains.sh), warnings as errors, and their build
/// lines link the library. Not linked or loaded: the libraries themselves
/// are not installed; tests/gpu_emulated.rs runs the same files on the
/// emulated libraries.
#[test]
fn solver_sparse_fft_calls_compile_with_nvcc() {
    let nvcc = nvcc();
    let fixtures = common::corpus::fixtures();
    let gpu = |n: &str| n.ends_with(".sdfg") && n.contains("gpu") && !n.contains("static");
    // (environment hint in the JSON, call in the code, library linked)
    let libraries = [
        ("\"cuSolverDn\"", "cusolverDn", "-lcusolver"),
        ("environments.cusparse.cuSPARSE", "cusparse", "-lcusparse"),
        ("environments.cufft.cuFFT", "cufft", "-lcufft"),
    ];
    let mut sources: Vec<(String, String)> = Vec::new();
    for (hint, call, link) in libraries {
        let before = sources.len();
        for (d, v) in common::corpus::case_files_under(&fixtures, gpu) {
            if !std::fs::read_to_string(d.join(&v)).is_ok_and(|t| t.contains(hint)) {
                continue;
            }
            let name = format!("{}/{v}", d.display());
            let outs = sdfgc::driver::generate(&d.join(&v), &CompileOptions::new(Target::Cuda))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let (_, text) = outs
                .into_iter()
                .find(|(n, _)| n.ends_with(".cu"))
                .unwrap_or_else(|| panic!("{name}: no .cu file"));
            assert!(text.contains(call), "{name}: no {call} call");
            assert!(
                text.contains(&format!(" {link}\n")),
                "{name}: the build line does not link {link}"
            );
            sources.push((name, text));
        }
        assert!(sources.len() > before, "no fixture calls {call}");
    }
    let work = std::env::temp_dir().join(format!("sdfgc-gpu-libs-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = Command::new(&nvcc);
    cmd.args(["-std=c++17", "-gencode", "arch=compute_80,code=sm_80"])
        .args(["-Werror", "all-warnings", "-Xcompiler", "-fPIC,-O0", "-c"])
        .arg("-odir")
        .arg(&work);
    for (i, (_, text)) in sources.iter().enumerate() {
        let src = work.join(format!("f{i}.cu"));
        std::fs::write(&src, text).unwrap();
        cmd.arg(src);
    }
    let out = cmd.output().expect("cannot run nvcc");
    let _ = std::fs::remove_dir_all(&work);
    let which: Vec<String> = sources
        .iter()
        .enumerate()
        .map(|(i, (n, _))| format!("f{i}.cu = {n}"))
        .collect();
    assert!(
        out.status.success(),
        "nvcc failed (library headers: scripts/install-gpu-toolchains.sh):\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        which.join("\n")
    );
}
