//! `--blas openblas` end to end: every CPU fixture whose BLAS library nodes
//! (Gemm, Gemv, Dot, MatMul) become CBLAS calls is built against OpenBLAS
//! (`g++ ... -lopenblas`, installed by scripts/install-test-tools.sh) and
//! run by the harness on the case's inputs; outputs must match DaCe's.

mod common;

use std::path::PathBuf;

use common::corpus::{assert_all_passed, case_files_under, fixtures, run_parallel};
use common::harness::{RunOptions, run_case};
use sdfgc::driver::{Blas, CompileOptions, Target};

fn options() -> CompileOptions {
    CompileOptions {
        blas: Blas::Openblas,
        ..CompileOptions::new(Target::Cpp)
    }
}

#[test]
fn blas_calls_match_dace_with_openblas() {
    // The simplified SDFGs keep DaCe's library nodes (auto-optimized ones
    // are expanded already).
    let candidates = case_files_under(&fixtures(), |n| {
        matches!(n, "program.sdfg" | "program.external.sdfg")
    });
    let tasks: Vec<(PathBuf, String)> = candidates
        .into_iter()
        .filter(|(d, v)| {
            sdfgc::driver::generate(&d.join(v), &options()).is_ok_and(|outs| {
                outs.iter()
                    .any(|(n, t)| n.ends_with(".cpp") && t.contains("cblas_"))
            })
        })
        .collect();
    assert!(tasks.len() >= 15, "only {} files call BLAS", tasks.len());
    let failures = run_parallel(
        &tasks,
        |(d, v)| format!("{}/{v}", d.display()),
        |(d, v), work| {
            let opts = CompileOptions {
                output: work.to_path_buf(),
                ..options()
            };
            let outs = sdfgc::driver::generate(&d.join(v), &opts).map_err(|e| e.to_string())?;
            let (name, text) = outs
                .iter()
                .find(|(n, _)| n.ends_with(".cpp"))
                .ok_or("no .cpp")?;
            if !text.contains("-lopenblas") {
                return Err("the build line does not link OpenBLAS".into());
            }
            sdfgc::driver::write_outputs(work, &outs).map_err(|e| e.to_string())?;
            let lib = work.join("lib.so");
            let cc = common::cxx::cxx()
                .args(["-std=c++17", "-O2", "-fopenmp", "-fPIC", "-shared"])
                .args(["-Wall", "-Wextra", "-Werror"])
                .arg(work.join(name))
                .arg("-o")
                .arg(&lib)
                .arg("-lopenblas")
                .output()
                .map_err(|e| format!("cannot run g++: {e}"))?;
            if !cc.status.success() {
                return Err(format!(
                    "g++ failed (OpenBLAS: scripts/install-test-tools.sh):\n{}",
                    String::from_utf8_lossy(&cc.stderr)
                        .lines()
                        .take(8)
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
            let run = RunOptions {
                variant: v.clone(),
                poison: true,
                repeat: 2,
                ..Default::default()
            };
            let report = run_case(d, &lib, &run)?;
            if report.ok {
                Ok(())
            } else {
                Err(format!("run failed: {}", report.message))
            }
        },
    );
    assert_all_passed("BLAS-calling files", tasks.len(), &failures);
}
