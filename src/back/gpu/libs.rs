//! cuSOLVER, cuSPARSE and cuFFT calls in CUDA files: C++ tasklets of DaCe's
//! cuSolverDn, cuSPARSE and cuFFT environments (left by DaCe's expansions
//! of its LAPACK, linalg, sparse and FFT library nodes, or written by
//! sdfgc's own expansion of the cuSOLVER nodes, `passes::expand::cusolver`)
//! run on the host on device data, on the stream the writer gives them
//! (`__dace_current_stream`), as any C++ tasklet outside kernels that
//! touches device memory does.
//!
//! The file gets what DaCe's environments give the code, and only for the
//! libraries it calls: the library's header (`cusolverDn.h`, `cusparse.h`,
//! `cufft.h` and `cufftXt.h`), its link flag, and the pieces of DaCe's
//! helpers its tasklets name: `dace::lapack::CheckCusolverDnError`,
//! `dace::sparse::CheckCusparseError` (DaCe's: a failed status throws
//! `std::runtime_error`), and the state members `cusolverDn_handle` and
//! `cusparse_handle`, small stand-ins for DaCe's `CusolverDnHandle` and
//! `CusparseHandle` with their one method the expansions use: `Get(device)`
//! gives the handle, created on first use (as DaCe's), destroyed with the
//! state. cuFFT's plans are the tasklets' own state fields, made by their
//! init code. Any other name of DaCe's runtime or `__state` member is
//! refused by name (`valid::environments`).

use crate::ir::environments::{self, GpuLibEnv};
use crate::ir::*;

/// One library: DaCe's environment and what a file calling it needs.
pub struct GpuLib {
    /// DaCe's environment: its class, name and state member.
    pub env: &'static GpuLibEnv,
    /// The link flag.
    pub link: &'static str,
    /// Its declaration in the state struct.
    pub member_decl: &'static str,
    /// The names of DaCe's runtime the file provides.
    pub dace_names: &'static [&'static str],
    /// File-scope C++: the header, DaCe's helpers, the handle's stand-in.
    pub runtime: &'static str,
}

/// cuSOLVER (dense).
pub const CUSOLVER_DN: GpuLib = GpuLib {
    env: &environments::CUSOLVER_DN,
    link: "-lcusolver",
    member_decl: "sdfgc_cusolver_dn cusolverDn_handle;  // cuSOLVER handle: created on first use, destroyed with the state",
    dace_names: &["dace::lapack::CheckCusolverDnError"],
    runtime: r#"// ---- cuSOLVER ----
#include <cusolverDn.h>
#include <stdexcept>
#include <string>
namespace dace {
namespace lapack {
// DaCe's: a failed status throws.
__attribute__((unused)) static inline void CheckCusolverDnError(cusolverStatus_t const &status) {
    if (status != CUSOLVER_STATUS_SUCCESS) {
        throw std::runtime_error("cuSOLVER failed with error code: " + std::to_string(status));
    }
}
}  // namespace lapack
}  // namespace dace
// The program's cuSOLVER handle (DaCe's `CusolverDnHandle`, one device).
struct sdfgc_cusolver_dn {
    cusolverDnHandle_t handle = nullptr;
    sdfgc_cusolver_dn() = default;
    sdfgc_cusolver_dn(const sdfgc_cusolver_dn &) = delete;
    sdfgc_cusolver_dn &operator=(const sdfgc_cusolver_dn &) = delete;
    cusolverDnHandle_t &Get(int) {
        if (!handle) dace::lapack::CheckCusolverDnError(cusolverDnCreate(&handle));
        return handle;
    }
    ~sdfgc_cusolver_dn() {
        if (handle) cusolverDnDestroy(handle);
    }
};"#,
};

/// cuSPARSE.
pub const CUSPARSE: GpuLib = GpuLib {
    env: &environments::CUSPARSE,
    link: "-lcusparse",
    member_decl: "sdfgc_cusparse cusparse_handle;  // cuSPARSE handle: created on first use, destroyed with the state",
    dace_names: &["dace::sparse::CheckCusparseError"],
    runtime: r#"// ---- cuSPARSE ----
#include <cusparse.h>
#include <stdexcept>
#include <string>
namespace dace {
namespace sparse {
// DaCe's: a failed status throws.
__attribute__((unused)) static inline void CheckCusparseError(cusparseStatus_t const &status) {
    if (status != CUSPARSE_STATUS_SUCCESS) {
        throw std::runtime_error("cuSPARSE failed with error code: " + std::to_string(status));
    }
}
}  // namespace sparse
}  // namespace dace
// The program's cuSPARSE handle (DaCe's `CusparseHandle`, one device).
struct sdfgc_cusparse {
    cusparseHandle_t handle = nullptr;
    sdfgc_cusparse() = default;
    sdfgc_cusparse(const sdfgc_cusparse &) = delete;
    sdfgc_cusparse &operator=(const sdfgc_cusparse &) = delete;
    cusparseHandle_t &Get(int) {
        if (!handle) dace::sparse::CheckCusparseError(cusparseCreate(&handle));
        return handle;
    }
    ~sdfgc_cusparse() {
        if (handle) cusparseDestroy(handle);
    }
};"#,
};

