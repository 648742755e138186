//! The system C and C++ compilers, found and configured by the `cc` crate as
//! Rust projects expect: `CXX`/`CC` choose the compiler, `CXXFLAGS`/`CFLAGS`
//! add flags. cc's defaults for the host (without its warning flags) come
//! first, so a test's own flags such as `-O2` override them. Usable alone
//! (`#[path = "common/cxx.rs"]`).

use std::process::Command;
use std::sync::OnceLock;

/// cc's compiler for C++ (`cpp`) or C, found once per test process (cc runs
/// the compiler to learn its family: not once per compile).
fn build(cpp: bool) -> Command {
    static TOOLS: [OnceLock<cc::Tool>; 2] = [OnceLock::new(), OnceLock::new()];
    TOOLS[cpp as usize]
        .get_or_init(|| {
            // Tests run outside a build script, so cc gets the facts cargo would set.
            let host = format!(
                "{}-unknown-{}-gnu",
                std::env::consts::ARCH,
                std::env::consts::OS
            );
            cc::Build::new()
                .cpp(cpp)
                .target(&host)
                .host(&host)
                .opt_level(0)
                .debug(false)
                .warnings(false)
                .extra_warnings(false)
                .cargo_metadata(false)
                .cargo_warnings(false)
                .try_get_compiler()
                .unwrap_or_else(|e| {
                    panic!(
                        "no C{} compiler found (it is required): {e}",
                        if cpp { "++" } else { "" }
                    )
                })
        })
        .to_command()
}

/// The C++ compiler (`$CXX`, else the system's `c++`/`g++`) with `$CXXFLAGS`.
pub fn cxx() -> Command {
    build(true)
}

/// The C compiler (`$CC`, else the system's `cc`/`gcc`) with `$CFLAGS`.
#[allow(dead_code)] // not every test that includes this file builds C
pub fn cc() -> Command {
    build(false)
}
