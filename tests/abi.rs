//! The exported interface matches DaCe's, parameter for parameter, for every
//! variant file of every case (case.json records what DaCe generated).

use std::path::{Path, PathBuf};

use sdfgc::passes::abi::{self, ParamKind};

fn case_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap() == "case.json" {
                out.push(d.clone());
            }
        }
    }
    out.sort();
    out
}

fn ctype(p: &abi::Param) -> String {
    let base = p.dtype.ctype();
    match p.kind {
        ParamKind::Array => format!("{base} *"),
        _ => base.to_string(),
    }
}

fn expected(list: &serde_json::Value) -> Vec<(String, String)> {
    list.as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] != "state")
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                // `dace::uint` (numpy's uintc) is DaCe's typedef of `unsigned int`.
                match p["ctype"].as_str().unwrap() {
                    "dace::uint *" => "unsigned int *".to_string(),
                    "dace::uint" => "unsigned int".to_string(),
                    c => c.to_string(),
                },
            )
        })
        .collect()
}

fn check_variant(dir: &Path, variant: &str, want: &serde_json::Value) -> Result<(), String> {
    let sdfg = sdfgc::driver::load_valid(&dir.join(variant)).map_err(|e| e.to_string())?;
    let got = abi::compute(&sdfg);
    let prog: Vec<(String, String)> = got
        .program
        .iter()
        .map(|p| (p.name.clone(), ctype(p)))
        .collect();
    let init: Vec<(String, String)> = got
        .init
        .iter()
        .map(|p| (p.name.clone(), ctype(p)))
        .collect();
    if got.name != want["sdfg_name"].as_str().unwrap() {
        return Err(format!("name {} != {}", got.name, want["sdfg_name"]));
    }
    let wp = expected(&want["program"]["params"]);
    if prog != wp {
        return Err(format!(
            "program params differ:\n  sdfgc: {prog:?}\n  DaCe:  {wp:?}"
        ));
    }
    let wi = expected(&want["init"]["params"]);
    if init != wi {
        return Err(format!(
            "init params differ:\n  sdfgc: {init:?}\n  DaCe:  {wi:?}"
        ));
    }
    Ok(())
}

#[test]
fn program_and_init_parameters_match_dace() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in case_dirs() {
        let case: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
        for (variant, want) in case["abi"].as_object().unwrap() {
            if !dir.join(variant).exists() {
                continue;
            }
            checked += 1;
            if let Err(e) = check_variant(&dir, variant, want) {
                failures.push(format!("{}/{variant}: {e}", dir.display()));
            }
        }
    }
    assert!(checked > 200, "only {checked} variants checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} variants differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
