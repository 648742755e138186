//! DaCe's MPI library nodes end to end: the fixtures of `fixtures/mpi`
//! (SDFGs saved by DaCe 1.0.2, DaCe's own outputs per rank) run under
//! `mpirun -np 4` through `fixtures/mpi/run_mpi.py check`: sdfgc's library
//! on DaCe's ABI in the external mode with a workspace poisoned with 0xFF
//! bytes (the other modes: `run_mpi.py check` by hand, see the README),
//! called twice per rank; every
//! array must equal DaCe's. Needs Open MPI and mpi4py in build/venv-dace
//! (scripts/install-test-tools.sh; `$SDFGC_MPI_PYTHON` names another Python).

use std::path::PathBuf;
use std::process::Command;

fn python() -> PathBuf {
    match std::env::var_os("SDFGC_MPI_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("build/venv-dace/bin/python"),
    }
}

#[test]
fn mpi_fixtures_match_dace_under_mpirun() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cache = std::env::temp_dir().join(format!("sdfgc-mpi-test-{}", std::process::id()));
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "4"])
        .arg(python())
        .arg(root.join("fixtures/mpi/run_mpi.py"))
        .args(["check", "--modes", "external"])
        .env("SDFGC", env!("CARGO_BIN_EXE_sdfgc"))
        .env("SDFGC_CACHE_DIR", &cache)
        .env("PYTHONPATH", root.join("python"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Waiting ranks yield the CPU (the ranks outnumber the cores).
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .output()
        .expect("mpirun runs (Open MPI: scripts/install-test-tools.sh)");
    let _ = std::fs::remove_dir_all(&cache);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "run_mpi.py check failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    // 11 cases x 2 calls x 4 ranks.
    assert!(
        stdout.contains("88 of 88 rank-runs match DaCe"),
        "{stdout}\n{stderr}"
    );
}
