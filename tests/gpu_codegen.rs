//! Properties of the generated GPU code that the runtime cannot show without
//! a GPU: external mode allocates nothing outside init/exit, pool mode frees
//! every buffer it allocates, events are created only in init and destroyed
//! in exit, and every call ends by joining every internal stream into the
//! host's stream.

use std::path::PathBuf;

use sdfgc::driver::{CompileOptions, Mode, Target};

fn gpu_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                // NPBench's GPU variants (DaCe's offloading, cuBLAS calls) are
                // not compiled yet: their CPU variants run in run_corpus.rs.
                if !p.ends_with("fixtures/npbench") {
                    stack.push(p);
                }
            } else if name.ends_with(".sdfg")
                && (name.contains("gpu") || name == "hip.sdfg")
                && !name.contains("static")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The targets a fixture is generated for: `gpu.sdfg` files hold CUDA-only
/// code (DaCe's cuBLAS calls), the others both.
fn targets(file: &std::path::Path) -> &'static [Target] {
    if file.file_name().is_some_and(|n| n == "gpu.sdfg") {
        &[Target::Cuda]
    } else {
        &[Target::Cuda, Target::Hip]
    }
}

fn generate(file: &std::path::Path, target: Target, mode: Mode, streams: u32) -> String {
    let opts = CompileOptions {
        mode: Some(mode),
        streams,
        ..CompileOptions::new(target)
    };
    let outs = sdfgc::driver::generate(file, &opts).unwrap_or_else(|e| panic!("{e}"));
    outs.into_iter()
        .find(|(n, _)| n.ends_with(".cu") || n.ends_with(".hip"))
        .unwrap()
        .1
}

/// The text of the function whose definition line contains `signature`.
fn function<'a>(src: &'a str, signature: &str) -> &'a str {
    let start = src
        .find(signature)
        .unwrap_or_else(|| panic!("no {signature}"));
    let end = src[start..]
        .find("\n}\n")
        .map(|e| start + e + 3)
        .unwrap_or(src.len());
    &src[start..end]
}

/// The file without the init and exit functions (nor the definitions of the
/// allocation helpers, where the file carries them: their calls are what the
/// tests look for).
fn outside_init_exit(src: &str) -> String {
    let mut rest = src.to_string();
    for sig in ["*__dace_init_", "int __dace_exit_"] {
        let f = function(src, sig).to_string();
        rest = rest.replace(&f, "");
    }
    // sdfgc's allocation helpers, and the cuBLAS handle's cleanup, which only
    // __dace_init_* (on failure) and __dace_exit_* call.
    for sig in [
        "T *sdfgc_alloc(",
        "void sdfgc_free(",
        "void sdfgc_cublas_exit(",
    ] {
        if src.contains(sig) {
            let f = function(src, sig).to_string();
            rest = rest.replace(&f, "");
        }
    }
    // The device heap's helper: per-thread arrays sized inside a kernel
    // (no host allocation; DaCe allocates them the same way).
    rest.replace(sdfgc::back::gpu::device_heap::PRELUDE, "")
}

/// The transients that every mode allocates during the call: their size
/// depends on a symbol the program assigns (a loop variable).
fn sized_in_call(file: &std::path::Path, target: Target) -> Vec<String> {
    let opts = CompileOptions {
        mode: Some(Mode::External),
        ..CompileOptions::new(target)
    };
    let sdfg = sdfgc::driver::load_valid(file).unwrap_or_else(|e| panic!("{e}"));
    let program = sdfgc::passes::prepare(sdfg, &opts).unwrap_or_else(|e| panic!("{e}"));
    program
        .alloc
        .sized_in_call
        .iter()
        .map(|(_, n)| n.clone())
        .collect()
}

/// True if `line` names `word` as a whole identifier.
fn names(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        !line[..i].ends_with(ident) && !line[i + word.len()..].starts_with(ident)
    })
}

