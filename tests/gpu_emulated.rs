//! GPU code, run: every GPU fixture is generated for CUDA (and its HIP
//! variants for HIP) in every memory mode, compiled by g++ against a CPU
//! emulation of the runtime (tests/gpu_emu: a block's threads run
//! concurrently in a random order and meet at __syncthreads, __shared__
//! accesses are checked for races, stream work runs only when the host
//! synchronizes, device memory is host memory on pages that only kernels,
//! copies and memsets may touch; docs/gpu.md), and run by the project's harness on the
//! case's inputs with the workspace poisoned. This checks kernel index math,
//! launch geometry, host/device copies, the memory modes and the workspace
//! layout by execution on a machine without a GPU; nvcc and hipcc compile
//! the same files in tests/gpu_compile.rs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::corpus::{assert_all_passed, case_files, run_parallel};
use common::harness::{DeviceDriver, RunOptions, run_case};
use sdfgc::driver::{Blas, CompileOptions, Mode, Target};

/// A memory mode and a number of streams.
type Config = (Option<Mode>, u32);

/// (memory mode, streams) combinations every GPU case runs in.
const MODES: [Config; 6] = [
    (None, 1),
    (Some(Mode::Scoped), 1),
    (Some(Mode::Pool), 1),
    (Some(Mode::Persistent), 1),
    (Some(Mode::External), 1),
    (Some(Mode::External), 3),
];

/// (case directory, variant file, target) of every GPU fixture (only those
/// whose path contains `$SDFGC_GPU_FILTER` when it is set).
pub fn gpu_jobs() -> Vec<(PathBuf, String, Target)> {
    let filter = std::env::var("SDFGC_GPU_FILTER").unwrap_or_default();
    case_files(|n| {
        n == "hip.sdfg" || (n.ends_with(".sdfg") && n.contains("gpu") && !n.contains("static"))
    })
    .into_iter()
    .filter(|(d, n)| d.join(n).to_string_lossy().contains(&filter))
    .map(|(d, n)| {
        let t = if n == "hip.sdfg" {
            Target::Hip
        } else {
            Target::Cuda
        };
        (d, n, t)
    })
    .collect()
}

fn mode_name((m, streams): (Option<Mode>, u32)) -> String {
    let m = m
        .map(|m| format!("{m:?}").to_lowercase())
        .unwrap_or_else(|| "default".into());
    if streams > 1 {
        format!("{m}-{streams}streams")
    } else {
        m
    }
}

fn run_one(
    dir: &Path,
    variant: &str,
    target: Target,
    (mode, streams): (Option<Mode>, u32),
    constant_memory: bool,
    device_driver: bool,
    work: &Path,
) -> Result<(), String> {
    let opts = CompileOptions {
        mode,
        streams,
        constant_memory,
        output: work.to_path_buf(),
        ..CompileOptions::new(target)
    };
    run_with(dir, variant, &opts, device_driver, work)
}

/// Generates `variant` with `opts`, builds it against the emulator and runs it.
fn run_with(
    dir: &Path,
    variant: &str,
    opts: &CompileOptions,
    device_driver: bool,
    work: &Path,
) -> Result<(), String> {
    let outs =
        sdfgc::driver::generate(&dir.join(variant), opts).map_err(|e| format!("generate: {e}"))?;
    let (_, src) = outs
        .iter()
        .find(|(n, _)| n.ends_with(".cu") || n.ends_with(".hip"))
        .ok_or("no GPU source")?;
    let lib = work.join("lib.so");
    let inc = common::emu::include_dir();
    common::emu::build_library(src, work, &lib)?;
    let run = RunOptions {
        variant: variant.to_string(),
        poison: true,
        workspace_exact: true,
        repeat: 2,
        emulated_device: !device_driver,
        real_device: device_driver.then(|| DeviceDriver::Emulated(inc.clone())),
        ..Default::default()
    };
    let report = run_case(dir, &lib, &run)?;
    if !report.ok {
        return Err(format!("run failed: {}", report.message));
    }
    let gpu_workspace = report
        .workspace_bytes
        .iter()
        .any(|(s, _)| s == "GPU_Global");
    if device_driver && gpu_workspace && !report.message.contains("SETTER refuses host memory") {
        return Err("the checked setter was not tried with host memory".into());
    }
    Ok(())
}

