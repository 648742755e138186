//! `--stats` and `sdfgc plan`: what the workspace of each program needs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::diag::{Error, ErrorKind};
use crate::driver::load_valid;
use crate::ir::Expr;
use crate::ir::cexpr;
use crate::ir::simplify::{eval_int, simplify};
use crate::options::CompileOptions;
use crate::passes::alloc::THREADS;
use crate::passes::layout::{StorageLayout, align_up};
use crate::passes::{self, Program};

/// Symbol values given on the command line.
pub type Symbols = BTreeMap<String, i64>;

/// The thread count per-thread slots are sized for: `--symbol
/// __sdfgc_threads=K`, else what `omp_get_max_threads()` would say here
/// (`OMP_NUM_THREADS`, else the number of cores).
pub fn threads(symbols: &Symbols) -> i64 {
    symbols.get(THREADS).copied().unwrap_or_else(|| {
        std::env::var("OMP_NUM_THREADS")
            .ok()
            .and_then(|v| v.split(',').next()?.trim().parse::<i64>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as i64))
    })
}

fn value(e: &Expr, symbols: &Symbols) -> Option<i64> {
    eval_int(e, &mut |n| {
        symbols
            .get(n)
            .copied()
            .or_else(|| (n == THREADS).then(|| threads(symbols)))
    })
}

/// A size formula as C; the thread count of per-thread slots reads `T`
/// (unless the program has a symbol of that name).
fn formula(e: &Expr) -> String {
    let e = simplify(e);
    let text = cexpr::to_cpp(&e);
    if crate::ir::simplify::free_symbols(&e)
        .iter()
        .any(|s| s == "T")
    {
        text
    } else {
        text.replace(THREADS, "T")
    }
}

/// The note under a report whose formulas use `T`.
fn threads_note(symbols: &Symbols) -> String {
    format!(
        "T = threads at __dace_init_* (one copy of each per-thread transient per thread): {} here (OMP_NUM_THREADS, else the cores; --symbol {THREADS}=K to change)",
        threads(symbols)
    )
}

/// Sizes of one storage: packed, sequential, DaCe's unaligned sum.
fn storage_json(l: &StorageLayout, symbols: &Symbols) -> Value {
    let sequential: Expr = l
        .placements
        .iter()
        .map(|p| align_up(&p.bytes, l.align))
        .reduce(|a, b| Expr::bin(crate::ir::BinaryOp::Add, a, b))
        .unwrap_or(Expr::Int(0));
    let offsets = l.shelf_offsets();
    let transients: Vec<Value> = l
        .placements
        .iter()
        .map(|p| {
            let off = &offsets[p.shelf];
            json!({
                "name": p.slot.name,
                "sdfg": p.slot.sdfg,
                "dtype": p.slot.dtype.dace_name(),
                "bytes": formula(&p.bytes),
                "bytes_value": value(&p.bytes, symbols),
                "shelf": p.shelf,
                "offset_formula": formula(off),
                "offset": value(off, symbols),
                "live": [p.live.start, p.live.end],
                "per_thread": p.slot.per_thread,
            })
        })
        .collect();
    let per_thread = l.placements.iter().any(|p| p.slot.per_thread);
    json!({
        "alignment": l.align,
        "per_thread": per_thread,
        "threads": per_thread.then(|| threads(symbols)),
        "shelves": l.shelves,
        "packed": formula(&offsets[l.shelves]),
        "packed_bytes": value(&offsets[l.shelves], symbols),
        "sequential": formula(&sequential),
        "sequential_bytes": value(&sequential, symbols),
        "dace": formula(&l.dace_total()),
        "dace_bytes": value(&l.dace_total(), symbols),
        "transients": transients,
    })
}

fn program_json(file: &Path, p: &Program, symbols: &Symbols) -> Value {
    let storages: serde_json::Map<String, Value> = p
        .layouts
        .iter()
        .map(|(s, l)| (s.dace_name().to_string(), storage_json(l, symbols)))
        .collect();
    let mut out =
        json!({ "file": file.display().to_string(), "name": p.sdfg.name, "storages": storages });
    if let Some(o) = &p.offload {
        out["offload"] = offload_json(o, symbols);
    }
    out
}