#[test]
fn external_mode_allocates_nothing_outside_init_and_exit() {
    for file in gpu_files() {
        for &target in targets(&file) {
            let src = generate(&file, target, Mode::External, 1);
            let rest = outside_init_exit(&src);
            let in_call = sized_in_call(&file, target);
            // cuSOLVER's and cuSPARSE's calls allocate their workspace and
            // scratch (DaCe's transposed copies, pivots, devInfo) around the
            // call, as DaCe's expansions do (docs/gpu.md).
            let library_scratch = |l: &str| {
                (src.contains("#include <cusolverDn.h>") || src.contains("#include <cusparse.h>"))
                    && [
                        "__dace_workspace",
                        "dBuffer",
                        "__ainout",
                        "__binout",
                        "__pivots",
                        "__info",
                        "__bt",
                        "__b",
                        "__ones",
                    ]
                    .iter()
                    .any(|n| names(l, n))
            };
            for call in [
                "Malloc(",
                "MallocAsync(",
                "Free(",
                "FreeAsync(",
                "sdfgc_alloc<",
                "sdfgc_free(",
                "malloc(",
                "new ",
            ] {
                let hits: Vec<&str> = rest
                    .lines()
                    .filter(|l| {
                        l.contains(call)
                            && !l.trim_start().starts_with("//")
                            && !l.contains("static inline")
                            && !in_call.iter().any(|t| names(l, t))
                            && !library_scratch(l)
                    })
                    .collect();
                assert!(
                    hits.is_empty(),
                    "{} [{target:?}]: {call} outside init/exit:\n{hits:?}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn pool_mode_frees_every_buffer_it_allocates() {
    let mut allocations = 0;
    for file in gpu_files() {
        let src = generate(&file, Target::Cuda, Mode::Pool, 1);
        for line in src
            .lines()
            .filter(|l| l.contains("cudaMallocAsync((void **)&"))
        {
            let name = line
                .split("cudaMallocAsync((void **)&")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            let free = format!("cudaFreeAsync({name},");
            assert!(
                src.contains(&free),
                "{}: {name} is allocated with cudaMallocAsync but never freed",
                file.display()
            );
            allocations += 1;
        }
        let mallocs = src.matches("cudaMallocAsync(").count();
        let frees = src.matches("cudaFreeAsync(").count();
        assert_eq!(
            mallocs,
            frees,
            "{}: {mallocs} cudaMallocAsync vs {frees} cudaFreeAsync",
            file.display()
        );
        if mallocs > 0 {
            let init = function(&src, "*__dace_init_");
            assert!(
                init.contains("cudaMemPoolAttrReleaseThreshold"),
                "{}: pool threshold not raised at init",
                file.display()
            );
        }
    }
    assert!(allocations > 20, "only {allocations} pool allocations seen");
}

#[test]
fn events_live_in_init_and_exit_and_every_call_joins_internal_streams() {
    let streams = 3;
    for file in gpu_files().iter().take(40) {
        for &target in targets(file) {
            let api = if target == Target::Cuda {
                "cuda"
            } else {
                "hip"
            };
            let src = generate(file, target, Mode::External, streams);
            let init = function(&src, "*__dace_init_");
            let exit = function(&src, "int __dace_exit_");
            let rest = outside_init_exit(&src);
            for (what, create, destroy) in [
                ("event", "EventCreateWithFlags", "EventDestroy"),
                ("stream", "StreamCreateWithFlags", "StreamDestroy"),
            ] {
                let create = format!("{api}{create}");
                let destroy = format!("{api}{destroy}");
                assert!(
                    init.contains(&create),
                    "{}: no {what} created in init",
                    file.display()
                );
                assert!(
                    !rest.contains(&create),
                    "{}: {what} created outside init",
                    file.display()
                );
                assert!(
                    exit.contains(&destroy),
                    "{}: {what}s not destroyed in exit",
                    file.display()
                );
                assert!(
                    !rest.contains(&destroy),
                    "{}: {what} destroyed outside exit",
                    file.display()
                );
            }
            assert!(
                init.contains(&format!("{api}EventDisableTiming")),
                "{}",
                file.display()
            );
            // The end of the program function: every internal stream joins stream 0.
            let program = function(&src, "static void __program_");
            let tail: String = program
                .lines()
                .rev()
                .take(4 * streams as usize + 8)
                .collect::<Vec<_>>()
                .join("\n");
            for i in 1..streams {
                assert!(
                    tail.contains(&format!(
                        "{api}EventRecord(__state->gpu_events[{i}], __state->gpu_streams[{i}])"
                    )),
                    "{}: stream {i} not recorded at exit:\n{tail}",
                    file.display()
                );
                assert!(
                    tail.contains(&format!(
                        "{api}StreamWaitEvent(__state->gpu_streams[0], __state->gpu_events[{i}], 0)"
                    )),
                    "{}: stream 0 does not wait for stream {i} at exit",
                    file.display()
                );
            }
            // The number of events created is exactly the number used.
            let used = src.matches("__state->gpu_events[").count();
            assert!(used > 0);
            let max_index = src
                .split("__state->gpu_events[")
                .skip(1)
                .filter_map(|s| s.split(']').next()?.parse::<usize>().ok())
                .max()
                .unwrap_or(0);
            assert!(
                init.contains(&format!("i < {}", max_index + 1)),
                "{}: events used up to {max_index} but not all created",
                file.display()
            );
        }
    }
}

#[test]
fn one_stream_has_no_events() {
    let file = &gpu_files()[0];
    let src = generate(file, Target::Cuda, Mode::External, 1);
    assert!(!src.contains("gpu_events"), "{}", file.display());
    assert!(src.contains("__dace_gpu_set_all_streams"));
    assert!(src.contains("__dace_gpu_set_stream("));
}

#[test]
fn check_pointers_tests_every_device_argument_at_entry() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/gt4py/vertical_integral_scans/gpu.sdfg");
    let opts = CompileOptions {
        mode: Some(Mode::External),
        check_pointers: true,
        ..CompileOptions::new(Target::Cuda)
    };
    let outs = sdfgc::driver::generate(&file, &opts).unwrap();
    let src = &outs.iter().find(|(n, _)| n.ends_with(".cu")).unwrap().1;
    let entry = function(src, "extern \"C\" void __program_");
    for arg in ["dz", "height", "mass", "p", "rho", "rho_h_max"] {
        assert!(
            entry.contains(&format!("if (!sdfgc_on_device({arg}))")),
            "{arg} not checked:\n{entry}"
        );
    }
    // Host memory (gt_compute_time) is not checked.
    assert!(!entry.contains("sdfgc_on_device(gt_compute_time)"));
    // Without the flag there is no check.
    let plain = sdfgc::driver::generate(
        &file,
        &CompileOptions {
            mode: Some(Mode::External),
            ..CompileOptions::new(Target::Cuda)
        },
    )
    .unwrap();
    let plain_src = &plain.iter().find(|(n, _)| n.ends_with(".cu")).unwrap().1;
    assert!(!function(plain_src, "extern \"C\" void __program_").contains("sdfgc_on_device("));
}

/// The GPU fixtures whose kernels read constant arrays.
fn constant_array_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> = gpu_files()
        .into_iter()
        .filter(|f| {
            let case = std::fs::read_to_string(f.with_file_name("case.json")).unwrap_or_default();
            case.contains("\"constant_array\"")
        })
        .collect();
    assert!(
        files.len() >= 3,
        "constant-array fixtures missing: {files:?}"
    );
    files
}

fn generate_with(file: &std::path::Path, opts: &CompileOptions) -> sdfgc::diag::Result<String> {
    Ok(sdfgc::driver::generate(file, opts)?
        .into_iter()
        .find(|(n, _)| n.ends_with(".cu") || n.ends_with(".hip"))
        .unwrap()
        .1)
}

#[test]
fn constant_arrays_are_copied_to_device_memory_once_at_init() {
    for file in constant_array_files() {
        for target in [Target::Cuda, Target::Hip] {
            let api = if target == Target::Cuda {
                "cuda"
            } else {
                "hip"
            };
            for mode in [Mode::Scoped, Mode::Pool, Mode::Persistent, Mode::External] {
                let src = generate(&file, target, mode, 1);
                let what = format!("{} [{api} {mode:?}]", file.display());
                // Never __constant__ without --constant-memory.
                assert!(
                    !src.contains("__constant__"),
                    "{what}: __constant__ without the flag"
                );
                assert!(!src.contains("MemcpyToSymbol"), "{what}");
                // The device copies are made in init (in external mode too:
                // they are no transients), freed in exit, and nowhere else.
                let init = function(&src, "*__dace_init_");
                let exit = function(&src, "int __dace_exit_");
                let rest = outside_init_exit(&src);
                assert!(
                    init.contains("__sdfgc_const_"),
                    "{what}: no device copy in init"
                );
                assert!(
                    init.contains(&format!("{api}Memcpy(__state->__sdfgc_const_")),
                    "{what}"
                );
                assert!(
                    exit.contains(&format!("{api}Free(__state->__sdfgc_const_")),
                    "{what}"
                );
                assert!(
                    !rest.contains(&format!("{api}Memcpy(")),
                    "{what}: a synchronous copy outside init"
                );
                for line in rest.lines().filter(|l| l.contains("__sdfgc_const_")) {
                    assert!(
                        !line.contains("Malloc")
                            && !line.contains("Free")
                            && !line.contains("Memcpy"),
                        "{what}: constant copy touched outside init/exit: {line}"
                    );
                }
                // Kernels read them by pointer.
                assert!(
                    rest.contains("__state->__sdfgc_const_"),
                    "{what}: no kernel argument"
                );
                assert!(
                    src.lines().any(|l| l.starts_with("__global__")
                        && l.contains("const ")
                        && l.contains(" * __restrict__ ")),
                    "{what}: no pointer parameter"
                );
            }
        }
    }
}

#[test]
fn constant_memory_fills_constant_arrays_at_init() {
    for file in constant_array_files() {
        for target in [Target::Cuda, Target::Hip] {
            let opts = CompileOptions {
                mode: Some(Mode::External),
                constant_memory: true,
                ..CompileOptions::new(target)
            };
            let src = generate_with(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
            let what = format!("{} [{target:?}]", file.display());
            assert!(src.contains("__constant__ "), "{what}");
            assert!(
                !src.contains("__sdfgc_const_"),
                "{what}: device copies with --constant-memory"
            );
            let init = function(&src, "*__dace_init_");
            let rest = outside_init_exit(&src);
            let call = if target == Target::Cuda {
                "cudaMemcpyToSymbol(__sdfgc_cmem_"
            } else {
                "hipMemcpyToSymbol(HIP_SYMBOL(__sdfgc_cmem_"
            };
            assert!(init.contains(call), "{what}: {init}");
            assert!(
                !rest.contains("MemcpyToSymbol"),
                "{what}: filled outside init"
            );
        }
    }
}

#[test]
fn constant_memory_refuses_arrays_over_64_kib_by_name_and_size() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/gpu/const_weights_1d/program.gpu.sdfg");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let w = &mut json["attributes"]["constants_prop"]["W"];
    let n = 8193; // 65,544 bytes of float64: 8 bytes over the limit
    w[0]["attributes"]["shape"] = serde_json::json!([n.to_string()]);
    w[0]["attributes"]["total_size"] = serde_json::json!(n.to_string());
    w[1]["data"] = serde_json::json!(vec![0.5; n]);
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.sdfg");
    std::fs::write(&big, serde_json::to_string(&json).unwrap()).unwrap();
    for target in [Target::Cuda, Target::Hip] {
        let opts = CompileOptions {
            constant_memory: true,
            ..CompileOptions::new(target)
        };
        let err = generate_with(&big, &opts).unwrap_err().to_string();
        assert!(err.contains("--constant-memory"), "{err}");
        assert!(err.contains("'W'"), "{err}");
        assert!(err.contains("65544 bytes"), "{err}");
        assert!(err.contains("64 KiB"), "{err}");
        // Without the flag the array goes to device global memory.
        let src = generate_with(&big, &CompileOptions::new(target)).unwrap();
        assert!(src.contains("__sdfgc_const_W"));
    }
    // 8192 elements (exactly 64 KiB) are accepted.
    let w = &mut json["attributes"]["constants_prop"]["W"];
    w[0]["attributes"]["shape"] = serde_json::json!(["8192"]);
    w[0]["attributes"]["total_size"] = serde_json::json!("8192");
    w[1]["data"] = serde_json::json!(vec![0.5; 8192]);
    std::fs::write(&big, serde_json::to_string(&json).unwrap()).unwrap();
    let opts = CompileOptions {
        constant_memory: true,
        ..CompileOptions::new(Target::Cuda)
    };
    let src = generate_with(&big, &opts).unwrap();
    assert!(src.contains("__constant__ double __sdfgc_cmem_W[8192];"));
}

fn tb_fixture(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("fixtures/gpu-tb/{case}/program.gpu.sdfg"))
}

/// The `__global__` function whose name starts with `name`.
fn kernel<'a>(src: &'a str, name: &str) -> &'a str {
    let start = src
        .find(&format!(") {name}"))
        .map(|i| src[..i].rfind("__global__").unwrap())
        .unwrap_or_else(|| panic!("no kernel {name}"));
    let end = src[start..].find("\n}\n").unwrap() + start;
    &src[start..end]
}

