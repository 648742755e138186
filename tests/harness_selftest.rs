//! Validates the run harness (`tests/common/harness.rs`) against
//! hand-written implementations of the corpus cases `jacobi_1d`
//! (`tests/harness_selftest/jacobi_1d.cpp`) and `structure_members` (a
//! structure argument: `structure_members.cpp`), built with g++ in several
//! deliberately broken flavours. These tests need g++ and fail without it.

mod common;

use common::harness::{RunOptions, RunReport, run_case};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn case_dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus")
        .join(case)
}

/// A built copy of the validation library; the directory lives as long as
/// the value.
struct Lib {
    _dir: TempDir,
    path: PathBuf,
}

/// Builds `jacobi_1d.cpp` with the given `-D` switches.
fn build_lib(defines: &[&str]) -> Lib {
    build_source("jacobi_1d", defines)
}

/// Builds `tests/harness_selftest/<name>.cpp` with the given `-D` switches.
fn build_source(name: &str, defines: &[&str]) -> Lib {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/harness_selftest")
        .join(format!("{name}.cpp"));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("lib{name}.so"));
    let out = common::cxx::cxx()
        .args(["-std=c++17", "-O2", "-shared", "-fPIC"])
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(&src)
        .arg("-o")
        .arg(&path)
        .output()
        .expect("g++ is required to build the validation library");
    assert!(
        out.status.success(),
        "g++ failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Lib { _dir: dir, path }
}

fn run(lib: &Lib, opts: &RunOptions) -> RunReport {
    run_case(&case_dir("jacobi_1d"), &lib.path, opts).expect("harness error")
}

fn external() -> RunOptions {
    RunOptions::variant("program.external.sdfg")
}

#[test]
fn reference_implementation_passes() {
    let lib = build_lib(&[]);
    let report = run(&lib, &RunOptions::default());
    assert!(report.ok, "{}", report.message);
    assert!(
        report.message.contains("OUTPUT A call=2 ok"),
        "{}",
        report.message
    );
    assert!(
        report.message.contains("OUTPUT B call=2 ok"),
        "{}",
        report.message
    );
    assert_eq!(report.allocs_per_call, None);
    assert!(report.workspace_bytes.is_empty());
}

#[test]
fn perturbed_output_fails() {
    let lib = build_lib(&["PERTURB"]);
    let report = run(&lib, &RunOptions::default());
    assert!(!report.ok);
    assert!(
        report.message.contains("OUTPUT A call=1 FAIL bad=1/400")
            && report.message.contains("first_bad=[200]"),
        "{}",
        report.message
    );
    assert!(
        report.message.contains("OUTPUT B call=2 ok"),
        "{}",
        report.message
    );
}

#[test]
fn alloc_counter_sees_no_allocation() {
    let lib = build_lib(&[]);
    let opts = RunOptions {
        count_allocs: true,
        ..RunOptions::default()
    };
    let report = run(&lib, &opts);
    assert!(report.ok, "{}", report.message);
    assert_eq!(report.allocs_per_call, Some(0), "{}", report.message);
}

#[test]
fn alloc_counter_sees_one_allocation() {
    let lib = build_lib(&["ALLOC_IN_CALL"]);
    let opts = RunOptions {
        count_allocs: true,
        repeat: 1, // raised to 2 (warm-up + counted call)
        ..RunOptions::default()
    };
    let report = run(&lib, &opts);
    assert!(report.ok, "{}", report.message);
    assert_eq!(report.allocs_per_call, Some(1), "{}", report.message);
}

#[test]
fn external_workspace_exact_and_poisoned_passes() {
    let lib = build_lib(&["EXTERNAL"]);
    let opts = RunOptions {
        poison: true,
        workspace_exact: true,
        repeat: 3,
        ..external()
    };
    let report = run(&lib, &opts);
    assert!(report.ok, "{}", report.message);
    // DaCe's own size for program.external.sdfg (case.json dace_workspace_bytes).
    assert_eq!(
        report.workspace_bytes,
        vec![("CPU_Heap".to_string(), 12736)]
    );
}

#[test]
fn workspace_is_set_up_when_exported_but_not_listed() {
    // program.sdfg lists no external memory; the library exports it anyway.
    let lib = build_lib(&["EXTERNAL"]);
    let report = run(&lib, &RunOptions::variant("program.sdfg"));
    assert!(report.ok, "{}", report.message);
    assert_eq!(
        report.workspace_bytes,
        vec![("CPU_Heap".to_string(), 12736)]
    );
}

#[test]
fn workspace_overrun_is_detected() {
    let lib = build_lib(&["EXTERNAL", "OVERRUN"]);
    let opts = RunOptions {
        workspace_exact: true,
        ..external()
    };
    let report = run(&lib, &opts);
    assert!(!report.ok);
    assert!(
        report
            .message
            .contains("workspace_overrun CPU_Heap: 1 bytes"),
        "{}",
        report.message
    );
}

