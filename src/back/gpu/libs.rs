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
//! refused by name.

use crate::diag::{Error, Result};
use crate::ir::*;

/// One library: DaCe's environment and what a file calling it needs.
pub struct GpuLib {
    /// DaCe's environment class (dotted path).
    pub environment: &'static str,
    /// The library's name in messages.
    pub name: &'static str,
    /// The link flag.
    pub link: &'static str,
    /// The state member DaCe's tasklets name (`__state-><member>.Get(..)`), if any.
    pub member: Option<&'static str>,
    /// Its declaration in the state struct.
    pub member_decl: &'static str,
    /// The names of DaCe's runtime the file provides.
    pub dace_names: &'static [&'static str],
    /// File-scope C++: the header, DaCe's helpers, the handle's stand-in.
    pub runtime: &'static str,
}

/// cuSOLVER (dense).
pub const CUSOLVER_DN: GpuLib = GpuLib {
    environment: "dace.libraries.lapack.environments.cusolverdn.cuSolverDn",
    name: "cuSOLVER",
    link: "-lcusolver",
    member: Some("cusolverDn_handle"),
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
    environment: "dace.libraries.sparse.environments.cusparse.cuSPARSE",
    name: "cuSPARSE",
    link: "-lcusparse",
    member: Some("cusparse_handle"),
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
    environment: "dace.libraries.fft.environments.cufft.cuFFT",
    name: "cuFFT",
    link: "-lcufft",
    member: None,
    member_decl: "",
    dace_names: &[],
    runtime: "// ---- cuFFT ----\n#include <cufft.h>\n#include <cufftXt.h>",
};

/// The libraries, in the order the file includes them.
pub const LIBS: [&GpuLib; 3] = [&CUSOLVER_DN, &CUSPARSE, &CUFFT];

/// The library a tasklet calls through DaCe's environment, if it is one of
/// these (and names no other environment).
pub fn lib_of(t: &Tasklet) -> Option<&'static GpuLib> {
    match t.environments.as_slice() {
        [env] => LIBS.into_iter().find(|l| l.environment == env),
        _ => None,
    }
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
        .find(|e| LIBS.iter().any(|l| l.environment == e.as_str()))
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
        .filter(|l| crate::passes::expand::environment_in(sdfg, l.environment))
        .collect()
}

/// Checks a tasklet of one of these libraries ([`check`]); other tasklets pass.
pub fn check_tasklet(node: &Node, t: &Tasklet, members: &[String]) -> Result<()> {
    match lib_of(t) {
        Some(lib) => check(node, t, lib, members),
        None => Ok(()),
    }
}

/// Checks that a tasklet of `lib` names no `__state` member but the
/// library's handle (`.Get(..)`) and the state fields the file declares
/// (`members`: cuFFT's plans).
pub fn check(node: &Node, t: &Tasklet, lib: &GpuLib, members: &[String]) -> Result<()> {
    let refuse = |name: &str| {
        Err(Error::unsupported(
            &node.path,
            format!(
                "{} tasklet '{}' uses '{name}' of DaCe's runtime, which sdfgc does not provide",
                lib.name, node.label
            ),
        ))
    };
    let word = |s: &str| {
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut rest = t.code.code.as_str();
    while let Some(at) = rest.find("__state->") {
        let tail = &rest[at + "__state->".len()..];
        let member = &tail[..word(tail)];
        let after = &tail[member.len()..];
        if lib.member == Some(member) {
            let method = after.strip_prefix('.').map(|m| &m[..word(m)]);
            if method != Some("Get") {
                return refuse(&format!("{member}.{}", method.unwrap_or("")));
            }
        } else if !members.iter().any(|m| m == member) {
            return refuse(&format!("__state->{member}"));
        }
        rest = after;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(code: &str, env: &str) -> (Node, Tasklet) {
        let t = Tasklet::cpp(
            code,
            NameMap::default(),
            NameMap::default(),
            vec![env.to_string()],
        );
        let n = Node {
            label: "csrmv".into(),
            path: "/nodes/0/nodes/2".into(),
            scope: None,
            kind: NodeKind::Tasklet(t.clone()),
        };
        (n, t)
    }

    /// DaCe's handles and the file's state fields pass; other members of
    /// the state are refused by name, located at the tasklet.
    #[test]
    fn only_the_handles_and_declared_fields_are_provided() {
        let ok = "cusparseHandle_t &__dace_cusparse_handle = __state->cusparse_handle.Get(__dace_cuda_device);\n\
                  dace::sparse::CheckCusparseError(cusparseSetStream(__dace_cusparse_handle, __dace_current_stream));";
        let (n, t) = node(ok, CUSPARSE.environment);
        assert_eq!(lib_of(&t).map(|l| l.name), Some("cuSPARSE"));
        assert!(provides(&t, "dace::sparse::CheckCusparseError"));
        assert!(!provides(&t, "dace::lapack::CheckCusolverDnError"));
        let (_, other) = node(
            "dace::sparse::CheckCusparseError(s); dace::sparse::Other(s);",
            CUSPARSE.environment,
        );
        assert_eq!(unprovided(&other), "_(s); dace::sparse::Other(s);");
        check(&n, &t, &CUSPARSE, &[]).unwrap();
        let (n, t) = node(
            "cufftXtExec(__state->fwdplan0, _inp, _out, CUFFT_FORWARD);",
            CUFFT.environment,
        );
        check(&n, &t, &CUFFT, &["fwdplan0".to_string()]).unwrap();
        let err = check(&n, &t, &CUFFT, &[]).unwrap_err().to_string();
        assert!(err.contains("'__state->fwdplan0'"), "{err}");
        for (code, name) in [
            (
                "__state->cusparse_handle.handles_.size();",
                "cusparse_handle.handles_",
            ),
            ("__state->cublas_handle.Get(-1);", "__state->cublas_handle"),
        ] {
            let (n, t) = node(code, CUSPARSE.environment);
            let err = check(&n, &t, &CUSPARSE, &[]).unwrap_err().to_string();
            assert!(err.contains(name), "{err}");
            assert!(err.contains("/nodes/0/nodes/2"), "{err}");
            assert!(err.contains("which sdfgc does not provide"), "{err}");
        }
        let (_, both) = node("", CUFFT.environment);
        let mut both = both;
        both.environments.push(CUSPARSE.environment.to_string());
        assert!(lib_of(&both).is_none());
    }
}
