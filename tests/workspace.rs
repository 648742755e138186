//! The workspace: aligned offsets for every fixture (from `--stats-json`),
//! `sdfgc plan` equals the largest single program, packing never needs more
//! than DaCe's size plus alignment padding, and the checked setter refuses a
//! null pointer, a buffer one byte too small and a misaligned pointer with
//! the right codes.

#[path = "common/cxx.rs"]
mod cxx;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sdfgc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sdfgc"))
}

/// (SDFG file, symbol values from case.json) for the CPU files of every case.
fn cases() -> Vec<(PathBuf, Vec<(String, i64)>)> {
    let mut out = Vec::new();
    let mut stack = vec![repo().join("fixtures")];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        let case = d.join("case.json");
        let symbols: Vec<(String, i64)> = if case.exists() {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&case).unwrap()).unwrap();
            v["symbols"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_i64().map(|x| (k.clone(), x)))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                // NPBench kernels have their own test (run_corpus.rs).
                if !p.ends_with("fixtures/npbench") {
                    stack.push(p);
                }
            } else if case.exists()
                && (name == "program.sdfg" || name == "program.v2.sdfg" || name == "cpu.sdfg")
            {
                out.push((p, symbols.clone()));
            }
        }
    }
    out.sort();
    out
}

fn stats(file: &Path, symbols: &[(String, i64)], extra: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    let mut cmd = sdfgc();
    cmd.arg(file)
        .args(["--mode", "external", "--stats-json"])
        .arg(&json)
        .args(extra);
    for (k, v) in symbols {
        cmd.arg("--symbol").arg(format!("{k}={v}"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn every_offset_is_aligned_and_packing_never_exceeds_dace_plus_padding() {
    let mut ratios = Vec::new();
    let mut checked = 0;
    for (file, symbols) in cases() {
        for align in ["64", "256"] {
            let report = stats(&file, &symbols, &["--workspace-align", align]);
            let align: i64 = align.parse().unwrap();
            for program in report.as_array().unwrap() {
                for (storage, s) in program["storages"].as_object().unwrap() {
                    assert_eq!(s["alignment"].as_i64(), Some(align));
                    let transients = s["transients"].as_array().unwrap();
                    for t in transients {
                        let off = t["offset"].as_i64().unwrap_or_else(|| {
                            panic!("{}: no offset value for {t}", file.display())
                        });
                        assert_eq!(
                            off % align,
                            0,
                            "{}: {storage} {} at offset {off}",
                            file.display(),
                            t["name"]
                        );
                        checked += 1;
                    }
                    let packed = s["packed_bytes"].as_i64().unwrap();
                    let dace = s["dace_bytes"].as_i64().unwrap();
                    let sequential = s["sequential_bytes"].as_i64().unwrap();
                    assert_eq!(packed % align, 0);
                    assert!(
                        packed <= sequential,
                        "{}: packed {packed} > sequential {sequential}",
                        file.display()
                    );
                    let padding = align * transients.len() as i64;
                    assert!(
                        packed <= dace + padding,
                        "{}: packed {packed} > DaCe {dace} + padding {padding}",
                        file.display()
                    );
                    if align == 64 && transients.len() >= 3 && dace > 0 {
                        ratios.push((packed as f64 / dace as f64, file.display().to_string()));
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} offsets checked");
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = ratios[ratios.len() / 2].0;
    println!(
        "packed/DaCe over {} programs with >= 3 transients: median {median:.3}",
        ratios.len()
    );
    for (r, f) in &ratios {
        println!("  {r:.3}  {f}");
    }
    assert!(median <= 1.0, "median packed/DaCe ratio {median}");
}

#[test]
fn plan_prints_the_largest_program_over_the_corpus() {
    let files: Vec<PathBuf> = cases()
        .into_iter()
        .filter(|(f, _)| f.ends_with("program.sdfg"))
        .map(|(f, _)| f)
        .collect();
    // One symbol value for all (N, M, K, ... = 64): every program's size is then a number.
    let names = [
        "N", "M", "K", "TSTEPS", "T", "NI", "NJ", "NK", "NL", "NM", "H", "W", "C",
    ];
    let mut args: Vec<String> = vec![
        "plan".into(),
        "--mode".into(),
        "external".into(),
        "--json".into(),
    ];
    for n in names {
        args.push("--symbol".into());
        args.push(format!("{n}=64"));
    }
    let out = sdfgc().args(&args).args(&files).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let heap = &plan["CPU_Heap"];
    let programs = heap["programs"].as_array().unwrap();
    assert!(programs.len() > 10, "{plan}");
    let max = programs
        .iter()
        .filter_map(|p| p["bytes_value"].as_i64())
        .max()
        .unwrap();
    if programs.iter().all(|p| p["bytes_value"].as_i64().is_some()) {
        assert_eq!(heap["max_bytes"].as_i64(), Some(max), "{heap}");
    }
    // Each program's requirement equals what --stats says for it alone.
    let first = &files[0];
    let sym: Vec<(String, i64)> = names.iter().map(|n| (n.to_string(), 64)).collect();
    let single = stats(first, &sym, &[]);
    if let Some(s) = single[0]["storages"]["CPU_Heap"].as_object() {
        let name = single[0]["name"].as_str().unwrap();
        let listed = programs.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(listed["bytes_value"], s["packed_bytes"]);
    }
}

#[test]
fn checked_setter_refuses_null_small_and_misaligned_buffers() {
    let dir = tempfile::tempdir().unwrap();
    let file = repo().join("fixtures/corpus/jacobi_1d/program.sdfg");
    let out = sdfgc()
        .arg(&file)
        .args(["--mode", "external", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let main = dir.path().join("main.c");
    std::fs::write(
        &main,
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cases_dev_jacobi_1d.h"
int main(void) {
    const int N = 400;
    cases_dev_jacobi_1d_state_t *s = __dace_init_cases_dev_jacobi_1d(N);
    size_t n = __dace_get_external_memory_size_CPU_Heap(s, N);
    size_t a = __sdfgc_workspace_alignment_CPU_Heap();
    char *buf = aligned_alloc(a, n + a);
    int rc_null = __sdfgc_set_workspace_CPU_Heap(s, NULL, n, N);
    int rc_small = __sdfgc_set_workspace_CPU_Heap(s, buf, n - 1, N);
    const char *msg_small = __sdfgc_error_string(rc_small);
    int small_says_sizes = strstr(msg_small, "too small") != NULL;
    char expect[64];
    snprintf(expect, sizeof expect, "%zu bytes given", n - 1);
    small_says_sizes = small_says_sizes && strstr(msg_small, expect) != NULL;
    snprintf(expect, sizeof expect, "%zu bytes required", n);
    small_says_sizes = small_says_sizes && strstr(msg_small, expect) != NULL;
    int rc_mis = __sdfgc_set_workspace_CPU_Heap(s, buf + 8, n, N);
    int rc_ok = __sdfgc_set_workspace_CPU_Heap(s, buf, n, N);
    printf("null=%d small=%d misaligned=%d ok=%d sizes=%d align=%zu\n", rc_null, rc_small, rc_mis, rc_ok, small_says_sizes, a);
    printf("%s\n%s\n%s\n", __sdfgc_error_string(rc_null), msg_small, __sdfgc_error_string(rc_mis));
    __dace_exit_cases_dev_jacobi_1d(s);
    free(buf);
    return 0;
}
"#,
    )
    .unwrap();
    let lib = dir.path().join("libj.so");
    let cc = cxx::cxx()
        .args(["-std=c++17", "-O1", "-fopenmp", "-fPIC", "-shared"])
        .arg(dir.path().join("cases_dev_jacobi_1d.cpp"))
        .arg("-o")
        .arg(&lib)
        .status()
        .expect("g++ is required");
    assert!(cc.success());
    let exe = dir.path().join("main");
    let cc = cxx::cc()
        .arg("-std=c11")
        .arg(&main)
        .arg("-I")
        .arg(dir.path())
        .arg(&lib)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("gcc is required");
    assert!(cc.success());
    let run = Command::new(&exe)
        .env("LD_LIBRARY_PATH", dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(run.status.success(), "{text}");
    // Codes: 2 null pointer, 3 too small, 4 misaligned, 0 accepted.
    assert!(
        text.starts_with("null=2 small=3 misaligned=4 ok=0 sizes=1 align=64"),
        "{text}"
    );
    assert!(
        text.contains("null") && text.contains("misaligned"),
        "{text}"
    );
}

/// Per-thread slots (a nested SDFG's arrays, called in a parallel map): one
/// copy per thread, so the size is the thread count times the arrays, shown
/// with `T` and evaluated with `--symbol __sdfgc_threads=K`.
#[test]
fn per_thread_slots_scale_with_the_thread_count() {
    let file = repo().join("fixtures/corpus/nested_transient_parallel_map/program.sdfg");
    let bytes = |threads: i64| {
        let sym = [
            ("M".to_string(), 64),
            ("N".to_string(), 300),
            ("__sdfgc_threads".to_string(), threads),
        ];
        let s = stats(&file, &sym, &[]);
        let heap = s[0]["storages"]["CPU_Heap"].clone();
        assert_eq!(heap["per_thread"], true, "{heap}");
        assert!(heap["packed"].as_str().unwrap().contains("T * N"), "{heap}");
        heap["packed_bytes"].as_i64().unwrap()
    };
    // Three arrays of N doubles (all live at the map), each 64-byte aligned:
    // 300 * 8 = 2400 -> 2432 bytes for one copy.
    assert_eq!(bytes(1), 3 * 2432);
    assert_eq!(bytes(4), 3 * 9600);
}
