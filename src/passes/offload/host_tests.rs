//! What stays on the host under `--offload` (host maps, callbacks) and
//! device arguments (`--offload=device-args`), on fixtures.

use std::path::PathBuf;

use super::placement::each_state;
use super::*;
use crate::diag::ErrorKind;

fn load(rel: &str) -> Sdfg {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    let mut sdfg = crate::driver::load_valid(&p).expect("fixture loads");
    crate::passes::expand::expand(&mut sdfg, crate::options::Blas::None).expect("expands");
    sdfg
}

fn available(sdfg: &Sdfg) -> BTreeSet<String> {
    crate::passes::abi::compute(sdfg)
        .init
        .iter()
        .map(|p| p.name.clone())
        .collect()
}

fn offloaded_with(sdfg: &mut Sdfg, settings: &Settings) -> Result<OffloadStats> {
    let available = available(sdfg);
    offload_with(sdfg, &available, settings)
}

fn host_maps(labels: &[&str]) -> Settings {
    Settings {
        host_maps: labels.iter().map(|l| l.to_string()).collect(),
        ..Settings::default()
    }
}

/// (label, schedule, at the top of its state) of every map of the SDFG's own states.
fn maps(sdfg: &Sdfg) -> Vec<(String, Schedule, bool)> {
    let mut out = Vec::new();
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::MapEntry(m) = &n.kind {
                out.push((m.label.clone(), m.schedule, n.scope.is_none()));
            }
        }
    });
    out
}

/// Marks the first tasklet below the first top-level map as a callback.
fn mark_callback(sdfg: &mut Sdfg) -> String {
    let mut label = None;
    placement::each_state_mut(&mut sdfg.body, &mut |st| {
        if label.is_some() {
            return;
        }
        for n in st.nodes.iter_mut().filter(|n| n.scope.is_some()) {
            if let NodeKind::Tasklet(t) = &mut n.kind {
                t.callback = true;
                label = Some(n.label.clone());
                return;
            }
        }
    });
    label.expect("a tasklet in a map")
}

#[test]
fn a_host_map_stays_a_sequential_host_loop_and_the_maps_below_become_kernels() {
    let mut sdfg = load("corpus/view_in_map_scope/program.sdfg");
    let stats = offloaded_with(&mut sdfg, &host_maps(&["rows"])).expect("offloads");
    for (label, schedule, top) in maps(&sdfg) {
        match label.as_str() {
            "rows" => assert_eq!(schedule, Schedule::Sequential, "the host loop"),
            "inner" => {
                assert!(!top);
                assert_eq!(schedule, Schedule::GpuDevice, "a kernel below the host map")
            }
            "cols" => assert_eq!(schedule, Schedule::GpuDevice),
            _ => {}
        }
    }
    assert_eq!(stats.map_kernels, 2);
    assert_eq!(stats.host_parts.len(), 1);
    assert_eq!(stats.host_parts[0].label, "rows");
    assert!(stats.host_parts[0].why.contains("--host-map"));
}

#[test]
fn a_nested_sdfg_below_a_host_map_is_a_host_level_and_its_data_lives_on_the_device() {
    let mut sdfg = load("corpus/nested_transient_parallel_map/program.sdfg");
    let stats = offloaded_with(&mut sdfg, &host_maps(&["rows"])).expect("offloads");
    assert_eq!(stats.host_levels, 1);
    assert_eq!(stats.nested_kernels, 0);
    // The transient between the host loop and the nested SDFG's kernels.
    assert_eq!(sdfg.arrays["row"].storage, Storage::GpuGlobal);
    let mut inner = 0;
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::Nested(ns) = &n.kind {
                for (_, schedule, top) in maps(&ns.sdfg) {
                    if top {
                        assert_eq!(schedule, Schedule::GpuDevice);
                        inner += 1;
                    }
                }
            }
        }
    });
    assert!(inner > 0, "the nested SDFG's maps are kernels");
}

