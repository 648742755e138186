//! Quality of the generated GPU code, checked without a GPU over every GPU
//! fixture (NPBench's GPU variants included):
//!
//! 1. no one-thread kernel (`<<<1, 1>>>`) runs a loop: work that grows with a
//!    symbol belongs in a map kernel;
//! 2. consecutive threads touch consecutive elements: in every `GPU_Device`
//!    map, the parameter bound to `threadIdx.x` indexes the stride-1
//!    dimension of every array it indexes (checked on the prepared IR, with
//!    the binding read from the kernel the writer emits);
//! 3. host synchronisation points per call are no more than those of
//!    DaCe's code for the same SDFG (`fixtures/gpu-sync-counts.json`, written by
//!    `scripts/gpu-sync-counts.py`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sdfgc::driver::{CompileOptions, Mode, Target};
use sdfgc::ir::{BlockKind, Expr, NodeId, NodeKind, Region, Schedule, Sdfg, State};

/// Every GPU SDFG under `fixtures/` (DaCe's `*gpu*.sdfg` variants and
/// `hip.sdfg`), relative to the repository root.
fn gpu_files() -> Vec<String> {
    let root = common::corpus::fixtures();
    common::corpus::case_files_under(&root, |n| {
        n.ends_with(".sdfg") && (n.contains("gpu") || n == "hip.sdfg") && !n.contains("static")
    })
    .into_iter()
    .map(|(d, n)| {
        let p = d.join(n);
        format!(
            "fixtures/{}",
            p.strip_prefix(&root).unwrap().to_string_lossy()
        )
    })
    .collect()
}

fn path_of(rel: &str) -> PathBuf {
    common::corpus::fixtures().parent().unwrap().join(rel)
}

/// The generated CUDA file (transients persistent), or the refusal.
fn generate(file: &Path) -> Result<String, String> {
    generate_in(file, Some(Mode::Persistent))
}

/// The generated CUDA file in `mode` (None: the SDFG's lifetimes), or the refusal.
fn generate_in(file: &Path, mode: Option<Mode>) -> Result<String, String> {
    let opts = CompileOptions {
        mode,
        ..CompileOptions::new(Target::Cuda)
    };
    let outs = sdfgc::driver::generate(file, &opts).map_err(|e| e.to_string())?;
    Ok(outs
        .into_iter()
        .find(|(n, _)| n.ends_with(".cu"))
        .expect("a .cu file")
        .1)
}

/// The bodies of the `__global__` / `__device__` functions of `src`, by name.
fn device_functions(src: &str) -> BTreeMap<String, (bool, String)> {
    let mut out = BTreeMap::new();
    let mut rest = src;
    while let Some(i) = rest
        .find("\n__global__ ")
        .or_else(|| rest.find("\n__device__ "))
    {
        let head_end = match rest[i..].find('(') {
            Some(j) => i + j,
            None => break,
        };
        let head = &rest[i..head_end];
        let name = head
            .rsplit(|c: char| c.is_whitespace() || c == '*')
            .next()
            .unwrap_or("")
            .to_string();
        let one_thread = head.contains("__launch_bounds__(1)");
        let body_start = match rest[head_end..].find('{') {
            Some(j) => head_end + j,
            None => break,
        };
        let end = rest[body_start..]
            .find("\n}\n")
            .map(|e| body_start + e + 3)
            .unwrap_or(rest.len());
        // The comment line above the definition names the map.
        let comment = rest[..i].rsplit('\n').next().unwrap_or("");
        let text = format!("{comment}\n{}", &rest[body_start..end]);
        out.insert(name, (one_thread, text));
        rest = &rest[end - 1..];
    }
    out
}

