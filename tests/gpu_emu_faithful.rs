//! The emulated GPU runtime (tests/gpu_emu) is faithful where generated
//! code can go wrong: small CUDA programs (tests/gpu_emu_tests/*.cu),
//! rewritten for the emulator as the generated files are
//! (tests/common/emu.rs) and built with g++, must behave as on a GPU, and in
//! each case a simpler emulator (threads one after another, shared memory
//! static, stream work done when queued) would pass the wrong program or
//! give another result:
//!
//! * a missing `__syncthreads()` gives wrong data (threads run concurrently,
//!   in a seeded random order), a barrier some threads skip is reported;
//! * a data race on `__shared__` memory is reported; a benign one (every
//!   thread writes the same value) is not; each block has its own shared
//!   memory, uninitialised; an out-of-bounds index is reported;
//! * shuffles and votes give CUDA's results with partial masks and widths,
//!   HIP's forms use 64 lanes, reading a lane outside the mask is reported;
//! * atomics total exactly, while a non-atomic update loses updates;
//! * stream work runs in order and only when the host synchronizes: a
//!   missing `cudaStreamWaitEvent` or synchronization gives wrong data, the
//!   legacy null stream waits for blocking streams only.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The test programs, built once per test process.
fn build(name: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap()).path();
    let exe = dir.join(name);
    if !exe.exists() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/gpu_emu_tests")
            .join(format!("{name}.cu"));
        let text = std::fs::read_to_string(&src).unwrap();
        let cpp = dir.join(format!("{name}.cpp"));
        std::fs::write(&cpp, common::emu::emulate_launches(&text)).unwrap();
        let tmp = dir.join(format!("{name}.tmp"));
        common::emu::build_program(&cpp, &tmp, "-O1");
        std::fs::rename(&tmp, &exe).unwrap();
    }
    exe
}

fn run(name: &str, arg: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(build(name));
    if !arg.is_empty() {
        cmd.arg(arg);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The `key value` lines of a run that must succeed.
fn values(name: &str, arg: &str, env: &[(&str, &str)]) -> HashMap<String, i64> {
    let out = run(name, arg, env);
    assert!(
        out.status.success(),
        "{name} {arg}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// A run the emulator must stop with a message containing `what`.
fn reported(name: &str, arg: &str, what: &str) {
    let out = run(name, arg, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(what),
        "{name} {arg}: expected a report of `{what}`, got {:?}\n{err}",
        out.status
    );
}

#[test]
fn a_missing_barrier_gives_wrong_data_and_a_skipped_one_is_reported() {
    let v = values("barrier", "", &[]);
    assert!(v["without_barrier_wrong"] > 0, "{v:?}");
    assert_eq!(v["with_barrier_wrong"], 0, "{v:?}");
    // Thread after thread (seed 0: thread and block order), the missing
    // barrier goes unnoticed: what a simpler emulator does.
    let v = values("barrier", "", &[("SDFGC_EMU_SEED", "0")]);
    assert_eq!(v["without_barrier_wrong"], 0, "{v:?}");
    // Other seeds find it too.
    for seed in ["1", "2", "12345"] {
        let v = values("barrier", "", &[("SDFGC_EMU_SEED", seed)]);
        assert!(v["without_barrier_wrong"] > 0, "seed {seed}: {v:?}");
    }
    reported("barrier", "diverge", "__syncthreads() that others skipped");
}

#[test]
fn shared_memory_races_are_reported_and_blocks_have_their_own() {
    reported("shared", "race", "data race on __shared__ s[");
    assert_eq!(values("shared", "fixed", &[])["wrong"], 0);
    assert_eq!(values("shared", "benign", &[])["wrong"], 0);
    let v = values("shared", "perblock", &[]);
    assert_eq!(
        v["garbage"], 3,
        "a block's shared memory starts uninitialised: {v:?}"
    );
    assert_eq!(v["wrong"], 0, "{v:?}");
    reported("shared", "bounds", "__shared__ s[16] is out of bounds");
}

#[test]
fn shuffles_and_votes_give_cuda_results_with_partial_masks() {
    let v = values("warp", "", &[]);
    for k in [
        "idx",
        "up",
        "down",
        "xor",
        "down16_partial",
        "ballot_partial",
        "any",
        "all",
        "activemask",
    ] {
        assert_eq!(v[k], 0, "{k}: {v:?}");
    }
    assert_eq!(values("warp", "hip64", &[])["wrong"], 0);
    reported("warp", "outside", "reads lane 20, which does not take part");
    reported("warp", "notself", "which does not name it");
}

#[test]
fn atomics_total_exactly_while_plain_updates_are_lost() {
    let v = values("atomics", "", &[]);
    assert_eq!(v["wrong"], 0, "{v:?}");
    assert!(v["lost"] > 0, "threads interleave at atomics: {v:?}");
}

#[test]
fn stream_work_is_ordered_by_events_and_done_at_synchronization() {
    assert_eq!(values("streams", "wait", &[])["wrong"], 0);
    assert_eq!(values("streams", "sync", &[])["wrong"], 0);
    assert_eq!(values("streams", "order", &[])["wrong"], 0);
    assert!(values("streams", "nowait", &[])["wrong"] > 0);
    assert_eq!(values("streams", "nosync", &[])["wrong"], 256);
    let v = values("streams", "legacy", &[]);
    assert_eq!(v["blocking_wrong"], 0, "{v:?}");
    assert_eq!(v["nonblocking_wrong"], 256, "{v:?}");
    // Run eagerly (what a simpler emulator does), the missing wait and the
    // missing synchronization pass.
    let eager = [("SDFGC_EMU_STREAMS", "eager")];
    assert_eq!(values("streams", "nowait", &eager)["wrong"], 0);
    assert_eq!(values("streams", "nosync", &eager)["wrong"], 0);
}