/// cuFFT (plans are the tasklets' own state fields).
pub const CUFFT: GpuLib = GpuLib {
    env: &environments::CUFFT,
    link: "-lcufft",
    member_decl: "",
    dace_names: &[],
    runtime: "// ---- cuFFT ----\n#include <cufft.h>\n#include <cufftXt.h>",
};

/// The libraries, in the order the file includes them.
pub const LIBS: [&GpuLib; 3] = [&CUSOLVER_DN, &CUSPARSE, &CUFFT];

/// The library a tasklet calls through DaCe's environment, if it is one of
/// these (and names no other environment).
pub fn lib_of(t: &Tasklet) -> Option<&'static GpuLib> {
    let env = environments::gpu_lib_of(t)?;
    LIBS.into_iter().find(|l| l.env == env)
}

/// True if DaCe's runtime name `name` in tasklet `t` is one the file provides.
pub fn provides(t: &Tasklet, name: &str) -> bool {
    lib_of(t).is_some_and(|l| l.dace_names.contains(&name))
}

/// The tasklet's code without the names of DaCe's runtime the file
/// provides for it (each replaced by `_`), for the check of the others.
pub fn unprovided(t: &Tasklet) -> std::borrow::Cow<'_, str> {
    let names = lib_of(t).map_or(&[][..], |l| l.dace_names);
    let mut code = std::borrow::Cow::Borrowed(t.code.code.as_str());
    for n in names {
        if code.contains(n) {
            code = std::borrow::Cow::Owned(code.replace(n, "_"));
        }
    }
    code
}

/// Gives the environment of these libraries that a nested SDFG node names
/// (`envs`: DaCe's expansions into a nested SDFG put it there) to the C++
/// tasklets of the nested SDFG that name none, as DaCe's code generator
/// applies a node's environments to the code inside it.
pub fn inherit(sdfg: &mut Sdfg, envs: &[String]) {
    let Some(env) = envs
        .iter()
        .find(|e| LIBS.iter().any(|l| l.env.environment == e.as_str()))
    else {
        return;
    };
    fn region(r: &mut Region, env: &str) {
        for b in &mut r.blocks {
            match &mut b.kind {
                BlockKind::State(st) => {
                    for n in &mut st.nodes {
                        match &mut n.kind {
                            NodeKind::Tasklet(t)
                                if t.environments.is_empty()
                                    && t.code.language == Language::Cpp =>
                            {
                                t.environments.push(env.to_string())
                            }
                            NodeKind::Nested(ns) => region(&mut ns.sdfg.body, env),
                            _ => {}
                        }
                    }
                }
                BlockKind::Region(inner) => region(inner, env),
                BlockKind::Conditional(branches) => {
                    for (_, body) in branches {
                        region(body, env);
                    }
                }
                BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
            }
        }
    }
    region(&mut sdfg.body, env);
}

/// The libraries the SDFG tree's tasklets call.
pub fn used(sdfg: &Sdfg) -> Vec<&'static GpuLib> {
    LIBS.into_iter()
        .filter(|l| crate::passes::expand::environment_in(sdfg, l.env.environment))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasklet(code: &str, env: &str) -> Tasklet {
        Tasklet::cpp(
            code,
            NameMap::default(),
            NameMap::default(),
            vec![env.to_string()],
        )
    }

    /// A tasklet's library, and the names of DaCe's runtime the file provides for it.
    #[test]
    fn the_library_of_a_tasklet_and_what_it_provides() {
        let t = tasklet(
            "dace::sparse::CheckCusparseError(cusparseSetStream(h, s));",
            CUSPARSE.env.environment,
        );
        assert_eq!(lib_of(&t).map(|l| l.env.name), Some("cuSPARSE"));
        assert!(provides(&t, "dace::sparse::CheckCusparseError"));
        assert!(!provides(&t, "dace::lapack::CheckCusolverDnError"));
        let other = tasklet(
            "dace::sparse::CheckCusparseError(s); dace::sparse::Other(s);",
            CUSPARSE.env.environment,
        );
        assert_eq!(unprovided(&other), "_(s); dace::sparse::Other(s);");
        let mut both = tasklet("", CUFFT.env.environment);
        both.environments.push(CUSPARSE.env.environment.to_string());
        assert!(lib_of(&both).is_none());
    }
}
