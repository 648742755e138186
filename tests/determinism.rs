//! Determinism: the same SDFG gives byte-identical output
//!
//! * across processes: the `sdfgc` binary runs twice per fixture and mode,
//!   in different working directories, with the input at different paths,
//!   different output directories and a different environment (`TZ`,
//!   `LC_ALL`); every written file must be identical;
//! * whatever the order of keys in JSON objects whose order carries no
//!   meaning in DaCe: every object of the document is reversed (except the
//!   [`ORDERED_KEYS`]) and the generated code must not change;
//! * without traces of the machine: no absolute paths, dates, times of day
//!   or pointer-like hex values in the output (unless the input has them).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target};
use serde_json::Value;

/// Objects whose key order has a meaning in DaCe, kept as they are:
///
/// `assignments` of interstate edges are performed in order (a later one
/// may read a symbol an earlier one sets).
///
/// Everything else, `_arrays`, `symbols`, `symbol_mapping`, the connectors
/// of nodes (matched by name: sdfgc writes both sides of a nested SDFG's
/// call) and all attribute bags included, is a name-keyed map whose order
/// must not show in the output.
const ORDERED_KEYS: [&str; 1] = ["assignments"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Varied fixtures for the cross-process check: DaCe 1.0.2 and 2.x, both
/// external-memory flavours, control flow, nested SDFGs, library nodes, WCR,
/// gt4py programs.
const CROSS_PROCESS: [&str; 11] = [
    "corpus/atax/program.sdfg",
    "corpus/boolean_logic/program.v2.sdfg",
    "corpus/control_flow_regions/program.v2.sdfg",
    "corpus/nested_program/program.sdfg",
    "corpus/reduce_libnode/program.v2.sdfg",
    "corpus/softmax/program.sdfg",
    "corpus/wcr_sum_rows/program.external.sdfg",
    "gt4py/icon4py/calculate_nabla4/cpu.sdfg",
    "gt4py/math_builtins_2d/cpu.sdfg",
    "gt4py/nested_tuple_output/cpu_external.sdfg",
    "gt4py/vertical_integral_scans/cpu.sdfg",
];

/// Every CPU variant of every case (the job list of `tests/run_corpus.rs`).
fn all_cpu_variants() -> Vec<PathBuf> {
    common::corpus::cpu_variants()
        .into_iter()
        .map(|(d, n)| d.join(n))
        .collect()
}

/// The files a run wrote: (name, contents), sorted by name.
fn read_dir_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Runs the binary on a private copy of `fixture` inside `root` (its own
/// working directory) and returns the written files.
fn run_binary(
    fixture: &Path,
    mode: Option<&str>,
    root: &Path,
    env: &[(&str, &str)],
) -> Vec<(String, Vec<u8>)> {
    let input = root.join("in").join("program.sdfg");
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    std::fs::copy(fixture, &input).unwrap();
    let out = root.join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sdfgc"));
    cmd.current_dir(root)
        .arg(&input)
        .args(["--target", "cpp", "-o"])
        .arg(&out)
        .envs(env.iter().copied());
    if let Some(m) = mode {
        cmd.args(["--mode", m]);
    }
    let res = cmd.output().unwrap();
    assert!(
        res.status.success(),
        "sdfgc failed on {}:\n{}",
        fixture.display(),
        String::from_utf8_lossy(&res.stderr)
    );
    read_dir_files(&out)
}

#[test]
fn two_processes_write_identical_files() {
    let mut failures = Vec::new();
    let mut outputs = 0;
    for rel in CROSS_PROCESS {
        let fixture = fixtures().join(rel);
        let input_text = std::fs::read_to_string(&fixture).unwrap();
        for mode in [None, Some("external")] {
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            let first = run_binary(&fixture, mode, a.path(), &[("TZ", "UTC")]);
            let second = run_binary(
                &fixture,
                mode,
                b.path(),
                &[("TZ", "Asia/Kathmandu"), ("LC_ALL", "C"), ("LANG", "C")],
            );
            let what = format!("{rel} [{}]", mode.unwrap_or("default"));
            let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            if names(&first) != names(&second) {
                failures.push(format!(
                    "{what}: wrote {:?}, then {:?}",
                    names(&first),
                    names(&second)
                ));
                continue;
            }
            for ((name, x), (_, y)) in first.iter().zip(&second) {
                outputs += 1;
                if x != y {
                    failures.push(format!(
                        "{what}: {name} differs: {}",
                        first_difference(x, y)
                    ));
                }
                let text = String::from_utf8_lossy(x);
                for problem in machine_traces(&text, &input_text, &[a.path(), b.path()]) {
                    failures.push(format!("{what}: {name}: {problem}"));
                }
            }
        }
    }
    assert!(outputs >= 2 * 2 * CROSS_PROCESS.len(), "{outputs} files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Where two outputs first differ: line number and both lines.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (k, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  - {x}\n  + {y}", k + 1);
        }
    }
    format!(
        "one is a prefix of the other ({} vs {} lines)",
        a.lines().count(),
        b.lines().count()
    )
}

