//! What the command line does: load, validate, plan and write, per file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::diag::{Error, ErrorKind, Result};
use crate::ir::Sdfg;
use crate::summary::Summary;
use crate::{back, front, passes, valid};

pub use crate::options::{Blas, CompileOptions, Layout, Mode, OffloadArgs, RowPadding, Target};

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

pub use crate::back::Outputs;

/// Generates the translation unit of one file in memory.
pub fn generate(path: &Path, opts: &CompileOptions) -> Result<Outputs> {
    let sdfg = load_valid(path)?;
    generate_sdfg(sdfg, opts).map_err(|e| e.in_file(path))
}

/// Generates the translation unit of a loaded SDFG.
pub fn generate_sdfg(sdfg: Sdfg, opts: &CompileOptions) -> Result<Outputs> {
    if opts.target == Target::Cpp && opts.mode == Some(Mode::Pool) {
        return Err(Error::new(
            ErrorKind::Usage,
            "",
            "--mode pool is a GPU stream-ordered mode; use scoped, persistent or external with --target cpp",
        ));
    }
    // One writer for every target: the program knows its GPU dialect, if any.
    let program = passes::prepare(sdfg, opts)?;
    valid::target::refuse_unsupported(
        &program.sdfg,
        program.gpu.is_some(),
        program.gpu.is_some_and(|g| g.prefix == "cuda"),
    )?;
    let mut outs = back::cpp::write(&program)?;
    if opts.emit_sample {
        outs.push(back::sample::write_sample(&program));
    }
    if KEEP_IR.load(Ordering::Relaxed) {
        std::mem::forget(program);
    }
    Ok(outs)
}

/// Set by [`keep_ir_until_exit`].
static KEEP_IR: AtomicBool = AtomicBool::new(false);

/// For a process that exits soon after compiling (the `sdfgc` command):
/// [`generate_sdfg`] then does not free each program's IR, which the
/// operating system reclaims at exit for free; freeing the hundreds of
/// thousands of small allocations of a large SDFG one by one costs about a
/// tenth of the compile time. Memory then grows with every file compiled in
/// the process, so a long-running user of the library should not call this.
pub fn keep_ir_until_exit() {
    KEEP_IR.store(true, Ordering::Relaxed);
}

/// The compile command: one translation unit per file. Every file is
/// generated in memory first; nothing is written for a file that fails.
pub fn compile(files: &[PathBuf], opts: &CompileOptions) -> std::result::Result<(), Vec<Error>> {
    compile_files(files, opts, None)
}

