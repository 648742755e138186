//! The CMake package builds GPU libraries: `sdfgc_add_library(... TARGET cuda)`
//! with nvcc and `TARGET hip` with clang's HIP support, from a fixture, in a
//! clean build directory. Needs cmake, ninja (scripts/install-test-tools.sh)
//! and the GPU toolchains (scripts/install-gpu-toolchains.sh); a missing
//! tool fails the test.

mod common;

use common::corpus::nvcc;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn build(dir: &Path, target: &str, configure: &[String]) {
    std::fs::write(
        dir.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(gpu_example LANGUAGES CXX)\nfind_package(sdfgc REQUIRED)\nsdfgc_add_library(jac SDFG \"{}\" TARGET {target} MODE external SHARED)\n",
            repo().join("fixtures/corpus/jacobi_1d/program.gpu.sdfg").display()
        ),
    )
    .unwrap();
    let b = dir.join("build");
    let out = Command::new("cmake")
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(&b)
        .args(["-G", "Ninja"])
        .arg(format!("-Dsdfgc_DIR={}", repo().join("cmake").display()))
        .arg(format!(
            "-DSDFGC_EXECUTABLE={}",
            env!("CARGO_BIN_EXE_sdfgc")
        ))
        .args(configure)
        .env("HIP_PLATFORM", "amd")
        .env("CMAKE_POLICY_VERSION_MINIMUM", "3.5")
        .output()
        .expect("cmake is required: run `bash scripts/install-test-tools.sh`");
    assert!(
        out.status.success(),
        "configure ({target}):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("cmake")
        .arg("--build")
        .arg(&b)
        .env("HIP_PLATFORM", "amd")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "build ({target}):\n{log}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        log.contains(&format!(
            "sdfgc: generating cases_dev_jacobi_1d.{}",
            if target == "cuda" { "cu" } else { "hip" }
        )),
        "{log}"
    );
    assert!(b.join("libjac.so").exists(), "{log}");
}

#[test]
fn cmake_builds_a_cuda_library() {
    let dir = tempfile::tempdir().unwrap();
    build(
        dir.path(),
        "cuda",
        &[
            format!("-DCMAKE_CUDA_COMPILER={}", nvcc().display()),
            "-DCMAKE_CUDA_ARCHITECTURES=80".into(),
            "-DCMAKE_CUDA_HOST_COMPILER=g++".into(),
        ],
    );
}

#[test]
fn cmake_builds_a_hip_library() {
    let clang = ["/usr/bin/clang++-15", "/usr/lib/llvm-15/bin/clang++"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let clang = clang.expect(
        "clang++-15 (Debian's hipcc) is required: run `bash scripts/install-gpu-toolchains.sh`",
    );
    let dir = tempfile::tempdir().unwrap();
    build(
        dir.path(),
        "hip",
        &[
            format!("-DCMAKE_HIP_COMPILER={clang}"),
            "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode".into(),
            "-DCMAKE_HIP_ARCHITECTURES=gfx90a".into(),
        ],
    );
}
