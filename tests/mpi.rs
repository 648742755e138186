//! DaCe's MPI library nodes end to end: the fixtures of `fixtures/mpi`
//! (SDFGs saved by DaCe 1.0.2, DaCe's own outputs per rank) run under
//! `mpirun -np K` through `fixtures/mpi/run_mpi.py check`: sdfgc's library
//! on DaCe's ABI, called twice per rank; every array must equal DaCe's on
//! that number of ranks. 4 ranks in the external mode (a workspace per rank,
//! poisoned with 0xFF bytes), 3 in external and scoped, 2 (the process-grid
//! cases) in persistent, 1 in the SDFG's own lifetimes (every mode on every
//! size: `run_mpi.py check` by hand, see docs/mpi.md). Needs Open MPI and mpi4py in build/venv-dace
//! (scripts/install-test-tools.sh; `$SDFGC_MPI_PYTHON` names another Python).
//! The fixtures DaCe 2.x saved (`<case>.v2.sdfg`, descriptors for grids,
//! subarrays and redistributions) run on 4 ranks in the external mode
//! against DaCe 2.x's outputs, with build/venv-gt4py's Python
//! (`$SDFGC_MPI_PYTHON_V2`).
//!
//! The generated files of every fixture (default and external modes) are
//! snapshots, and each builds with `-Wall -Wextra -Werror` and MPI's flags
//! (`mpicxx --showme`).

#[path = "common/cxx.rs"]
mod cxx;

use std::path::PathBuf;
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture: `fixtures/mpi/<case>.sdfg` (DaCe 1.0.2) and
/// `fixtures/mpi/<case>.v2.sdfg` (DaCe 2.x).
fn files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/mpi"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sdfg"))
        .collect();
    out.sort();
    assert!(out.len() >= 21, "only {} MPI fixtures", out.len());
    out
}

/// The two modes the files are snapshotted and built in.
const MODES: [Option<Mode>; 2] = [None, Some(Mode::External)];

fn generate(file: &std::path::Path, mode: Option<Mode>) -> Vec<(String, String)> {
    let opts = CompileOptions {
        mode,
        ..CompileOptions::new(Target::Cpp)
    };
    sdfgc::driver::generate(file, &opts).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn generated_code_matches_the_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for file in files() {
            for mode in MODES {
                // `<case>.v2.sdfg` (DaCe 2.x): `mpi_<case>_v2__...`.
                let stem = file
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .replace('.', "_");
                let mode_name = mode
                    .map(|m| format!("{m:?}").to_lowercase())
                    .unwrap_or_else(|| "default".into());
                for (name, text) in generate(&file, mode) {
                    let ext = name.rsplit('.').next().unwrap_or("txt");
                    let key = format!("mpi_{stem}__cpp__{mode_name}__{ext}").to_lowercase();
                    insta::assert_snapshot!(key, text);
                }
            }
        }
    });
}

/// `mpicxx --showme:<what>`, split into arguments.
fn mpi_flags(what: &str) -> Vec<String> {
    let out = Command::new("mpicxx")
        .arg(format!("--showme:{what}"))
        .output()
        .expect("mpicxx runs (Open MPI: scripts/install-test-tools.sh)");
    assert!(out.status.success(), "mpicxx --showme:{what} failed");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_program_builds_without_warnings() {
    let work = tempfile::tempdir().unwrap();
    let mut flags: Vec<String> = [
        "-std=c++17",
        "-O2",
        "-fopenmp",
        "-fPIC",
        "-shared",
        "-Wall",
        "-Wextra",
        "-Werror",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(mpi_flags("compile"));
    flags.extend(mpi_flags("link"));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    for file in files() {
        for mode in MODES {
            let outs = generate(&file, mode);
            let (name, text) = outs
                .iter()
                .find(|(n, _)| n.ends_with(".cpp"))
                .expect("a .cpp file");
            let src = work.path().join(name);
            std::fs::write(&src, text).unwrap();
            let o = cxx::shared_library(&flags, &src, &work.path().join("lib.so"))
                .expect("run the C++ compiler");
            assert!(
                o.status.success(),
                "{} ({mode:?}) does not build:\n{}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

/// The Python with DaCe 1.0.2 (or, `v2`, DaCe 2.x) and mpi4py:
/// `$SDFGC_MPI_PYTHON` (`$SDFGC_MPI_PYTHON_V2`), else build/venv-dace
/// (build/venv-gt4py).
fn python(v2: bool) -> PathBuf {
    let (var, venv) = if v2 {
        ("SDFGC_MPI_PYTHON_V2", "build/venv-gt4py/bin/python")
    } else {
        ("SDFGC_MPI_PYTHON", "build/venv-dace/bin/python")
    };
    match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(venv),
    }
}

/// Runs `run_mpi.py check` on `ranks` processes in `modes` and asserts that
/// all `rank_runs` (cases x modes x 2 calls x ranks) match DaCe.
fn check_on(ranks: u32, modes: &str, rank_runs: u32) {
    check_with(python(false), ranks, modes, rank_runs);
}

/// [`check_on`] with a given Python: its DaCe picks the fixtures
/// (`<case>.v2.sdfg` and their references under DaCe 2.x).
fn check_with(python: PathBuf, ranks: u32, modes: &str, rank_runs: u32) {
    let root = root();
    let cache = std::env::temp_dir().join(format!(
        "sdfgc-mpi-test-{}-{ranks}-{}",
        std::process::id(),
        rank_runs
    ));
    let out = Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &ranks.to_string(),
        ])
        .arg(python)
        .arg(root.join("fixtures/mpi/run_mpi.py"))
        .args(["check", "--modes", modes])
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
        "run_mpi.py check on {ranks} ranks failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let want = format!("{rank_runs} of {rank_runs} rank-runs match DaCe");
    assert!(
        stdout.contains(&want),
        "expected '{want}':\n{stdout}\n{stderr}"
    );
}

#[test]
fn mpi_fixtures_match_dace_on_4_ranks() {
    // 11 cases x 2 calls x 4 ranks.
    check_on(4, "external", 88);
}

#[test]
fn mpi_fixtures_match_dace_on_3_ranks() {
    // 8 cases (no 2 x P/2 grid on 3 ranks) x 2 modes x 2 calls x 3 ranks.
    check_on(3, "external,scoped", 96);
}

#[test]
fn mpi_fixtures_match_dace_on_2_ranks() {
    // The 3 process-grid cases x 2 calls x 2 ranks.
    check_on(2, "persistent", 12);
}

#[test]
fn mpi_fixtures_match_dace_on_1_rank() {
    // 8 cases x 2 calls on one rank.
    check_on(1, "default", 16);
}

#[test]
fn dace_2_mpi_fixtures_match_dace_2_on_4_ranks() {
    // The DaCe 2.x fixtures (`<case>.v2.sdfg`: process grids, subarrays and
    // redistributions as data descriptors; no `ring`) against DaCe 2.x's own
    // library, through DaCe 2.x's CompiledSDFG: 10 cases x 2 calls x 4 ranks.
    check_with(python(true), 4, "external", 80);
}
