use super::*;

#[test]
fn python_complex_reprs() {
    assert_eq!(parse_complex("(1+2j)"), Some((1.0, 2.0)));
    assert_eq!(parse_complex("(3-1j)"), Some((3.0, -1.0)));
    assert_eq!(parse_complex("1j"), Some((0.0, 1.0)));
    assert_eq!(parse_complex("-1.5j"), Some((0.0, -1.5)));
    assert_eq!(parse_complex("(-0-1j)"), Some((-0.0, -1.0)));
    assert_eq!(parse_complex("(1e-05+2.5e+300j)"), Some((1e-5, 2.5e300)));
    assert_eq!(parse_complex("(-1e-05-2e-07j)"), Some((-1e-5, -2e-7)));
    assert_eq!(parse_complex("(1+infj)"), Some((1.0, f64::INFINITY)));
    let (re, im) = parse_complex("(nan-infj)").unwrap();
    assert!(re.is_nan() && im == f64::NEG_INFINITY);
    assert_eq!(parse_complex("2.5"), Some((2.5, 0.0)));
    assert_eq!(parse_complex("(1+2)"), None);
    assert_eq!(parse_complex("abc"), None);
}

/// An SDFG with one state of `pairs` access-node/tasklet pairs chained
/// by memlets; `bad` lists node indices whose access node has no data.
fn big_state(pairs: usize, bad: &[usize]) -> String {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for k in 0..pairs {
        let (a, t) = (2 * k, 2 * k + 1);
        let data = if bad.contains(&a) {
            ""
        } else {
            r#""data": "A""#
        };
        nodes.push(format!(
            r#"{{"type": "AccessNode", "label": "A", "attributes": {{{data}}}, "scope_entry": null, "id": {a}}}"#
        ));
        nodes.push(format!(
            r#"{{"type": "Tasklet", "label": "t{k}", "attributes": {{"code": {{"string_data": "__out = __in1 + {k}.0", "language": "Python"}}, "in_connectors": {{"__in1": null}}, "out_connectors": {{"__out": null}}}}, "scope_entry": null, "id": {t}}}"#
        ));
        let memlet = |i: usize| {
            format!(
                r#"{{"data": {{"type": "Memlet", "attributes": {{"data": "A", "subset": {{"type": "Range", "ranges": [{{"start": "{i}", "end": "{i}", "step": "1", "tile": "1"}}]}}}}}}}}"#
            )
        };
        edges.push(format!(
            r#"{{"type": "MultiConnectorEdge", "attributes": {}, "src": "{a}", "dst": "{t}", "src_connector": null, "dst_connector": "__in1"}}"#,
            memlet(k)
        ));
        if k + 1 < pairs {
            edges.push(format!(
                r#"{{"type": "MultiConnectorEdge", "attributes": {}, "src": "{t}", "dst": "{}", "src_connector": "__out", "dst_connector": null}}"#,
                memlet(k + 1),
                a + 2
            ));
        }
    }
    format!(
        r#"{{"type": "SDFG", "attributes": {{"name": "big", "_arrays": {{"A": {{"type": "Array", "attributes": {{"shape": ["N"], "strides": ["1"], "total_size": "N", "offset": ["0"], "dtype": "float64"}}}}}}, "symbols": {{"N": "int64"}}, "arg_names": ["A"]}}, "nodes": [{{"type": "SDFGState", "label": "s", "id": 0, "nodes": [{}], "edges": [{}]}}], "edges": [], "start_block": 0}}"#,
        nodes.join(", "),
        edges.join(", ")
    )
}

#[test]
fn long_lists_read_on_two_threads_give_the_same_ir() {
    let text = big_state(PARALLEL_ELEMENTS, &[]);
    let two = load_str_with(&text, true).unwrap();
    let one = load_str_with(&text, false).unwrap();
    let BlockKind::State(st) = &one.body.blocks[0].kind else {
        panic!("not a state")
    };
    assert_eq!(st.nodes.len(), 2 * PARALLEL_ELEMENTS);
    assert_eq!(format!("{two:?}"), format!("{one:?}"));
}

#[test]
fn long_lists_read_on_two_threads_report_the_first_error() {
    // Errors in both halves: the one earlier in the list is reported.
    let n = PARALLEL_ELEMENTS;
    let text = big_state(n, &[200, 2 * n - 2]);
    let two = load_str_with(&text, true).unwrap_err().to_string();
    let one = load_str_with(&text, false).unwrap_err().to_string();
    assert_eq!(two, one);
    assert!(two.contains("/nodes/0/nodes/200/"), "{two}");
    // Only in the second half.
    let text = big_state(n, &[2 * n - 2]);
    let two = load_str_with(&text, true).unwrap_err().to_string();
    assert_eq!(two, load_str_with(&text, false).unwrap_err().to_string());
}