/// What `--offload` did: kernels, and the copies of one call with their bytes.
fn offload_json(o: &crate::passes::offload::OffloadStats, symbols: &Symbols) -> Value {
    let list = |v: &[(String, Expr)]| -> Vec<Value> {
        v.iter()
            .map(|(n, b)| json!({"name": n, "bytes": formula(b), "bytes_value": value(b, symbols)}))
            .collect()
    };
    let per_call: Vec<&(String, Expr)> = o.copy_in.iter().chain(&o.copy_out).collect();
    let bytes: Option<i64> = per_call
        .iter()
        .map(|(_, b)| value(b, symbols))
        .sum::<Option<i64>>();
    json!({
        "kernels": o.kernels(),
        "map_kernels": o.map_kernels,
        "nested_kernels": o.nested_kernels,
        "tasklet_kernels": o.tasklet_kernels,
        "host_levels": o.host_levels,
        "copy_in": list(&o.copy_in),
        "copy_out": list(&o.copy_out),
        "host_reads": list(&o.host_reads),
        "copies_per_call": per_call.len(),
        "bytes_per_call": bytes,
        "bytes_per_call_formula": per_call
            .iter()
            .map(|(_, b)| b.clone())
            .reduce(|a, b| Expr::bin(crate::ir::BinaryOp::Add, a, b))
            .map_or_else(|| "0".to_string(), |e| formula(&e)),
        "device_args": o.device_args,
        "host_parts": o.host_parts.iter().map(|h| json!({"label": h.label, "path": h.path, "why": h.why})).collect::<Vec<_>>(),
    })
}

/// The `--offload` part of the `--stats` text (also `sdfgc check --offload`):
/// kernels, copies and bytes per call, device arguments, and what stayed on
/// the host with why.
fn print_offload(o: &Value, out: &mut dyn Write) {
    let _ = writeln!(
        out,
        "  offload: {} kernels ({} maps, {} nested SDFGs, {} tasklets), {} host levels",
        o["kernels"], o["map_kernels"], o["nested_kernels"], o["tasklet_kernels"], o["host_levels"]
    );
    let _ = writeln!(
        out,
        "    copies per call: {} in + out, {} = {} bytes; device-to-host refreshes of data the host reads: {}",
        o["copies_per_call"],
        o["bytes_per_call_formula"].as_str().unwrap_or(""),
        show(&o["bytes_per_call"]),
        o["host_reads"].as_array().map_or(0, Vec::len)
    );
    for (what, key) in [
        ("in", "copy_in"),
        ("out", "copy_out"),
        ("host read", "host_reads"),
    ] {
        for c in o[key].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "    {what:<9} {:<24} {} = {}",
                c["name"].as_str().unwrap_or(""),
                c["bytes"].as_str().unwrap_or(""),
                show(&c["bytes_value"])
            );
        }
    }
    let args: Vec<&str> = o["device_args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !args.is_empty() {
        let _ = writeln!(
            out,
            "    arguments on the device (no copies): {}",
            args.join(", ")
        );
    }
    for h in o["host_parts"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "    host      {:<24} {}",
            h["label"].as_str().unwrap_or(""),
            h["why"].as_str().unwrap_or("")
        );
    }
}

