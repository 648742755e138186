//! Snapshot tests: the generated files of every case (its main CPU file for
//! cpp, its GPU files for CUDA and HIP), in every memory mode,
//! are kept under `snapshots/`; any change to sdfgc's output shows up as a
//! reviewable diff (`cargo insta review`), and CI fails on an unreviewed one
//! (`INSTA_UPDATE=no`). Together with the compile tests, every snapshot in
//! the repository compiles.

use std::path::PathBuf;

use sdfgc::driver::{CompileOptions, Mode, Target};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Fixture files with the configurations they are snapshotted in.
fn configurations() -> Vec<(PathBuf, Target, Option<Mode>)> {
    let mut out = Vec::new();
    let mut cases: Vec<PathBuf> = Vec::new();
    for dir in [
        "fixtures/corpus",
        "fixtures/gt4py",
        "fixtures/gt4py/icon4py",
        "fixtures/gpu-tb",
        "fixtures/gpu",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.join("case.json").exists() {
                cases.push(p);
            }
        }
    }
    cases.sort();
    for case in cases {
        let cpu = vec![
            None,
            Some(Mode::Scoped),
            Some(Mode::Persistent),
            Some(Mode::External),
        ];
        let gpu = vec![
            None,
            Some(Mode::Scoped),
            Some(Mode::Pool),
            Some(Mode::Persistent),
            Some(Mode::External),
        ];
        for (file, target, modes) in [
            ("program.sdfg", Target::Cpp, cpu.clone()),
            ("cpu.sdfg", Target::Cpp, cpu.clone()),
            ("program.gpu.sdfg", Target::Cuda, gpu.clone()),
            ("program.gpu.sdfg", Target::Hip, gpu.clone()),
            ("gpu.sdfg", Target::Cuda, gpu.clone()),
            ("hip.sdfg", Target::Hip, gpu.clone()),
        ] {
            let path = case.join(file);
            if path.exists() {
                for m in modes {
                    out.push((path.clone(), target, m));
                }
            }
        }
    }
    out
}

#[test]
fn generated_code_matches_the_snapshots() {
    let configs = configurations();
    assert!(
        configs.len() >= 100,
        "only {} configurations",
        configs.len()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (file, target, mode) in configs {
            let opts = CompileOptions {
                mode,
                ..CompileOptions::new(target)
            };
            let outs = sdfgc::driver::generate(&file, &opts).unwrap_or_else(|e| panic!("{e}"));
            let rel = file
                .strip_prefix(root().join("fixtures"))
                .unwrap()
                .display()
                .to_string();
            let mode_name = mode
                .map(|m| format!("{m:?}").to_lowercase())
                .unwrap_or_else(|| "default".into());
            for (name, text) in outs {
                let ext = name.rsplit('.').next().unwrap_or("txt");
                let key = format!(
                    "{}__{:?}__{mode_name}__{ext}",
                    rel.replace(['/', '.'], "_"),
                    target
                )
                .to_lowercase();
                insta::assert_snapshot!(key, text);
            }
        }
    });
}
