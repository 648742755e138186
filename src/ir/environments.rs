//! DaCe's library environments that tasklets may call into and that sdfgc
//! provides: each one's identity (DaCe's class, its name in messages, the
//! state member its tasklets name). Shared by the check of what such
//! tasklets use (`valid::environments`) and by the expansions and writers
//! that make and provide them (`passes::expand`, `back::gpu`).

use super::Tasklet;

/// The DaCe library environment of cuBLAS calls (DaCe's name).
pub const CUBLAS_ENVIRONMENT: &str = "dace.libraries.blas.environments.cublas.cuBLAS";

/// True if the tasklet calls cuBLAS through DaCe's environment (left by
/// DaCe's cuBLAS expansions, or made by `--blas cublas`).
pub fn calls_cublas(t: &Tasklet) -> bool {
    t.environments.iter().any(|e| e == CUBLAS_ENVIRONMENT)
}

/// DaCe's MPI environment (named by the tasklets the expansion makes).
pub const MPI_ENVIRONMENT: &str = "dace.libraries.mpi.environments.mpi.MPI";

/// True if the tasklet calls MPI through DaCe's environment.
pub fn calls_mpi(t: &Tasklet) -> bool {
    t.environments.iter().any(|e| e == MPI_ENVIRONMENT)
}

/// A GPU library other than cuBLAS that DaCe's tasklets call through an
/// environment (its file-scope code and link flag: `back::gpu::libs`).
#[derive(Debug, PartialEq, Eq)]
pub struct GpuLibEnv {
    /// DaCe's environment class (dotted path).
    pub environment: &'static str,
    /// The library's name in messages.
    pub name: &'static str,
    /// The state member DaCe's tasklets name (`__state-><member>.Get(..)`), if any.
    pub member: Option<&'static str>,
}

/// cuSOLVER (dense).
pub const CUSOLVER_DN: GpuLibEnv = GpuLibEnv {
    environment: "dace.libraries.lapack.environments.cusolverdn.cuSolverDn",
    name: "cuSOLVER",
    member: Some("cusolverDn_handle"),
};

/// cuSPARSE.
pub const CUSPARSE: GpuLibEnv = GpuLibEnv {
    environment: "dace.libraries.sparse.environments.cusparse.cuSPARSE",
    name: "cuSPARSE",
    member: Some("cusparse_handle"),
};

/// cuFFT (plans are the tasklets' own state fields).
pub const CUFFT: GpuLibEnv = GpuLibEnv {
    environment: "dace.libraries.fft.environments.cufft.cuFFT",
    name: "cuFFT",
    member: None,
};

/// The GPU library a tasklet calls through DaCe's environment, if it is
/// one of these (and names no other environment).
pub fn gpu_lib_of(t: &Tasklet) -> Option<&'static GpuLibEnv> {
    match t.environments.as_slice() {
        [env] => [&CUSOLVER_DN, &CUSPARSE, &CUFFT]
            .into_iter()
            .find(|l| l.environment == env),
        _ => None,
    }
}
