//! The generated header `<name>.h` is valid C99 and C++ for every CPU
//! fixture in the default and the external mode, and documents the ABI
//! (symbols, arguments, workspace alignment and size).

#[path = "common/cxx.rs"]
mod cxx;

use std::path::{Path, PathBuf};
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target, generate};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every CPU SDFG of the corpus and the gt4py fixtures.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let corpus = repo().join("fixtures/corpus");
    for e in std::fs::read_dir(&corpus).unwrap() {
        let p = e.unwrap().path().join("program.sdfg");
        if p.is_file() {
            out.push(p);
        }
    }
    for prog in [
        "cartesian_smoother_3d",
        "math_builtins_2d",
        "scalar_symbol_params",
    ] {
        let p = repo().join("fixtures/gt4py").join(prog).join("cpu.sdfg");
        assert!(p.is_file(), "{} missing", p.display());
        out.push(p);
    }
    out.sort();
    assert!(out.len() >= 20, "too few fixtures: {}", out.len());
    out
}

fn header(sdfg: &Path, mode: Option<Mode>) -> (String, String) {
    let opts = CompileOptions {
        mode,
        ..CompileOptions::new(Target::Cpp)
    };
    let outs = generate(sdfg, &opts).unwrap_or_else(|e| panic!("{}: {e}", sdfg.display()));
    outs.into_iter()
        .find(|(n, _)| n.ends_with(".h"))
        .expect("no header")
}

/// Compiles `file` with `compiler args...`; failure message on error.
fn syntax_check(compiler: &str, args: &[&str], file: &Path) -> Result<(), String> {
    let o = Command::new(compiler)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler} (gcc and g++ are required): {e}"));
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{compiler} {args:?} {}:\n{}",
            file.display(),
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

#[test]
fn headers_are_valid_c_and_cpp() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut with_workspace = 0;
    for (k, f) in fixtures().iter().enumerate() {
        for mode in [None, Some(Mode::External)] {
            let (name, text) = header(f, mode);
            if text.contains("__sdfgc_set_workspace_") {
                with_workspace += 1;
            }
            let sub = dir.path().join(format!("{k}-{}", mode.is_some()));
            std::fs::create_dir_all(&sub).unwrap();
            let h = sub.join(&name);
            std::fs::write(&h, &text).unwrap();
            // Included twice: the include guard works.
            let c = sub.join("use.c");
            std::fs::write(&c, format!("#include \"{name}\"\n#include \"{name}\"\n")).unwrap();
            let strict = ["-Wall", "-Wextra", "-Werror", "-pedantic"];
            let c_args: Vec<&str> = ["-x", "c", "-std=c99", "-fsyntax-only"]
                .into_iter()
                .chain(strict)
                .collect();
            let cpp_args: Vec<&str> = ["-x", "c++", "-std=c++17", "-fsyntax-only"]
                .into_iter()
                .chain(strict)
                .collect();
            for r in [
                syntax_check("gcc", &c_args, &h),
                syntax_check("gcc", &c_args, &c),
                syntax_check("g++", &cpp_args, &h),
                syntax_check("g++", &["-x", "c++", "-fsyntax-only"], &h),
            ] {
                if let Err(e) = r {
                    failures.push(format!("{} ({mode:?}): {e}", f.display()));
                }
            }
        }
    }
    assert!(
        with_workspace >= 10,
        "too few headers with a workspace: {with_workspace}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn header_documents_symbols_arguments_and_workspace() {
    // seed_external_2d has External transients in the SDFG itself.
    let (_, h) = header(
        &repo().join("fixtures/corpus/seed_external_2d/program.sdfg"),
        None,
    );
    for needle in [
        "none must be a device pointer",
        "__sdfgc_workspace_alignment_CPU_Heap(void);",
        "64-byte aligned",
        "a multiple of 64",
        "DaCe's own library would ask for",
        "Checked setter of the CPU_Heap workspace",
        "const char *__sdfgc_error_string(int code);",
    ] {
        assert!(h.contains(needle), "missing {needle:?} in\n{h}");
    }
    // jacobi_1d: N is the extent of both arrays; A and B are written; TSTEPS is a scalar.
    let (_, h) = header(
        &repo().join("fixtures/corpus/jacobi_1d/program.sdfg"),
        Some(Mode::External),
    );
    for needle in [
        " *   int N: extent of A (dim 0); extent of B (dim 0)",
        " *   double *A: double[N], strides (1) elements, N elements allocated; host memory; written",
        " *   int TSTEPS: scalar argument (by value)",
        " *   int N: symbol (see above)",
        "size_t __dace_get_external_memory_size_CPU_Heap(cases_dev_jacobi_1d_state_t *__state, int N);",
    ] {
        assert!(h.contains(needle), "missing {needle:?} in\n{h}");
    }
    // gt4py: strides are symbols.
    let (_, h) = header(
        &repo().join("fixtures/gt4py/cartesian_smoother_3d/cpu.sdfg"),
        None,
    );
    assert!(
        h.contains("int __a_IDim_stride: stride of a (dim 0, in elements)"),
        "{h}"
    );
    // No comment is closed early: the only "*/" closes a comment that opened with "/*".
    assert_eq!(h.matches("/*").count(), h.matches("*/").count(), "{h}");
}