#[test]
fn thread_block_maps_become_thread_index_math_with_shared_memory_and_barriers() {
    for target in [Target::Cuda, Target::Hip] {
        let src = generate(&tb_fixture("tb_stencil_shared"), target, Mode::External, 1);
        let k = kernel(&src, "blocks_");
        // Block: the largest thread-block map (66 threads); grid: the device map's range.
        assert!(k.contains("__launch_bounds__(66)"), "{k}");
        assert!(src.contains("const dim3 __block(66, 1, 1);"), "{src}");
        assert!(src.contains("const dim3 __grid(static_cast<unsigned int>(N / 64), 1, 1);"));
        assert!(k.contains("const int64_t __tx = blockIdx.x;"), "{k}");
        assert!(k.contains("__shared__ double tile[66];"), "{k}");
        // The 64-thread map does not fill the block: guarded.
        assert!(k.contains("if (__tbx < 64)"), "{k}");
        // Exactly one barrier, between the two thread-block scopes.
        assert_eq!(k.matches("__syncthreads();").count(), 1, "{k}");
        let load = k.find("// thread-block map load").unwrap();
        let sync = k.find("__syncthreads();").unwrap();
        let compute = k.find("// thread-block map compute").unwrap();
        assert!(load < sync && sync < compute, "{k}");
        // The Register scalar is a local variable of the thread.
        assert!(k.contains("[[maybe_unused]] double acc;"), "{k}");
    }
}

