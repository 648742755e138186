//! The CPU emulation of the GPU runtime (tests/gpu_emu): launches rewritten
//! for the emulator, and a library built against it.

use std::path::{Path, PathBuf};

/// Rewrites `k<<<grid, block, shmem, stream>>>(args);` into a call of the
/// emulator's launcher (the fiber launcher when the file has barriers or
/// warp shuffles).
pub fn emulate_launches(src: &str) -> String {
    let launcher = if src.contains("__syncthreads") || src.contains("__shfl_") {
        "sdfgc_emu_launch_fibers"
    } else {
        "sdfgc_emu_launch"
    };
    let mut out = String::with_capacity(src.len());
    for line in src.lines() {
        if let (Some(open), Some(close)) = (line.find("<<<"), line.find(">>>(")) {
            let head = &line[..open];
            let name_start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(|i| i + 1)
                .unwrap_or(0);
            let name = &head[name_start..];
            let config = &line[open + 3..close];
            let args = line[close + 4..]
                .trim_end()
                .trim_end_matches(';')
                .trim_end_matches(')');
            let mut depth = 0;
            let mut parts = vec![String::new()];
            for ch in config.chars() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(String::new());
                        continue;
                    }
                    _ => {}
                }
                parts.last_mut().unwrap().push(ch);
            }
            out.push_str(&format!(
                "{}{launcher}(dim3({}), dim3({}), [&] {{ {name}({args}); }});\n",
                &head[..name_start],
                parts[0].trim(),
                parts[1].trim()
            ));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
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
