//! What the command line does: load, validate, plan and write, per file.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::diag::{Error, ErrorKind, Result};
use crate::ir::Sdfg;
use crate::summary::Summary;
use crate::{back, front, passes, valid};

/// Output language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// C++17 with OpenMP.
    Cpp,
    /// CUDA C++.
    Cuda,
    /// HIP C++.
    Hip,
}

/// Memory mode for transients (`--mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Allocate and free around each use, per call.
    Scoped,
    /// Allocate at init, free at exit.
    Persistent,
    /// Stream-ordered allocation (GPU only).
    Pool,
    /// One application-provided workspace.
    External,
}

/// How transients are placed in the workspace (`--workspace-layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Layout {
    /// Transients whose live ranges never overlap share bytes.
    #[default]
    Packed,
    /// Every transient has its own bytes (still aligned).
    Sequential,
}

/// Options of the compile command.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Target language.
    pub target: Target,
    /// Memory mode (None: honour the SDFG's lifetimes).
    pub mode: Option<Mode>,
    /// Output directory.
    pub output: PathBuf,
    /// Workspace offset alignment in bytes (None: 64 for CPU, 256 for GPU storage).
    pub workspace_align: Option<u64>,
    /// Workspace layout.
    pub layout: Layout,
    /// Also write a standalone `<name>_main` program that runs the library.
    pub emit_sample: bool,
}

impl CompileOptions {
    /// Default options for a target.
    pub fn new(target: Target) -> CompileOptions {
        CompileOptions {
            target,
            mode: None,
            output: PathBuf::from("."),
            workspace_align: None,
            layout: Layout::Packed,
            emit_sample: false,
        }
    }
}

/// Loads and validates one file.
pub fn load_valid(path: &Path) -> Result<Sdfg> {
    let sdfg = front::load_file(path)?;
    valid::validate(&sdfg).map_err(|e| e.in_file(path))?;
    Ok(sdfg)
}

/// `sdfgc check`: loads and validates every file, prints a summary per file.
/// Returns every error (one per failing file).
pub fn check(files: &[PathBuf], out: &mut dyn Write) -> std::result::Result<(), Vec<Error>> {
    let mut errors = Vec::new();
    for f in files {
        match load_valid(f) {
            Ok(sdfg) => {
                let _ = writeln!(out, "{}: ok\n{}", f.display(), Summary::of(&sdfg));
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The generated files of one SDFG: (file name, contents).
pub type Outputs = Vec<(String, String)>;

/// Generates the translation unit of one file in memory.
pub fn generate(path: &Path, opts: &CompileOptions) -> Result<Outputs> {
    let sdfg = load_valid(path)?;
    generate_sdfg(sdfg, opts).map_err(|e| e.in_file(path))
}

/// Generates the translation unit of a loaded SDFG.
pub fn generate_sdfg(sdfg: Sdfg, opts: &CompileOptions) -> Result<Outputs> {
    match opts.target {
        Target::Cpp => {
            if opts.mode == Some(Mode::Pool) {
                return Err(Error::new(
                    ErrorKind::Usage,
                    "",
                    "--mode pool is a GPU stream-ordered mode; use scoped, persistent or external with --target cpp",
                ));
            }
            let program = passes::prepare(sdfg, opts)?;
            back::cpp::write(&program)
        }
        Target::Cuda | Target::Hip => Err(Error::new(
            ErrorKind::Unsupported,
            "",
            "target not implemented yet: the CUDA and HIP writers are not available in this version; use --target cpp",
        )),
    }
}

/// The compile command: one translation unit per file. Every file is
/// generated in memory first; nothing is written for a file that fails.
pub fn compile(files: &[PathBuf], opts: &CompileOptions) -> std::result::Result<(), Vec<Error>> {
    let mut errors = Vec::new();
    for f in files {
        let res = generate(f, opts).and_then(|outs| write_outputs(&opts.output, &outs));
        if let Err(e) = res {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Writes files atomically (temporary file + rename), and only when their
/// contents change, so build systems do not rebuild dependents needlessly.
pub fn write_outputs(dir: &Path, outs: &Outputs) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| {
        Error::new(ErrorKind::Io, "", format!("{}: {e}", p.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    for (name, text) in outs {
        let path = dir.join(name);
        if std::fs::read(&path)
            .map(|old| old == text.as_bytes())
            .unwrap_or(false)
        {
            continue;
        }
        let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(&path, e)
        })?;
    }
    Ok(())
}
