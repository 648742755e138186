//! Placement rules of `--offload`, on fixtures: what becomes a kernel, what
//! stays on the host, where data lives, and what is refused.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::placement::{each_state, is_gpu_schedule};
use super::*;

fn load(rel: &str) -> Sdfg {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    crate::driver::load_valid(&p).expect("fixture loads")
}

/// The fixture, library nodes expanded, offloaded.
fn offloaded(rel: &str) -> (Sdfg, OffloadStats) {
    let mut sdfg = load(rel);
    crate::passes::expand::expand(&mut sdfg, crate::options::Blas::None).expect("expands");
    let available = crate::passes::abi::compute(&sdfg)
        .init
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let stats = offload(&mut sdfg, &available).expect("offloads");
    (sdfg, stats)
}

/// Every map at the top of a state is a kernel; every map below one runs
/// sequentially in its threads (also in nested SDFGs inside kernels).
fn check_schedules(sdfg: &Sdfg) {
    each_state(&sdfg.body, &mut |st| {
        for (i, n) in st.nodes.iter().enumerate() {
            match &n.kind {
                NodeKind::MapEntry(m) if n.scope.is_none() => {
                    assert_eq!(m.schedule, Schedule::GpuDevice, "{}", n.label)
                }
                NodeKind::MapEntry(m) => assert!(
                    matches!(m.schedule, Schedule::Sequential | Schedule::Unrolled),
                    "{} below a kernel is {:?}",
                    n.label,
                    m.schedule
                ),
                NodeKind::Nested(ns) if n.scope.is_some() => in_kernel_sequential(&ns.sdfg),
                NodeKind::Nested(ns) => check_schedules(&ns.sdfg),
                _ => {}
            }
            let _ = i;
        }
    });
}

fn in_kernel_sequential(sdfg: &Sdfg) {
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            match &n.kind {
                NodeKind::MapEntry(m) => assert!(
                    !is_gpu_schedule(m.schedule) && m.schedule != Schedule::CpuMulticore,
                    "{} in a kernel is {:?}",
                    n.label,
                    m.schedule
                ),
                NodeKind::Nested(ns) => in_kernel_sequential(&ns.sdfg),
                _ => {}
            }
        }
    });
}

#[test]
fn top_level_maps_become_kernels_and_maps_below_run_sequentially() {
    for f in [
        "npbench/atax/program.sdfg",
        "npbench/gemver/program.autoopt.sdfg",
        "corpus/seidel_2d/program.sdfg",
        "gt4py/cartesian_smoother_3d/cpu.sdfg",
    ] {
        let (sdfg, stats) = offloaded(f);
        check_schedules(&sdfg);
        assert!(stats.map_kernels > 0, "{f}");
    }
}

#[test]
fn arguments_keep_their_host_storage_and_the_dataflow_uses_device_twins() {
    let before = load("npbench/atax/program.sdfg");
    let (sdfg, stats) = offloaded("npbench/atax/program.sdfg");
    let args: BTreeSet<&String> = before
        .arrays
        .iter()
        .filter(|(_, d)| !d.transient)
        .map(|(n, _)| n)
        .collect();
    for a in &args {
        assert_eq!(before.arrays[*a], sdfg.arrays[*a], "argument {a} changed");
        let twin = format!("gpu_{a}");
        if before.arrays[*a].kind == DataKind::Array {
            assert_eq!(sdfg.arrays[&twin].storage, Storage::GpuGlobal);
            assert!(sdfg.arrays[&twin].transient);
        }
    }
    // The original body is one region between the copy-in and the copy-out.
    let BlockKind::Region(body) = &sdfg.body.blocks[1].kind else {
        panic!("the old body is wrapped");
    };
    each_state(body, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::Access(a) = &n.kind {
                assert!(
                    !args.contains(&a.data),
                    "host argument {} in the dataflow",
                    a.data
                );
            }
        }
    });
    assert_eq!(stats.copy_in.len(), 2, "A and x are read");
    assert_eq!(stats.copy_out.len(), 1, "only the result is written");
}

#[test]
fn a_nested_sdfg_without_maps_runs_whole_in_a_one_thread_kernel() {
    let (sdfg, stats) = offloaded("corpus/interstate_nested_symbols/program.sdfg");
    assert_eq!(stats.nested_kernels, 1);
    let mut wrapped = 0;
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::Nested(_) = n.kind {
                let entry = n.scope.expect("the nested SDFG is inside a map");
                let NodeKind::MapEntry(m) = &st.nodes[entry.index()].kind else {
                    panic!("scope is a map");
                };
                assert_eq!(m.schedule, Schedule::GpuDevice);
                assert_eq!(m.range[0].end, Expr::Int(0), "one thread");
                wrapped += 1;
            }
        }
    });
    assert_eq!(wrapped, 1);
}

