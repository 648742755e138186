//! `--offload` in the default memory mode never allocates or frees device
//! memory per call inside a loop or per state: every offloaded fixture
//! (the job list of `tests/gpu_offload.rs`) is prepared (no GPU, no build)
//! and
//! - its plan gives every device transient persistent memory (allocated in
//!   `__dace_init_*`, freed in `__dace_exit_*`), or the stream-ordered pool
//!   where its size has no value at init, and then not in a block that runs
//!   in a loop (of its SDFG or of one that calls it) unless its size is a
//!   symbol that the loop assigns (it changes every iteration); never `Heap` (a
//!   blocking `cudaMalloc`/`cudaFree` around a scope, each `cudaFree`
//!   synchronising the device);
//! - in the generated CUDA file, `cudaMalloc(` and `cudaFree(` appear only
//!   in the bodies of `__dace_init_*` and `__dace_exit_*`.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::corpus::{generate_offloaded, needs_device_args, offload_variants};
use sdfgc::driver::{CompileOptions, OffloadArgs, Target};
use sdfgc::ir::*;
use sdfgc::passes::{AllocScope, Memory};

/// Block paths (JSON pointers) of one SDFG that run more than once per
/// call of it: inside a `LoopRegion`, or on a cycle of interstate edges.
fn looped_blocks(r: &Region, in_loop: bool, out: &mut BTreeSet<String>) {
    let in_loop = in_loop || matches!(r.kind, RegionKind::Loop(_));
    let n = r.blocks.len();
    let mut succ = vec![Vec::new(); n];
    for e in &r.edges {
        succ[e.src.index()].push(e.dst.index());
    }
    // A block is on a cycle if it reaches itself.
    let on_cycle = |b: usize| {
        let mut seen = vec![false; n];
        let mut stack = succ[b].clone();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if !std::mem::replace(&mut seen[x], true) {
                stack.extend(&succ[x]);
            }
        }
        false
    };
    for (i, b) in r.blocks.iter().enumerate() {
        let here = in_loop || on_cycle(i);
        if here {
            out.insert(b.path.clone());
        }
        match &b.kind {
            BlockKind::Region(inner) => looped_blocks(inner, here, out),
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    looped_blocks(body, here, out);
                }
            }
            _ => {}
        }
    }
}

/// Per SDFG id: the blocks that run in a loop, and whether the SDFG itself
/// is called in one (a nested SDFG in a looped state of its parent).
fn loops_of(sdfg: &Sdfg, called_in_loop: bool, out: &mut BTreeMap<u32, (bool, BTreeSet<String>)>) {
    let mut looped = BTreeSet::new();
    looped_blocks(&sdfg.body, false, &mut looped);
    fn nested(
        r: &Region,
        looped: &BTreeSet<String>,
        called: bool,
        out: &mut BTreeMap<u32, (bool, BTreeSet<String>)>,
    ) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for n in &st.nodes {
                        if let NodeKind::Nested(ns) = &n.kind {
                            loops_of(&ns.sdfg, called || looped.contains(&b.path), out);
                        }
                    }
                }
                BlockKind::Region(inner) => nested(inner, looped, called, out),
                BlockKind::Conditional(brs) => {
                    for (_, body) in brs {
                        nested(body, looped, called, out);
                    }
                }
                _ => {}
            }
        }
    }
    nested(&sdfg.body, &looped, called_in_loop, out);
    out.insert(sdfg.id, (called_in_loop, looped));
}

