//! Write-conflict resolution on complex data: what the writers express
//! (sums, products, custom lambdas on the host) and what they refuse by
//! name (min / max on complex numbers; on GPU targets a complex128 update
//! other than a sum, which no device atomic covers). Variants of
//! fixtures/corpus/complex_arith with the lambda of its `total` (complex128)
//! accumulation replaced.

use std::path::{Path, PathBuf};

use sdfgc::driver::{CompileOptions, Target, generate};
use serde_json::Value;

fn fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus/complex_arith")
        .join(file)
}

/// Replaces the lambda of every write-conflict resolution into `data`.
fn set_wcr(v: &mut Value, data: &str, lambda: &str) -> usize {
    let mut n = 0;
    match v {
        Value::Object(o) => {
            if o.get("data").and_then(Value::as_str) == Some(data)
                && o.get("wcr").is_some_and(|w| !w.is_null())
            {
                o.insert("wcr".into(), Value::String(lambda.into()));
                n += 1;
            }
            for x in o.values_mut() {
                n += set_wcr(x, data, lambda);
            }
        }
        Value::Array(a) => {
            for x in a {
                n += set_wcr(x, data, lambda);
            }
        }
        _ => {}
    }
    n
}

/// Generates `file` with the `total` lambda replaced; Err holds the message.
fn generate_with(file: &str, lambda: &str, target: Target) -> Result<(), String> {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(file)).unwrap()).unwrap();
    let data = if file.contains("gpu") {
        "gpu_total"
    } else {
        "total"
    };
    assert!(
        set_wcr(&mut v, data, lambda) > 0,
        "no WCR into {data} in {file}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    let opts = CompileOptions {
        output: dir.path().to_path_buf(),
        ..CompileOptions::new(target)
    };
    generate(&path, &opts)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn complex_min_max_are_refused_by_name() {
    for lambda in ["lambda a, b: min(a, b)", "lambda a, b: max(a, b)"] {
        let err = generate_with("program.sdfg", lambda, Target::Cpp).unwrap_err();
        assert!(
            err.contains("write-conflict resolution") && err.contains("complex128"),
            "{lambda}: {err}"
        );
        assert!(err.contains("/edges/"), "not located: {err}");
    }
}

#[test]
fn complex128_non_sum_is_refused_on_gpu_only() {
    let lambda = "lambda a, b: a * b";
    generate_with("program.sdfg", lambda, Target::Cpp).expect("host: a critical section");
    generate_with("program.sdfg", "lambda a, b: a * b + 1j", Target::Cpp)
        .expect("host: a custom lambda, its operands converted");
    for target in [Target::Cuda, Target::Hip] {
        let err = generate_with("program.gpu.sdfg", lambda, target).unwrap_err();
        assert!(
            err.contains("GPU target") && err.contains("complex128"),
            "{target:?}: {err}"
        );
    }
    generate_with("program.gpu.sdfg", "lambda a, b: a + b", Target::Cuda)
        .expect("a complex sum is two atomic adds");
}