/// The compile command with an optional Make-style depfile (`--depfile`):
/// for every input that compiled, one rule
/// `<outputs>: <input> <depfile.executable>`, so that a build system re-runs
/// sdfgc when the SDFG or sdfgc itself changes. The depfile is written
/// (atomically, only if changed) even when some inputs fail; it then lists
/// the inputs that succeeded.
pub fn compile_files(
    files: &[PathBuf],
    opts: &CompileOptions,
    depfile: Option<&Depfile>,
) -> std::result::Result<(), Vec<Error>> {
    // Files are independent: generate them on every core, largest first so that
    // no core is left with a big one at the end; then write them on every core.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_cached_key(|&k| {
        std::cmp::Reverse(std::fs::metadata(&files[k]).map_or(0, |m| m.len()))
    });
    let mut by_size: Vec<(usize, Result<Outputs>)> = order
        .iter()
        .copied()
        .zip(parallel_map(&order, |&k| generate(&files[k], opts)))
        .collect();
    by_size.sort_by_key(|(k, _)| *k);
    let generated: Vec<Result<Outputs>> = by_size.into_iter().map(|(_, g)| g).collect();
    // An output name that several inputs produce gets the last one's file
    // (what writing them one after another in input order would leave), so
    // every file is written once, and all on every core.
    let mut last_writer: std::collections::HashMap<&str, usize> = Default::default();
    for (i, outs) in generated.iter().enumerate() {
        for (name, _) in outs.iter().flatten() {
            last_writer.insert(name.as_str(), i);
        }
    }
    let inputs: Vec<usize> = (0..files.len()).collect();
    let written = parallel_map(&inputs, |&i| match &generated[i] {
        Ok(outs) => write_files(
            &opts.output,
            outs.iter().filter(|(n, _)| last_writer[n.as_str()] == i),
        ),
        Err(_) => Ok(()),
    });
    let mut errors = Vec::new();
    let mut rules = Vec::new();
    for ((f, g), w) in files.iter().zip(&generated).zip(written) {
        let outs = match g {
            Ok(outs) => outs,
            Err(e) => {
                errors.push(e.clone());
                continue;
            }
        };
        match w {
            Ok(()) => rules.push(DepRule {
                outputs: outs.iter().map(|(n, _)| opts.output.join(n)).collect(),
                input: f.clone(),
            }),
            Err(e) => errors.push(e),
        }
    }
    if let Some(Err(e)) = depfile.map(|d| write_file(&d.path, &d.render(&rules))) {
        errors.push(e);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `f` applied to every item on up to one thread per core; results in item order.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Where to write a depfile, and the executable every rule depends on.
#[derive(Clone, Debug)]
pub struct Depfile {
    /// The depfile's path.
    pub path: PathBuf,
    /// The sdfgc executable (a prerequisite of every rule).
    pub executable: PathBuf,
}

/// One depfile rule: the outputs generated from one input.
#[derive(Clone, Debug)]
pub struct DepRule {
    /// Output paths, in the order they were generated (`.cpp` first).
    pub outputs: Vec<PathBuf>,
    /// The SDFG file.
    pub input: PathBuf,
}

impl Depfile {
    /// The depfile's text: one Make rule per input.
    pub fn render(&self, rules: &[DepRule]) -> String {
        let mut text = String::new();
        for r in rules {
            let outs: Vec<String> = r.outputs.iter().map(|p| make_escape(p)).collect();
            text.push_str(&format!(
                "{}: {} {}\n",
                outs.join(" "),
                make_escape(&r.input),
                make_escape(&self.executable)
            ));
        }
        text
    }
}

/// Escapes a path for a Make-style depfile (as GCC does; Ninja reads the same).
fn make_escape(p: &Path) -> String {
    let mut out = String::new();
    for c in p.to_string_lossy().chars() {
        match c {
            ' ' | '#' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out
}

/// The result of `--verify`: per input, the generated files that are missing
/// or differ on disk, and the inputs that could not be generated.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// (input, [(output path, "differs" | "missing")]) for every input with stale outputs.
    pub stale: Vec<(PathBuf, Vec<(PathBuf, &'static str)>)>,
    /// Inputs that failed to load or generate.
    pub errors: Vec<Error>,
}

impl VerifyReport {
    /// True when every output is up to date and nothing failed.
    pub fn ok(&self) -> bool {
        self.stale.is_empty() && self.errors.is_empty()
    }
}

/// `--verify`: regenerates every file in memory and compares it with the
/// file on disk under `opts.output`. Writes nothing.
pub fn verify(files: &[PathBuf], opts: &CompileOptions) -> VerifyReport {
    let mut report = VerifyReport::default();
    for f in files {
        match generate(f, opts) {
            Ok(outs) => {
                let bad: Vec<(PathBuf, &'static str)> = outs
                    .iter()
                    .filter_map(|(name, text)| {
                        let path = opts.output.join(name);
                        match std::fs::read(&path) {
                            Ok(old) if old == text.as_bytes() => None,
                            Ok(_) => Some((path, "differs")),
                            Err(_) => Some((path, "missing")),
                        }
                    })
                    .collect();
                if !bad.is_empty() {
                    report.stale.push((f.clone(), bad));
                }
            }
            Err(e) => report.errors.push(e),
        }
    }
    report
}

fn io_error(p: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, "", format!("{}: {e}", p.display()))
}

/// Temporary name next to `path` (hidden, unique per process; matches `*.tmp*`).
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Writes one file atomically and only if its contents change.
pub fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    let tmp = temp_path(path);
    std::fs::write(&tmp, text).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(&tmp, e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(path, e)
    })
}

/// Writes the files of one SDFG atomically (temporary file + rename), and
/// only those whose contents change, so build systems do not rebuild
/// dependents needlessly. Every changed file is first written to a temporary
/// file; only when all of them are written are they renamed into place, so
/// a failure leaves neither partial files nor a mix of old and new outputs
/// (short of a failing rename) and removes its temporary files.
pub fn write_outputs(dir: &Path, outs: &Outputs) -> Result<()> {
    write_files(dir, outs.iter())
}

/// [`write_outputs`] for some of the files of an [`Outputs`].
fn write_files<'o>(dir: &Path, outs: impl Iterator<Item = &'o (String, String)>) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let changed: Vec<(PathBuf, &String)> = outs
        .map(|(name, text)| (dir.join(name), text))
        .filter(|(path, text)| !std::fs::read(path).is_ok_and(|old| old == text.as_bytes()))
        .collect();
    let mut temps: Vec<(PathBuf, &PathBuf)> = Vec::new();
    let cleanup = |temps: &[(PathBuf, &PathBuf)]| {
        for (t, _) in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    for (path, text) in &changed {
        let tmp = temp_path(path);
        if let Err(e) = std::fs::write(&tmp, text) {
            let _ = std::fs::remove_file(&tmp);
            cleanup(&temps);
            return Err(io_error(&tmp, e));
        }
        temps.push((tmp, path));
    }
    for (k, (tmp, path)) in temps.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            cleanup(&temps[k..]);
            return Err(io_error(path, e));
        }
    }
    Ok(())
}