#[test]
fn thread_block_barriers_are_placed_where_scopes_conflict() {
    let src = generate(
        &tb_fixture("tb_matmul_tiled"),
        Target::Cuda,
        Mode::External,
        1,
    );
    let k = kernel(&src, "tiles_");
    assert!(src.contains("const dim3 __block(8, 8, 1);"), "{src}");
    assert!(k.contains("__shared__ double sA[32];") && k.contains("__shared__ double sB[32];"));
    // The two tile loads touch different arrays: no barrier between them; the
    // product reads both (barrier before), and the next K tile overwrites
    // them (barrier at the end of the loop body).
    let a = k.find("// thread-block map load_a").unwrap();
    let b = k.find("// thread-block map load_b").unwrap();
    let mult = k.find("// thread-block map mult").unwrap();
    assert!(!k[a..b].contains("__syncthreads"), "{k}");
    assert!(k[b..mult].contains("__syncthreads();"), "{k}");
    assert!(k[mult..].contains("__syncthreads();"), "{k}");
    assert_eq!(k.matches("__syncthreads();").count(), 2, "{k}");
    // 8x4 and 4x8 maps in an 8x8 block: one guard each.
    assert!(k[a..b].contains("if (__tbx < 4)"), "{k}");
    assert!(k[b..mult].contains("if (__tby < 4)"), "{k}");
}

