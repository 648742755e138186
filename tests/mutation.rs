//! Mutation robustness: real fixtures, damaged deterministically, must be
//! either accepted or refused with a message, by the library (reader,
//! validation, C++ generation) and by the binary, and never panic.
//!
//! Inputs: every `program.sdfg` and `program.v2.sdfg` of `fixtures/corpus`
//! and every `cpu.sdfg` of `fixtures/gt4py`, up to [`MAX_FILE_BYTES`].
//! Each file gets [`MUTANTS_PER_FILE`] mutants from a xorshift generator
//! seeded by its path, so a failure reproduces exactly.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

use sdfgc::driver::{self, CompileOptions, Target};
use sdfgc::{front, valid};

/// Larger fixtures are skipped to keep the test fast in debug builds.
const MAX_FILE_BYTES: u64 = 400 * 1024;

/// Mutants generated per file.
const MUTANTS_PER_FILE: usize = 30;

/// Mutants run through the binary by [`binary_refuses_mutants_cleanly`].
const BINARY_MUTANTS: usize = 20;

/// Depth of the self-nesting chain that exceeds every nesting limit.
const DEEP_NESTING: usize = 80;

/// Depth of a self-nesting chain that stays within serde_json's limit of
/// 128 JSON levels (each SDFG level costs 6), so it reaches the reader,
/// validation and the writer.
const SHALLOW_NESTING: usize = 18;

/// Panics in `src/back/` or `src/passes/` found by this test, as
/// `(fixture path relative to the crate, mutation label)`, excluded until
/// fixed there. Keep it empty.
const KNOWN_BACKEND_PANICS: &[(&str, &str)] = &[];

// ------------------------------------------------------------- inputs ----

/// The fixtures this test mutates, sorted, relative to the crate root.
fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("fixtures")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let name = p.file_name().unwrap().to_string_lossy();
            let wanted = if rel.starts_with("fixtures/corpus") {
                name == "program.sdfg" || name == "program.v2.sdfg"
            } else {
                rel.starts_with("fixtures/gt4py") && name == "cpu.sdfg"
            };
            if wanted && p.metadata().unwrap().len() <= MAX_FILE_BYTES {
                out.push(rel);
            }
        }
    }
    out.sort();
    assert!(out.len() > 30, "too few fixtures found: {}", out.len());
    out
}

// --------------------------------------------------------------- PRNG ----

/// xorshift64: a tiny deterministic generator (no extra crates).
struct Rng(u64);

impl Rng {
    /// Seeds from a string (FNV-1a), never zero.
    fn seeded(s: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(h | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random element of a non-empty slice.
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ------------------------------------------------------ JSON pointers ----

/// Appends `/key` to a JSON pointer, escaping `~` and `/`.
fn push_seg(at: &mut String, key: &str) {
    at.push('/');
    for c in key.chars() {
        match c {
            '~' => at.push_str("~0"),
            '/' => at.push_str("~1"),
            c => at.push(c),
        }
    }
}

/// JSON pointers of the values in `doc` that satisfy `pred` (the root is
/// `""`), in document order.
fn pointers_where(doc: &Value, pred: impl Fn(&Value) -> bool) -> Vec<String> {
    /// Depth-first walk that allocates only for matches.
    fn walk(v: &Value, at: &mut String, pred: &dyn Fn(&Value) -> bool, out: &mut Vec<String>) {
        if pred(v) {
            out.push(at.clone());
        }
        let len = at.len();
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    push_seg(at, k);
                    walk(x, at, pred, out);
                    at.truncate(len);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    push_seg(at, &i.to_string());
                    walk(x, at, pred, out);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut String::new(), &pred, &mut out);
    out
}

/// True for an object whose `type` is one of `types`.
fn has_type(v: &Value, types: &[&str]) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| types.contains(&t))
}

/// Regions whose `edges` are interstate edges.
const REGION_TYPES: &[&str] = &["SDFG", "ControlFlowRegion", "LoopRegion"];

// ---------------------------------------------------------- mutations ----

/// What a mutant is: its text and a label that identifies it in reports.
struct Mutant {
    label: String,
    text: String,
}

/// One fixture, parsed once, with the pointers of all its values but the root.
struct Original {
    doc: Value,
    text: String,
    ptrs: Vec<String>,
}

impl Original {
    fn new(text: String) -> Original {
        let doc: Value = serde_json::from_str(&text).unwrap();
        let mut ptrs = pointers_where(&doc, |_| true);
        ptrs.remove(0); // the root
        Original { doc, text, ptrs }
    }