/// True if `body` (or a device function it calls) has a loop whose bound is
/// not a literal.
fn has_symbolic_loop(body: &str, fns: &BTreeMap<String, (bool, String)>, depth: u32) -> bool {
    let literal_loop = |l: &str| {
        // `for (int64_t i = 0; i < 8; i += 1)`: bounds that are all literals.
        let header = l.trim_start().trim_start_matches("for (");
        let parts: Vec<&str> = header.split(';').collect();
        parts.len() == 3 && {
            let var = parts[0]
                .split('=')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .last();
            let idents: Vec<&str> = parts[0..2]
                .join(" ")
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
                .filter(|w| Some(*w) != var && !w.ends_with("_t") && *w != "int")
                .map(str::to_string)
                .collect::<Vec<_>>()
                .iter()
                .map(|_| "")
                .collect();
            idents.is_empty()
        }
    };
    for l in body.lines() {
        let t = l.trim_start();
        if (t.starts_with("for (") && !literal_loop(t))
            || t.starts_with("while (")
            || t.starts_with("do {")
        {
            return true;
        }
    }
    depth < 8
        && fns.iter().any(|(n, (_, b))| {
            body.contains(&format!("{n}(")) && has_symbolic_loop(b, fns, depth + 1)
        })
}

/// The one-thread kernels of `src` that loop over a symbolic range.
fn looping_one_thread_kernels(src: &str) -> Vec<String> {
    let fns = device_functions(src);
    fns.iter()
        .filter(|(_, (one, body))| *one && has_symbolic_loop(body, &fns, 0))
        .map(|(n, _)| n.clone())
        .collect()
}

fn states<'a>(r: &'a Region, out: &mut Vec<&'a State>) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => out.push(st),
            BlockKind::Region(inner) => states(inner, out),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, b)| states(b, out)),
            _ => {}
        }
    }
}

fn names_in(e: &Expr, name: &str) -> bool {
    let mut hit = false;
    e.visit_names(&mut |n| hit |= n == name);
    hit
}

/// True if node `n` lies (transitively) inside the scope of map entry `map`.
fn inside(st: &State, mut n: NodeId, map: NodeId) -> bool {
    while let Some(s) = st.nodes[n.index()].scope {
        if s == map {
            return true;
        }
        n = s;
    }
    false
}

/// The parameter a kernel binds to `threadIdx.x`: the one assigned from
/// `__tx` without a division (the innermost of the x axis).
fn x_binding(kernel: &str) -> Option<String> {
    kernel.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("[[maybe_unused]] const int64_t ")?;
        let (name, value) = rest.split_once(" = ")?;
        (value.contains("__tx") && !value.contains("(__tx /")).then(|| name.to_string())
    })
}

/// The parameters a kernel binds (its head).
fn bound_params(kernel: &str) -> Vec<String> {
    kernel
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("[[maybe_unused]] const int64_t ")?;
            Some(rest.split_once(" = ")?.0.to_string())
        })
        .collect()
}

/// Per parameter: accesses whose stride-1 dimension it indexes, minus
/// accesses it walks along another dimension only (the test's own count).
fn scores(s: &Sdfg, st: &State, id: NodeId, params: &[String]) -> Vec<i64> {
    let mut score = vec![0i64; params.len()];
    for e in &st.edges {
        if !(inside(st, e.dst, id) || inside(st, e.src, id)) {
            continue;
        }
        let (Some(data), Some(subset)) = (&e.memlet.data, &e.memlet.subset) else {
            continue;
        };
        let Some(desc) = s.arrays.get(data) else {
            continue;
        };
        let Some(unit) = desc.strides.iter().position(|st| *st == Expr::Int(1)) else {
            continue;
        };
        if subset.len() != desc.strides.len() {
            continue;
        }
        for (k, p) in params.iter().enumerate() {
            let uses = |d: usize| names_in(&subset[d].start, p) || names_in(&subset[d].end, p);
            if uses(unit) {
                score[k] += 1;
            } else if (0..subset.len()).any(uses) {
                score[k] -= 1;
            }
        }
    }
    score
}