/// An SDFG whose `constants_prop` is `consts` (a JSON object body).
fn with_constants(consts: &str) -> String {
    format!(
        r#"{{"type": "SDFG", "attributes": {{"name": "c", "_arrays": {{}}, "symbols": {{}}, "constants_prop": {{{consts}}}}}, "nodes": [{{"type": "SDFGState", "label": "s", "id": 0, "nodes": [], "edges": []}}], "edges": [], "start_block": 0}}"#
    )
}

fn scalar(dtype: &str, value: &str) -> String {
    let t = if dtype.is_empty() {
        String::new()
    } else {
        format!(r#""dtype": "{dtype}", "#)
    };
    format!(r#"[{{"type": "Scalar", "attributes": {{{t}"shape": ["1"]}}}}, {value}]"#)
}

/// Complex constants: Python's `repr` strings (DaCe's spelling) and plain
/// numbers, scalar and ndarray; real parts in `values`, imaginary in `imag`.
#[test]
fn complex_constants_keep_both_parts() {
    use ConstValue::*;
    let arr = r#"[{"type": "Array", "attributes": {"dtype": "complex64", "shape": ["2"]}}, {"type": "ndarray", "data": ["(1-0.5j)", 3]}]"#;
    let text = with_constants(&format!(
        r#""Z": {}, "R": {}, "A": {arr}"#,
        scalar("complex128", r#""(1+2j)""#),
        scalar("complex128", "4")
    ));
    let sdfg = load_str(&text).unwrap();
    let z = &sdfg.constants["Z"];
    assert_eq!(
        (z.values.clone(), z.imag.clone()),
        (vec![Float(1.0)], vec![2.0])
    );
    let r = &sdfg.constants["R"];
    assert_eq!(
        (r.values.clone(), r.imag.clone()),
        (vec![Int(4)], vec![0.0])
    );
    let a = &sdfg.constants["A"];
    assert_eq!(a.dtype, DType::Complex64);
    assert_eq!(a.values, vec![Float(1.0), Int(3)]);
    assert_eq!(a.imag, vec![-0.5, 0.0]);
    // Real constants carry no imaginary parts.
    let text = with_constants(&format!(r#""D": {}"#, scalar("float64", "2.5")));
    assert!(load_str(&text).unwrap().constants["D"].imag.is_empty());
}

/// Every spelling DaCe 1.0.2 and 2.x write for a constant's value: JSON
/// numbers and bools, the strings of numpy scalars (`"True"`, `"7"`,
/// `"0.25"`, `"-inf"`), Python's bare `Infinity`/`NaN` tokens, ndarrays;
/// an int64 beyond 2^53 stays exact; a descriptor without `dtype` is int32.
#[test]
fn constants_in_every_spelling() {
    let consts = [
        ("B", scalar("bool", "true")),
        ("NB", scalar("bool", r#""False""#)),
        ("NBT", scalar("bool", r#""True""#)),
        ("I", scalar("int64", "5")),
        ("I32", scalar("", r#""7""#)),
        ("U8", scalar("uint8", r#""200""#)),
        ("BIG", scalar("int64", r#""9007199254740993""#)),
        ("BIGN", scalar("int64", "9007199254740993")),
        ("U64", scalar("uint64", "18446744073709551615")),
        ("F", scalar("float64", "1.5")),
        ("F32", scalar("float32", r#""0.25""#)),
        ("E", scalar("float64", r#""1e-05""#)),
        ("NI", scalar("float64", r#""-inf""#)),
        ("PI", scalar("float64", "Infinity")),
        ("MI", scalar("float64", "-Infinity")),
        ("NN", scalar("float64", "NaN")),
        (
            "A",
            r#"[{"type": "Array", "attributes": {"dtype": "float64", "shape": ["3"]}}, {"type": "ndarray", "data": [NaN, -Infinity, 1.0], "dtype": "float64"}]"#.to_string(),
        ),
        (
            "BA",
            r#"[{"type": "Array", "attributes": {"dtype": "bool", "shape": ["2"]}}, {"type": "ndarray", "data": [true, false], "dtype": "bool"}]"#.to_string(),
        ),
    ];
    let body: Vec<String> = consts
        .iter()
        .map(|(k, v)| format!(r#""{k}": {v}"#))
        .collect();
    let sdfg = load_str(&with_constants(&body.join(", "))).unwrap();
    let one = |k: &str| {
        let c = &sdfg.constants[k];
        assert!(c.shape.is_empty(), "{k}");
        (c.dtype, c.values[0])
    };
    use ConstValue::*;
    assert_eq!(one("B"), (DType::Bool, Bool(true)));
    assert_eq!(one("NB"), (DType::Bool, Bool(false)));
    assert_eq!(one("NBT"), (DType::Bool, Bool(true)));
    assert_eq!(one("I"), (DType::Int64, Int(5)));
    assert_eq!(one("I32"), (DType::Int32, Int(7)));
    assert_eq!(one("U8"), (DType::UInt8, Int(200)));
    assert_eq!(one("BIG"), (DType::Int64, Int(9007199254740993)));
    assert_eq!(one("BIGN"), (DType::Int64, Int(9007199254740993)));
    assert_eq!(one("U64"), (DType::UInt64, Int(u64::MAX.into())));
    assert_eq!(one("F"), (DType::Float64, Float(1.5)));
    assert_eq!(one("F32"), (DType::Float32, Float(0.25)));
    assert_eq!(one("E"), (DType::Float64, Float(1e-5)));
    assert_eq!(one("NI"), (DType::Float64, Float(f64::NEG_INFINITY)));
    assert_eq!(one("PI"), (DType::Float64, Float(f64::INFINITY)));
    assert_eq!(one("MI"), (DType::Float64, Float(f64::NEG_INFINITY)));
    assert!(matches!(one("NN").1, Float(f) if f.is_nan()));
    let a = &sdfg.constants["A"];
    assert_eq!(a.shape, vec![3]);
    assert!(matches!(a.values[0], Float(f) if f.is_nan()));
    assert_eq!(&a.values[1..], &[Float(f64::NEG_INFINITY), Float(1.0)]);
    assert_eq!(sdfg.constants["BA"].values, vec![Bool(true), Bool(false)]);
}

/// Constant values that cannot be compiled are refused by name, located.
#[test]
fn bad_constant_values_are_refused() {
    for (c, want) in [
        (
            scalar("float64", r#""(1+2j)""#),
            "unsupported: complex constant",
        ),
        (scalar("complex128", r#""(1+2j""#), "invalid complex number"),
        (
            scalar("uint8", "300"),
            "does not fit the constant's type uint8",
        ),
        (scalar("int32", "1.5"), "is not an integer"),
        (
            scalar("int32", r#""seven""#),
            "expected a number or a boolean",
        ),
    ] {
        let err = load_str(&with_constants(&format!(r#""K": {c}"#)))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
        assert!(err.contains("/attributes/constants_prop/K/1"), "{err}");
    }
}

/// DaCe 1.0.2 writes a `SymExpr` range bound as `{"main": ..., "approx": ...}`
/// (DaCe 2 as `SymExpr(main, approx)`): the exact expression counts.
#[test]
fn symexpr_bounds_in_both_spellings() {
    let text = r#"{"type": "SDFG", "attributes": {"name": "s", "_arrays": {"A": {"type": "Array", "attributes": {"shape": ["N"], "strides": ["1"], "total_size": "N", "offset": ["0"], "dtype": "float64"}}}, "symbols": {"N": "int64"}}, "nodes": [{"type": "SDFGState", "label": "s", "id": 0, "nodes": [{"type": "AccessNode", "label": "A", "attributes": {"data": "A"}, "id": 0, "scope_entry": null}, {"type": "AccessNode", "label": "A", "attributes": {"data": "A"}, "id": 1, "scope_entry": null}], "edges": [{"type": "MultiConnectorEdge", "attributes": {"data": {"type": "Memlet", "attributes": {"data": "A", "subset": {"type": "Range", "ranges": [{"start": {"main": "N - 2", "approx": "0"}, "end": "SymExpr(N - 1, N)", "step": "1", "tile": "1"}]}}}}, "src": "0", "dst": "1", "src_connector": null, "dst_connector": null}]}], "edges": [], "start_block": 0}"#;
    let sdfg = load_str(text).unwrap();
    let BlockKind::State(st) = &sdfg.body.blocks[0].kind else {
        panic!("not a state")
    };
    let r = &st.edges[0].memlet.subset.as_ref().unwrap()[0];
    assert_eq!(r.start, python::parse_expr("N - 2").unwrap());
    assert_eq!(r.end, python::parse_expr("N - 1").unwrap());
}

/// Extra offsets that are all zero (left by DaCe's GPU reduce expansion on
/// a reshaped container) are dropped; any other count mismatch is refused.
#[test]
fn extra_zero_offsets_are_dropped_and_others_refused() {
    let sdfg = |offset: &str| {
        big_state(2, &[]).replace(r#""offset": ["0"]"#, &format!(r#""offset": {offset}"#))
    };
    let ok = load_str(&sdfg(r#"["0", "0"]"#)).unwrap();
    assert_eq!(ok.arrays["A"].offset, vec![Expr::Int(0)]);
    let err = load_str(&sdfg(r#"["0", "1"]"#)).unwrap_err().to_string();
    assert!(
        err.contains("1 dimensions but 1 strides and 2 offsets"),
        "{err}"
    );
}