#[test]
fn a_host_map_label_that_matches_no_map_is_an_error_naming_it() {
    let mut sdfg = load("corpus/view_in_map_scope/program.sdfg");
    let e = offloaded_with(&mut sdfg, &host_maps(&["rows", "no_such_map"])).expect_err("no map");
    assert_eq!(e.kind, ErrorKind::Usage);
    assert!(e.to_string().contains("'no_such_map'"), "{e}");
    assert!(!e.to_string().contains("'rows'"), "{e}");
}

#[test]
fn code_below_a_host_map_that_passes_values_code_to_code_is_refused_by_name() {
    let mut sdfg = load("npbench/hdiff/program.autoopt.sdfg");
    let e = offloaded_with(&mut sdfg, &host_maps(&["outer_fused"])).expect_err("code to code");
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("from code to code"), "{e}");
}

#[test]
fn a_map_holding_a_callback_stays_on_the_host_with_its_data() {
    let mut sdfg = load("corpus/untouched_array_args/program.sdfg");
    let before = maps(&sdfg);
    let callback = mark_callback(&mut sdfg);
    let stats = offloaded_with(&mut sdfg, &Settings::default()).expect("offloads");
    assert_eq!(stats.kernels(), 0, "nothing runs on the device");
    assert_eq!(maps(&sdfg), before, "the map keeps its CPU schedule");
    assert!(
        stats.host_parts.iter().any(|h| h.why.contains(&callback)),
        "{:?}",
        stats.host_parts
    );
    assert!(stats.copy_in.is_empty() && stats.copy_out.is_empty());
    assert!(sdfg.arrays.values().all(|d| !d.storage.is_gpu()));
}

#[test]
fn a_callback_map_whose_data_kernels_use_too_is_refused_by_name() {
    let mut sdfg = load("corpus/softmax/program.sdfg");
    mark_callback(&mut sdfg);
    let e = offloaded_with(&mut sdfg, &Settings::default()).expect_err("shared data");
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.to_string().contains("runs on the GPU"), "{e}");
}

#[test]
fn device_arguments_are_global_memory_without_twins_or_copies() {
    let mut sdfg = load("corpus/control_flow_state_machine/program.sdfg");
    let args: Vec<String> = sdfg
        .arrays
        .iter()
        .filter(|(_, d)| !d.transient && d.kind == DataKind::Array)
        .map(|(n, _)| n.clone())
        .collect();
    let settings = Settings {
        device_args: true,
        ..Settings::default()
    };
    let stats = offloaded_with(&mut sdfg, &settings).expect("offloads");
    assert!(stats.copy_in.is_empty() && stats.copy_out.is_empty());
    for a in &args {
        assert_eq!(sdfg.arrays[a].storage, Storage::GpuGlobal, "{a}");
        assert!(!sdfg.arrays[a].transient, "{a} is still an argument");
        assert!(!sdfg.arrays.contains_key(&format!("gpu_{a}")), "no twin");
    }
    assert_eq!(stats.device_args, args);
    // The host reads an argument in a condition: a host copy, filled at
    // entry and after the states that write it.
    assert!(!stats.host_reads.is_empty());
    let mut names = BTreeSet::new();
    data::interstate_names(&sdfg.body, &mut names);
    assert!(
        names
            .iter()
            .filter_map(|n| sdfg.arrays.get(n))
            .all(|d| !d.storage.is_gpu()),
        "the host reads no device memory: {names:?}"
    );
}

#[test]
fn device_arguments_need_no_size_the_program_does_not_receive() {
    let mut sdfg = load("gt4py/vertex_cell_skip_reduce/cpu_noopt.sdfg");
    let settings = Settings {
        device_args: true,
        ..Settings::default()
    };
    let stats = offloaded_with(&mut sdfg, &settings).expect("offloads");
    assert!(stats.device_args.iter().any(|a| a == "cf"));
    // gt4py's timer, used only by host C++ code, stays a host array.
    assert!(!stats.device_args.iter().any(|a| a == "gt_compute_time"));
    assert!(!sdfg.arrays["gt_compute_time"].storage.is_gpu());
}
