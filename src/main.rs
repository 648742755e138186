//! The `sdfgc` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use sdfgc::driver::{self, Blas, CompileOptions, Layout, Mode, OffloadArgs, RowPadding, Target};
use sdfgc::report::FileSymbols;

const EXAMPLES: &str = "\
Examples:
  sdfgc program.sdfg --mode external --target cuda        # writes ./<name>.cu and ./<name>.h
  sdfgc build/*.sdfg --target cpp -o out/                 # one translation unit per SDFG
  sdfgc p.sdfg -o gen/ --depfile gen/p.d                  # also write a depfile for the build system
  sdfgc p.sdfg -o gen/ --verify                           # exit 1 if gen/ is not what sdfgc generates
  sdfgc p.sdfg --emit-sample -o gen/                      # also write gen/<name>_main.cpp
  sdfgc check program.sdfg other.sdfg                     # load, validate, summarise
  sdfgc p.sdfg --target cuda --offload=device-args        # a CPU SDFG on the GPU, device arguments
  sdfgc check p.sdfg --offload --host-map outer           # what runs where once offloaded
  sdfgc p.sdfg --mode external --symbol N=100 --stats-svg ws.svg   # a picture of the workspace

Exit status: 0 success, 1 invalid or unsupported input, 2 usage error.";

/// sdfgc: compiles DaCe SDFGs (JSON) into self-contained C++, CUDA or HIP
/// translation units that follow DaCe's C ABI.
#[derive(Parser, Debug)]
#[command(name = "sdfgc", version, after_help = EXAMPLES, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    compile: CompileArgs,
}

#[derive(clap::Args, Debug)]
struct CompileArgs {
    /// SDFG files to compile (one translation unit each).
    files: Vec<PathBuf>,
    /// Target language.
    #[arg(long, value_enum, default_value_t = Target::Cpp)]
    target: Target,
    /// Memory mode for transients (default: the lifetimes stored in the SDFG).
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Output directory (default: the current directory).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// Alignment of every workspace offset in bytes (default: 64 for CPU, 256 for GPU storage).
    #[arg(long, value_name = "BYTES", value_parser = parse_align)]
    workspace_align: Option<u64>,
    /// Workspace layout: transients with disjoint live ranges share bytes (packed) or not (sequential).
    #[arg(long, value_enum, default_value_t = Layout::Packed)]
    workspace_layout: Layout,
    /// Also write `<name>_main.cpp`, a standalone program that runs the library.
    #[arg(long)]
    emit_sample: bool,
    /// GPU: number of streams (1: every kernel and copy on the host's stream; more:
    /// independent kernels of a state round-robin on internal streams, joined at exit).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    streams: u32,
    /// GPU: synchronize the host with the stream before the program returns.
    #[arg(long)]
    sync_on_exit: bool,
    /// GPU: put constant arrays in __constant__ memory (refused above 64 KiB).
    #[arg(long)]
    constant_memory: bool,
    /// GPU: check at program entry that GPU_Global arguments are device memory.
    #[arg(long)]
    check_pointers: bool,
    /// BLAS library nodes (Gemm, Gemv, Dot, MatMul) call this library instead of
    /// expanding into maps: openblas (CPU data), cublas (CUDA, device data;
    /// links -lcublas), hipblas (HIP: not implemented, refused).
    #[arg(long, value_enum, default_value_t = Blas::None)]
    blas: Blas,
    /// GPU: offload a CPU SDFG: top-level maps become kernels. `--offload`
    /// (host-args): the arguments are host arrays with device twins copied in
    /// at the start and out at the end; `--offload=device-args`: the array
    /// arguments must be device pointers (GPU_Global), nothing is copied.
    /// The C ABI's types are the same either way.
    #[arg(long, value_enum, value_name = "ARGS", num_args = 0..=1, require_equals = true, default_missing_value = "host-args")]
    offload: Option<OffloadArgs>,
    /// GPU, with --offload: the top-level map LABEL stays on the host as a
    /// loop and the maps directly below it become kernels, launched per
    /// iteration (repeatable).
    #[arg(long = "host-map", value_name = "LABEL")]
    host_maps: Vec<String>,
    /// CPU: pad the rows of large transients to an odd number of cache lines
    /// (auto: rows of 4 KiB or more; always: every row, for tests; off).
    #[arg(long, value_enum, default_value_t = RowPadding::Auto)]
    row_padding: RowPadding,
    /// CPU: the work (tasklet executions, a call or a division counting 8)
    /// from which a map runs as a parallel region; maps with less run on the
    /// calling thread (0: every parallel map, as DaCe writes them).
    #[arg(long, value_name = "N", default_value_t = 16384)]
    min_parallel_work: i64,
    /// Data instrumentation (access nodes or states with DaCe's `Save`): the
    /// folder its reports go to, DaCe's `<build folder>/data` (default:
    /// `.dacecache/<name>/data`, relative to where the program runs).
    #[arg(long, value_name = "DIR")]
    data_folder: Option<String>,
    /// Print the workspace layout per storage (packed, sequential, DaCe's sum) and each
    /// transient's offset and live range; files are written only if -o is given.
    #[arg(long)]
    stats: bool,
    /// Write the --stats report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// Write the workspace as an SVG picture to FILE: per program and storage,
    /// each transient's live range (x: states in execution order) at its byte
    /// offset (y), the packed layout beside DaCe's sequential one, with totals.
    #[arg(long, value_name = "FILE")]
    stats_svg: Option<PathBuf>,
    /// Also write a Make-style depfile to FILE: per input, the rule
    /// `<outputs>: <input.sdfg> <sdfgc executable>` (for build systems: CMake's DEPFILE, Ninja, Make).
    #[arg(long, value_name = "FILE")]
    depfile: Option<PathBuf>,
    /// Write nothing: regenerate in memory and exit 1 if any output file on disk
    /// differs or is missing (checks committed generated code).
    #[arg(long, conflicts_with_all = ["depfile", "stats", "stats_json", "stats_svg"])]
    verify: bool,
    /// A symbol value for --stats (repeatable): NAME=VALUE.
    #[arg(long = "symbol", value_name = "NAME=VALUE", value_parser = parse_symbol)]
    symbols: Vec<(String, i64)>,
}

fn parse_symbol(s: &str) -> Result<(String, i64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not NAME=VALUE"))?;
    let v: i64 = v
        .trim()
        .parse()
        .map_err(|_| format!("'{v}' is not an integer"))?;
    Ok((k.trim().to_string(), v))
}

fn parse_align(s: &str) -> Result<u64, String> {
    let v: u64 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number of bytes"))?;
    if v == 0 || !v.is_power_of_two() {
        return Err(format!("{v} is not a power of two"));
    }
    Ok(v)
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load and validate SDFG files and print a short summary of each; with
    /// --offload, also what runs where once offloaded.
    #[command(
        after_help = "Examples:\n  sdfgc check fixtures/corpus/jacobi_1d/program.sdfg\n  sdfgc check program.sdfg --offload --target cuda --host-map outer"
    )]
    Check {
        /// SDFG files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Also offload each program and print what runs where: kernels, host
        /// maps, copies and bytes per call, and why each host-side part stayed
        /// on the host (`--offload=device-args`: arguments on the device).
        #[arg(long, value_enum, value_name = "ARGS", num_args = 0..=1, require_equals = true, default_missing_value = "host-args")]
        offload: Option<OffloadArgs>,
        /// GPU target of --offload.
        #[arg(long, value_enum, default_value_t = Target::Cuda)]
        target: Target,
        /// With --offload: a top-level map that stays on the host (repeatable).
        #[arg(long = "host-map", value_name = "LABEL")]
        host_maps: Vec<String>,
        /// Symbol values for the byte counts (repeatable): NAME=VALUE.
        #[arg(long = "symbol", value_name = "NAME=VALUE", value_parser = parse_symbol)]
        symbols: Vec<(String, i64)>,
    },
    /// The workspace each program needs per storage, and the maximum over all
    /// of them: the size of the one buffer an application allocates.
    #[command(
        after_help = "Examples:\n  sdfgc plan build/*.sdfg --target cpp --mode external --symbol N=1000\n  sdfgc plan build/*.sdfg --mode external --symbol N=1000 --svg plan.svg   # also the picture"
    )]
    Plan {
        /// SDFG files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Target language.
        #[arg(long, value_enum, default_value_t = Target::Cpp)]
        target: Target,
        /// Memory mode (external puts every eligible transient in the workspace).
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// Symbol values (repeatable): NAME=VALUE. Without them sizes are formulas.
        #[arg(long = "symbol", value_name = "NAME=VALUE", value_parser = parse_symbol)]
        symbols: Vec<(String, i64)>,
        /// Workspace offset alignment in bytes.
        #[arg(long, value_name = "BYTES", value_parser = parse_align)]
        workspace_align: Option<u64>,
        /// Workspace layout.
        #[arg(long, value_enum, default_value_t = Layout::Packed)]
        workspace_layout: Layout,
        /// Symbol values per file: a JSON object {"<sdfg file as given>": {"NAME": VALUE, ...}};
        /// they take precedence over --symbol for that file.
        #[arg(long, value_name = "FILE")]
        symbols_json: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also write the picture of every program's workspace (packed beside
        /// DaCe's sequential layout) under the size to allocate, as SVG, to FILE.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
}

/// mimalloc (built without transparent huge pages, whose allocation time
/// varies a lot on a busy machine): with [`discard_read_subtrees`] it
/// reuses the memory of the JSON tree for the IR at little cost, which
/// glibc's malloc does not (docs/performance.md, section 2).
///
/// [`discard_read_subtrees`]: sdfgc::front::json::discard_read_subtrees
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("sdfgc: internal error (this is a bug in sdfgc, please report it): {info}");
    }));
    let cli = Cli::parse();
    sdfgc::front::json::discard_read_subtrees();
    let result = match cli.command {
        Some(Command::Check {
            files,
            offload,
            target,
            host_maps,
            symbols,
        }) => match offload {
            None if host_maps.is_empty() => driver::check(&files, &mut std::io::stdout()),
            _ => {
                let opts = CompileOptions {
                    offload: true,
                    offload_args: offload.unwrap_or_default(),
                    host_maps,
                    ..CompileOptions::new(target)
                };
                sdfgc::report::check_offload(
                    &files,
                    &opts,
                    &symbols.into_iter().collect(),
                    &mut std::io::stdout(),
                )
            }
        },
        Some(Command::Plan {
            files,
            target,
            mode,
            symbols,
            workspace_align,
            workspace_layout,
            symbols_json,
            json,
            svg,
        }) => {
            let opts = CompileOptions {
                mode,
                workspace_align,
                layout: workspace_layout,
                ..CompileOptions::new(target)
            };
            let per_file = match symbols_json.as_deref().map(FileSymbols::read_json) {
                None => Default::default(),
                Some(Ok(m)) => m,
                Some(Err(e)) => {
                    eprintln!("error: --symbols-json: {e}");
                    return ExitCode::from(2);
                }
            };
            let symbols = FileSymbols {
                all: symbols.into_iter().collect(),
                per_file,
            };
            sdfgc::report::plan(
                &files,
                &opts,
                &symbols,
                json,
                svg.as_deref(),
                &mut std::io::stdout(),
            )
        }
        None => {
            if cli.compile.files.is_empty() {
                eprintln!(
                    "error: no input files\n\nUsage: sdfgc <FILES>... [--target cpp|cuda|hip] [--mode MODE] [-o DIR]\n       sdfgc check <FILES>...\n\nFor more information, try '--help'."
                );
                return ExitCode::from(2);
            }
            let c = cli.compile;
            let opts = CompileOptions {
                target: c.target,
                mode: c.mode,
                output: c.output.clone().unwrap_or_else(|| PathBuf::from(".")),
                workspace_align: c.workspace_align,
                layout: c.workspace_layout,
                emit_sample: c.emit_sample,
                streams: c.streams,
                sync_on_exit: c.sync_on_exit,
                constant_memory: c.constant_memory,
                check_pointers: c.check_pointers,
                blas: c.blas,
                offload: c.offload.is_some(),
                offload_args: c.offload.unwrap_or_default(),
                host_maps: c.host_maps.clone(),
                row_padding: c.row_padding,
                min_parallel_work: c.min_parallel_work,
                data_folder: c.data_folder.clone(),
            };
            if c.stats || c.stats_json.is_some() || c.stats_svg.is_some() {
                let symbols = c.symbols.iter().cloned().collect();
                let r = sdfgc::report::stats(
                    &c.files,
                    &opts,
                    &symbols,
                    c.stats,
                    c.stats_json.as_deref(),
                    c.stats_svg.as_deref(),
                    &mut std::io::stdout(),
                );
                if r.is_err() || c.output.is_none() {
                    return finish(r);
                }
            }
            if c.verify {
                return verify(&c.files, &opts);
            }
            let depfile = match &c.depfile {
                None => None,
                Some(path) => match std::env::current_exe() {
                    Ok(executable) => Some(driver::Depfile {
                        path: path.clone(),
                        executable,
                    }),
                    Err(e) => {
                        eprintln!("error: --depfile: cannot find the sdfgc executable: {e}");
                        return ExitCode::from(1);
                    }
                },
            };
            // The process exits right after: the OS frees the IR faster.
            driver::keep_ir_until_exit();
            driver::compile_files(&c.files, &opts, depfile.as_ref())
        }
    };
    finish(result)
}

/// `--verify`: exit 1 naming every generated file that differs or is missing.
fn verify(files: &[PathBuf], opts: &CompileOptions) -> ExitCode {
    let report = driver::verify(files, opts);
    for (input, stale) in &report.stale {
        let list: Vec<String> = stale
            .iter()
            .map(|(path, why)| format!("{} ({why})", path.display()))
            .collect();
        eprintln!(
            "error: {}: generated files are out of date: {}; run sdfgc without --verify to update them",
            input.display(),
            list.join(", ")
        );
    }
    for e in &report.errors {
        eprintln!("error: {e}");
    }
    if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn finish(result: Result<(), Vec<sdfgc::diag::Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            ExitCode::from(1)
        }
    }
}
