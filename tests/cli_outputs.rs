//! How the command line writes its outputs: `--depfile`, `--verify`, atomic
//! writes (no temporary or partial files), and write-if-changed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

const SDFGC: &str = env!("CARGO_BIN_EXE_sdfgc");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(case: &str) -> PathBuf {
    repo()
        .join("fixtures/corpus")
        .join(case)
        .join("program.sdfg")
}

/// The SDFG name of the jacobi_1d and seed_external_2d fixtures.
const JACOBI: &str = "cases_dev_jacobi_1d";
const SEED: &str = "external_memory_2d_builder";

fn sdfgc(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = Command::new(SDFGC);
    for a in args {
        c.arg(a);
    }
    c.output().expect("run sdfgc")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every file name in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Sets a file's modification time into the past, so that a rewrite is visible
/// even on file systems with coarse timestamps.
fn age(p: &Path) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

#[test]
fn depfile_names_outputs_input_and_executable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gen");
    let dep = dir.path().join("deps/program.d");
    let input = fixture("jacobi_1d");
    let o = sdfgc(&[&input, &"-o", &out, &"--depfile", &dep, &"--emit-sample"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&dep).unwrap();
    let exe = std::fs::canonicalize(SDFGC).unwrap();
    let expected = format!(
        "{} {} {}: {} {}\n",
        out.join(format!("{JACOBI}.cpp")).display(),
        out.join(format!("{JACOBI}.h")).display(),
        out.join(format!("{JACOBI}_main.cpp")).display(),
        input.display(),
        exe.display()
    );
    assert_eq!(text, expected);
    // Every path named in the rule exists.
    for p in text.split_whitespace().map(|s| s.trim_end_matches(':')) {
        assert!(Path::new(p).exists(), "{p} does not exist");
    }
}

#[test]
fn depfile_has_one_rule_per_input_and_escapes_paths() {
    let dir = tempfile::tempdir().unwrap();
    // A space and a '#' in the output directory must be escaped for Make/Ninja.
    let out = dir.path().join("gen dir#1");
    let dep = dir.path().join("all.d");
    let a = fixture("jacobi_1d");
    let b = fixture("seed_external_2d");
    let o = sdfgc(&[&a, &b, &"-o", &out, &"--depfile", &dep]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&dep).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let esc = |p: &Path| {
        p.display()
            .to_string()
            .replace(' ', "\\ ")
            .replace('#', "\\#")
    };
    assert!(lines[0].starts_with(&format!(
        "{} {}: {} ",
        esc(&out.join(format!("{JACOBI}.cpp"))),
        esc(&out.join(format!("{JACOBI}.h"))),
        esc(&a)
    )));
    assert!(lines[1].starts_with(&format!(
        "{} {}: {} ",
        esc(&out.join(format!("{SEED}.cpp"))),
        esc(&out.join(format!("{SEED}.h"))),
        esc(&b)
    )));
}

#[test]
fn depfile_lists_only_inputs_that_compiled() {
    let dir = tempfile::tempdir().unwrap();
    let dep = dir.path().join("x.d");
    let bad = repo().join("tests/bad/02_truncated.sdfg");
    let good = fixture("jacobi_1d");
    let o = sdfgc(&[&bad, &good, &"-o", &dir.path(), &"--depfile", &dep]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = std::fs::read_to_string(&dep).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(&format!("{JACOBI}.cpp")), "{text}");
}

#[test]
fn verify_passes_when_up_to_date_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("seed_external_2d");
    let o = sdfgc(&[&input, &"-o", &dir.path(), &"--mode", &"external"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = listing(dir.path());
    let times: Vec<SystemTime> = before.iter().map(|n| mtime(&dir.path().join(n))).collect();
    let o = sdfgc(&[
        &input,
        &"-o",
        &dir.path(),
        &"--mode",
        &"external",
        &"--verify",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(listing(dir.path()), before);
    let after: Vec<SystemTime> = before.iter().map(|n| mtime(&dir.path().join(n))).collect();
    assert_eq!(times, after);
}

#[test]
fn verify_names_differing_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("jacobi_1d");
    let o = sdfgc(&[&input, &"-o", &dir.path()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cpp = dir.path().join(format!("{JACOBI}.cpp"));
    let h = dir.path().join(format!("{JACOBI}.h"));
    std::fs::write(&cpp, "// edited by hand\n").unwrap();
    std::fs::remove_file(&h).unwrap();
    let o = sdfgc(&[&input, &"-o", &dir.path(), &"--verify"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{} (differs)", cpp.display())),
        "{err}"
    );
    assert!(err.contains(&format!("{} (missing)", h.display())), "{err}");
    // Nothing was written or repaired.
    assert_eq!(
        std::fs::read_to_string(&cpp).unwrap(),
        "// edited by hand\n"
    );
    assert!(!h.exists());
    assert_eq!(listing(dir.path()), vec![format!("{JACOBI}.cpp")]);
}

#[test]
fn verify_detects_changed_options() {
    // Files generated in one mode are out of date for another.
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("gemm_maps_wcr");
    let o = sdfgc(&[&input, &"-o", &dir.path()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = sdfgc(&[
        &input,
        &"-o",
        &dir.path(),
        &"--mode",
        &"external",
        &"--verify",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("(differs)"), "{}", stderr(&o));
}

#[test]
fn verify_and_depfile_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let o = sdfgc(&[
        &fixture("jacobi_1d"),
        &"-o",
        &dir.path(),
        &"--verify",
        &"--depfile",
        &dir.path().join("d"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn second_identical_run_rewrites_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let dep = dir.path().join("p.d");
    let input = fixture("seed_external_2d");
    let args: [&dyn AsRef<std::ffi::OsStr>; 6] = [
        &input,
        &"-o",
        &dir.path(),
        &"--emit-sample",
        &"--depfile",
        &dep,
    ];
    let o = sdfgc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let names = listing(dir.path());
    assert_eq!(names.len(), 4, "{names:?}");
    for n in &names {
        age(&dir.path().join(n));
    }
    let before: Vec<SystemTime> = names.iter().map(|n| mtime(&dir.path().join(n))).collect();
    let o = sdfgc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let after: Vec<SystemTime> = names.iter().map(|n| mtime(&dir.path().join(n))).collect();
    assert_eq!(before, after, "an identical run rewrote files");
    assert_eq!(listing(dir.path()), names);

    // A change rewrites exactly the files whose bytes change.
    let o = sdfgc(&[
        &fixture("seed_external_2d"),
        &"-o",
        &dir.path(),
        &"--emit-sample",
        &"--depfile",
        &dep,
        &"--workspace-align",
        &"128",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cpp = dir.path().join(format!("{SEED}.cpp"));
    assert!(
        mtime(&cpp)
            > before[names
                .iter()
                .position(|n| *n == format!("{SEED}.cpp"))
                .unwrap()]
    );
    let dep_index = names.iter().position(|n| n == "p.d").unwrap();
    assert_eq!(mtime(&dep), before[dep_index], "the depfile did not change");
}

#[test]
fn failing_input_leaves_no_partial_output_and_spares_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    // Outputs of an earlier, successful run of another file.
    let o = sdfgc(&[&fixture("seed_external_2d"), &"-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    // An unrelated file and an existing output of the failing input's name.
    std::fs::write(out.join("notes.txt"), "keep me\n").unwrap();
    for n in listing(out) {
        age(&out.join(&n));
    }
    let before: Vec<(String, SystemTime, Vec<u8>)> = listing(out)
        .into_iter()
        .map(|n| {
            let p = out.join(&n);
            (n, mtime(&p), std::fs::read(&p).unwrap())
        })
        .collect();
    for bad in ["02_truncated.sdfg", "05_top_level_array.sdfg"] {
        let o = sdfgc(&[
            &repo().join("tests/bad").join(bad),
            &fixture("seed_external_2d"),
            &"-o",
            &out,
        ]);
        assert_eq!(o.status.code(), Some(1), "{bad}: {}", stderr(&o));
        let after: Vec<(String, SystemTime, Vec<u8>)> = listing(out)
            .into_iter()
            .map(|n| {
                let p = out.join(&n);
                (n, mtime(&p), std::fs::read(&p).unwrap())
            })
            .collect();
        assert_eq!(before, after, "{bad}: outputs were touched or added");
    }
}

#[test]
fn no_temporary_files_are_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gen");
    let files = [
        fixture("jacobi_1d"),
        fixture("seed_external_2d"),
        fixture("softmax"),
    ];
    for round in 0..2 {
        let mut c = Command::new(SDFGC);
        c.args(&files)
            .arg("-o")
            .arg(&out)
            .arg("--emit-sample")
            .arg("--depfile")
            .arg(out.join("all.d"));
        if round == 1 {
            c.args(["--mode", "external"]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let names = listing(&out);
        assert_eq!(names.len(), 3 * 3 + 1, "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| !n.starts_with('.') && !n.contains(".tmp")),
            "{names:?}"
        );
    }
}

#[test]
fn unwritable_output_fails_cleanly() {
    // The output "directory" is a file: an I/O error, exit 1, nothing else written.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("out");
    std::fs::write(&blocker, "not a directory").unwrap();
    let o = sdfgc(&[&fixture("jacobi_1d"), &"-o", &blocker]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("I/O error"), "{}", stderr(&o));
    assert_eq!(listing(dir.path()), vec!["out".to_string()]);
}

#[test]
fn failed_write_leaves_no_temporary_files() {
    // A set whose second file cannot be renamed into place: an error, and no temporary file left.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    std::fs::write(out.join("a.cpp"), "old a\n").unwrap();
    std::fs::create_dir(out.join("b.h")).unwrap(); // renaming a file onto a directory fails
    let outs = vec![
        ("a.cpp".to_string(), "new a\n".to_string()),
        ("b.h".to_string(), "new b\n".to_string()),
    ];
    let r = sdfgc::driver::write_outputs(out, &outs);
    assert!(r.is_err());
    // a.cpp may have been renamed before b.h failed; but no temporary file is left.
    let names = listing(out);
    assert!(
        names.iter().all(|n| !n.contains(".tmp")),
        "temporary files left: {names:?}"
    );
    // Writing the same contents again is a no-op for an up-to-date file.
    let outs = vec![("c.cpp".to_string(), "c\n".to_string())];
    sdfgc::driver::write_outputs(out, &outs).unwrap();
    age(&out.join("c.cpp"));
    let t = mtime(&out.join("c.cpp"));
    sdfgc::driver::write_outputs(out, &outs).unwrap();
    assert_eq!(mtime(&out.join("c.cpp")), t);
}

/// Many files in one run (generated in parallel) give the same bytes as one
/// run per file, and errors come in the order the files were given.
#[test]
fn many_files_in_one_run_match_single_runs_and_report_errors_in_order() {
    let cases = [
        "jacobi_1d",
        "atax",
        "softmax",
        "heat_3d",
        "nested_program",
        "seidel_2d",
        "view_slice",
        "wcr_sum_rows",
    ];
    let all = tempfile::tempdir().unwrap();
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = Vec::new();
    let files: Vec<PathBuf> = cases.iter().map(|c| fixture(c)).collect();
    for f in &files {
        args.push(f);
    }
    let o_flag = "-o";
    let all_path = all.path().to_path_buf();
    args.push(&o_flag);
    args.push(&all_path);
    let o = sdfgc(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in &files {
        let one = tempfile::tempdir().unwrap();
        let o = sdfgc(&[f, &"-o", &one.path()]);
        assert!(o.status.success(), "{}", stderr(&o));
        for n in listing(one.path()) {
            assert_eq!(
                std::fs::read(one.path().join(&n)).unwrap(),
                std::fs::read(all.path().join(&n)).unwrap(),
                "{n} differs between the single and the many-file run"
            );
        }
    }
    // Two bad files around good ones: both reported, in input order.
    let bad = |n: &str| repo().join("tests/bad").join(n);
    let (b1, b2) = (bad("05_top_level_array.sdfg"), bad("02_truncated.sdfg"));
    let out = tempfile::tempdir().unwrap();
    let o = sdfgc(&[&b1, &files[0], &b2, &files[1], &"-o", &out.path()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let (p1, p2) = (
        err.find("05_top_level_array.sdfg")
            .expect("first error reported"),
        err.find("02_truncated.sdfg")
            .expect("second error reported"),
    );
    assert!(p1 < p2, "errors out of order:\n{err}");
    // Two inputs with one SDFG name: the one given last wins, on every run.
    let v2 = repo().join("fixtures/corpus/jacobi_1d/program.v2.sdfg");
    let (both, last) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for _ in 0..3 {
        let o = sdfgc(&[&files[0], &files[1], &v2, &"-o", &both.path()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = sdfgc(&[&v2, &"-o", &last.path()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let name = format!("{JACOBI}.cpp");
        assert_eq!(
            std::fs::read(both.path().join(&name)).unwrap(),
            std::fs::read(last.path().join(&name)).unwrap()
        );
    }
}

/// `sdfgc check --offload`: what runs where (kernels, host maps with why,
/// copies and bytes per call), from the `--stats` offload report.
#[test]
fn check_offload_prints_what_runs_where() {
    let o = sdfgc(&[
        &"check",
        &fixture("view_in_map_scope"),
        &"--offload",
        &"--host-map",
        &"rows",
        &"--symbol",
        &"N=4",
        &"--symbol",
        &"M=3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(": ok\nSDFG "), "the summary first:\n{text}");
    assert!(text.contains("offload: 2 kernels (2 maps"), "{text}");
    assert!(
        text.contains("host      rows                     --host-map: a host loop"),
        "{text}"
    );
    assert!(text.contains("in        A "), "{text}");
    // Bytes per call as a formula and its value with the given symbols.
    let copies = text
        .lines()
        .find(|l| l.contains("copies per call:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        copies.contains(" = ") && !copies.contains("= ? bytes"),
        "{copies}"
    );
}

/// `--offload=device-args`: the arguments are the caller's device arrays
/// (no copies), `--check-pointers` refuses host ones; plain `--offload`
/// takes no value from the next argument (a file stays a file).
#[test]
fn offload_device_args_parses_and_takes_device_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let gt4py = repo().join("fixtures/gt4py/vertex_cell_skip_reduce/cpu.sdfg");
    let o = sdfgc(&[&"check", &gt4py, &"--offload=device-args"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("copies per call: 0 in + out"), "{text}");
    assert!(
        text.contains("arguments on the device (no copies): "),
        "{text}"
    );
    // Host arguments cannot size this one's device twin: refused by name.
    let o = sdfgc(&[&"check", &gt4py, &"--offload"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("argument 'cf'"), "{}", stderr(&o));
    let o = sdfgc(&[
        &gt4py,
        &"--target",
        &"cuda",
        &"--offload=device-args",
        &"--check-pointers",
        &"-o",
        &dir.path(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cu = std::fs::read_to_string(dir.path().join("vertex_cell_skip_reduce.cu")).unwrap();
    assert!(cu.contains("argument 'cf' of"), "pointer check");
    assert!(!cu.contains("cudaMemcpyHostToDevice"), "no copy-in");
    // `--offload FILE`: FILE is an input, not the option's value.
    let o = sdfgc(&[
        &"--target",
        &"cuda",
        &"--offload",
        &fixture("jacobi_1d"),
        &"-o",
        &dir.path(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = sdfgc(&[
        &fixture("jacobi_1d"),
        &"--target",
        &"cuda",
        &"--offload=bogus",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A host map label that matches nothing is an error naming it.
    let o = sdfgc(&[
        &fixture("jacobi_1d"),
        &"--target",
        &"cuda",
        &"--offload",
        &"--host-map",
        &"no_such_map",
        &"-o",
        &dir.path(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("'no_such_map'"), "{}", stderr(&o));
}