/// Maps whose `threadIdx.x` parameter coalesces fewer accesses than
/// another parameter would: `(with DaCe's binding (the last parameter),
/// with the generated binding)`.
fn uncoalesced(
    sdfg: &Sdfg,
    kernels: &BTreeMap<String, (bool, String)>,
) -> (Vec<String>, Vec<String>) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    // How many maps carry each label (the kernel text is matched by label).
    let mut labels: BTreeMap<String, usize> = BTreeMap::new();
    sdfg.for_each_sdfg(&mut |s: &Sdfg| {
        let mut sts = Vec::new();
        states(&s.body, &mut sts);
        for st in sts {
            for n in &st.nodes {
                if let NodeKind::MapEntry(m) = &n.kind {
                    *labels.entry(m.label.clone()).or_default() += 1;
                }
            }
        }
    });
    sdfg.for_each_sdfg(&mut |s: &Sdfg| {
        let mut sts = Vec::new();
        states(&s.body, &mut sts);
        for st in sts {
            for (i, node) in st.nodes.iter().enumerate() {
                let NodeKind::MapEntry(m) = &node.kind else {
                    continue;
                };
                if m.schedule != Schedule::GpuDevice || m.params.is_empty() {
                    continue;
                }
                let id = NodeId(i as u32);
                // Thread-block maps: one block per point, no thread walk here.
                let has_tb = st.nodes.iter().enumerate().any(|(j, n)| {
                    matches!(&n.kind, NodeKind::MapEntry(t) if matches!(t.schedule, Schedule::GpuThreadBlock | Schedule::GpuThreadBlockDynamic))
                        && inside(st, NodeId(j as u32), id)
                });
                if has_tb {
                    continue;
                }
                let score = scores(s, st, id, &m.params);
                let best = *score.iter().max().unwrap();
                let k_last = m.params.len() - 1;
                if score[k_last] < best {
                    before.push(format!("map '{}' ({}) scores {score:?} for {:?}", m.label, node.path, m.params));
                }
                // The generated binding: from the kernel text when one map and
                // one kernel have this label, else the writer's rule.
                let comment = format!("GPU map {}\n", m.label);
                let cands: Vec<&String> = kernels
                    .values()
                    .filter(|(_, b)| b.starts_with(&format!("// {comment}")))
                    .map(|(_, b)| b)
                    .filter(|b| {
                        let mut bp = bound_params(b);
                        bp.sort();
                        let mut mp = m.params.clone();
                        mp.sort();
                        bp == mp
                    })
                    .collect();
                let x = if cands.len() == 1 && labels[&m.label] == 1 {
                    x_binding(cands[0]).expect("x binding")
                } else {
                    let k = sdfgc::back::gpu::coalesce::thread_x_param(s, st, id, &m.params);
                    m.params[k].clone()
                };
                let kx = m.params.iter().position(|p| *p == x).unwrap();
                if score[kx] < best {
                    after.push(format!(
                        "map '{}' ({}): threadIdx.x = {x} but scores {score:?} for {:?}",
                        m.label, node.path, m.params
                    ));
                }
            }
        }
    });
    (before, after)
}

