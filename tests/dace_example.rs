//! The drop-in proof: `examples/dace/run_with_dace.py` loads libraries that
//! sdfgc built through DaCe 1.0.2's own `CompiledSDFG`, sets the workspace
//! with `get_workspace_sizes()` / `set_workspace()`, calls the program the
//! way gt4py does (`_construct_args` + `fast_call`) and checks the fixture's
//! expected outputs.
//!
//! Needs the DaCe virtual environment `build/venv-dace` (made by
//! `bash scripts/install-test-tools.sh`; `SDFGC_DACE_PYTHON` may name another
//! Python with DaCe 1.0.2); the test fails, never skips, without it.

use std::path::PathBuf;
use std::process::Command;

const SDFGC: &str = env!("CARGO_BIN_EXE_sdfgc");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    let p = std::env::var_os("SDFGC_DACE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("build/venv-dace/bin/python"));
    assert!(
        p.is_file(),
        "{} not found: run `bash scripts/install-test-tools.sh` (creates build/venv-dace with dace==1.0.2)",
        p.display()
    );
    p
}

fn check(case: &str, variant: &str, mode: Option<&str>) {
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(python());
    c.arg(repo().join("examples/dace/run_with_dace.py"))
        .arg("--case")
        .arg(repo().join("fixtures/corpus").join(case))
        .args(["--variant", variant])
        .arg("--sdfgc")
        .arg(SDFGC)
        .arg("--workdir")
        .arg(work.path())
        // Keep DaCe's configuration and caches out of the home directory.
        .env("DACE_CONFIG", work.path().join(".dace.conf"));
    if let Some(m) = mode {
        c.args(["--mode", m]);
    }
    let o = c.output().expect("run python");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{case}/{variant} {mode:?}:\n{stdout}\n{stderr}"
    );
    let line = stdout.lines().last().unwrap_or_default();
    let v: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["status"], "ok", "{line}");
    assert_eq!(v["dace"], "1.0.2", "{line}");
    let ws = v["workspaces"]["CPU_Heap"].clone();
    assert_eq!(ws["alignment"], 64, "{line}");
    assert!(ws["bytes"].as_u64().is_some_and(|b| b > 0), "{line}");
}

#[test]
fn seed_external_2d_through_compiled_sdfg() {
    // External transients with Default storage in the SDFG itself.
    check("seed_external_2d", "program.sdfg", None);
}

#[test]
fn jacobi_1d_through_compiled_sdfg() {
    // Symbols (N) in the workspace functions, a scalar argument, in/out arrays.
    check("jacobi_1d", "program.external.sdfg", None);
}

#[test]
fn softmax_through_compiled_sdfg_in_external_mode() {
    // A return array (__return) that CompiledSDFG allocates; sdfgc's external mode.
    check("softmax", "program.external.sdfg", Some("external"));
}
