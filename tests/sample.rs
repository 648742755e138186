//! `--emit-sample`: the generated `<name>_main.cpp` builds with the library,
//! runs, takes symbol values from its command line, sets up the workspace
//! through the checked setter, and prints checksums that are finite and the
//! same in the default and the external memory mode.

use std::collections::BTreeMap;
#[path = "common/cxx.rs"]
mod cxx;

use std::path::{Path, PathBuf};
use std::process::Command;

const SDFGC: &str = env!("CARGO_BIN_EXE_sdfgc");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(c: &mut Command) -> String {
    let o = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{c:?} failed:\n{text}");
    text
}

/// Generates with `--emit-sample` into `dir`, builds `<name>_main` from the
/// sample and the library's source; returns the executable.
fn build_sample(sdfg: &Path, mode: Option<&str>, dir: &Path, name: &str) -> PathBuf {
    let mut c = Command::new(SDFGC);
    c.arg(sdfg).arg("--emit-sample").arg("-o").arg(dir);
    if let Some(m) = mode {
        c.args(["--mode", m]);
    }
    run(&mut c);
    let exe = dir.join(format!("{name}_main"));
    // The sample itself compiles without any warning.
    run(cxx::cxx()
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-c",
        ])
        .arg(dir.join(format!("{name}_main.cpp")))
        .arg("-o")
        .arg(dir.join("main.o")));
    run(cxx::cxx()
        .args(["-std=c++17", "-O1", "-fopenmp", "-c"])
        .arg(dir.join(format!("{name}.cpp")))
        .arg("-o")
        .arg(dir.join("lib.o")));
    run(cxx::cxx()
        .arg("-fopenmp")
        .arg(dir.join("main.o"))
        .arg(dir.join("lib.o"))
        .arg("-o")
        .arg(&exe));
    exe
}

/// The `checksum NAME: VALUE` lines of a sample's output.
fn checksums(out: &str) -> BTreeMap<String, f64> {
    out.lines()
        .filter_map(|l| l.strip_prefix("checksum "))
        .map(|l| {
            let (n, v) = l.split_once(": ").expect("checksum line");
            (n.to_string(), v.trim().parse::<f64>().expect("a number"))
        })
        .collect()
}

fn case(dir_name: &str, name: &str, expect_outputs: &[&str]) {
    let sdfg = repo()
        .join("fixtures/corpus")
        .join(dir_name)
        .join("program.sdfg");
    let mut results = Vec::new();
    for mode in [None, Some("external")] {
        let dir = tempfile::tempdir().unwrap();
        let exe = build_sample(&sdfg, mode, dir.path(), name);
        let out = run(Command::new(&exe).args(["--iterations", "3"]));
        assert!(out.contains("time per call:"), "{out}");
        assert!(out.contains("(mean of 3 calls)"), "{out}");
        let sums = checksums(&out);
        assert_eq!(
            sums.keys().map(String::as_str).collect::<Vec<_>>(),
            expect_outputs,
            "{mode:?}: {out}"
        );
        for (n, v) in &sums {
            assert!(
                v.is_finite(),
                "{dir_name} {mode:?}: checksum {n} = {v}\n{out}"
            );
        }
        if mode.is_some() || out.contains("workspace ") {
            assert!(
                out.contains("workspace CPU_Heap: ") && out.contains("alignment 64"),
                "{mode:?}: no workspace set up:\n{out}"
            );
        }
        results.push(sums);
    }
    assert_eq!(
        results[0], results[1],
        "{dir_name}: checksums differ between default and external mode"
    );
}

#[test]
fn jacobi_1d_sample() {
    case("jacobi_1d", "cases_dev_jacobi_1d", &["A", "B"]);
}

#[test]
fn seed_external_2d_sample() {
    // Has External transients in the SDFG itself: a workspace in both modes.
    case("seed_external_2d", "external_memory_2d_builder", &["e"]);
}

#[test]
fn softmax_sample() {
    case("softmax", "cases_dev_softmax", &["__return"]);
}

#[test]
fn sample_takes_symbols_from_the_command_line_and_links_as_a_library() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = "cases_dev_jacobi_1d";
    run(Command::new(SDFGC)
        .arg(repo().join("fixtures/corpus/jacobi_1d/program.sdfg"))
        .args(["--emit-sample", "--mode", "external", "-o"])
        .arg(d));
    // As the sample's comment says: a shared library, and the sample linked against it.
    run(cxx::cxx()
        .args(["-std=c++17", "-O1", "-fopenmp", "-fPIC", "-shared"])
        .arg(d.join(format!("{name}.cpp")))
        .arg("-o")
        .arg(d.join(format!("lib{name}.so"))));
    run(cxx::cxx()
        .args(["-std=c++17", "-O1"])
        .arg(d.join(format!("{name}_main.cpp")))
        .arg(format!("-L{}", d.display()))
        .arg(format!("-l{name}"))
        .arg(format!("-Wl,-rpath,{}", d.display()))
        .arg("-o")
        .arg(d.join("sample")));
    let exe = d.join("sample");
    let help = run(Command::new(&exe).arg("--help"));
    assert!(
        help.contains("N: int (default 16): extent of A (dim 0)"),
        "{help}"
    );
    assert!(
        help.contains("TSTEPS: int (default 16): scalar argument"),
        "{help}"
    );

    let small = run(Command::new(&exe).args(["--N", "40", "TSTEPS=5", "--iterations=2"]));
    assert!(
        small.contains("  N = 40\n") && small.contains("  TSTEPS = 5\n"),
        "{small}"
    );
    assert!(small.contains("(mean of 2 calls)"), "{small}");
    // The workspace grows with N (one shelf of (N - 2) doubles, 64-byte
    // aligned: the four temporaries are disjoint or meet at in-place maps).
    assert!(small.contains("workspace CPU_Heap: 320 bytes"), "{small}");
    let default = run(&mut Command::new(&exe));
    assert_ne!(checksums(&small), checksums(&default));

    // Usage errors exit 2.
    for bad in [
        vec!["--nope", "1"],
        vec!["--N", "x"],
        vec!["stray"],
        vec!["--N"],
    ] {
        let o = Command::new(&exe).args(&bad).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}