fn generate_modified(case: &str, edit: impl Fn(String) -> String) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("program.gpu.sdfg");
    let text = std::fs::read_to_string(tb_fixture(case)).unwrap();
    std::fs::write(&file, edit(text)).unwrap();
    sdfgc::driver::generate(&file, &CompileOptions::new(Target::Cuda))
        .map(|outs| {
            outs.into_iter()
                .find(|(n, _)| n.ends_with(".cu"))
                .unwrap()
                .1
        })
        .map_err(|e| e.to_string())
}

#[test]
fn unsupported_thread_block_code_is_refused_by_name() {
    // A GPU_ThreadBlock_Dynamic map is built (one point per thread, as DaCe
    // without its load balancing), no longer refused.
    let code = generate_modified("tb_stencil_shared", |t| {
        t.replacen("\"GPU_ThreadBlock\"", "\"GPU_ThreadBlock_Dynamic\"", 1)
    })
    .unwrap();
    assert!(code.contains("__global__"), "{code}");
    let err = generate_modified("tb_stencil_shared", |t| {
        let mut j: serde_json::Value = serde_json::from_str(&t).unwrap();
        let tile = &mut j["attributes"]["_arrays"]["tile"]["attributes"];
        tile["total_size"] = "N".into();
        tile["shape"] = serde_json::json!(["N"]);
        j.to_string()
    })
    .unwrap_err();
    assert!(
        err.contains("GPU_Shared transient 'tile'") && err.contains("dynamic shared memory"),
        "{err}"
    );
}

