//! A generated file carries only the prelude it uses: every helper of
//! `cexpr::HELPERS` (and the allocation helpers) is defined in a file if and
//! only if the rest of the file names it. Checked on every fixture SDFG, for
//! the C++ and CUDA targets.

mod common;

use std::path::Path;

use common::corpus::case_files_under;
use sdfgc::driver::{CompileOptions, Target};
use sdfgc::ir::cexpr::HELPERS;

/// Whether `code`, without the text `def` (a helper's definition), names one of `names`.
fn named_outside(code: &str, def: &str, names: &[&str]) -> bool {
    let rest = code.replacen(def, "", 1);
    names.iter().any(|n| rest.contains(n))
}

#[test]
fn files_carry_exactly_the_helpers_they_use() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = case_files_under(&root, |n| n.ends_with(".sdfg"));
    let alloc_def = "static inline T *sdfgc_alloc(size_t n) {";
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut seen_defined = vec![false; HELPERS.len()];
    for (dir, file) in &files {
        let path = dir.join(file);
        for target in [Target::Cpp, Target::Cuda] {
            let Ok(outs) = sdfgc::driver::generate(&path, &CompileOptions::new(target)) else {
                continue;
            };
            let Some((_, code)) = outs
                .iter()
                .find(|(n, _)| n.ends_with(".cpp") || n.ends_with(".cu"))
            else {
                continue;
            };
            checked += 1;
            for (k, (names, def)) in HELPERS.iter().enumerate() {
                let defined = code.contains(def);
                seen_defined[k] |= defined;
                if defined != named_outside(code, def, names) {
                    failures.push(format!(
                        "{} ({target:?}): {} defined: {defined}, used: {}",
                        path.display(),
                        names[0],
                        !defined
                    ));
                }
            }
            let defined = code.contains(alloc_def);
            let used = code.replacen(alloc_def, "", 1).contains("sdfgc_alloc<");
            if defined != used {
                failures.push(format!(
                    "{} ({target:?}): sdfgc_alloc defined: {defined}, used: {used}",
                    path.display()
                ));
            }
        }
    }
    assert!(checked > 200, "only {checked} files generated");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every helper is used somewhere in the fixtures (else its test above is vacuous).
    for (k, (names, _)) in HELPERS.iter().enumerate() {
        assert!(seen_defined[k], "no fixture uses {}", names[0]);
    }
}