#[test]
fn every_gpu_case_runs_on_the_emulated_runtime_in_every_mode() {
    // Every file in its own lifetimes and one other configuration in turn
    // (all six with SDFGC_FULL_MATRIX=1).
    let tasks: Vec<(PathBuf, String, Target, Config)> = gpu_jobs()
        .into_iter()
        .enumerate()
        .flat_map(|(i, (d, v, t))| {
            common::corpus::sampled_modes(&MODES, i)
                .into_iter()
                .map(move |m| (d.clone(), v.clone(), t, m))
        })
        .collect();
    let filtered = std::env::var_os("SDFGC_GPU_FILTER").is_some();
    assert!(
        filtered || tasks.len() >= 280,
        "only {} runs found",
        tasks.len()
    );
    let failures = run_parallel(
        &tasks,
        |(dir, variant, _, mode)| {
            format!(
                "{}/{variant} [{}]",
                dir.file_name().unwrap().to_string_lossy(),
                mode_name(*mode)
            )
        },
        |(dir, variant, target, mode), work| {
            run_one(dir, variant, *target, *mode, false, false, work)
        },
    );
    assert_all_passed("emulated GPU runs", tasks.len(), &failures);
}

/// The emulator's barriers: a block's threads meet at `__syncthreads()`
/// (without it a thread reads shared memory before others wrote it), and a
/// barrier that only some threads reach aborts the launch.
#[test]
fn the_emulator_runs_block_threads_to_each_barrier() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("barrier.cpp");
    std::fs::write(
        &src,
        r#"#include "cuda_runtime.h"
#include <cstdio>
__global__ void reverse(double *out, int sync) {
    __shared__ double s[64];
    s[threadIdx.x] = blockIdx.x * 100.0 + threadIdx.x;
    if (sync) __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x];
}
__global__ void diverge() {
    if (threadIdx.x < 3) __syncthreads();
}
int main(int argc, char **) {
    if (argc > 1) {
        sdfgc_emu_launch_fibers(dim3(1), dim3(8), [&] { diverge(); });
        return 0;
    }
    double out[128];
    int wrong[2] = {0, 0};
    for (int sync = 0; sync < 2; ++sync) {
        sdfgc_emu_launch_fibers(dim3(2), dim3(64), [&] { reverse(out, sync); });
        for (int b = 0; b < 2; ++b)
            for (int t = 0; t < 64; ++t)
                wrong[sync] += out[b * 64 + t] != b * 100.0 + 63 - t;
    }
    std::printf("%d %d\n", wrong[0], wrong[1]);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.path().join("barrier");
    common::emu::build_program(&src, &exe, "-O1");
    let run = Command::new(&exe).output().unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    let wrong: Vec<usize> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        wrong[0] > 0,
        "without the barrier some reads must be wrong: {text}"
    );
    assert_eq!(wrong[1], 0, "with the barrier every read is right: {text}");
    let diverged = Command::new(&exe).arg("diverge").output().unwrap();
    assert!(!diverged.status.success());
    assert!(String::from_utf8_lossy(&diverged.stderr).contains("__syncthreads"));
}

/// The fixtures whose kernels read constant arrays (fixtures/gpu) also run
/// with `--constant-memory` (`__constant__` arrays filled at init), in every
/// mode and for both runtimes' spellings.
#[test]
fn constant_array_cases_run_with_constant_memory_in_every_mode() {
    let tasks: Vec<(PathBuf, String, Target, Config)> = gpu_jobs()
        .into_iter()
        .filter(|(d, _, _)| common::corpus::has_feature(d, "constant_array"))
        .flat_map(|(d, v, _)| {
            let mut out = Vec::new();
            for t in [Target::Cuda, Target::Hip] {
                for m in MODES {
                    out.push((d.clone(), v.clone(), t, m));
                }
            }
            out
        })
        .collect();
    assert!(tasks.len() >= 36, "only {} runs found", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(dir, variant, target, mode)| {
            format!(
                "{}/{variant} [{target:?} {}, --constant-memory]",
                dir.file_name().unwrap().to_string_lossy(),
                mode_name(*mode)
            )
        },
        |(dir, variant, target, mode), work| {
            run_one(dir, variant, *target, *mode, true, false, work)
        },
    );
    assert_all_passed("runs", tasks.len(), &failures);
}