    /// Applies `f` to a copy and serializes it; `None` if `f` found nothing to change.
    fn edited(&self, label: String, f: impl FnOnce(&mut Value) -> bool) -> Option<Mutant> {
        let mut doc = self.doc.clone();
        f(&mut doc).then(|| Mutant {
            label,
            text: serde_json::to_string(&doc).unwrap(),
        })
    }
}

/// Deletes a random key of a random object.
fn delete_key(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let objs = pointers_where(&o.doc, |v| v.as_object().is_some_and(|m| !m.is_empty()));
    let at = rng.pick(&objs).clone();
    let keys: Vec<String> = o.doc.pointer(&at)?.as_object()?.keys().cloned().collect();
    let key = rng.pick(&keys).clone();
    o.edited(format!("delete key '{key}' of '{at}'"), |d| {
        d.pointer_mut(&at)
            .and_then(Value::as_object_mut)
            .and_then(|m| m.shift_remove(&key))
            .is_some()
    })
}

/// Replaces a random value (not the root) with a value of another JSON type.
fn replace_value(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let at = rng.pick(&o.ptrs).clone();
    let old = o.doc.pointer(&at)?;
    let choices: Vec<Value> = [
        Value::Null,
        json!(7),
        json!("x"),
        json!([]),
        Value::Object(Map::new()),
    ]
    .into_iter()
    .filter(|c| std::mem::discriminant(c) != std::mem::discriminant(old))
    .collect();
    let new = rng.pick(&choices).clone();
    o.edited(format!("replace '{at}' with {new}"), |d| {
        d.pointer_mut(&at).map(|v| *v = new).is_some()
    })
}

/// Cuts the serialized text at a random byte.
fn truncate(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let mut cut = rng.below(o.text.len());
    while !o.text.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(Mutant {
        label: format!("truncate at byte {cut}"),
        text: o.text[..cut].to_string(),
    })
}

/// Swaps the ids of two nodes of a random state.
fn swap_node_ids(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let states = pointers_where(&o.doc, |v| {
        has_type(v, &["SDFGState"]) && v["nodes"].as_array().is_some_and(|n| n.len() >= 2)
    });
    if states.is_empty() {
        return None;
    }
    let at = rng.pick(&states).clone();
    let n = o.doc.pointer(&at)?["nodes"].as_array()?.len();
    let (i, j) = (rng.below(n), rng.below(n));
    o.edited(format!("swap ids of nodes {i} and {j} of '{at}'"), |d| {
        let nodes = d.pointer_mut(&format!("{at}/nodes")).unwrap();
        let a = nodes[i]["id"].take();
        let b = std::mem::replace(&mut nodes[j]["id"], a);
        nodes[i]["id"] = b;
        true
    })
}

/// Sets a random shape entry of a random container to `value`.
fn set_shape(o: &Original, rng: &mut Rng, value: &str) -> Option<Mutant> {
    let shapes = pointers_where(&o.doc, |v| {
        v.get("shape")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty())
    });
    if shapes.is_empty() {
        return None;
    }
    let at = rng.pick(&shapes).clone();
    let n = o.doc.pointer(&at)?["shape"].as_array()?.len();
    let i = rng.below(n);
    o.edited(format!("set '{at}/shape/{i}' to \"{value}\""), |d| {
        d.pointer_mut(&format!("{at}/shape/{i}"))
            .map(|v| *v = json!(value))
            .is_some()
    })
}

/// Points a random interstate edge back at its own source.
fn interstate_cycle(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let edges: Vec<String> = pointers_where(&o.doc, |v| has_type(v, REGION_TYPES))
        .into_iter()
        .flat_map(|r| {
            let n = o.doc.pointer(&r).unwrap()["edges"]
                .as_array()
                .map_or(0, Vec::len);
            (0..n).map(move |i| format!("{r}/edges/{i}"))
        })
        .collect();
    if edges.is_empty() {
        return None;
    }
    let at = rng.pick(&edges).clone();
    o.edited(format!("point interstate edge '{at}' at its source"), |d| {
        let e = d.pointer_mut(&at).unwrap();
        e["dst"] = e["src"].clone();
        true
    })
}