/// What is wrong with the device allocations of one offloaded fixture.
/// Also counts the persistent and pool device transients.
fn check(
    file: &std::path::Path,
    counts: &mut (usize, usize, usize),
) -> Result<Vec<String>, String> {
    let mut opts = CompileOptions {
        offload: true,
        ..CompileOptions::new(Target::Cuda)
    };
    let sdfg = sdfgc::driver::load_valid(file).map_err(|e| e.to_string())?;
    let program = match sdfgc::passes::prepare(sdfg.clone(), &opts) {
        Err(e) if needs_device_args(&e) => {
            opts.offload_args = OffloadArgs::DeviceArgs;
            sdfgc::passes::prepare(sdfg, &opts)
        }
        p => p,
    }
    .map_err(|e| e.to_string())?;
    let mut loops = BTreeMap::new();
    loops_of(&program.sdfg, false, &mut loops);
    let mut bad = Vec::new();
    for ((id, name), t) in &program.alloc.transients {
        if !program.alloc.is_device(*id, name) {
            continue;
        }
        let Some((called_in_loop, looped)) = loops.get(id) else {
            bad.push(format!("{name} (SDFG {id}): no such SDFG"));
            continue;
        };
        let first = match &t.scope {
            AllocScope::Function => None,
            AllocScope::State(p) | AllocScope::Map(p, _) | AllocScope::Blocks(p, _, _) => Some(p),
        };
        let in_loop = *called_in_loop || first.is_some_and(|p| looped.contains(p));
        counts.0 += usize::from(t.memory == Memory::Persistent);
        counts.1 += usize::from(t.memory == Memory::Pool);
        match t.memory {
            Memory::Persistent | Memory::External { .. } | Memory::Local | Memory::View => {}
            Memory::Pool if !in_loop => {}
            // Sized by a symbol the loop assigns (its size changes from one
            // iteration to the next, e.g. NPBench durbin's `flip` of size
            // k): a stream-ordered allocation per iteration, which does not
            // synchronise the device.
            Memory::Pool if program.alloc.sized_in_call.contains(&(*id, name.clone())) => {
                counts.2 += 1
            }
            Memory::Pool => bad.push(format!(
                "{name} (SDFG {id}): pool allocation in a loop ({:?})",
                t.scope
            )),
            Memory::Heap => bad.push(format!(
                "{name} (SDFG {id}): cudaMalloc/cudaFree around {:?}",
                t.scope
            )),
        }
    }
    // The generated code: blocking allocation calls only in init and exit.
    let (outs, _) = generate_offloaded(file, &opts).map_err(|e| e.to_string())?;
    for (fname, text) in outs.iter().filter(|(n, _)| n.ends_with(".cu")) {
        let mut function = String::new();
        for line in text.lines() {
            if !line.starts_with([' ', '\t', '}', '#', '/']) && line.trim_end().ends_with('{') {
                function = line.to_string();
            }
            if (line.contains("cudaMalloc(") || line.contains("cudaFree("))
                && !function.contains("__dace_init_")
                && !function.contains("__dace_exit_")
            {
                bad.push(format!("{fname}: `{}` in `{function}`", line.trim()));
            }
        }
    }
    Ok(bad)
}

#[test]
fn offloaded_programs_allocate_device_memory_at_init_or_from_the_pool_outside_loops() {
    let jobs = offload_variants();
    assert!(jobs.len() >= 150, "only {} offloaded fixtures", jobs.len());
    let mut failures = Vec::new();
    let mut counts = (0usize, 0usize, 0usize);
    for (dir, variant) in &jobs {
        let file = dir.join(variant);
        match check(&file, &mut counts) {
            Ok(bad) if bad.is_empty() => {}
            Ok(bad) => failures.push(format!("{}:\n  {}", file.display(), bad.join("\n  "))),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    println!(
        "{} offloaded fixtures; device transients: {} persistent, {} pool ({} in a loop that sizes them)",
        jobs.len(),
        counts.0,
        counts.1,
        counts.2
    );
    assert!(
        failures.is_empty(),
        "{} of {} offloaded fixtures allocate device memory per call in a loop or per state:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
}

/// The rule is the default mode's: an explicit `--mode scoped` keeps
/// allocating around each scope (so the check above can fail).
#[test]
fn scoped_mode_still_allocates_per_scope() {
    let file = common::corpus::fixtures().join("npbench/cavity_flow/program.sdfg");
    let sdfg = sdfgc::driver::load_valid(&file).unwrap();
    let opts = CompileOptions {
        offload: true,
        mode: Some(sdfgc::options::Mode::Scoped),
        ..CompileOptions::new(Target::Cuda)
    };
    let p = sdfgc::passes::prepare(sdfg, &opts).unwrap();
    let heap = p
        .alloc
        .transients
        .iter()
        .filter(|((id, n), t)| p.alloc.is_device(*id, n) && t.memory == Memory::Heap)
        .count();
    assert!(
        heap > 0,
        "scoped mode: no device transient is allocated per scope"
    );
}