/// The harness's real-GPU driver (what scripts/gpu-check.sh runs on a GPU:
/// arguments and workspaces in device memory, copies in and out, the checked
/// setter made to refuse host memory) run against the emulated runtime, on
/// a sample of cases with host arguments, device arguments and constants.
#[test]
fn the_real_device_driver_runs_on_the_emulated_runtime() {
    let picks = [
        "corpus/jacobi_1d/program.gpu.sdfg",
        "corpus/atax/program.gpu.external.sdfg",
        "corpus/gemm_maps_wcr/program.v2.gpu.sdfg",
        "gt4py/vertical_integral_scans/gpu.sdfg",
        "gt4py/vertical_integral_scans/gpu_external.sdfg",
        "gpu/const_nested_loop/program.gpu.sdfg",
        "gpu/const_table_2d/program.gpu.sdfg",
    ];
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut tasks = Vec::new();
    for p in picks {
        let f = root.join(p);
        assert!(f.exists(), "{}", f.display());
        let (dir, variant) = (
            f.parent().unwrap().to_path_buf(),
            f.file_name().unwrap().to_string_lossy().to_string(),
        );
        for m in [
            (Some(Mode::Pool), 1),
            (Some(Mode::External), 1),
            (Some(Mode::External), 3),
        ] {
            tasks.push((dir.clone(), variant.clone(), m));
        }
    }
    let failures = run_parallel(
        &tasks,
        |(dir, variant, mode)| {
            format!(
                "{}/{variant} [{}]",
                dir.file_name().unwrap().to_string_lossy(),
                mode_name(*mode)
            )
        },
        |(dir, variant, mode), work| run_one(dir, variant, Target::Cuda, *mode, false, true, work),
    );
    assert_all_passed("runs", tasks.len(), &failures);
}

/// The emulator's device memory is unreadable outside kernels, copies and
/// memsets: a kernel and a copy reach it, while host code that dereferences
/// a device pointer (what a wrongly placed host tasklet or interstate read
/// would do) crashes with SIGSEGV instead of passing unnoticed.
#[test]
fn the_emulator_faults_on_host_access_to_device_memory() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("protect.cpp");
    std::fs::write(
        &src,
        r#"#include "cuda_runtime.h"
#include <cstdio>
#include <cstring>
__global__ void fill(double *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 2.0 * i;
}
int main(int argc, char **argv) {
    double *d = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&d), 64 * sizeof(double));
    sdfgc_emu_launch(dim3(2), dim3(32), [&] { fill(d, 64); });
    double h[64];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < 64; ++i) wrong += h[i] != 2.0 * i;
    std::printf("%d\n", wrong);
    std::fflush(stdout);
    if (argc > 1 && std::strcmp(argv[1], "read") == 0) std::printf("%f\n", d[3]);
    if (argc > 1 && std::strcmp(argv[1], "write") == 0) d[3] = 1.0;
    cudaFree(d);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.path().join("protect");
    common::emu::build_program(&src, &exe, "-O0");
    let ok = Command::new(&exe).output().unwrap();
    assert!(
        ok.status.success(),
        "kernel and copies must reach device memory"
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout).trim(), "0");
    use std::os::unix::process::ExitStatusExt;
    for how in ["read", "write"] {
        let bad = Command::new(&exe).arg(how).output().unwrap();
        assert_eq!(
            bad.status.signal(),
            Some(11),
            "a host {how} of device memory must fault: {:?}",
            bad.status
        );
    }
}

