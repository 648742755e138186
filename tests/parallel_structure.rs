//! Structure of the generated OpenMP code against DaCe's for the same SDFGs
//! (no timing, no compiler): for every NPBench CPU fixture, sdfgc's code
//! has no more parallel regions and no more atomic updates than DaCe 1.0.2's
//! (counts in fixtures/npbench/dace_code_counts.json, written by
//! scripts/make-npbench-code-counts.py), in the SDFG's own lifetimes and in
//! the external mode; every pointer parameter of a nested-SDFG function is
//! `__restrict__` there (no two of their connectors share a container); no
//! parallel loop has one iteration; the integer division helpers are
//! branch-free (hoistable from loops); and no `if` has an empty `then`
//! branch before an `else` (GCC if-converts `if (!c) {} else {...}` into
//! longer select chains than `if (c) {...}`).

use std::path::PathBuf;

use sdfgc::driver::{CompileOptions, Mode, Target};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn count(text: &str, pred: impl Fn(&str) -> bool) -> usize {
    text.lines().filter(|l| pred(l.trim_start())).count()
}

/// Parallel regions of generated code.
fn parallel(code: &str) -> usize {
    count(code, |l| l.starts_with("#pragma omp parallel")).saturating_sub(parallel_copies(code))
}

/// Parallel regions of strided copies of at least 16384 elements (DaCe 2
/// turns such copies into parallel maps; DaCe 1.0.2, whose counts the
/// NPBench test compares with, copies on one thread): the pragma right
/// after a `// copy` comment, or after the size check that follows one.
fn parallel_copies(code: &str) -> usize {
    let lines: Vec<&str> = code.lines().map(str::trim_start).collect();
    (1..lines.len())
        .filter(|&i| lines[i].starts_with("#pragma omp parallel for"))
        .filter(|&i| {
            lines[i - 1].starts_with("// copy ")
                || (i >= 2
                    && lines[i - 1].starts_with("if (")
                    && lines[i - 1].ends_with(">= 16384) {")
                    && lines[i - 2].starts_with("// copy "))
        })
        .count()
}

/// Atomic updates of generated code: OpenMP atomics and critical sections
/// in function bodies (indented), and calls of sdfgc's CAS helpers.
fn atomic(code: &str) -> usize {
    code.lines()
        .filter(|l| l.starts_with(' '))
        .map(str::trim_start)
        .filter(|t| {
            t.starts_with("#pragma omp atomic")
                || t.starts_with("#pragma omp critical")
                || (t.starts_with("sdfgc_atomic_") && t.contains("(&"))
        })
        .count()
}

