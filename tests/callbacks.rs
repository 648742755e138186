//! Programs that call back into Python (DaCe's `callback` symbols;
//! `fixtures/callbacks`, made by `scripts/make-callback-fixtures.py` with
//! DaCe 1.0.2 and 2.0.0a10): the generated files of each are snapshots;
//! each builds with `-Wall -Wextra -Werror` in the default and external
//! modes, its header as C too; and each runs through DaCe's own `CompiledSDFG` (1.0.2 for
//! `program.sdfg`, 2.0.0a10 for `program.v2.sdfg`) with Python functions as
//! the callbacks, its outputs and the calls the callbacks saw compared with
//! plain Python's (`make-callback-fixtures.py --check`).
//!
//! Needs `build/venv-dace` and `build/venv-gt4py` (made by
//! `bash scripts/install-test-tools.sh`); the test fails, never skips,
//! without them.

#[path = "common/cxx.rs"]
mod cxx;

use std::path::PathBuf;
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target};

const SDFGC: &str = env!("CARGO_BIN_EXE_sdfgc");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every fixture file: `fixtures/callbacks/<program>/program[.v2].sdfg`.
fn files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root().join("fixtures/callbacks")).unwrap() {
        let dir = e.unwrap().path();
        for f in ["program.sdfg", "program.v2.sdfg"] {
            if dir.join(f).exists() {
                out.push(dir.join(f));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 10, "only {} callback fixtures", out.len());
    out
}

#[test]
fn generated_code_matches_the_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for file in files() {
            let outs = sdfgc::driver::generate(&file, &CompileOptions::new(Target::Cpp))
                .unwrap_or_else(|e| panic!("{e}"));
            let rel = file
                .strip_prefix(root().join("fixtures"))
                .unwrap()
                .display()
                .to_string();
            for (name, text) in outs {
                let ext = name.rsplit('.').next().unwrap_or("txt");
                let key =
                    format!("{}__cpp__default__{ext}", rel.replace(['/', '.'], "_")).to_lowercase();
                insta::assert_snapshot!(key, text);
            }
        }
    });
}

#[test]
fn every_program_builds_without_warnings() {
    let work = tempfile::tempdir().unwrap();
    for file in files() {
        for mode in [None, Some(Mode::External)] {
            let opts = CompileOptions {
                mode,
                ..CompileOptions::new(Target::Cpp)
            };
            let outs = sdfgc::driver::generate(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
            let (name, text) = outs
                .iter()
                .find(|(n, _)| n.ends_with(".cpp"))
                .expect("a .cpp file");
            let src = work.path().join(name);
            std::fs::write(&src, text).unwrap();
            let lib = work.path().join("lib.so");
            let o = cxx::shared_library(
                &[
                    "-std=c++17",
                    "-O2",
                    "-fopenmp",
                    "-fPIC",
                    "-shared",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                ],
                &src,
                &lib,
            )
            .expect("run the C++ compiler");
            assert!(
                o.status.success(),
                "{} ({mode:?}) does not build:\n{}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            // The header declares the callback parameters in plain C too.
            let (hname, htext) = outs
                .iter()
                .find(|(n, _)| n.ends_with(".h"))
                .expect("a header");
            let header = work.path().join(hname);
            std::fs::write(&header, htext).unwrap();
            let o = cxx::cc()
                .args([
                    "-x",
                    "c",
                    "-std=c11",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-fsyntax-only",
                ])
                .arg(&header)
                .output()
                .expect("run the C compiler");
            assert!(
                o.status.success(),
                "the header of {} is not C:\n{}",
                file.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
}

fn venv_python(venv: &str) -> PathBuf {
    let p = root().join("build").join(venv).join("bin/python");
    assert!(
        p.is_file(),
        "{} not found: run `bash scripts/install-test-tools.sh`",
        p.display()
    );
    p
}

/// `make-callback-fixtures.py --check` in `venv` with this sdfgc and this
/// checkout's Python package.
fn check(venv: &str, mode: Option<&str>) {
    let work = tempfile::tempdir().unwrap();
    let mut c = Command::new(venv_python(venv));
    c.arg(root().join("scripts/make-callback-fixtures.py"))
        .arg("--check")
        .arg(root().join("fixtures/callbacks"))
        .current_dir(work.path())
        .env("SDFGC", SDFGC)
        .env("PYTHONPATH", root().join("python"))
        .env("SDFGC_CACHE_DIR", work.path().join("cache"))
        .env("DACE_CONFIG", work.path().join(".dace.conf"))
        .env("DACE_default_build_folder", work.path().join(".dacecache"))
        .env_remove("SDFGC_DACE");
    if let Some(m) = mode {
        c.args(["--mode", m]);
    }
    let o = c.output().expect("run python");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && stdout.lines().filter(|l| l.starts_with("ok ")).count() >= 5,
        "{venv} {mode:?}:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn callbacks_run_through_dace_1() {
    check("venv-dace", None);
    check("venv-dace", Some("external"));
}

#[test]
fn callbacks_run_through_dace_2() {
    check("venv-gt4py", None);
}