/// Sets an attribute of the map labelled `label` in a fixture's JSON.
fn set_map_attribute(text: &str, label: &str, key: &str, value: serde_json::Value) -> String {
    let mut j: serde_json::Value = serde_json::from_str(text).unwrap();
    for n in j["nodes"][0]["nodes"].as_array_mut().unwrap() {
        let name = n["label"].as_str().unwrap_or_default();
        if n["type"] == "MapEntry" && name.starts_with(&format!("{label}[")) {
            n["attributes"][key] = value.clone();
        }
    }
    j.to_string()
}

#[test]
fn thread_block_ranges_beyond_the_block_limit_become_strided_loops() {
    let range = serde_json::json!({"type": "Range", "ranges": [
        {"start": "0", "end": "2047", "step": "1", "tile": "1"}]});
    let src = generate_modified("tb_stencil_shared", |t| {
        set_map_attribute(&t, "load", "range", range.clone())
    })
    .unwrap();
    // 2048 threads would exceed 1024: the block is capped and the map strides.
    assert!(src.contains("const dim3 __block(1024, 1, 1);"), "{src}");
    assert!(
        src.contains("for (int64_t __tbx = threadIdx.x; __tbx < 2048; __tbx += 1024)"),
        "{src}"
    );
    assert!(src.contains("if (__tbx < 64)"), "{src}");
    // A gpu_block_size that contradicts the thread-block maps is refused.
    let err = generate_modified("tb_stencil_shared", |t| {
        set_map_attribute(&t, "blocks", "gpu_block_size", serde_json::json!([128]))
    })
    .unwrap_err();
    assert!(
        err.contains("gpu_block_size") && err.contains("GPU_ThreadBlock"),
        "{err}"
    );
}

/// DaCe's offloaded programs keep host scalars (deriche's `k`) in Default
/// storage and pass them to kernels by value; a one-thread kernel cannot
/// write host data (its write would be lost), so code that reads device
/// memory and writes a host scalar is refused by name.
#[test]
fn scalars_kernels_only_read_stay_host_values() {
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/npbench/deriche/program.gpu.sdfg");
    let generate_cu = |path: &std::path::Path| {
        sdfgc::driver::generate(path, &CompileOptions::new(Target::Cuda))
            .map(|outs| {
                outs.into_iter()
                    .find(|(n, _)| n.ends_with(".cu"))
                    .unwrap()
                    .1
            })
            .map_err(|e| e.to_string())
    };
    let cu = generate_cu(&file).unwrap();
    assert!(cu.contains("double k,"), "k is not passed by value");
    assert!(!cu.contains("on the device (one thread)"), "{cu}");
    // `k` on the device: the host tasklet reading it and writing the host
    // scalar `__tmp17` would run in a one-thread kernel.
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    j["attributes"]["_arrays"]["k"]["attributes"]["storage"] = "GPU_Global".into();
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("program.gpu.sdfg");
    std::fs::write(&edited, j.to_string()).unwrap();
    let err = generate_cu(&edited).unwrap_err();
    assert!(
        err.contains("runs in a one-thread GPU kernel, but it writes host data"),
        "{err}"
    );
}

