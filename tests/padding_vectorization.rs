//! Row padding must not cost the loops that index padded transients their
//! vectorization: GCC vectorizes as many loops of a program whose transients
//! are all padded (`--row-padding always`) as of the same program unpadded.
//! A select in `sdfgc_pad_stride` kept GCC from hoisting the stride out of
//! the loops and from vectorizing them (NPBench hdiff, auto-optimized: 1.6x
//! DaCe's time at 128 x 128 x 120).

mod common;

use std::path::{Path, PathBuf};

use sdfgc::driver::{CompileOptions, RowPadding, Target};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The loops GCC vectorizes in the C++ that sdfgc writes for `sdfg`.
fn vectorized_loops(sdfg: &Path, row_padding: RowPadding, work: &Path) -> usize {
    std::fs::create_dir_all(work).unwrap();
    let opts = CompileOptions {
        row_padding,
        output: work.to_path_buf(),
        ..CompileOptions::new(Target::Cpp)
    };
    let outs = sdfgc::driver::generate(sdfg, &opts).expect("generate");
    if row_padding == RowPadding::Always {
        assert!(
            outs.iter().any(|(_, c)| c.contains("sdfgc_pad_stride(")),
            "{}: nothing padded",
            sdfg.display()
        );
    }
    sdfgc::driver::write_outputs(work, &outs).unwrap();
    let cpp = outs
        .iter()
        .find(|(n, _)| n.ends_with(".cpp"))
        .unwrap()
        .0
        .clone();
    let out = common::cxx::cxx()
        .current_dir(work)
        .args(["-std=c++17", "-O3", "-march=x86-64-v3", "-fopenmp", "-fPIC"])
        .args(["-fopt-info-vec-optimized", "-S", "-o", "/dev/null", &cpp])
        .output()
        .expect("the C++ compiler runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    // Distinct loops (their source lines): GCC reports a loop once per
    // version (epilogues, versions for aliasing), which is no measure here.
    let lines: std::collections::BTreeSet<&str> = report
        .lines()
        .filter(|l| l.contains("loop vectorized"))
        .filter_map(|l| l.split(':').nth(1))
        .collect();
    lines.len()
}

#[test]
fn padded_transients_keep_their_loops_vectorized() {
    let tmp = std::env::temp_dir().join(format!("sdfgc-padvec-{}", std::process::id()));
    let mut bad = Vec::new();
    for case in [
        "npbench/hdiff/program.autoopt.sdfg",
        "npbench/vadv/program.sdfg",
        "npbench/cavity_flow/program.autoopt.sdfg",
    ] {
        let sdfg = root().join("fixtures").join(case);
        let dir = tmp.join(case.replace('/', "_"));
        let off = vectorized_loops(&sdfg, RowPadding::Off, &dir.join("off"));
        let padded = vectorized_loops(&sdfg, RowPadding::Always, &dir.join("always"));
        assert!(off > 0, "{case}: no loop vectorized even unpadded");
        if padded < off {
            bad.push(format!(
                "{case}: {padded} loops vectorized padded, {off} unpadded"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
