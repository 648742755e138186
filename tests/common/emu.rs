//! The CPU emulation of the GPU runtime (tests/gpu_emu): launches rewritten
//! for the emulator, and a library built against it.

use std::path::{Path, PathBuf};

/// Rewrites a CUDA/HIP source for the emulator (tests/gpu_emu/gpu_emu.h):
/// `k<<<grid, block, shmem, stream>>>(args);` becomes a launch queued on the
/// stream (`sdfgc_emu_launch_async`, the arguments evaluated at the launch),
/// `__shared__ T a[N];` an array of the running block whose accesses are
/// checked for races and bounds (`SdfgcEmuShared`), and
/// `extern __shared__ T a[];` the launch's dynamic shared memory.
pub fn emulate_launches(src: &str) -> String {
    // Kernels of a file without barriers or warp intrinsics need fibers only
    // in their first launch (gpu_emu.h, sdfgc_emu_run_grid).
    let may_block = may_block(src);
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        if let Some(l) = rewrite_launch(line, may_block).or_else(|| rewrite_shared(line)) {
            out.push_str(&l);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// What makes a thread wait for others: barriers and warp intrinsics.
const BLOCKING: [&str; 20] = [
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__syncwarp",
    "__shfl",
    "__shfl_up",
    "__shfl_down",
    "__shfl_xor",
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
    "__ballot",
    "__ballot_sync",
    "__any",
    "__any_sync",
    "__all",
    "__all_sync",
    "__activemask",
];

/// True if an identifier of `src` names a barrier or warp intrinsic.
fn may_block(src: &str) -> bool {
    src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| BLOCKING.contains(&w))
}

/// `text` split at commas outside parentheses, brackets and braces.
fn split_top(text: &str) -> Vec<String> {
    let mut depth = 0;
    let mut parts = vec![String::new()];
    for ch in text.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().unwrap().push(ch);
    }
    parts.into_iter().map(|p| p.trim().to_string()).collect()
}

fn rewrite_launch(line: &str, may_block: bool) -> Option<String> {
    let (open, close) = (line.find("<<<")?, line.find(">>>(")?);
    let head = &line[..open];
    let name_start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|i| i + 1)
        .unwrap_or(0);
    let name = &head[name_start..];
    let config = split_top(&line[open + 3..close]);
    let args = line[close + 4..]
        .trim_end()
        .trim_end_matches(';')
        .trim_end()
        .strip_suffix(')')?
        .trim();
    let shmem = config.get(2).map(String::as_str).unwrap_or("0");
    let stream = config.get(3).map(String::as_str).unwrap_or("nullptr");
    let args = if args.is_empty() {
        String::new()
    } else {
        format!(", {args}")
    };
    Some(format!(
        "{}sdfgc_emu_launch_async({stream}, dim3({}), dim3({}), {shmem}, {may_block}, {name}{args});",
        &head[..name_start],
        config[0],
        config.get(1)?
    ))
}

/// `__shared__ T a[N];` (one dimension) and `extern __shared__ T a[];`.
fn rewrite_shared(line: &str) -> Option<String> {
    let t = line.trim();
    let indent = &line[..line.len() - line.trim_start().len()];
    let (dynamic, rest) = if let Some(r) = t.strip_prefix("extern __shared__ ") {
        (true, r)
    } else {
        (false, t.strip_prefix("__shared__ ")?)
    };
    let rest = rest.strip_suffix(';')?.trim_end().strip_suffix(']')?;
    let open = rest.find('[')?;
    if rest[open + 1..].contains('[') {
        return None;
    }
    let size = rest[open + 1..].trim();
    let decl = rest[..open].trim_end();
    let name_start = decl.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))? + 1;
    let (ty, name) = (decl[..name_start].trim(), &decl[name_start..]);
    if ty.is_empty() || name.is_empty() || size.is_empty() != dynamic {
        return None;
    }
    Some(if dynamic {
        format!("{indent}{ty} *{name} = static_cast<{ty} *>(sdfgc_emu_dynamic_shared());")
    } else {
        format!(
            "{indent}static char sdfgc_emu_key_{name}; SdfgcEmuShared<{ty}, std::size_t({size})> {name}(&sdfgc_emu_key_{name}, \"{name}\");"
        )
    })
}

/// The emulator's include directory.
pub fn include_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/gpu_emu")
}

/// Builds the shared library `lib` from a generated GPU source with g++
/// against the emulator (launches rewritten).
pub fn build_library(src: &str, work: &Path, lib: &Path) -> Result<(), String> {
    let emu = work.join(format!(
        "{}.cpp",
        lib.file_stem().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&emu, emulate_launches(src)).map_err(|e| e.to_string())?;
    // The emulator's headers through a link in the work directory: a
    // relative `-I`, so the compiler cache's key does not hold the checkout's path.
    let headers = work.join("gpu_emu");
    if !headers.exists() {
        std::os::unix::fs::symlink(include_dir(), &headers).map_err(|e| e.to_string())?;
    }
    let cc = super::cxx::shared_library(
        &[
            "-std=c++17",
            "-O1",
            "-fopenmp",
            "-fPIC",
            "-shared",
            "-Wall",
            "-Wno-unused-function",
            "-Wno-unused-variable",
            "-Wno-stringop-overflow",
            "-Werror",
            "-I",
            "gpu_emu",
        ],
        &emu,
        lib,
    )
    .map_err(|e| format!("cannot run g++ (it is required): {e}"))?;
    if !cc.status.success() {
        let err = String::from_utf8_lossy(&cc.stderr);
        return Err(format!(
            "g++ failed:\n{}",
            err.lines().take(10).collect::<Vec<_>>().join("\n")
        ));
    }
    Ok(())
}

/// Builds a standalone test program `src` against the emulator at
/// optimisation level `opt` (e.g. "-O1"); panics with g++'s errors.
pub fn build_program(src: &Path, exe: &Path, opt: &str) {
    let cc = super::cxx::cxx()
        .args(["-std=c++17", opt, "-I"])
        .arg(include_dir())
        .arg(src)
        .arg("-o")
        .arg(exe)
        .output()
        .expect("g++ is required");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
}