/// DaCe's cuBLAS tasklets (k2mm's auto-optimized GPU file) run in host code
/// on the stream the writer gives them, with the file's handle created at
/// init and destroyed at exit, and the file links cuBLAS. Refused by name:
/// the HIP target (no cuBLAS there), a cuBLAS tasklet on host data, and
/// `--blas cublas` for other targets than CUDA.
#[test]
fn cublas_tasklets_run_on_the_host_on_their_stream() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/npbench/k2mm/program.gpu.autoopt.sdfg");
    let generate_in = |path: &std::path::Path, opts: &CompileOptions| {
        sdfgc::driver::generate(path, opts)
            .map(|outs| {
                outs.into_iter()
                    .find(|(n, _)| n.ends_with(".cu") || n.ends_with(".hip"))
                    .unwrap()
                    .1
            })
            .map_err(|e| e.to_string())
    };
    let opts = CompileOptions {
        streams: 3,
        ..CompileOptions::new(Target::Cuda)
    };
    let cu = generate_in(&file, &opts).unwrap();
    assert_eq!(cu.matches("calls cuBLAS on the host").count(), 2, "{cu}");
    assert!(!cu.contains("on the device (one thread)"), "{cu}");
    // Round-robin like kernels: the two calls on streams 1 and 2.
    assert!(cu.contains("cudaStream_t __dace_current_stream = __state->gpu_streams[1];"));
    assert!(cu.contains("cudaStream_t __dace_current_stream = __state->gpu_streams[2];"));
    assert!(cu.contains("#include <cublas_v2.h>"));
    assert!(cu.contains("sdfgc_cublas cublas_handle;"));
    let init = &cu[cu.find("__dace_init_").unwrap()..];
    assert!(init.contains("cublasCreate(&c.handle)"), "{init}");
    assert!(
        init.contains("cublasSetPointerMode(c.handle, CUBLAS_POINTER_MODE_DEVICE)"),
        "{init}"
    );
    let exit = &cu[cu.find("extern \"C\" int __dace_exit_").unwrap()..];
    assert!(exit.contains("sdfgc_cublas_exit(__state->cublas_handle);"));
    assert!(cu.lines().nth(2).unwrap().ends_with(" -lcublas"), "{cu}");

    let err = generate_in(&file, &CompileOptions::new(Target::Hip)).unwrap_err();
    assert!(err.contains("library environment 'cuBLAS'"), "{err}");

    // The product `__tmp1` in host memory: cuBLAS cannot write it.
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    j["attributes"]["_arrays"]["__tmp1"]["attributes"]["storage"] = "CPU_Heap".into();
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("program.gpu.autoopt.sdfg");
    std::fs::write(&edited, j.to_string()).unwrap();
    let err = generate_in(&edited, &CompileOptions::new(Target::Cuda)).unwrap_err();
    assert!(
        err.contains("cuBLAS tasklet '_MatMult_gemm' on host data '__tmp1'"),
        "{err}"
    );

    let opts = CompileOptions {
        blas: sdfgc::driver::Blas::Cublas,
        ..CompileOptions::new(Target::Hip)
    };
    let err = generate_in(&file, &opts).unwrap_err();
    assert!(err.contains("use it with --target cuda"), "{err}");
}

