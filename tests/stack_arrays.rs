//! Small arrays of constant size that live in a state, a branch or a nested
//! SDFG (gt4py's Register temporaries of ICON4Py's stencils) are declared on
//! the stack, as DaCe declares them, never allocated per call: the
//! generated code of such an SDFG calls no heap allocator in the external
//! and persistent modes, nor in the SDFG's own lifetimes, and builds
//! warning-free. (ICON4Py's `add_extra_diffusion_for_w_con_approaching_cfl`,
//! saved by gt4py 1.2.1 with DaCe 2.0.0a10 in gt4py's EXTERNAL mode: before,
//! 112 heap allocations per call.)

use std::path::PathBuf;
use std::process::Command;

use sdfgc::driver::{CompileOptions, Mode, Target};

#[test]
fn constant_size_register_arrays_are_on_the_stack() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = root
        .join("fixtures/gt4py/register-arrays/add_extra_diffusion_for_w_con_approaching_cfl.sdfg");
    let dir = std::env::temp_dir().join(format!("sdfgc-stack-arrays-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for mode in [None, Some(Mode::External), Some(Mode::Persistent)] {
        let opts = CompileOptions {
            mode,
            ..CompileOptions::new(Target::Cpp)
        };
        let outs = sdfgc::driver::generate(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
        let (name, code) = outs
            .iter()
            .find(|(n, _)| n.ends_with(".cpp") && !n.ends_with("_main.cpp"))
            .unwrap();
        let calls = code.matches("sdfgc_alloc<").count();
        assert_eq!(calls, 0, "{mode:?}: {calls} heap allocations in the code");
        assert!(
            code.contains("double __map_fusion_gtir_tmp_26[4] = {};"),
            "{mode:?}"
        );
        let path = dir.join(name);
        std::fs::write(&path, code).unwrap();
        let out = Command::new("g++")
            .args([
                "-std=c++17",
                "-fopenmp",
                "-fsyntax-only",
                "-Wall",
                "-Wextra",
                "-Werror",
            ])
            .arg(&path)
            .output()
            .expect("g++ runs");
        assert!(
            out.status.success(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