/// NPBench's kernels as DaCe offloaded them (`program.gpu.sdfg`: the CPU
/// program after `apply_gpu_transformations()`, run in the SDFG's own
/// lifetimes; `program.gpu.autoopt.sdfg`: auto-optimized for the GPU, run in
/// external mode; the other modes differ only in the allocation code the
/// fixtures above cover): real programs nobody here wrote, against NPBench's
/// outputs on the emulated runtime.
#[test]
fn every_npbench_gpu_variant_runs_on_the_emulated_runtime() {
    // Every file runs, refusals included: azimint_naive's C++ tasklet calls
    // DaCe's warp reduction (sdfgc's, back/gpu/warp.rs, on the emulator's
    // shuffles), and the nine auto-optimized files whose BLAS nodes DaCe
    // expanded into cuBLAS calls run against the emulated cuBLAS
    // (tests/gpu_emu/cublas_v2.h).
    let tasks: Vec<(PathBuf, String, Config)> =
        common::corpus::case_files_under(&common::corpus::fixtures().join("npbench"), |n| {
            n.starts_with("program.gpu") && n.ends_with(".sdfg")
        })
        .into_iter()
        .map(|(d, v)| {
            let mode = if v.contains("autoopt") {
                (Some(Mode::External), 1)
            } else {
                (None, 1)
            };
            (d, v, mode)
        })
        .collect();
    assert!(tasks.len() >= 40, "only {} NPBench GPU files", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(dir, variant, mode)| {
            format!(
                "npbench/{}/{variant} [{}]",
                dir.file_name().unwrap().to_string_lossy(),
                mode_name(*mode)
            )
        },
        |(dir, variant, mode), work| run_one(dir, variant, Target::Cuda, *mode, false, false, work),
    );
    assert_all_passed("emulated NPBench GPU runs", tasks.len(), &failures);
}

/// `--blas cublas`: every GPU fixture whose BLAS library nodes become cuBLAS
/// calls runs against the emulated cuBLAS (tests/gpu_emu/cublas_v2.h:
/// column-major, operands must be device memory and scalars in the memory
/// the pointer mode names), alternately in the default mode and in External
/// mode with three streams; outputs must match DaCe's.
#[test]
fn blas_cublas_calls_run_on_the_emulated_runtime() {
    let blas = |mode: Option<Mode>, streams: u32| CompileOptions {
        blas: Blas::Cublas,
        mode,
        streams,
        ..CompileOptions::new(Target::Cuda)
    };
    let filter = std::env::var("SDFGC_GPU_FILTER").unwrap_or_default();
    let files: Vec<(PathBuf, String)> =
        common::corpus::case_files_under(&common::corpus::fixtures(), |n| {
            n.ends_with(".sdfg") && n.contains("gpu") && !n.contains("static")
        })
        .into_iter()
        .filter(|(d, v)| {
            d.join(v).to_string_lossy().contains(&filter)
                && std::fs::read_to_string(d.join(v)).is_ok_and(|t| t.contains("\"LibraryNode\""))
                && sdfgc::driver::generate(&d.join(v), &blas(None, 1)).is_ok_and(|outs| {
                    outs.iter()
                        .any(|(n, t)| n.ends_with(".cu") && t.contains("\"cublasSetStream ("))
                })
        })
        .collect();
    let filtered = std::env::var_os("SDFGC_GPU_FILTER").is_some();
    assert!(
        filtered || files.len() >= 12,
        "only {} files call cuBLAS",
        files.len()
    );
    // Each file in one of the two configurations, alternately (CI time).
    let configs: [Config; 2] = [(None, 1), (Some(Mode::External), 3)];
    let tasks: Vec<(PathBuf, String, Config)> = files
        .into_iter()
        .enumerate()
        .map(|(i, (d, v))| (d, v, configs[i % 2]))
        .collect();
    // Only sdfgc's calls name the call in their status check (DaCe's own
    // cuBLAS tasklets run in the NPBench test above).
    println!("{} files call cuBLAS", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(dir, variant, mode)| {
            format!(
                "{}/{variant} --blas cublas [{}]",
                dir.file_name().unwrap().to_string_lossy(),
                mode_name(*mode)
            )
        },
        |(dir, variant, (mode, streams)), work| {
            let opts = CompileOptions {
                output: work.to_path_buf(),
                ..blas(*mode, *streams)
            };
            run_with(dir, variant, &opts, false, work)
        },
    );
    assert_all_passed("--blas cublas emulated runs", tasks.len(), &failures);
}

