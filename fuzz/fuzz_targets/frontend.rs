//! Fuzz target `frontend`: arbitrary bytes → JSON reader → validation.
//!
//! Any input may be refused with an error; none may panic, overflow the
//! stack or run out of memory.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sdfg) = sdfgc::front::json::load_str(text) {
        let _ = sdfgc::valid::validate(&sdfg);
    }
});
