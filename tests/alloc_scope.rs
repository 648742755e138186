//! Allocation scope in the generated code: a transient whose every use (its
//! access nodes, and the code-to-code edges that name it without an access
//! node, as DaCe's map fusion leaves them) lies inside one top-level parallel
//! map of one state is declared inside that map, never at function scope,
//! where the threads of a `#pragma omp parallel for` (or a kernel's threads)
//! would share it (a data race).
//!
//! For every fixture SDFG, with `--target cpp`: in the function generated for
//! the transient's SDFG, every declaration of the transient is nested in a
//! `for` loop written for that map (the `// map <label>[...]` comment above
//! the loop header). With `--target cuda`, for a GPU_Device map: the host
//! function does not declare it and no kernel takes it as a parameter (it is
//! a thread-local variable of the kernel).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::corpus::case_files_under;
use sdfgc::driver::{CompileOptions, Target};
use sdfgc::ir::*;

/// One transient that must be declared inside a map: (SDFG id, name, map label, GPU map).
type Expected = (u32, String, String, bool);

/// The outermost map scope of `scope` in `st` (None: state level).
fn outermost(st: &State, mut scope: Option<NodeId>) -> Option<NodeId> {
    let mut last = None;
    let mut guard = 0;
    while let Some(s) = scope {
        last = Some(s);
        scope = st.nodes[s.index()].scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    last
}

fn is_code(n: &Node) -> bool {
    matches!(
        n.kind,
        NodeKind::Tasklet(_) | NodeKind::Nested(_) | NodeKind::Library(_)
    )
}

/// Where each container is used: `Some((state path, outermost map))` while
/// all uses share them, `None` once they do not.
type Sites = BTreeMap<String, Option<(String, Option<NodeId>, bool)>>;

fn note(sites: &mut Sites, name: &str, at: (String, Option<NodeId>, bool)) {
    let e = sites.entry(name.to_string()).or_insert(Some(at.clone()));
    if e.as_ref().is_some_and(|s| *s != at) {
        *e = None;
    }
}

fn interstate(sites: &mut Sites, e: &Expr) {
    e.visit_names(&mut |n| {
        sites.insert(n.to_string(), None);
    });
}

fn collect(r: &Region, sites: &mut Sites, nested: &mut Vec<(bool, Sdfg)>, in_kernel: bool) {
    for e in &r.edges {
        interstate(sites, &e.condition);
        // An assigned name is used outside any map too (a symbol may share
        // a transient's name: its variable is the function's).
        e.assignments.iter().for_each(|(k, v)| {
            sites.insert(k.to_string(), None);
            interstate(sites, v);
        });
    }
    if let RegionKind::Loop(l) = &r.kind {
        interstate(sites, &l.condition);
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                let site = |scope: Option<NodeId>| {
                    // Sequential top-level maps are not this test's business,
                    // nor GPU_Persistent ones with device maps inside (their
                    // body runs once on the host, launching the inner maps).
                    let top = outermost(st, scope).filter(|t| {
                        !matches!(&st.nodes[t.index()].kind,
                            NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::Sequential | Schedule::Unrolled | Schedule::GpuPersistent))
                    });
                    let gpu = top.is_some_and(|t| {
                        matches!(&st.nodes[t.index()].kind,
                            NodeKind::MapEntry(m) if matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault))
                    });
                    (b.path.clone(), top, gpu)
                };
                for n in &st.nodes {
                    match &n.kind {
                        NodeKind::Access(a) => note(sites, &a.data, site(n.scope)),
                        NodeKind::Nested(ns) => {
                            let gpu = in_kernel || site(n.scope).2;
                            nested.push((gpu, (*ns.sdfg).clone()));
                        }
                        _ => {}
                    }
                }
                for e in &st.edges {
                    let Some(d) = &e.memlet.data else { continue };
                    let (s, t) = (&st.nodes[e.src.index()], &st.nodes[e.dst.index()]);
                    if is_code(s) && is_code(t) {
                        note(sites, d, site(s.scope));
                        note(sites, d, site(t.scope));
                    }
                }
            }
            BlockKind::Region(inner) => collect(inner, sites, nested, in_kernel),
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        interstate(sites, c);
                    }
                    collect(body, sites, nested, in_kernel);
                }
            }
            _ => {}
        }
    }
}

/// The transients of the whole tree whose uses lie in one top-level map.
fn expected(sdfg: &Sdfg, in_kernel: bool, out: &mut Vec<Expected>) {
    let mut sites = Sites::new();
    let mut nested = Vec::new();
    collect(&sdfg.body, &mut sites, &mut nested, in_kernel);
    if !in_kernel {
        for (name, d) in sdfg.arrays.iter().filter(|(_, d)| d.transient) {
            if d.kind == DataKind::View {
                continue;
            }
            if let Some(Some((path, Some(map), gpu))) = sites.get(name) {
                let st = find_state(&sdfg.body, path).unwrap();
                let NodeKind::MapEntry(m) = &st.nodes[map.index()].kind else {
                    unreachable!()
                };
                // A GPU_Global array in a kernel with thread-block maps is
                // global memory that the block's threads share (DaCe's
                // allocation; fixtures/gpu/fused_mixed_tb), not a thread's.
                let block_shared = *gpu
                    && d.storage == Storage::GpuGlobal
                    && st.nodes.iter().enumerate().any(|(i, n)| {
                        matches!(&n.kind, NodeKind::MapEntry(m)
                            if matches!(m.schedule, Schedule::GpuThreadBlock | Schedule::GpuThreadBlockDynamic))
                            && st.is_below(NodeId(i as u32), *map)
                    });
                if block_shared {
                    continue;
                }
                out.push((sdfg.id, name.clone(), m.label.clone(), *gpu));
            }
        }
    }
    for (gpu, inner) in nested {
        expected(&inner, gpu, out);
    }
}