/// `src` without its comments and without the bodies of the functions
/// whose name starts with `__dace_init` or `__dace_exit` (run once, not per
/// call), as `scripts/gpu-sync-counts.py` strips DaCe's code.
fn per_call_code(src: &str) -> String {
    let mut out: String = src
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    for prefix in ["__dace_init", "__dace_exit"] {
        let mut from = 0;
        while let Some(i) = out[from..].find(prefix).map(|i| from + i) {
            // A definition: `name(...)` then `{` (a call ends in `;`).
            let Some(open) = out[i..].find('(').map(|j| i + j) else {
                break;
            };
            let Some(close) = out[open..].find(')').map(|j| open + j) else {
                break;
            };
            let after = out[close + 1..].trim_start();
            if !after.starts_with('{') {
                from = close;
                continue;
            }
            let brace = close + 1 + out[close + 1..].find('{').unwrap();
            let mut depth = 0;
            let mut end = out.len();
            for (k, c) in out[brace..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = brace + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out.replace_range(i..end, "");
            from = i;
        }
    }
    out
}

/// Host synchronisation points in `src` outside init and exit, as
/// `scripts/gpu-sync-counts.py` counts them: explicit synchronisations
/// (device, stream, event), blocking copies, and asynchronous
/// device-to-host copies (blocking for pageable host memory, which DaCe's
/// code relies on); a synchronisation right after such a copy is the same
/// point.
fn host_syncs(src: &str) -> usize {
    let code = per_call_code(src);
    let mut calls: Vec<(usize, &str)> = Vec::new();
    for api in ["cuda", "hip"] {
        for (i, _) in code.match_indices(api) {
            if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[i + api.len()..];
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if rest[name_len..].trim_start().starts_with('(') {
                calls.push((i, &rest[..name_len]));
            }
        }
    }
    calls.sort();
    let (mut n, mut after_copy) = (0, false);
    for (i, name) in calls {
        let base = name.strip_suffix("Async").unwrap_or(name);
        let copy = matches!(
            base,
            "Memcpy"
                | "Memcpy2D"
                | "Memcpy3D"
                | "MemcpyToSymbol"
                | "MemcpyFromSymbol"
                | "MemcpyPeer"
        );
        let sync = matches!(
            name,
            "DeviceSynchronize" | "StreamSynchronize" | "EventSynchronize"
        );
        if copy && name.ends_with("Async") {
            let end = code[i..].find(';').map(|e| i + e).unwrap_or(code.len());
            if code[i..end].contains("DeviceToHost") {
                n += 1;
                after_copy = true;
            }
        } else if copy {
            n += 1;
            after_copy = false;
        } else if sync {
            n += usize::from(!after_copy);
            after_copy = false;
        }
    }
    n
}

/// DaCe's host synchronisations per fixture (`fixtures/gpu-sync-counts.json`).
fn dace_syncs() -> BTreeMap<String, usize> {
    let p = common::corpus::fixtures().join("gpu-sync-counts.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    v["dace"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap() as usize))
        .collect()
}

#[test]
fn gpu_kernel_quality() {
    let mut refused = Vec::new();
    let mut one_thread = Vec::new();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let (mut syncs, mut missing, mut sync_totals) = (Vec::new(), Vec::new(), (0, 0));
    let dace = dace_syncs();
    let files = gpu_files();
    for rel in &files {
        let p = path_of(rel);
        let src = match generate(&p) {
            Ok(s) => s,
            Err(e) => {
                refused.push(format!("{rel}: {e}"));
                continue;
            }
        };
        if let Ok(own) = generate_in(&p, None) {
            let ours = host_syncs(&own);
            match dace.get(rel.as_str()) {
                Some(&theirs) if ours > theirs => syncs.push(format!(
                    "{rel}: {ours} host synchronisations, DaCe {theirs}"
                )),
                Some(&theirs) => sync_totals = (sync_totals.0 + ours, sync_totals.1 + theirs),
                None => missing.push(rel.clone()),
            }
        }
        for k in looping_one_thread_kernels(&src) {
            one_thread.push(format!("{rel}: {k}"));
        }
        let opts = CompileOptions::new(Target::Cuda);
        let sdfg = sdfgc::driver::load_valid(&p).unwrap();
        let program = sdfgc::passes::prepare(sdfg, &opts).unwrap();
        let (b, a) = uncoalesced(&program.sdfg, &device_functions(&src));
        before.extend(b.into_iter().map(|u| format!("{rel}: {u}")));
        after.extend(a.into_iter().map(|u| format!("{rel}: {u}")));
    }
    eprintln!("{} GPU files, {} refused:", files.len(), refused.len());
    for r in &refused {
        eprintln!("  {}", r.lines().next().unwrap_or(""));
    }
    eprintln!(
        "one-thread kernels with loops: {}; maps whose threadIdx.x parameter is not the best for coalescing: {} with DaCe's binding, {} generated",
        one_thread.len(),
        before.len(),
        after.len()
    );
    for r in &before {
        eprintln!("  (DaCe's binding) {r}");
    }
    eprintln!(
        "host synchronisations (files at most DaCe's): sdfgc {}, DaCe {}; files above DaCe's: {}",
        sync_totals.0,
        sync_totals.1,
        syncs.len()
    );
    assert!(
        missing.is_empty(),
        "no DaCe count (run scripts/gpu-sync-counts.py): {missing:?}"
    );
    assert!(
        syncs.is_empty(),
        "more host synchronisations than DaCe:\n{}",
        syncs.join("\n")
    );
    assert!(
        one_thread.is_empty(),
        "one-thread kernels that loop:\n{}",
        one_thread.join("\n")
    );
    assert!(after.is_empty(), "uncoalesced maps:\n{}", after.join("\n"));
    // Every refusal names what is unsupported.
    for r in &refused {
        assert!(r.contains("unsupported"), "{r}");
    }
}