/// A chain of `depth` minimal SDFGs, each holding the next in a nested
/// SDFG node, with `innermost` at the bottom.
fn nesting_chain(innermost: Value, depth: usize) -> Value {
    (0..depth).fold(innermost, |inner, k| {
        json!({
            "type": "SDFG",
            "attributes": { "name": format!("wrap{k}"), "_arrays": {} },
            "nodes": [{
                "type": "SDFGState", "label": format!("s{k}"), "id": 0, "edges": [],
                "nodes": [{ "type": "NestedSDFG", "label": format!("n{k}"), "id": 0,
                            "attributes": { "sdfg": inner } }]
            }],
            "edges": []
        })
    })
}

/// Points a nested SDFG's `sdfg` at a copy of itself nested `depth` deep
/// (or, without nested SDFGs, adds one holding the chain to the first state).
fn deep_nesting(o: &Original, depth: usize) -> Option<Mutant> {
    let nested = pointers_where(&o.doc, |v| has_type(v, &["NestedSDFG"]));
    if let Some(at) = nested.first() {
        let at = format!("{at}/attributes/sdfg");
        let inner = o.doc.pointer(&at)?.clone();
        return o.edited(format!("nest '{at}' {depth} deep"), |d| {
            *d.pointer_mut(&at).unwrap() = nesting_chain(inner, depth);
            true
        });
    }
    let states = pointers_where(&o.doc, |v| has_type(v, &["SDFGState"]));
    let at = states.last()?.clone();
    let chain = nesting_chain(
        json!({"type": "SDFG", "attributes": {"name": "leaf"}}),
        depth,
    );
    o.edited(format!("add a chain {depth} deep to '{at}'"), |d| {
        let nodes = d.pointer_mut(&format!("{at}/nodes")).unwrap();
        let id = nodes.as_array().map_or(0, Vec::len);
        let node = json!({"type": "NestedSDFG", "label": "chain", "id": id,
                          "attributes": {"sdfg": chain}});
        nodes.as_array_mut().map(|n| n.push(node)).is_some()
    })
}

/// Empties the `nodes` list of a random state that has edges.
fn empty_nodes(o: &Original, rng: &mut Rng) -> Option<Mutant> {
    let states = pointers_where(&o.doc, |v| {
        has_type(v, &["SDFGState"]) && v["edges"].as_array().is_some_and(|e| !e.is_empty())
    });
    if states.is_empty() {
        return None;
    }
    let at = rng.pick(&states).clone();
    o.edited(format!("empty the nodes of '{at}'"), |d| {
        d.pointer_mut(&format!("{at}/nodes"))
            .map(|n| *n = json!([]))
            .is_some()
    })
}

/// The deterministic mutants of one file, numbered in their labels.
fn mutants(path: &Path, text: String) -> Vec<Mutant> {
    let o = Original::new(text);
    let mut rng = Rng::seeded(&path.to_string_lossy());
    let mut out: Vec<Option<Mutant>> = Vec::new();
    for _ in 0..8 {
        out.push(delete_key(&o, &mut rng));
        out.push(replace_value(&o, &mut rng));
    }
    for _ in 0..4 {
        out.push(truncate(&o, &mut rng));
    }
    for _ in 0..2 {
        out.push(swap_node_ids(&o, &mut rng));
        out.push(set_shape(&o, &mut rng, "-5"));
        out.push(set_shape(&o, &mut rng, "99999999999999999999"));
        out.push(interstate_cycle(&o, &mut rng));
    }
    out.push(deep_nesting(&o, DEEP_NESTING));
    out.push(deep_nesting(&o, SHALLOW_NESTING));
    out.push(empty_nodes(&o, &mut rng));
    let mut out: Vec<Mutant> = out.into_iter().flatten().collect();
    while out.len() < MUTANTS_PER_FILE {
        out.push(replace_value(&o, &mut rng).unwrap());
    }
    out.truncate(MUTANTS_PER_FILE);
    for (i, m) in out.iter_mut().enumerate() {
        m.label = format!("#{i} {}", m.label);
    }
    out
}

// ------------------------------------------------------------ running ----

thread_local! {
    /// Where the last panic on this thread happened (set by [`quiet_hook`]).
    static PANIC_AT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// A panic hook that records the location instead of printing.
fn quiet_hook() {
    panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        PANIC_AT.with(|p| *p.borrow_mut() = at);
    }));
}

/// Runs `f`, turning a panic into `Err("panicked at FILE:LINE: message")`.
fn no_panic<T>(stage: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = PANIC_AT.with(|p| p.borrow().clone());
        format!("{stage} panicked at {at}: {msg}")
    })
}