#[test]
fn poison_reveals_uninitialised_workspace_reads() {
    let lib = build_lib(&["EXTERNAL", "READ_WS_UNINIT"]);
    let clean = run(&lib, &external());
    assert!(clean.ok, "{}", clean.message);
    let poisoned = run(
        &lib,
        &RunOptions {
            poison: true,
            ..external()
        },
    );
    assert!(!poisoned.ok, "{}", poisoned.message);
    assert!(
        poisoned.message.contains("OUTPUT A call=1 FAIL"),
        "{}",
        poisoned.message
    );
}

#[test]
fn repeated_calls_reveal_state_carried_between_calls() {
    let lib = build_lib(&["STATEFUL"]);
    let once = run(
        &lib,
        &RunOptions {
            repeat: 1,
            ..RunOptions::default()
        },
    );
    assert!(once.ok, "{}", once.message);
    let twice = run(&lib, &RunOptions::default());
    assert!(!twice.ok);
    assert!(
        twice.message.contains("OUTPUT B call=2 FAIL"),
        "{}",
        twice.message
    );
}

#[test]
fn nonzero_exit_code_fails() {
    let lib = build_lib(&["EXIT_FAIL"]);
    let report = run(&lib, &RunOptions::default());
    assert!(!report.ok);
    assert!(
        report.message.contains("__dace_exit returned 1"),
        "{}",
        report.message
    );
}

#[test]
fn missing_export_fails_without_crashing() {
    // Built without EXTERNAL: the size query is optional, but a library that
    // is not a jacobi_1d library at all misses the program symbol.
    let lib = build_lib(&[]);
    let report =
        run_case(&case_dir("atax"), &lib.path, &RunOptions::default()).expect("harness error");
    assert!(!report.ok);
    assert!(
        report.message.contains("missing export __dace_init_"),
        "{}",
        report.message
    );
}

#[test]
fn unknown_variant_is_a_harness_error() {
    let lib = build_lib(&[]);
    let err = run_case(
        &case_dir("jacobi_1d"),
        &lib.path,
        &RunOptions::variant("nope.sdfg"),
    )
    .unwrap_err();
    assert!(err.contains("nope.sdfg"), "{err}");
}

#[test]
fn stated_signature_must_equal_dace_abi() {
    let right = build_lib(&["SIGNATURE_RIGHT"]);
    let report = run(&right, &RunOptions::default());
    assert!(report.ok, "{}", report.message);
    let wrong = build_lib(&["SIGNATURE_WRONG"]);
    let report = run(&wrong, &RunOptions::default());
    assert!(!report.ok);
    assert!(
        report
            .message
            .contains("parameter lists differ from DaCe's")
            && report.message.contains("__B_stride"),
        "{}",
        report.message
    );
}

/// `structure_members` run by `lib`; `scalar_output` adds the scalar member
/// `S.shift` (unchanged: its input is its reference) to the case's outputs.
fn run_structure(lib: &Lib, opts: &RunOptions, scalar_output: bool) -> RunReport {
    let src = case_dir("structure_members");
    let dir = tempfile::tempdir().expect("temp dir");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    if scalar_output {
        let path = dir.path().join("case.json");
        let mut case: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        case["outputs"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "name": "S.shift", "file": "S.shift.in.bin", "dtype": "int32", "shape": [1],
                "rtol": 0.0, "atol": 0.0
            }));
        std::fs::write(&path, case.to_string()).unwrap();
    }
    run_case(dir.path(), &lib.path, opts).expect("harness error")
}

#[test]
fn structure_argument_is_built_as_dace_declares_it() {
    let lib = build_source("structure_members", &[]);
    for sanitize in [false, true] {
        let opts = RunOptions {
            sanitize,
            ..RunOptions::default()
        };
        // Sanitized: the driver's own handling of the struct (fill, restore,
        // compare in it) is checked; the library is not instrumented.
        let report = run_structure(&lib, &opts, true);
        assert!(report.ok, "{}", report.message);
        for out in ["out", "gath", "S.vals", "S.p.w", "S.shift"] {
            assert!(
                report.message.contains(&format!("OUTPUT {out} call=2 ok")),
                "{}",
                report.message
            );
        }
    }
}

#[test]
fn structure_member_outputs_are_compared() {
    let lib = build_source("structure_members", &["NO_MEMBER_WRITE"]);
    let report = run_structure(&lib, &RunOptions::default(), false);
    assert!(!report.ok);
    assert!(
        report.message.contains("OUTPUT S.p.w call=1 FAIL"),
        "{}",
        report.message
    );
}

#[test]
fn structure_scalar_member_is_compared_in_the_struct_and_restored() {
    let lib = build_source("structure_members", &["BUMP_SHIFT"]);
    // The struct is restored before every call: the second call reads the
    // original S.shift again.
    let report = run_structure(&lib, &RunOptions::default(), false);
    assert!(report.ok, "{}", report.message);
    let report = run_structure(&lib, &RunOptions::default(), true);
    assert!(!report.ok);
    assert!(
        report.message.contains("OUTPUT S.shift call=1 FAIL"),
        "{}",
        report.message
    );
}