/// Dynamic map inputs (CSR row pointers, `j = rowptr[i] : rowptr[i+1]`): a
/// sequential map inside a kernel defines them in the kernel's body (they
/// are not kernel parameters); a kernel's own map or a thread-block map with
/// one (its grid or block would depend on values in memory) is refused by
/// name, with the map and the connector.
#[test]
fn dynamic_map_inputs_are_defined_inside_kernels_and_refused_on_grids_and_blocks() {
    let programs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs");
    let offload = CompileOptions {
        offload: true,
        offload_args: sdfgc::options::OffloadArgs::DeviceArgs,
        ..CompileOptions::new(Target::Cuda)
    };
    let src = generate_with(&programs.join("dyn_map_range/program.sdfg"), &offload).unwrap();
    let start = src.find("__global__").expect("a kernel");
    let k = &src[start..start + src[start..].find("\n}\n").unwrap()];
    let signature = &k[..k.find('{').unwrap()];
    for b in ["_b0", "_e1"] {
        let def = k
            .lines()
            .find(|l| l.contains("const int64_t __map_") && l.contains(b))
            .unwrap_or_else(|| panic!("no definition of the dynamic input *{b} in {k}"));
        assert!(def.contains("= rowptr[i"), "{def}");
        assert!(!signature.contains(b), "{signature}");
    }
    let err = generate_with(
        &programs.join("dyn_map_outer_bound/program.parsed.sdfg"),
        &offload,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("GPU map 'dyn_map_outer_bound_") && err.contains("has dynamic input '__map_"),
        "{err}"
    );
    // The inner map as a thread-block map of a GPU_Device map.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("program.sdfg");
    let text = std::fs::read_to_string(programs.join("dyn_map_range/program.sdfg")).unwrap();
    let mut j: serde_json::Value = serde_json::from_str(&text).unwrap();
    for a in j["attributes"]["_arrays"]
        .as_object_mut()
        .unwrap()
        .values_mut()
    {
        a["attributes"]["storage"] = "GPU_Global".into();
    }
    for n in j["nodes"][0]["nodes"].as_array_mut().unwrap() {
        if n["type"] == "MapEntry" {
            let outer = n["attributes"]["params"] == serde_json::json!(["i"]);
            n["attributes"]["schedule"] = if outer {
                "GPU_Device"
            } else {
                "GPU_ThreadBlock"
            }
            .into();
        }
    }
    std::fs::write(&file, j.to_string()).unwrap();
    let err = generate_with(&file, &CompileOptions::new(Target::Cuda))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("GPU_ThreadBlock map 'dyn_map_range_")
            && err.contains("has dynamic input '__map_"),
        "{err}"
    );
}

/// A grid map's gpu_block_size beyond what a block may hold (1,024 threads,
/// 64 in z) is refused by name, as DaCe raises a ValueError; the limit
/// itself is accepted.
#[test]
fn block_sizes_beyond_the_hardware_limit_are_refused() {
    fn with_block(size: serde_json::Value) -> Result<String, String> {
        fn set(v: &mut serde_json::Value, size: &serde_json::Value) {
            match v {
                serde_json::Value::Object(o) => {
                    if o.get("type").and_then(|t| t.as_str()) == Some("MapEntry")
                        && o["attributes"]["schedule"] == "GPU_Device"
                    {
                        o.get_mut("attributes").unwrap()["gpu_block_size"] = size.clone();
                    }
                    o.values_mut().for_each(|x| set(x, size));
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(|x| set(x, size)),
                _ => {}
            }
        }
        let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/npbench/atax/program.gpu.sdfg");
        let mut j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        set(&mut j, &size);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("program.gpu.sdfg");
        std::fs::write(&path, j.to_string()).unwrap();
        sdfgc::driver::generate(&path, &CompileOptions::new(Target::Cuda))
            .map(|outs| outs.into_iter().map(|(_, t)| t).collect())
            .map_err(|e| e.to_string())
    }
    let err = with_block(serde_json::json!([64, 32, 1])).unwrap_err();
    assert!(
        err.contains("gpu_block_size [64, 32, 1]") && err.contains("1024"),
        "{err}"
    );
    let err = with_block(serde_json::json!([1, 1, 128])).unwrap_err();
    assert!(err.contains("64 in z"), "{err}");
    let ok = with_block(serde_json::json!([32, 32, 1])).unwrap();
    assert!(
        ok.contains("__block(32, 32, 1)"),
        "no 32x32 block in the code"
    );
}
