//! Options that shape a compile: target, memory mode, workspace layout.
//!
//! Their own module at the bottom of the crate, so that the passes and the
//! writers read them without depending on the command-line driver.

use std::path::PathBuf;

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

/// What differs between CUDA and HIP source.
#[derive(Debug, PartialEq, Eq)]
pub struct Dialect {
    /// `cuda` or `hip`: the runtime API prefix (`cudaMalloc`, `hipMalloc`).
    pub prefix: &'static str,
    /// The runtime header.
    pub header: &'static str,
    /// Extension of the translation unit.
    pub extension: &'static str,
    /// How the toolchain builds the file (for the file comment).
    pub build: &'static str,
    /// The pointer-attributes struct of the runtime.
    pub pointer_attributes: &'static str,
    /// The other runtime's prefix: names of it in user C++ code are mapped to this one.
    pub foreign_prefix: &'static str,
    /// How a device symbol is named in `MemcpyToSymbol` (`{}` is the symbol).
    pub symbol_ref: &'static str,
}

/// CUDA (nvcc).
pub const CUDA: Dialect = Dialect {
    prefix: "cuda",
    header: "cuda_runtime.h",
    extension: "cu",
    build: "nvcc -std=c++17 -arch=sm_80 -Xcompiler -fPIC -shared",
    pointer_attributes: "cudaPointerAttributes",
    foreign_prefix: "hip",
    symbol_ref: "{}",
};

/// HIP (hipcc).
pub const HIP: Dialect = Dialect {
    prefix: "hip",
    header: "hip/hip_runtime.h",
    extension: "hip",
    build: "hipcc -std=c++17 --offload-arch=gfx90a -fPIC -shared",
    pointer_attributes: "hipPointerAttribute_t",
    foreign_prefix: "cuda",
    symbol_ref: "HIP_SYMBOL({})",
};

impl Dialect {
    /// The runtime API name of `suffix` (`api("Malloc")` is `cudaMalloc`).
    pub fn api(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    /// A device symbol as the first argument of `MemcpyToSymbol`.
    pub fn symbol(&self, name: &str) -> String {
        self.symbol_ref.replace("{}", name)
    }
}

impl Target {
    /// The GPU dialect of a GPU target (`None` for C++).
    pub fn dialect(self) -> Option<&'static Dialect> {
        match self {
            Target::Cpp => None,
            Target::Cuda => Some(&CUDA),
            Target::Hip => Some(&HIP),
        }
    }
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

/// Whether the rows of large transients are padded (`--row-padding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RowPadding {
    /// Rows of 4 KiB or more take an odd number of 64-byte lines (a walk
    /// down a column of rows whose size is a multiple of 4 KiB meets one
    /// cache set: ICON's grids of 20 * 4^n cells).
    #[default]
    Auto,
    /// Every transient keeps the strides the SDFG gives it.
    Off,
    /// Every row of a transient that can be padded is, whatever its size
    /// (for tests: the padded layouts run at the corpus's small sizes).
    Always,
}

impl RowPadding {
    /// The smallest row, in bytes, that is padded (None: none).
    pub fn from_bytes(self) -> Option<i64> {
        match self {
            RowPadding::Auto => Some(4096),
            RowPadding::Off => None,
            RowPadding::Always => Some(0),
        }
    }
}

/// Which BLAS library the BLAS library nodes call (`--blas`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Blas {
    /// None: the nodes expand into maps and tasklets.
    #[default]
    None,
    /// OpenBLAS's CBLAS interface (`cblas_*`, CPU data).
    Openblas,
    /// cuBLAS (CUDA, device data).
    Cublas,
    /// hipBLAS (HIP, device data): refused, not implemented.
    Hipblas,
}

impl Blas {
    /// The linker flags of the library (empty for none).
    pub fn link_flags(self) -> &'static str {
        match self {
            Blas::None => "",
            Blas::Openblas => "-lopenblas",
            Blas::Cublas => "-lcublas",
            Blas::Hipblas => "-lhipblas",
        }
    }
}

/// Where the arguments of an offloaded program live (`--offload[=...]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OffloadArgs {
    /// Host arrays: the program copies them to device twins at entry and
    /// back at exit (DaCe's offloaded programs).
    #[default]
    HostArgs,
    /// Device arrays (gt4py's way): the array arguments are `GPU_Global`
    /// themselves, nothing is copied in or out; scalars stay host values.
    DeviceArgs,
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
    /// GPU streams per program (1: everything on the host's stream).
    pub streams: u32,
    /// GPU: synchronize the host with the stream at the end of every call.
    pub sync_on_exit: bool,
    /// GPU: place `constants_prop` arrays in `__constant__` memory (64 KiB at most).
    pub constant_memory: bool,
    /// GPU: check at program entry that GPU_Global arguments are device memory.
    pub check_pointers: bool,
    /// The BLAS library that Gemm, Gemv, Dot and MatMul call (None: expanded).
    pub blas: Blas,
    /// GPU: offload a CPU SDFG (`--offload`): maps become kernels, data gets device twins.
    pub offload: bool,
    /// With `offload`: where the array arguments live.
    pub offload_args: OffloadArgs,
    /// With `offload`: labels of top-level maps that stay on the host
    /// (`--host-map`); the maps directly below them become kernels.
    pub host_maps: Vec<String>,
    /// Padding of the rows of large transients (CPU code).
    pub row_padding: RowPadding,
    /// CPU: the work (tasklet executions) from which a map is a parallel
    /// region (`--min-parallel-work`; 0: every parallel map, as DaCe).
    pub min_parallel_work: i64,
    /// Where data instrumentation saves its reports (DaCe's
    /// `<build folder>/data`; None: `.dacecache/<name>/data` from the
    /// program's working directory).
    pub data_folder: Option<String>,
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
            streams: 1,
            sync_on_exit: false,
            constant_memory: false,
            check_pointers: false,
            blas: Blas::None,
            offload: false,
            offload_args: OffloadArgs::HostArgs,
            host_maps: Vec::new(),
            row_padding: RowPadding::Auto,
            min_parallel_work: 16384,
            data_folder: None,
        }
    }
}