/// The top-level comma-separated items of a call's argument list (from
/// after its `(` to its matching `)`).
fn split_args(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for ch in text.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => break,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

/// Pointer parameters of the nested-SDFG functions without `__restrict__`
/// although no other pointer argument of a call names the same container.
fn unrestricted_nested_pointers(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in code
        .lines()
        .filter(|l| l.starts_with("static void nested_"))
    {
        let name = &l[12..l.find('(').unwrap()];
        let params: Vec<&str> = l[l.find('(').unwrap() + 1..l.rfind(')').unwrap()]
            .split(", ")
            .collect();
        let call = format!("{name}(__state, ");
        for site in code.lines().filter(|c| c.trim_start().starts_with(&call)) {
            let args = split_args(&site.trim_start()[name.len() + 1..]);
            // The container an argument points into: `&X[...]` or `&X`.
            let base = |a: &str| {
                a.trim_start_matches('&')
                    .split('[')
                    .next()
                    .unwrap()
                    .to_string()
            };
            for (k, p) in params.iter().enumerate().skip(1) {
                if !p.contains('*') || p.contains("__restrict__") || k >= args.len() {
                    continue;
                }
                let b = base(&args[k]);
                let shared = params
                    .iter()
                    .zip(&args)
                    .enumerate()
                    .any(|(j, (q, a))| j != k && q.contains('*') && base(a) == b);
                if !shared {
                    out.push(format!("{name}: {p} (argument {})", args[k]));
                }
            }
        }
    }
    out
}

/// Atomic updates inside loops of an element that is the same in every
/// iteration of them (its index is made of constants and the function's
/// parameters only: no loop counter, no value computed inside the loops):
/// such an update should be an OpenMP reduction. Text of each.
fn invariant_atomics(code: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let names = |t: &str| -> Vec<String> {
        t.split(|c: char| !ident(c))
            .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect()
    };
    let mut params: Vec<String> = Vec::new();
    let mut loops = Vec::new();
    let mut depth = 0i64;
    let mut out = Vec::new();
    let lines: Vec<&str> = code.lines().map(str::trim_start).collect();
    for (k, l) in lines.iter().enumerate() {
        if l.starts_with("static ") && l.contains('(') && l.ends_with('{') {
            params = names(&l[l.find('(').unwrap()..]);
        }
        if l.starts_with("for (") {
            loops.push(depth);
        }
        let target = if l.starts_with("#pragma omp atomic") {
            lines.get(k + 1).and_then(|n| n.split(' ').next())
        } else if l.starts_with("sdfgc_atomic_") && l.contains("(&") {
            l.split("(&").nth(1).and_then(|t| t.split(',').next())
        } else {
            None
        };
        if let Some(t) = target.filter(|_| !loops.is_empty()) {
            let index = names(t.split_once('[').map_or("", |(_, i)| i));
            if index.iter().all(|n| params.contains(n)) {
                out.push(t.to_string());
            }
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        loops.retain(|d| *d < depth);
    }
    out
}

#[test]
fn no_more_parallel_regions_or_atomics_than_dace_on_npbench() {
    let counts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/npbench/dace_code_counts.json")).unwrap(),
    )
    .unwrap();
    let cases = counts["cases"].as_object().unwrap();
    assert!(cases.len() >= 20, "only {} cases", cases.len());
    let mut bad = Vec::new();
    let (mut ours, mut theirs) = ((0, 0), (0, 0));
    for (case, variants) in cases {
        for (variant, dace) in variants.as_object().unwrap() {
            let file = root().join("fixtures/npbench").join(case).join(variant);
            for mode in [None, Some(Mode::External)] {
                let opts = CompileOptions {
                    mode,
                    ..CompileOptions::new(Target::Cpp)
                };
                let outs = sdfgc::driver::generate(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
                let code = outs
                    .iter()
                    .find(|(n, _)| n.ends_with(".cpp") && !n.ends_with("_main.cpp"))
                    .map(|(_, t)| t.as_str())
                    .unwrap();
                let (p, a) = (parallel(code), atomic(code));
                let (dp, da) = (
                    dace["parallel"].as_u64().unwrap() as usize,
                    dace["atomic"].as_u64().unwrap() as usize,
                );
                if mode.is_none() {
                    ours = (ours.0 + p, ours.1 + a);
                    theirs = (theirs.0 + dp, theirs.1 + da);
                }
                if p > dp || a > da {
                    bad.push(format!(
                        "{case}/{variant} {mode:?}: {p} parallel regions, {a} atomics; DaCe {dp}, {da}"
                    ));
                }
                // A parallel region for one iteration forks and joins for nothing.
                let lines: Vec<&str> = code.lines().map(str::trim_start).collect();
                for w in lines.windows(2) {
                    if w[0].starts_with("#pragma omp parallel for")
                        && w[1].starts_with("for (int64_t ")
                        && w[1].contains(" = 0; ")
                        && w[1].contains(" < 1; ")
                    {
                        bad.push(format!(
                            "{case}/{variant} {mode:?}: one-iteration parallel loop: {}",
                            w[1]
                        ));
                    }
                }
                for t in invariant_atomics(code) {
                    bad.push(format!(
                        "{case}/{variant} {mode:?}: atomic update of one element in a loop \
                         (not an OpenMP reduction): {t}"
                    ));
                }
                if variant == "program.autoopt.sdfg" {
                    for u in unrestricted_nested_pointers(code) {
                        bad.push(format!("{case}/{variant} {mode:?}: not __restrict__: {u}"));
                    }
                }
            }
        }
    }
    eprintln!(
        "sdfgc {} parallel regions, {} atomics; DaCe {}, {}",
        ours.0, ours.1, theirs.0, theirs.1
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Every SDFG file of the written programs (fixtures/programs, every
/// variant) and the files sdfgc generates for it (default options).
fn written_programs() -> Vec<(PathBuf, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root().join("fixtures/programs")).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in entries {
            let file = f.unwrap().path();
            if file.extension().is_none_or(|e| e != "sdfg") {
                continue;
            }
            let outs = sdfgc::driver::generate(&file, &CompileOptions::new(Target::Cpp))
                .unwrap_or_else(|e| panic!("{e}"));
            out.push((file, outs));
        }
    }
    assert!(out.len() >= 300, "only {} files", out.len());
    out
}

/// The written programs (fixtures/programs, every variant): no atomic
/// update of one element inside loops either (reductions over whole arrays
/// and axes, histograms, counts in every shape DaCe's frontends give them).
#[test]
fn one_element_updates_of_written_programs_are_reductions() {
    let mut bad = Vec::new();
    for (file, outs) in written_programs() {
        let code = outs
            .iter()
            .find(|(n, _)| n.ends_with(".cpp") && !n.ends_with("_main.cpp"))
            .map(|(_, t)| t.as_str())
            .unwrap();
        for t in invariant_atomics(code) {
            bad.push(format!("{}: {t}", file.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "atomic updates of one element in loops:\n{}",
        bad.join("\n")
    );
}

#[test]
fn integer_division_helpers_are_branch_free() {
    // Every helper the prelude can carry (a file carries only those it
    // names, so no one program shows them all).
    let code = &sdfgc::ir::cexpr::prelude_all();
    for helper in ["sdfgc_floordiv", "sdfgc_pymod", "sdfgc_int_ceil"] {
        let start = code
            .find(&format!("auto {helper}("))
            .unwrap_or_else(|| panic!("{helper} not defined"));
        let body = &code[start..start + code[start..].find("\n}\n").unwrap()];
        assert!(
            !body.contains("if (x %") && !body.contains("if (r !="),
            "{helper} branches on the remainder (the compiler then recomputes it in every loop iteration):\n{body}"
        );
    }
}

/// `if (...) {` lines directly followed by `} else {`: a branch with nothing
/// in it before one with work.
fn empty_then_branches(code: &str) -> Vec<String> {
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0].starts_with("if (") && w[0].ends_with('{') && w[1] == "} else {")
        .map(|w| w[0].to_string())
        .collect()
}

/// Every written program (fixtures/programs, every variant): a conditional
/// block whose `then` side is empty is written on the other edge's
/// condition (argmax_loop's running maximum: `vmaxsd` rather than
/// `vcmplesd` + `vblendvpd`, 1.45x faster under -ffast-math).
#[test]
fn conditionals_have_no_empty_then_branch() {
    let mut bad = Vec::new();
    for (file, outs) in written_programs() {
        for (name, code) in &outs {
            for t in empty_then_branches(code) {
                bad.push(format!("{} ({name}): {t}", file.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "empty then-branches before an else:\n{}",
        bad.join("\n")
    );
}

/// Maps with too little work for a parallel region run on the calling
/// thread (forking and joining a team costs more than a few thousand
/// additions: NPBench jacobi_1d's six maps of 3,200 elements per time step
/// ran 8x faster on one thread): a map whose work is known only at run time
/// is written twice, its parallel loops under `if (work >= 16384)`, and a
/// map whose work is a constant below that gets no pragma at all.
#[test]
fn small_maps_run_on_the_calling_thread() {
    let outs = sdfgc::driver::generate(
        &root().join("fixtures/npbench/jacobi_1d/program.sdfg"),
        &CompileOptions::new(Target::Cpp),
    )
    .unwrap();
    let code = &outs.iter().find(|(n, _)| n.ends_with(".cpp")).unwrap().1;
    let lines: Vec<&str> = code.lines().map(str::trim).collect();
    let pragmas: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("#pragma omp parallel"))
        .collect();
    assert_eq!(pragmas.len(), 6, "{code}");
    for &i in &pragmas {
        assert!(lines[i - 1].starts_with("// map "), "{code}");
        assert_eq!(lines[i - 2], "if (N - 2 >= 16384) {", "{code}");
    }
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == "if (N - 2 >= 16384) {")
            .count(),
        6
    );
    // `--min-parallel-work 0`: every parallel map a region, as DaCe.
    let dace_like = sdfgc::driver::generate(
        &root().join("fixtures/npbench/jacobi_1d/program.sdfg"),
        &CompileOptions {
            min_parallel_work: 0,
            ..CompileOptions::new(Target::Cpp)
        },
    )
    .unwrap();
    let code0 = &dace_like
        .iter()
        .find(|(n, _)| n.ends_with(".cpp"))
        .unwrap()
        .1;
    assert_eq!(code0.matches("#pragma omp parallel for").count(), 6);
    assert!(!code0.contains(">= 16384"), "{code0}");
    // No written program tests a constant work at run time.
    let mut constant = Vec::new();
    for (file, outs) in written_programs() {
        for (name, code) in &outs {
            let lines: Vec<&str> = code.lines().map(str::trim).collect();
            for w in lines.windows(3) {
                if w[2].starts_with("#pragma omp parallel")
                    && let Some(c) = w[0].strip_prefix("if (")
                    && c.split(" >= ")
                        .next()
                        .is_some_and(|c| c.parse::<i64>().is_ok())
                {
                    constant.push(format!("{} ({name}): {}", file.display(), w[0]));
                }
            }
        }
    }
    assert!(constant.is_empty(), "{}", constant.join("\n"));
}