fn find_state<'a>(r: &'a Region, path: &str) -> Option<&'a State> {
    r.blocks.iter().find_map(|b| match &b.kind {
        BlockKind::State(st) if b.path == path => Some(st),
        BlockKind::Region(inner) => find_state(inner, path),
        BlockKind::Conditional(brs) => brs.iter().find_map(|(_, body)| find_state(body, path)),
        _ => None,
    })
}

/// The lines of the host function generated for SDFG `id`.
fn function_lines<'a>(code: &'a [&'a str], id: u32) -> &'a [&'a str] {
    let is_head = |l: &str| {
        if id == 0 {
            l.starts_with("static void __program_") && l.contains("_internal(")
        } else {
            l.starts_with(&format!("static void nested_{id}_"))
        }
    };
    let Some(start) = code.iter().position(|l| is_head(l)) else {
        return &[];
    };
    let end = code[start..]
        .iter()
        .position(|l| *l == "}")
        .map_or(code.len(), |e| start + e);
    &code[start..=end.min(code.len() - 1)]
}

/// True if the line declares `name` (a local variable or array).
fn declares(line: &str, name: &str) -> bool {
    let t = line.trim();
    if t.starts_with("//") || t.starts_with("const ") {
        return false;
    }
    [" ", "*", "] "].iter().any(|p| {
        t.contains(&format!("{p}{name};"))
            || t.contains(&format!("{p}{name}["))
            || t.contains(&format!("{p}{name} = "))
    }) && (t.starts_with("[[maybe_unused]]")
        || t.contains("__restrict__")
        || t.starts_with("__shared__"))
}

/// The labels of the maps whose loops enclose line `at` of `f`.
fn enclosing_maps(f: &[&str], at: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i64;
    for i in (0..at).rev() {
        let l = f[i].trim();
        depth += l.matches('}').count() as i64;
        depth -= l.matches('{').count() as i64;
        if depth < 0 {
            depth = 0;
            if l.starts_with("for (") {
                // Up through the loop headers and pragmas to the map comment.
                let mut j = i;
                while j > 0 {
                    j -= 1;
                    let p = f[j].trim();
                    if let Some(label) = p.strip_prefix("// map ") {
                        out.push(label.to_string());
                        break;
                    }
                    if !(p.starts_with("for (") || p.starts_with("#pragma")) {
                        break;
                    }
                }
            }
        }
    }
    out
}

#[test]
fn transients_used_in_one_map_are_declared_inside_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = case_files_under(&root, |n| n.ends_with(".sdfg"));
    assert!(files.len() > 100, "only {} fixtures", files.len());
    let mut checked = 0;
    let mut failures = Vec::new();
    for (dir, file) in &files {
        let path = dir.join(file);
        let Ok(sdfg) = sdfgc::front::load_file(&path) else {
            continue;
        };
        let mut want = Vec::new();
        expected(&sdfg, false, &mut want);
        if want.is_empty() {
            continue;
        }
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
            let lines: Vec<&str> = code.lines().collect();
            for (id, name, label, gpu) in &want {
                let f = function_lines(&lines, *id);
                let here = format!("{} [{target:?}] SDFG {id} '{name}'", path.display());
                if target == Target::Cuda && *gpu {
                    checked += 1;
                    if f.iter().any(|l| declares(l, name)) {
                        failures.push(format!("{here}: declared in the host function"));
                    }
                    let param = |l: &&str| {
                        l.starts_with("__global__")
                            && l.split(['(', ',', ')'])
                                .any(|p| p.trim().ends_with(&format!(" {name}")))
                    };
                    if lines.iter().any(param) {
                        failures.push(format!("{here}: passed to a kernel"));
                    }
                    continue;
                }
                if *gpu {
                    continue;
                }
                for (i, l) in f.iter().enumerate() {
                    if declares(l, name) {
                        checked += 1;
                        let maps = enclosing_maps(f, i);
                        if !maps.iter().any(|m| m.starts_with(&format!("{label}["))) {
                            failures.push(format!(
                                "{here}: declared outside map '{label}' (line `{}`, enclosing maps {maps:?})",
                                l.trim()
                            ));
                        }
                    }
                }
            }
        }
    }
    println!("{checked} declarations checked");
    assert!(checked > 50, "only {checked} declarations checked");
    assert!(
        failures.is_empty(),
        "{} transients declared outside their map:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
