//! The CMake package (`cmake/sdfgcConfig.cmake`) and the example project
//! `examples/cmake/`: configure, build and run it from a clean build directory
//! with the freshly built sdfgc, with Ninja and with Makefiles; a second build
//! runs nothing; touching the .sdfg or the sdfgc executable re-runs sdfgc.
//!
//! Needs cmake and ninja on PATH (`bash scripts/install-test-tools.sh`
//! installs both); the tests fail, never skip, without them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

const SDFGC: &str = env!("CARGO_BIN_EXE_sdfgc");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A tool on PATH, or a failure that says how to install it.
fn tool(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is not on PATH: run `bash scripts/install-test-tools.sh` (installs cmake and ninja)")
        })
}

/// Runs a command, returns stdout+stderr; fails the test on a non-zero exit.
fn run(cmd: &mut Command) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// Sets a file's modification time to now, after a pause that makes it newer
/// than every build output even on file systems with coarse timestamps.
fn touch(p: &Path) {
    std::thread::sleep(Duration::from_millis(1100));
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now()).unwrap();
}

/// A copy of the example project, the fixture SDFG and the sdfgc executable in `dir`.
struct Project {
    src: PathBuf,
    build: PathBuf,
    sdfg: PathBuf,
    sdfgc: PathBuf,
}

fn project(dir: &Path) -> Project {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    for f in ["CMakeLists.txt", "main.cpp"] {
        std::fs::copy(repo().join("examples/cmake").join(f), src.join(f)).unwrap();
    }
    let sdfg = src.join("jacobi.sdfg");
    std::fs::copy(repo().join("fixtures/corpus/jacobi_1d/program.sdfg"), &sdfg).unwrap();
    // A copy of sdfgc, so that touching it does not disturb other tests.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let sdfgc = bin.join("sdfgc");
    std::fs::copy(SDFGC, &sdfgc).unwrap();
    Project {
        src,
        build: dir.join("build"),
        sdfg,
        sdfgc,
    }
}

fn cmake(p: &Project) -> Command {
    let mut c = Command::new(tool("cmake"));
    c.env("SDFGC_EXECUTABLE", &p.sdfgc);
    c
}

fn build(p: &Project) -> String {
    run(cmake(p).arg("--build").arg(&p.build).arg("--verbose"))
}

/// What the verbose build output shows when a step runs.
struct Markers {
    /// sdfgc's command line.
    sdfgc: String,
    /// The compile command of the generated source.
    compile_library: String,
}

fn scenario(generator: &str) {
    let ninja = generator == "Ninja";
    if ninja {
        tool("ninja");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = project(dir.path());
    run(cmake(&p)
        .arg("-S")
        .arg(&p.src)
        .arg("-B")
        .arg(&p.build)
        .arg("-G")
        .arg(generator)
        .arg(format!("-Dsdfgc_DIR={}", repo().join("cmake").display()))
        .arg(format!("-DSDFG_FILE={}", p.sdfg.display())));
    let gen_dir = p.build.join("sdfgc/jacobi");
    let m = Markers {
        sdfgc: format!("{} {}", p.sdfgc.display(), p.sdfg.display()),
        compile_library: format!("-c {}", gen_dir.join("cases_dev_jacobi_1d.cpp").display()),
    };
    let ran = |out: &str| out.contains(&m.sdfgc);

    // First build: sdfgc runs, the library and the program are built; the program passes.
    let out = build(&p);
    assert!(ran(&out), "{generator}: sdfgc did not run:\n{out}");
    assert!(out.contains(&m.compile_library), "{out}");
    for f in ["cases_dev_jacobi_1d.cpp", "cases_dev_jacobi_1d.h"] {
        assert!(gen_dir.join(f).is_file(), "{f} missing");
    }
    let res = run(&mut Command::new(p.build.join("jacobi_main")));
    assert!(res.contains("OK"), "{res}");

    // Second build with nothing changed: nothing runs.
    let out = build(&p);
    if ninja {
        assert!(
            out.contains("ninja: no work to do"),
            "second build did work:\n{out}"
        );
    }
    assert!(!ran(&out), "second build re-ran sdfgc:\n{out}");
    assert!(!out.contains(" -c "), "second build compiled:\n{out}");
    assert!(
        !out.contains("-o jacobi_main"),
        "second build linked:\n{out}"
    );

    // Touching the .sdfg re-runs sdfgc. With Ninja the unchanged outputs are not
    // rewritten (write-if-changed + restat), so nothing is recompiled.
    touch(&p.sdfg);
    let out = build(&p);
    assert!(ran(&out), "touching the .sdfg did not re-run sdfgc:\n{out}");
    if ninja {
        assert!(
            !out.contains(&m.compile_library),
            "unchanged generated code was recompiled:\n{out}"
        );
    }
    let out = build(&p);
    assert!(!ran(&out), "a build after the re-run re-ran sdfgc:\n{out}");

    // Touching the sdfgc executable (a prerequisite only through the depfile) re-runs sdfgc.
    touch(&p.sdfgc);
    let out = build(&p);
    assert!(ran(&out), "a newer sdfgc did not re-run sdfgc:\n{out}");
    let out = build(&p);
    assert!(!ran(&out), "{out}");
    let res = run(&mut Command::new(p.build.join("jacobi_main")));
    assert!(res.contains("OK"), "{res}");
}

#[test]
fn example_builds_and_rebuilds_minimally_with_ninja() {
    scenario("Ninja");
}

#[test]
fn example_builds_and_rebuilds_minimally_with_makefiles() {
    scenario("Unix Makefiles");
}

#[test]
fn missing_sdfgc_is_reported_at_configure_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = project(dir.path());
    let o = Command::new(tool("cmake"))
        .env("SDFGC_EXECUTABLE", dir.path().join("no-such-sdfgc"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("-S")
        .arg(&p.src)
        .arg("-B")
        .arg(&p.build)
        .arg(format!("-Dsdfgc_DIR={}", repo().join("cmake").display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        text.contains("the sdfgc executable was not found"),
        "{text}"
    );
}

#[test]
fn package_version_is_the_crate_version() {
    let text = std::fs::read_to_string(repo().join("cmake/sdfgcConfigVersion.cmake")).unwrap();
    assert!(
        text.contains(&format!(
            "set(PACKAGE_VERSION \"{}\")",
            env!("CARGO_PKG_VERSION")
        )),
        "cmake/sdfgcConfigVersion.cmake does not say version {}",
        env!("CARGO_PKG_VERSION")
    );
}
