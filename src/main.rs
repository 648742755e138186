//! The `sdfgc` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use sdfgc::driver::{self, CompileOptions, Mode, Target};

const EXAMPLES: &str = "\
Examples:
  sdfgc program.sdfg --mode external --target cuda        # writes ./<name>.cu and ./<name>.h
  sdfgc build/*.sdfg --target cpp -o out/                 # one translation unit per SDFG
  sdfgc check program.sdfg other.sdfg                     # load, validate, summarise

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
    #[arg(long, value_enum, default_value_t = TargetArg::Cpp)]
    target: TargetArg,
    /// Memory mode for transients (default: the lifetimes stored in the SDFG).
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// Output directory (default: the current directory).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load and validate SDFG files and print a short summary of each.
    #[command(after_help = "Example:\n  sdfgc check fixtures/corpus/jacobi_1d/program.sdfg")]
    Check {
        /// SDFG files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TargetArg {
    /// C++ with OpenMP.
    Cpp,
    /// CUDA.
    Cuda,
    /// HIP.
    Hip,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModeArg {
    /// Allocate and free each transient around its uses, per call.
    Scoped,
    /// Allocate at init, free at exit.
    Persistent,
    /// Stream-ordered allocation (GPU only).
    Pool,
    /// Transients live in one application-provided workspace.
    External,
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("sdfgc: internal error (this is a bug in sdfgc, please report it): {info}");
    }));
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Check { files }) => driver::check(&files, &mut std::io::stdout()),
        None => {
            if cli.compile.files.is_empty() {
                eprintln!(
                    "error: no input files\n\nUsage: sdfgc <FILES>... [--target cpp|cuda|hip] [--mode MODE] [-o DIR]\n       sdfgc check <FILES>...\n\nFor more information, try '--help'."
                );
                return ExitCode::from(2);
            }
            let opts = CompileOptions {
                target: match cli.compile.target {
                    TargetArg::Cpp => Target::Cpp,
                    TargetArg::Cuda => Target::Cuda,
                    TargetArg::Hip => Target::Hip,
                },
                mode: cli.compile.mode.map(|m| match m {
                    ModeArg::Scoped => Mode::Scoped,
                    ModeArg::Persistent => Mode::Persistent,
                    ModeArg::Pool => Mode::Pool,
                    ModeArg::External => Mode::External,
                }),
                output: cli.compile.output.unwrap_or_else(|| PathBuf::from(".")),
            };
            driver::compile(&cli.compile.files, &opts)
        }
    };
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
