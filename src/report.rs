//! `--stats` and `sdfgc plan`: what the workspace of each program needs.

pub mod picture;
pub mod svg;

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

/// Loads, validates and prepares every file; the errors of those that fail.
pub fn prepare(files: &[PathBuf], opts: &CompileOptions) -> (Vec<(PathBuf, Program)>, Vec<Error>) {
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

/// Writes a report file; an error names it.
fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text)
        .map_err(|e| Error::new(ErrorKind::Io, "", format!("{}: {e}", path.display())))
}

/// The `--stats-svg` picture of these programs: per program and storage,
/// the packed layout beside DaCe's sequential one.
pub fn stats_svg(programs: &[(PathBuf, Program)], symbols: &Symbols) -> String {
    let pictures: Vec<picture::ProgramPicture> = programs
        .iter()
        .map(|(f, p)| picture::ProgramPicture::of(&f.display().to_string(), p, symbols))
        .collect();
    let title = match pictures.as_slice() {
        [one] => format!("sdfgc workspace: {}", one.name),
        many => format!("sdfgc workspace: {} programs", many.len()),
    };
    svg::render(&title, &pictures, None)
}

/// `--stats` / `--stats-json` / `--stats-svg`: the layout of every program's workspace.
pub fn stats(
    files: &[PathBuf],
    opts: &CompileOptions,
    symbols: &Symbols,
    print: bool,
    json_out: Option<&Path>,
    svg_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Vec<Error>> {
    let (programs, mut errors) = prepare(files, opts);
    if let Some(path) = svg_out
        && let Err(e) = write_file(path, &stats_svg(&programs, symbols))
    {
        errors.push(e);
    }
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
        if let Err(e) = write_file(path, &(text + "\n")) {
            errors.push(e);
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

/// Symbol values of `sdfgc plan`: those of every file, and each file's own
/// (`--symbols-json`), which take precedence.
#[derive(Clone, Debug, Default)]
pub struct FileSymbols {
    /// Values for every file (`--symbol`).
    pub all: Symbols,
    /// Values for one file, by its path as given.
    pub per_file: BTreeMap<PathBuf, Symbols>,
}

impl FileSymbols {
    /// The values for one file.
    pub fn of(&self, file: &Path) -> Symbols {
        let mut out = self.all.clone();
        if let Some(own) = self.per_file.get(file) {
            out.extend(own.iter().map(|(k, v)| (k.clone(), *v)));
        }
        out
    }

    /// Reads `--symbols-json FILE`: `{"<sdfg path>": {"N": 100, ...}, ...}`
    /// (integers; `true` and `false` are 1 and 0).
    pub fn read_json(path: &Path) -> Result<BTreeMap<PathBuf, Symbols>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let v: BTreeMap<PathBuf, BTreeMap<String, Value>> =
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: {e} (expected {{\"<sdfg file>\": {{\"SYMBOL\": integer, ...}}, ...}})",
                    path.display()
                )
            })?;
        v.into_iter()
            .map(|(file, m)| {
                let values = m
                    .into_iter()
                    .map(|(k, x)| match x.as_i64().or(x.as_bool().map(i64::from)) {
                        Some(n) => Ok((k, n)),
                        None => Err(format!(
                            "{}: {}: symbol {k} is {x}, not an integer",
                            path.display(),
                            file.display()
                        )),
                    })
                    .collect::<Result<Symbols, String>>()?;
                Ok((file, values))
            })
            .collect()
    }
}

/// `sdfgc plan`: each program's workspace per storage and the maximum over
/// all; with `svg_out`, also the picture of every program's workspace under
/// the size to allocate.
pub fn plan(
    files: &[PathBuf],
    opts: &CompileOptions,
    file_symbols: &FileSymbols,
    as_json: bool,
    svg_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Vec<Error>> {
    let (programs, mut errors) = prepare(files, opts);
    let symbols = &file_symbols.all;
    // Per storage: (program name, bytes formula, bytes value).
    let mut per_storage: BTreeMap<String, Vec<Need>> = BTreeMap::new();
    for (f, p) in &programs {
        let symbols = &file_symbols.of(f);
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
    let mut allocations = Vec::new();
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
        let largest = if all_known { largest } else { None };
        allocations.push(svg::Allocation {
            storage: storage.clone(),
            size: picture::Size {
                formula: max_formula.clone(),
                value: max_value,
            },
            largest: largest.clone(),
        });
        result.insert(
            storage.clone(),
            json!({
                "programs": list.iter().map(|x| json!({"name": x.name, "bytes": x.formula, "bytes_value": x.value})).collect::<Vec<_>>(),
                "max_bytes": max_value,
                "max": max_formula,
                "largest": largest,
            }),
        );
    }
    if let Some(path) = svg_out {
        let pictures: Vec<picture::ProgramPicture> = programs
            .iter()
            .map(|(f, p)| {
                picture::ProgramPicture::of(&f.display().to_string(), p, &file_symbols.of(f))
            })
            .collect();
        let title = format!(
            "sdfgc plan: {} programs, one workspace per storage",
            pictures.len()
        );
        if let Err(e) = write_file(path, &svg::render(&title, &pictures, Some(&allocations))) {
            errors.push(e);
        }
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