// ---------------------------------------------------------------------------
// Traces of the machine
// ---------------------------------------------------------------------------

/// Things in generated `text` that depend on the machine, the time or the
/// process, and do not come from the input: absolute paths (the fixture
/// tree, the given directories, common roots), dates, times of day, the
/// words timestamp/datetime, and hex numbers of 8 or more digits (pointer
/// values). (The plain word "time" is no trace: comments use it in prose.)
fn machine_traces(text: &str, input: &str, dirs: &[&Path]) -> Vec<String> {
    let mut found = Vec::new();
    let mut paths: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    paths.push(env!("CARGO_MANIFEST_DIR").to_string());
    paths.push(std::env::temp_dir().display().to_string());
    if let Ok(home) = std::env::var("HOME") {
        paths.push(home);
    }
    paths.extend(["/home/", "/root/", "/tmp/", "/work/", "/Users/"].map(String::from));
    for p in paths.iter().filter(|p| p.len() > 1) {
        if text.contains(p.as_str()) && !input.contains(p.as_str()) {
            found.push(format!("absolute path {p:?}"));
        }
    }
    for (kind, pattern) in [("a date", "dddd-dd-dd"), ("a time of day", "dd:dd:dd")] {
        if let Some(s) = find_pattern(text, pattern).filter(|s| !input.contains(s)) {
            found.push(format!("{kind} {s:?}"));
        }
    }
    for word in words(text) {
        let lower = word.to_ascii_lowercase();
        let suspicious = matches!(lower.as_str(), "timestamp" | "datetime")
            || (lower.starts_with("0x")
                && lower.len() >= 10
                && lower[2..].bytes().all(|b| b.is_ascii_hexdigit()));
        if suspicious && !words(input).any(|w| w == word) {
            found.push(format!("{word:?}"));
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Maximal runs of identifier characters.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The first substring matching `pattern`, where `d` stands for a digit and
/// every other character for itself.
fn find_pattern<'a>(text: &'a str, pattern: &str) -> Option<&'a str> {
    let (t, p) = (text.as_bytes(), pattern.as_bytes());
    (0..t.len().saturating_sub(p.len() - 1))
        .find(|&i| {
            p.iter().zip(&t[i..]).all(|(&pc, &tc)| {
                if pc == b'd' {
                    tc.is_ascii_digit()
                } else {
                    pc == tc
                }
            })
        })
        .map(|i| &text[i..i + p.len()])
}

#[test]
fn trace_detector_finds_traces() {
    let dir = Path::new("/some/build/dir");
    let text =
        "// built 2024-05-01 at 12:30:59 in /some/build/dir/x, ptr 0x7ffd5e8a1c20, timestamp\n";
    let found = machine_traces(text, "", &[dir]);
    for want in [
        "date",
        "time of day",
        "/some/build/dir",
        "0x7ffd5e8a1c20",
        "\"timestamp\"",
    ] {
        assert!(
            found.iter().any(|f| f.contains(want)),
            "{want} not in {found:?}"
        );
    }
    // Identifiers from the input are fine (a tasklet's `timestamp` variable).
    assert!(machine_traces("int64_t timestamp = 0;", "timestamp", &[dir]).is_empty());
    assert!(machine_traces("// never live at the same time", "", &[dir]).is_empty());
}

// ---------------------------------------------------------------------------
// Key order
// ---------------------------------------------------------------------------

/// `v` with the keys of every object reversed, except objects stored under
/// a key in `keep` (their own order stays; their values are still visited).
/// `only`: reverse only objects stored under that key.
fn reorder(v: &Value, parent_key: Option<&str>, keep: &[&str], only: Option<&str>) -> Value {
    match v {
        Value::Object(map) => {
            let mut items: Vec<(&String, &Value)> = map.iter().collect();
            let reverse = match only {
                Some(k) => parent_key == Some(k),
                None => !parent_key.is_some_and(|k| keep.contains(&k)),
            };
            if reverse {
                items.reverse();
            }
            Value::Object(
                items
                    .into_iter()
                    .map(|(k, x)| (k.clone(), reorder(x, Some(k), keep, only)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| reorder(x, parent_key, keep, only))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Keys under which the document stores objects with more than one key.
fn object_keys(v: &Value, parent_key: Option<&str>, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if let Some(k) = parent_key.filter(|_| map.len() > 1) {
                out.insert(k.to_string());
            }
            for (k, x) in map {
                object_keys(x, Some(k), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| object_keys(x, parent_key, out)),
        _ => {}
    }
}

/// The generated files of a document, in memory.
fn generate(doc: &Value, mode: Option<Mode>) -> Result<Vec<(String, String)>, String> {
    let text = serde_json::to_string(doc).unwrap();
    let sdfg = sdfgc::front::json::load_str(&text).map_err(|e| e.to_string())?;
    sdfgc::valid::validate(&sdfg).map_err(|e| e.to_string())?;
    let opts = CompileOptions {
        mode,
        ..CompileOptions::new(Target::Cpp)
    };
    sdfgc::driver::generate_sdfg(sdfg, &opts).map_err(|e| e.to_string())
}

#[test]
fn reordering_keys_does_not_change_the_output() {
    assert!(
        serde_json::from_str::<Value>(r#"{"b":1,"a":2}"#)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            == "b",
        "serde_json must preserve key order (feature preserve_order)"
    );
    // Keys found to matter, each with the first output it changed and how.
    let mut culprits: BTreeMap<String, String> = BTreeMap::new();
    let mut changed = Vec::new();
    let mut unexplained = Vec::new();
    let mut checked = 0;
    for path in all_cpu_variants() {
        let rel = path.strip_prefix(fixtures()).unwrap().display().to_string();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for mode in [None, Some(Mode::External)] {
            let what = format!(
                "{rel} [{}]",
                if mode.is_some() {
                    "external"
                } else {
                    "default"
                }
            );
            let original = generate(&doc, mode).unwrap_or_else(|e| panic!("{what}: {e}"));
            checked += 1;
            if generate(&reorder(&doc, None, &ORDERED_KEYS, None), mode).as_ref() == Ok(&original) {
                continue;
            }
            changed.push(what.clone());
            // Explained by keys already found? Otherwise find the keys whose
            // reordering alone changes this output.
            let mut known: Vec<String> = ORDERED_KEYS.map(String::from).to_vec();
            known.extend(culprits.keys().cloned());
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            if generate(&reorder(&doc, None, &known, None), mode).as_ref() == Ok(&original) {
                continue;
            }
            let mut keys = BTreeSet::new();
            object_keys(&doc, None, &mut keys);
            let mut found = false;
            for k in keys.iter().filter(|k| !known.contains(&k.as_str())) {
                let alone = generate(&reorder(&doc, None, &[], Some(k)), mode);
                if alone.as_ref() != Ok(&original) {
                    let how = match alone {
                        Err(e) => format!("then refused: {e}"),
                        Ok(files) => describe_change(&original, &files),
                    };
                    culprits.insert(k.clone(), format!("{what}: {how}"));
                    found = true;
                }
            }
            if !found {
                unexplained.push(what);
            }
        }
    }
    assert!(checked >= 200, "only {checked} checks");
    let mut report = format!(
        "{} of {checked} outputs depend on the key order of JSON objects:\n",
        changed.len()
    );
    for (k, example) in &culprits {
        report.push_str(&format!("- reversing '{k}' changes e.g. {example}\n"));
    }
    if !unexplained.is_empty() {
        report.push_str(&format!(
            "- only several objects reversed together change: {}\n",
            unexplained.join(", ")
        ));
    }
    report.push_str(&format!("all changed outputs: {}", changed.join(", ")));
    assert!(changed.is_empty(), "{report}");
}

/// The first differing line of two generated file sets.
fn describe_change(a: &[(String, String)], b: &[(String, String)]) -> String {
    for ((name, x), (_, y)) in a.iter().zip(b) {
        if x != y {
            return format!(
                "{name} {}",
                first_difference(x.as_bytes(), y.as_bytes()).replace('\n', " ")
            );
        }
    }
    "different files".into()
}

#[test]
fn reorder_reverses_all_but_the_kept_keys() {
    let doc: Value = serde_json::from_str(
        r#"{"a": {"x": 1, "y": 2}, "assignments": {"i": "0", "j": "i"}, "l": [{"p": 1, "q": 2}]}"#,
    )
    .unwrap();
    let out = serde_json::to_string(&reorder(&doc, None, &ORDERED_KEYS, None)).unwrap();
    assert_eq!(
        out,
        r#"{"l":[{"q":2,"p":1}],"assignments":{"i":"0","j":"i"},"a":{"y":2,"x":1}}"#
    );
    let only = serde_json::to_string(&reorder(&doc, None, &[], Some("a"))).unwrap();
    assert_eq!(
        only,
        r#"{"a":{"y":2,"x":1},"assignments":{"i":"0","j":"i"},"l":[{"p":1,"q":2}]}"#
    );
}
