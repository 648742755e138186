//! The system C and C++ compilers, found and configured by the `cc` crate as
//! Rust projects expect: `CXX`/`CC` choose the compiler, `CXXFLAGS`/`CFLAGS`
//! add flags. cc's defaults for the host (without its warning flags) come
//! first, so a test's own flags such as `-O2` override them. Usable alone
//! (`#[path = "common/cxx.rs"]`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
/// are relative to the source's directory, where the compiler runs). A
/// source this test process already built with the same flags (the same
/// text but for its leading comment lines, which name the memory mode) is
/// not compiled again: the memory modes often generate the same code, and a
/// fresh machine's compiler cache is empty. The compiler's output of the
/// step that failed is returned.
#[allow(dead_code)] // not every test that includes this file builds libraries
pub fn shared_library(flags: &[&str], src: &Path, lib: &Path) -> std::io::Result<Output> {
    let dir = src
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // A flag naming a path relative to the source's directory stands for
    // the file it names there.
    let flags_key: Vec<String> = flags
        .iter()
        .map(|f| match dir.join(f).canonicalize() {
            Ok(p) if !f.starts_with('-') => p.to_string_lossy().into_owned(),
            _ => f.to_string(),
        })
        .collect();
    let key = format!("{}\n{}", flags_key.join(" "), source_key(src)?);
    build_once(key, lib, |lib| {
        compile_and_link(flags, dir, src, lib).map_err(|e| e.to_string())
    })
    .map_err(std::io::Error::other)
}

/// The text of a generated source that decides what it compiles to: all
/// but its leading comment lines (which name the memory mode and the target).
pub fn source_key(src: &Path) -> std::io::Result<String> {
    let text = std::fs::read_to_string(src)?;
    Ok(text
        .lines()
        .skip_while(|l| l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Runs `build`, which writes the library `lib` and returns the output of
/// its last (or failed) step, once per `key` in this process: a later call
/// with the same key gets a copy of that library at `lib` and the same
/// result.
pub fn build_once(
    key: String,
    lib: &Path,
    build: impl FnOnce(&Path) -> Result<Output, String>,
) -> Result<Output, String> {
    let slot = {
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        built.entry(key).or_default().clone()
    };
    let lib = std::path::absolute(lib).map_err(|e| e.to_string())?;
    let mut fresh = false;
    let done = slot.get_or_init(|| {
        fresh = true;
        let out = build(&lib)?;
        if !out.status.success() {
            return Ok((None, out));
        }
        let kept = kept_dir()
            .map_err(|e| e.to_string())?
            .join(format!("{}.so", KEPT.fetch_add(1, Ordering::Relaxed)));
        std::fs::copy(&lib, &kept).map_err(|e| e.to_string())?;
        Ok((Some(kept), out))
    });
    let (kept, out) = done.clone()?;
    if let Some(kept) = kept.filter(|_| !fresh) {
        // A new file: a library of the same name may be loaded.
        let _ = std::fs::remove_file(&lib);
        std::fs::copy(kept, &lib).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// One build: a copy of the library (None: the build failed) and the output
/// of its last step, or why it could not run.
type Built = Result<(Option<PathBuf>, Output), String>;

/// The libraries this process built, by key (flags and source text).
static BUILT: Mutex<BTreeMap<String, Arc<OnceLock<Built>>>> = Mutex::new(BTreeMap::new());
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// Where this process keeps its built libraries (a test's work directory
/// goes away with the test): `$TMPDIR/sdfgc-test-libs/<pid>`, emptied of the
/// folders of processes that have ended.
#[allow(dead_code)] // not every test that includes this file builds libraries
pub fn kept_dir() -> std::io::Result<&'static Path> {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    if let Some(d) = DIR.get() {
        return Ok(d);
    }
    let root = std::env::temp_dir().join("sdfgc-test-libs");
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            let pid = e.file_name().to_string_lossy().into_owned();
            if !Path::new("/proc").join(&pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = root.join(std::process::id().to_string());
    std::fs::create_dir_all(&d)?;
    Ok(DIR.get_or_init(|| d))
}

/// Compiles `src` (in `dir`) and links `lib`. With ccache on PATH the source
/// is compiled (`-c`) through it under its bare name, so that a test's fresh
/// temporary directory still hits the cache (ccache caches no link), then
/// linked; otherwise one command does both.
fn compile_and_link(flags: &[&str], dir: &Path, src: &Path, lib: &Path) -> std::io::Result<Output> {
    let name = src.file_name().expect("a source file");
    if !ccache() {
        return cxx()
            .args(flags)
            .arg(name)
            .arg("-o")
            .arg(lib)
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
        .arg(lib)
        .current_dir(dir)
        .output();
    let _ = std::fs::remove_file(&obj);
    linked
}