#[test]
fn c_program_links_against_the_library() {
    // The header's promise: C code calls the library (external mode, checked setter).
    let dir = tempfile::tempdir().unwrap();
    let opts = CompileOptions {
        mode: Some(Mode::External),
        output: dir.path().to_path_buf(),
        ..CompileOptions::new(Target::Cpp)
    };
    let outs = generate(
        &repo().join("fixtures/corpus/jacobi_1d/program.sdfg"),
        &opts,
    )
    .unwrap();
    sdfgc::driver::write_outputs(dir.path(), &outs).unwrap();
    let main = dir.path().join("main.c");
    std::fs::write(
        &main,
        r#"#include "cases_dev_jacobi_1d.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    enum { N = 64 };
    double a[N], b[N];
    int i;
    for (i = 0; i < N; ++i) { a[i] = i; b[i] = 0.0; }
    cases_dev_jacobi_1d_state_t *s = __dace_init_cases_dev_jacobi_1d(N);
    size_t n = __dace_get_external_memory_size_CPU_Heap(s, N);
    size_t al = __sdfgc_workspace_alignment_CPU_Heap();
    void *ws = aligned_alloc(al, (n + al - 1) / al * al + al);
    int rc = __sdfgc_set_workspace_CPU_Heap(s, (char *)ws + 8, n, N);
    if (rc == 0) { fprintf(stderr, "a misaligned workspace was accepted\n"); return 1; }
    printf("expected error: %s\n", __sdfgc_error_string(rc));
    rc = __sdfgc_set_workspace_CPU_Heap(s, ws, n, N);
    if (rc != 0) { fprintf(stderr, "%s\n", __sdfgc_error_string(rc)); return 1; }
    __program_cases_dev_jacobi_1d(s, a, b, N, 3);
    if (__dace_exit_cases_dev_jacobi_1d(s) != 0) return 1;
    if (strcmp(__sdfgc_signature_cases_dev_jacobi_1d(),
               "{\"program\":[[\"A\",\"double *\"],[\"B\",\"double *\"],[\"N\",\"int\"],"
               "[\"TSTEPS\",\"int\"]],\"init\":[[\"N\",\"int\"]]}") != 0) {
        fprintf(stderr, "signature: %s\n", __sdfgc_signature_cases_dev_jacobi_1d());
        return 1;
    }
    free(ws);
    /* Interior points of a linear ramp stay (0.33333 * 3) * i after the steps. */
    printf("a[10] = %.6f\n", a[10]);
    return a[10] > 9.9 && a[10] < 10.0 ? 0 : 1;
}
"#,
    )
    .unwrap();
    let obj = dir.path().join("lib.o");
    let exe = dir.path().join("main");
    let run = |c: &mut Command| {
        let o = c.output().expect("run compiler");
        assert!(
            o.status.success(),
            "{c:?}:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    run(cxx::cxx()
        .args(["-std=c++17", "-O1", "-fopenmp", "-c"])
        .arg(dir.path().join("cases_dev_jacobi_1d.cpp"))
        .arg("-o")
        .arg(&obj));
    run(cxx::cc()
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp"])
        .arg(&main)
        .arg(&obj)
        .arg("-lstdc++")
        .arg("-lm")
        .arg("-o")
        .arg(&exe));
    let out = run(&mut Command::new(&exe));
    assert!(out.contains("misaligned"), "{out}");
}

#[test]
fn default_storage_workspace_functions_exist_where_dace_asks_for_them() {
    // DaCe's CompiledSDFG asks for the storage written on External arrays:
    // `Default` for seed_external_2d (built with DaCe's builder API).
    let code = |sdfg: &str, mode| {
        let opts = CompileOptions {
            mode,
            ..CompileOptions::new(Target::Cpp)
        };
        let outs = generate(&repo().join(sdfg), &opts).unwrap();
        outs.into_iter()
            .find(|(n, _)| n.ends_with(".cpp"))
            .unwrap()
            .1
    };
    let seed = code("fixtures/corpus/seed_external_2d/program.sdfg", None);
    for f in [
        "size_t __dace_get_external_memory_size_Default(",
        "void __dace_set_external_memory_Default(",
        "size_t __dace_get_external_memory_size_CPU_Heap(",
    ] {
        assert!(seed.contains(f), "missing {f}");
    }
    // No External array of storage Default: DaCe asks for CPU_Heap only.
    let jacobi = code(
        "fixtures/corpus/jacobi_1d/program.sdfg",
        Some(Mode::External),
    );
    assert!(jacobi.contains("__dace_get_external_memory_size_CPU_Heap("));
    assert!(!jacobi.contains("_Default("));
}