#[test]
fn a_nested_sdfg_with_maps_is_a_host_level_of_its_own() {
    let (sdfg, stats) = offloaded("corpus/reduce_libnode_expanded/program.sdfg");
    assert_eq!(stats.host_levels, 1);
    assert_eq!(stats.nested_kernels, 0);
    let mut levels = 0;
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::Nested(ns) = &n.kind {
                assert!(n.scope.is_none(), "a host level is not wrapped in a kernel");
                check_schedules(&ns.sdfg);
                levels += 1;
            }
        }
    });
    assert_eq!(levels, 1);
}

#[test]
fn the_host_reads_host_copies_refreshed_after_device_writes() {
    for f in [
        "corpus/control_flow_state_machine/program.sdfg",
        "npbench/nussinov/program.sdfg",
    ] {
        let (sdfg, stats) = offloaded(f);
        assert!(!stats.host_reads.is_empty(), "{f}");
        let mut names = BTreeSet::new();
        data::interstate_names(&sdfg.body, &mut names);
        for n in names {
            if let Some(d) = sdfg.arrays.get(&n) {
                assert!(
                    !d.storage.is_gpu(),
                    "{f}: the host reads device container {n}"
                );
            }
        }
    }
}

#[test]
fn a_transient_used_inside_one_kernel_stays_in_the_kernel() {
    for f in [
        "npbench/conv2d_bias/program.autoopt.sdfg",
        "npbench/lenet/program.autoopt.sdfg",
    ] {
        let (sdfg, _) = offloaded(f);
        // Transients left in host storage: none is used at the top of a state.
        let mut local = BTreeSet::new();
        each_state(&sdfg.body, &mut |st| {
            for n in &st.nodes {
                let NodeKind::Access(a) = &n.kind else {
                    continue;
                };
                let d = &sdfg.arrays[&a.data];
                if d.transient && !d.storage.is_gpu() {
                    assert!(
                        n.scope.is_some(),
                        "{f}: host transient {} at host level",
                        a.data
                    );
                    local.insert(a.data.clone());
                }
            }
        });
        assert!(
            !local.is_empty(),
            "{f}: some transients stay in their kernel"
        );
    }
}

#[test]
fn a_gpu_sdfg_is_refused_by_name() {
    let mut sdfg = load("npbench/atax/program.gpu.sdfg");
    crate::passes::expand::expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let e = offload(&mut sdfg, &BTreeSet::new()).expect_err("already on the GPU");
    assert_eq!(e.kind, crate::diag::ErrorKind::Unsupported);
    assert!(e.to_string().contains("--offload takes a CPU SDFG"), "{e}");
}

#[test]
fn offload_for_the_cpp_target_is_a_usage_error() {
    let sdfg = load("npbench/atax/program.sdfg");
    let opts = crate::options::CompileOptions {
        offload: true,
        ..crate::options::CompileOptions::new(crate::options::Target::Cpp)
    };
    let e = crate::passes::prepare(sdfg, &opts).expect_err("refused");
    assert_eq!(e.kind, crate::diag::ErrorKind::Usage);
}

#[test]
fn an_argument_the_program_cannot_size_is_refused_by_name() {
    let mut sdfg = load("gt4py/vertex_cell_skip_reduce/cpu_noopt.sdfg");
    crate::passes::expand::expand(&mut sdfg, crate::options::Blas::None).unwrap();
    let available = crate::passes::abi::compute(&sdfg)
        .init
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let e = offload(&mut sdfg, &available).expect_err("cf has no size");
    assert_eq!(e.kind, crate::diag::ErrorKind::Unsupported);
    assert!(e.to_string().contains("argument 'cf'"), "{e}");
    assert!(e.to_string().contains("does not receive"), "{e}");
}

#[test]
fn a_strided_argument_sized_by_its_uses_gets_a_twin_of_that_span() {
    let (sdfg, stats) = offloaded("gt4py/math_builtins_2d/cpu.sdfg");
    let twin = &sdfg.arrays["gpu_a"];
    let free = crate::ir::simplify::free_symbols(&twin.total_size);
    assert!(
        free.iter()
            .all(|s| !s.ends_with("_range_1") || s.starts_with("__out")),
        "the twin's size uses only received symbols: {free:?}"
    );
    assert!(stats.copy_in.iter().any(|(n, _)| n == "a"));
}

/// `--offload=device-args`: an array argument that only interstate code
/// reads (`__tmp0 = n[0]`, the bound of the map after it) gets a host copy
/// filled at entry; without it the host dereferenced a device pointer.
#[test]
fn device_argument_read_only_by_interstate_code_gets_a_host_copy() {
    let mut sdfg = load("programs/dyn_map_outer_bound/program.sdfg");
    let available = crate::passes::abi::compute(&sdfg)
        .init
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let settings = Settings {
        device_args: true,
        ..Default::default()
    };
    let stats = offload_with(&mut sdfg, &available, &settings).expect("offloads");
    assert!(
        stats.device_args.iter().any(|a| a == "n"),
        "{:?}",
        stats.device_args
    );
    assert!(
        stats
            .host_reads
            .iter()
            .any(|(h, _)| h != "n" && h.contains('n')),
        "no host copy of 'n' filled at entry: {:?}",
        stats.host_reads
    );
    assert_eq!(sdfg.arrays["n"].storage, Storage::GpuGlobal);
}