/// `sdfgc check --offload`: per file, the summary of `sdfgc check`, then
/// what runs where once offloaded (the `--stats` offload report).
pub fn check_offload(
    files: &[PathBuf],
    opts: &CompileOptions,
    symbols: &Symbols,
    out: &mut dyn Write,
) -> Result<(), Vec<Error>> {
    let mut errors = Vec::new();
    for f in files {
        let sdfg = match load_valid(f) {
            Ok(s) => s,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let summary = crate::summary::Summary::of(&sdfg);
        match passes::prepare(sdfg, opts).map_err(|e| e.in_file(f)) {
            Ok(p) => {
                let _ = writeln!(out, "{}: ok\n{summary}", f.display());
                if let Some(o) = &p.offload {
                    print_offload(&offload_json(o, symbols), out);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn prepare(files: &[PathBuf], opts: &CompileOptions) -> (Vec<(PathBuf, Program)>, Vec<Error>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match load_valid(f).and_then(|s| passes::prepare(s, opts).map_err(|e| e.in_file(f))) {
            Ok(p) => ok.push((f.clone(), p)),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "?".into(),
        other => other.to_string(),
    }
}

/// `--stats` / `--stats-json`: the layout of every program's workspace.
pub fn stats(
    files: &[PathBuf],
    opts: &CompileOptions,
    symbols: &Symbols,
    print: bool,
    json_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Vec<Error>> {
    let (programs, errors) = prepare(files, opts);
    let reports: Vec<Value> = programs
        .iter()
        .map(|(f, p)| program_json(f, p, symbols))
        .collect();
    if print {
        for r in &reports {
            let _ = writeln!(
                out,
                "{} ({})",
                r["name"].as_str().unwrap_or(""),
                r["file"].as_str().unwrap_or("")
            );
            if let Some(o) = r.get("offload") {
                print_offload(o, out);
            }
            let storages = r["storages"].as_object().cloned().unwrap_or_default();
            if storages.is_empty() {
                let _ = writeln!(
                    out,
                    "  no workspace (no External transients; try --mode external)"
                );
            }
            for (s, v) in storages {
                let _ = writeln!(
                    out,
                    "  {s}: alignment {} bytes, {} shelves",
                    v["alignment"], v["shelves"]
                );
                let _ = writeln!(
                    out,
                    "    packed:     {} = {}",
                    v["packed"].as_str().unwrap_or(""),
                    show(&v["packed_bytes"])
                );
                let _ = writeln!(
                    out,
                    "    sequential: {} = {}",
                    v["sequential"].as_str().unwrap_or(""),
                    show(&v["sequential_bytes"])
                );
                let _ = writeln!(
                    out,
                    "    DaCe:       {} = {}",
                    v["dace"].as_str().unwrap_or(""),
                    show(&v["dace_bytes"])
                );
                if v["per_thread"].as_bool() == Some(true) {
                    let _ = writeln!(out, "    {}", threads_note(symbols));
                }
                for t in v["transients"].as_array().into_iter().flatten() {
                    let _ = writeln!(
                        out,
                        "    {:<24} shelf {:<3} offset {:<12} bytes {:<12} live {}..{}",
                        t["name"].as_str().unwrap_or(""),
                        t["shelf"],
                        show(&t["offset"]),
                        show(&t["bytes_value"]),
                        t["live"][0],
                        t["live"][1]
                    );
                }
            }
        }
    }
    if let Some(path) = json_out {
        let text = serde_json::to_string_pretty(&Value::Array(reports)).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            let mut errs = errors;
            errs.push(Error::new(
                ErrorKind::Io,
                "",
                format!("{}: {e}", path.display()),
            ));
            return Err(errs);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// One program's requirement for one storage: name, formula, value, expression.
struct Need {
    name: String,
    formula: String,
    value: Option<i64>,
    total: Expr,
}

/// `sdfgc plan`: each program's workspace per storage and the maximum over all.
pub fn plan(
    files: &[PathBuf],
    opts: &CompileOptions,
    symbols: &Symbols,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<(), Vec<Error>> {
    let (programs, errors) = prepare(files, opts);
    // Per storage: (program name, bytes formula, bytes value).
    let mut per_storage: BTreeMap<String, Vec<Need>> = BTreeMap::new();
    for (_, p) in &programs {
        for (s, l) in &p.layouts {
            let total = l.total();
            per_storage
                .entry(s.dace_name().to_string())
                .or_default()
                .push(Need {
                    name: p.sdfg.name.clone(),
                    formula: formula(&total),
                    value: value(&total, symbols),
                    total,
                });
        }
    }
    let mut result = serde_json::Map::new();
    for (storage, list) in &per_storage {
        let all_known = list.iter().all(|x| x.value.is_some());
        let max_value = all_known.then(|| list.iter().filter_map(|x| x.value).max().unwrap_or(0));
        let max_formula = list
            .iter()
            .map(|x| x.total.clone())
            .reduce(|a, b| Expr::Call(crate::ir::Func::Max, vec![a, b]))
            .map(|e| formula(&e))
            .unwrap_or_default();
        let largest = list
            .iter()
            .max_by_key(|x| x.value.unwrap_or(i64::MIN))
            .map(|x| x.name.clone());
        result.insert(
            storage.clone(),
            json!({
                "programs": list.iter().map(|x| json!({"name": x.name, "bytes": x.formula, "bytes_value": x.value})).collect::<Vec<_>>(),
                "max_bytes": max_value,
                "max": max_formula,
                "largest": if all_known { largest } else { None },
            }),
        );
    }
    if as_json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&Value::Object(result)).unwrap_or_default()
        );
    } else {
        if per_storage.is_empty() {
            let _ = writeln!(
                out,
                "no program needs a workspace (no External transients; try --mode external)"
            );
        }
        let mut uses_threads = false;
        for (storage, v) in &result {
            uses_threads |= per_storage[storage].iter().any(|x| {
                crate::ir::simplify::free_symbols(&x.total)
                    .iter()
                    .any(|s| s == THREADS)
            });
            let _ = writeln!(out, "{storage}:");
            for prog in v["programs"].as_array().into_iter().flatten() {
                let _ = writeln!(
                    out,
                    "  {:<48} {} = {}",
                    prog["name"].as_str().unwrap_or(""),
                    prog["bytes"].as_str().unwrap_or(""),
                    show(&prog["bytes_value"])
                );
            }
            match v["max_bytes"].as_i64() {
                Some(m) => {
                    let _ = writeln!(
                        out,
                        "  allocate: {m} bytes (largest: {})",
                        v["largest"].as_str().unwrap_or("")
                    );
                }
                None => {
                    let _ = writeln!(out, "  allocate: {}", v["max"].as_str().unwrap_or(""));
                }
            }
        }
        if uses_threads {
            let _ = writeln!(out, "{}", threads_note(symbols));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