/// The emulator's `cuda_fp16.h`: every half converts to float exactly (as
/// the CPU prelude's IEEE `dace::float16` does) and back to itself,
/// float to half rounds as that prelude (IEEE, nearest even) over a sweep
/// of float bit patterns, and double midpoints between neighbouring halves
/// round to the even one in one rounding.
#[test]
fn the_emulated_half_type_rounds_as_ieee_binary16() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("half.cpp");
    std::fs::write(
        &src,
        format!(
            r#"#include "cuda_fp16.h"
#include <cstdio>
{}
int main() {{
    long bad[3] = {{0, 0, 0}};
    for (uint32_t i = 0; i < 65536; ++i) {{
        __half h;
        h.__x = (unsigned short)i;
        if (__hisnan(h)) continue;
        float f = h;
        bad[0] += f != dace::sdfgc_half_to_float((uint16_t)i) || __half(f).__x != i || __half((double)f).__x != i;
    }}
    for (uint64_t u = 0; u < (1ull << 32); u += 251) {{
        uint32_t b = (uint32_t)u;
        float f;
        std::memcpy(&f, &b, 4);
        if (f != f) continue;
        bad[1] += __half(f).__x != dace::sdfgc_half_from_float(f);
    }}
    for (uint32_t i = 0; i + 1 < 0x7c00; ++i) {{
        __half lo, hi;
        lo.__x = (unsigned short)i;
        hi.__x = (unsigned short)(i + 1);
        double mid = ((double)(float)lo + (double)(float)hi) / 2;
        uint32_t even = (i & 1) ? i + 1 : i;
        bad[2] += __half(mid).__x != even || __half(-mid).__x != (even | 0x8000);
    }}
    std::printf("%ld %ld %ld\n", bad[0], bad[1], bad[2]);
    return 0;
}}
"#,
            sdfgc::back::half::PRELUDE_IEEE
        ),
    )
    .unwrap();
    let exe = dir.path().join("half");
    common::emu::build_program(&src, &exe, "-O1");
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "0 0 0");
}

/// The emulated `half2` (DaCe's half4/half8 arithmetic): each lane of
/// `__hadd2`, `__hsub2`, `__hmul2`, `__hfma2` and the operators is the exact
/// result rounded once to half (nearest even), as the scalar operation;
/// `__half2half2` broadcasts; `__hne` is ordered (false for a NaN) and
/// `operator!=` unordered (`__hneu`; of two `half2`, `__hbneu2`: both lanes),
/// as CUDA's.
#[test]
fn the_emulated_half2_lanes_round_as_the_scalar_half() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("half2.cpp");
    std::fs::write(
        &src,
        r#"#include "cuda_fp16.h"
#include <cstdio>
static __half bits(uint32_t x) { __half h; h.__x = (unsigned short)x; return h; }
static bool same(__half a, __half b) { return a.__x == b.__x; }
int main() {
    long bad = 0, n = 0;
    uint32_t s = 12345;
    for (int k = 0; k < 400000; ++k) {
        s = s * 1664525u + 1013904223u;
        __half a = bits(s >> 16), b = bits(s & 0xffff), c = bits((s >> 8) & 0xffff);
        if (__hisnan(a) || __hisnan(b) || __hisnan(c)) continue;
        ++n;
        double x = (float)a, y = (float)b, z = (float)c;
        __half2 p = __halves2half2(a, b), q = __halves2half2(b, c), r = __halves2half2(c, a);
        __half2 sum = __hadd2(p, q), dif = __hsub2(p, q), pro = __hmul2(p, q), f = __hfma2(p, q, r);
        bad += !same(__low2half(sum), __half(x + y)) || !same(__high2half(sum), __half(y + z));
        bad += !same(__low2half(dif), __half(x - y)) || !same(__high2half(dif), __half(y - z));
        bad += !same(__low2half(pro), __half(x * y)) || !same(__high2half(pro), __half(y * z));
        bad += !same(__low2half(f), __half(x * y + z)) || !same(__high2half(f), __half(y * z + x));
        __half2 o = p * __half2half2(c);
        bad += !same(o.x, __hmul(a, c)) || !same(o.y, __hmul(b, c));
    }
    __half nan = bits(0x7e00), one = __half(1.0f);
    bad += __hne(nan, one) || !(nan != one) || __hbne2(__half2half2(nan), __half2half2(one));
    // half2's != is __hbneu2: true when both lanes differ (or are unordered).
    bad += !(__half2half2(nan) != __half2half2(one)) || (__halves2half2(nan, one) != __half2half2(one));
    std::printf("%ld %d\n", bad, n > 300000);
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.path().join("half2");
    common::emu::build_program(&src, &exe, "-O1");
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "0 1");
}
