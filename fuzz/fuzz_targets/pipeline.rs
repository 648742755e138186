//! Fuzz target `pipeline`: arbitrary bytes → JSON reader → validation →
//! planning and C++ generation (`driver::generate_sdfg`, cpp target).
//!
//! The memory mode is picked from the input's length, so that the corpus
//! exercises every mode without spending input bytes on it. Any input may
//! be refused with an error; none may panic, overflow the stack or run out
//! of memory.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sdfgc::driver::{CompileOptions, Layout, Mode, Target};

/// (mode, layout) by input length modulo 5.
const MODES: [(Option<Mode>, Layout); 5] = [
    (None, Layout::Packed),
    (Some(Mode::Scoped), Layout::Packed),
    (Some(Mode::Persistent), Layout::Packed),
    (Some(Mode::External), Layout::Packed),
    (Some(Mode::External), Layout::Sequential),
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(sdfg) = sdfgc::front::json::load_str(text) else {
        return;
    };
    if sdfgc::valid::validate(&sdfg).is_err() {
        return;
    }
    let (mode, layout) = MODES[data.len() % MODES.len()];
    let opts = CompileOptions {
        mode,
        layout,
        ..CompileOptions::new(Target::Cpp)
    };
    let _ = sdfgc::driver::generate_sdfg(sdfg, &opts);
});