/// How far a mutant got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// Refused by the JSON reader.
    Load,
    /// Refused by validation.
    Validate,
    /// Refused by code generation.
    Generate,
    /// Accepted all the way.
    Accepted,
}

/// A panic or an error without a message, with the layer it came from.
struct Failure {
    why: String,
    backend: bool,
}

/// Turns the result of one stage into "go on" (`Some`), "refused" (`None`),
/// or a [`Failure`] for an error without a message.
fn stage_result<T>(
    stage: &str,
    r: sdfgc::diag::Result<T>,
    backend: bool,
) -> Result<Option<T>, Failure> {
    match r {
        Ok(x) => Ok(Some(x)),
        Err(e) if e.message.trim().is_empty() => Err(Failure {
            why: format!("{stage}: error without message: {e:?}"),
            backend,
        }),
        Err(_) => Ok(None),
    }
}

/// Runs one stage under [`no_panic`] and [`stage_result`].
fn stage<T>(
    name: &str,
    backend: bool,
    f: impl FnOnce() -> sdfgc::diag::Result<T>,
) -> Result<Option<T>, Failure> {
    let r = no_panic(name, f).map_err(|why| Failure { why, backend })?;
    stage_result(name, r, backend)
}

/// Loads, validates and generates C++ for one mutant.
fn run_pipeline(text: &str) -> Result<Outcome, Failure> {
    let Some(sdfg) = stage("load", false, || front::json::load_str(text))? else {
        return Ok(Outcome::Load);
    };
    if stage("validate", false, || valid::validate(&sdfg))?.is_none() {
        return Ok(Outcome::Validate);
    }
    let opts = CompileOptions::new(Target::Cpp);
    match stage("generate", true, || driver::generate_sdfg(sdfg, &opts))? {
        Some(_) => Ok(Outcome::Accepted),
        None => Ok(Outcome::Generate),
    }
}

/// Runs `f` on a thread with the stack of a main thread (8 MiB), as the binary has.
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn mutants_never_panic_in_process() {
    let failures = on_big_stack(|| {
        quiet_hook();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut failures = Vec::new();
        let mut outcomes = std::collections::BTreeMap::<Outcome, usize>::new();
        for rel in fixture_files() {
            let text = std::fs::read_to_string(root.join(&rel)).unwrap();
            let file = rel.to_string_lossy();
            for m in mutants(&rel, text) {
                match run_pipeline(&m.text) {
                    Ok(o) => *outcomes.entry(o).or_default() += 1,
                    Err(f) => {
                        let known = KNOWN_BACKEND_PANICS
                            .iter()
                            .any(|(kf, kl)| *kf == file && *kl == m.label);
                        if !(known && f.backend) {
                            failures.push(format!("{file} [{}]: {}", m.label, f.why));
                        }
                    }
                }
            }
        }
        let _ = panic::take_hook();
        let count: usize = outcomes.values().sum::<usize>() + failures.len();
        eprintln!("{count} mutants: {outcomes:?}, {} failures", failures.len());
        assert!(count >= 30 * MUTANTS_PER_FILE, "only {count} mutants");
        failures
    });
    assert!(
        failures.is_empty(),
        "{} mutant(s) panicked or gave an empty message:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn binary_refuses_mutants_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let files = fixture_files();
    let mut rng = Rng::seeded("binary");
    let mut problems = Vec::new();
    for n in 0..BINARY_MUTANTS {
        let rel = rng.pick(&files).clone();
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let all = mutants(&rel, text);
        let m = rng.pick(&all);
        let path = dir.path().join(format!("mutant{n}.sdfg"));
        std::fs::write(&path, &m.text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sdfgc"))
            .arg("check")
            .arg(&path)
            .output()
            .unwrap();
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let located = stderr.contains("at /") || stderr.contains(&*path.to_string_lossy());
        let ok = match code {
            Some(0) => true,
            Some(1) => located && !stderr.contains("panicked"),
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{} [{}]: exit {code:?}, stderr: {}",
                rel.display(),
                m.label,
                stderr.trim()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn panics_are_caught_and_described() {
    let why = no_panic("probe", || -> u8 { panic!("boom {}", 42) }).unwrap_err();
    assert!(
        why.starts_with("probe panicked at") && why.ends_with("boom 42"),
        "{why}"
    );
}
