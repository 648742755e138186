//! The system C and C++ compilers, found and configured by the `cc` crate as
//! Rust projects expect: `CXX`/`CC` choose the compiler, `CXXFLAGS`/`CFLAGS`
//! add flags. cc's defaults for the host (without its warning flags) come
//! first, so a test's own flags such as `-O2` override them. Usable alone
//! (`#[path = "common/cxx.rs"]`).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// cc's compiler for C++ (`cpp`) or C, found once per test process (cc runs
/// the compiler to learn its family: not once per compile).
fn build(cpp: bool) -> Command {
    static TOOLS: [OnceLock<cc::Tool>; 2] = [OnceLock::new(), OnceLock::new()];
    TOOLS[cpp as usize]
        .get_or_init(|| {
            // Tests run outside a build script, so cc gets the facts cargo would set.
            let host = format!(
                "{}-unknown-{}-gnu",
                std::env::consts::ARCH,
                std::env::consts::OS
            );
            cc::Build::new()
                .cpp(cpp)
                .target(&host)
                .host(&host)
                .opt_level(0)
                .debug(false)
                .warnings(false)
                .extra_warnings(false)
                .cargo_metadata(false)
                .cargo_warnings(false)
                .try_get_compiler()
                .unwrap_or_else(|e| {
                    panic!(
                        "no C{} compiler found (it is required): {e}",
                        if cpp { "++" } else { "" }
                    )
                })
        })
        .to_command()
}

/// The C++ compiler (`$CXX`, else the system's `c++`/`g++`) with `$CXXFLAGS`.
pub fn cxx() -> Command {
    build(true)
}

/// The C compiler (`$CC`, else the system's `cc`/`gcc`) with `$CFLAGS`.
#[allow(dead_code)] // not every test that includes this file builds C
pub fn cc() -> Command {
    build(false)
}

/// Whether compiles go through ccache: it is on PATH and `SDFGC_TEST_CCACHE`
/// is not `0`.
#[allow(dead_code)] // not every test that includes this file builds libraries
fn ccache() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("SDFGC_TEST_CCACHE").as_deref() != Ok("0")
            && Command::new("ccache")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
    })
}

/// Builds the shared library `lib` from the one C++ source `src` with
/// `flags` (given to the compile and the link alike; relative paths in them
/// are relative to the source's directory, where the compiler runs). With
/// ccache on PATH the source is compiled (`-c`) through it under its bare
/// name, so that a test's fresh temporary directory still hits the cache
/// (ccache caches no link), then linked; otherwise one command does both.
/// The compiler's output of the step that failed is returned.
#[allow(dead_code)] // not every test that includes this file builds libraries
pub fn shared_library(flags: &[&str], src: &Path, lib: &Path) -> std::io::Result<Output> {
    let dir = src
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = src.file_name().expect("a source file");
    let lib = std::path::absolute(lib)?;
    if !ccache() {
        return cxx()
            .args(flags)
            .arg(name)
            .arg("-o")
            .arg(&lib)
            .current_dir(dir)
            .output();
    }
    let obj = lib.with_extension("o");
    let tool = cxx();
    let out = Command::new("ccache")
        .arg(tool.get_program())
        .args(tool.get_args())
        .args(flags)
        .args(["-c", "-o"])
        .arg(&obj)
        .arg(name)
        .current_dir(dir)
        // -g must not put the temporary directory into the key.
        .env("CCACHE_NOHASHDIR", "1")
        .output()?;
    if !out.status.success() {
        return Ok(out);
    }
    let linked = cxx()
        .args(flags)
        .arg(&obj)
        .arg("-o")
        .arg(&lib)
        .current_dir(dir)
        .output();
    let _ = std::fs::remove_file(&obj);
    linked
}
