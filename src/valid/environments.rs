//! Tasklets that call into DaCe's library environments: code that DaCe's
//! library expansions leave as calls into a library (cuBLAS, cuSolverDn,
//! LAPACKE, OpenBLAS, MKL) needs that environment's headers, handles and
//! link flags. sdfgc provides cuBLAS, cuSOLVER, cuSPARSE and cuFFT on CUDA
//! (`back::gpu::cublas`, `back::gpu::libs`) and MPI on the CPU, each with
//! only the names of DaCe's runtime its stand-ins define; any other
//! environment, or another name, is refused by name (the SDFG itself is
//! valid: `sdfgc check` and its ABI are fine).

use crate::diag::{Error, Result};
use crate::ir::environments::{self, GpuLibEnv};
use crate::ir::*;

/// Refuses the tasklets of `r` (and of the SDFGs nested in it) that call
/// an environment sdfgc does not provide, or use a name of DaCe's runtime
/// it does not. `cuda`: the target is CUDA; `members`: the state fields the
/// tasklets declare ([`declared_members`]).
pub fn refuse_environments(r: &Region, cuda: bool, members: &[String]) -> Result<()> {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for n in &st.nodes {
                    match &n.kind {
                        NodeKind::Tasklet(t)
                            if cuda
                                && environments::calls_cublas(t)
                                && t.environments.len() == 1 =>
                        {
                            check_cublas(n, t)?
                        }
                        // cuSOLVER, cuSPARSE, cuFFT (back::gpu::libs).
                        NodeKind::Tasklet(t) if cuda && environments::gpu_lib_of(t).is_some() => {
                            if let Some(lib) = environments::gpu_lib_of(t) {
                                check_gpu_lib(n, t, lib, members)?
                            }
                        }
                        // MPI calls (the expansion of DaCe's MPI nodes, or DaCe's
                        // own on MPI_COMM_WORLD): the file includes <mpi.h>.
                        NodeKind::Tasklet(t)
                            if !cuda
                                && environments::calls_mpi(t)
                                && t.environments.len() == 1
                                && undeclared_member(&t.code.code, members).is_none() => {}
                        NodeKind::Tasklet(t) => {
                            if let Some(env) = t.environments.first() {
                                let short = env.rsplit('.').next().unwrap_or(env);
                                return Err(Error::unsupported(
                                    format!("{}/attributes/environments", n.path),
                                    format!(
                                        "tasklet '{}' calls into the library environment '{short}' ({env}); \
                                         save the SDFG with the library node unexpanded or expanded to its pure implementation",
                                        n.label
                                    ),
                                ));
                            }
                        }
                        NodeKind::Nested(ns) => refuse_environments(&ns.sdfg.body, cuda, members)?,
                        _ => {}
                    }
                }
            }
            BlockKind::Region(inner) => refuse_environments(inner, cuda, members)?,
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    refuse_environments(body, cuda, members)?;
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
    Ok(())
}

/// The state fields C++ tasklets declare (`state_fields`) in `all`, each once.
pub fn tasklet_state_fields(all: &[&Sdfg]) -> Vec<String> {
    fn region(r: &Region, out: &mut Vec<String>) {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for n in &st.nodes {
                        if let NodeKind::Tasklet(t) = &n.kind {
                            for f in &t.state_fields {
                                let f = f.trim();
                                if !f.is_empty() && !out.iter().any(|o| o == f) {
                                    out.push(f.to_string());
                                }
                            }
                        }
                    }
                }
                BlockKind::Region(inner) => region(inner, out),
                BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| region(body, out)),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for s in all {
        region(&s.body, &mut out);
    }
    out
}

/// The names state-field declarations declare (`int __pgrid_coords[2];` ->
/// `__pgrid_coords`).
pub fn declared_members(fields: &[String]) -> Vec<String> {
    fields
        .iter()
        .filter_map(|f| {
            let head = f.split(['[', '=', ';']).next()?.trim_end();
            let start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let name = &head[start..];
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// The first `__state-><member>` of `code` that no state field declares.
fn undeclared_member<'a>(code: &'a str, members: &[String]) -> Option<&'a str> {
    let mut rest = code;
    while let Some(at) = rest.find("__state->") {
        let tail = &rest[at + "__state->".len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let member = &tail[..end];
        if !members.iter().any(|m| m == member) {
            return Some(member);
        }
        rest = &tail[end..];
    }
    None
}

/// The constants the cuBLAS handle's `Constants(device)` provides (the
/// stand-in of `back::gpu::cublas::RUNTIME`).
const CUBLAS_CONSTANTS: [&str; 8] = [
    "FloatZero",
    "DoubleZero",
    "Complex64Zero",
    "Complex128Zero",
    "FloatPone",
    "DoublePone",
    "Complex64Pone",
    "Complex128Pone",
];

/// Checks that a cuBLAS tasklet uses only what the stand-in provides:
/// `__state->cublas_handle.Get(..)` and `.Constants(..).<constant>()`.
pub fn check_cublas(node: &Node, t: &Tasklet) -> Result<()> {
    let code = &t.code.code;
    let refuse = |name: &str| {
        Err(Error::unsupported(
            &node.path,
            format!(
                "cuBLAS tasklet '{}' uses '{name}' of DaCe's runtime, which sdfgc does not provide",
                node.label
            ),
        ))
    };
    let mut rest = code.as_str();
    while let Some(at) = rest.find("__state->") {
        let tail = &rest[at + "__state->".len()..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let member = &tail[..len];
        let after = &tail[len..];
        if member != "cublas_handle" {
            return refuse(&format!("__state->{member}"));
        }
        let method = after
            .strip_prefix('.')
            .map(|m| {
                &m[..m
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(m.len())]
            })
            .unwrap_or("");
        match method {
            "Get" => {}
            "Constants" => {
                // `.Constants(device).<name>()`
                let args_end = after.find(')').map(|i| i + 1).unwrap_or(after.len());
                let name_part = after[args_end..].strip_prefix('.').unwrap_or("");
                let name = &name_part[..name_part
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(name_part.len())];
                if !CUBLAS_CONSTANTS.contains(&name) {
                    return refuse(&format!("cublas_handle.Constants(..).{name}"));
                }
            }
            other => return refuse(&format!("cublas_handle.{other}")),
        }
        rest = after;
    }
    Ok(())
}

/// Checks that a tasklet of `lib` names no `__state` member but the
/// library's handle (`.Get(..)`) and the state fields the file declares
/// (`members`: cuFFT's plans).
pub fn check_gpu_lib(node: &Node, t: &Tasklet, lib: &GpuLibEnv, members: &[String]) -> Result<()> {
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
    use crate::ir::environments::{CUBLAS_ENVIRONMENT, CUFFT, CUSPARSE};

    fn node(code: &str, env: &str, label: &str, path: &str) -> (Node, Tasklet) {
        let t = Tasklet::cpp(
            code,
            NameMap::default(),
            NameMap::default(),
            vec![env.to_string()],
        );
        let n = Node {
            label: label.into(),
            path: path.into(),
            scope: None,
            kind: NodeKind::Tasklet(t.clone()),
        };
        (n, t)
    }

    /// DaCe's cuBLAS handle and constants pass; other names of DaCe's
    /// runtime are refused by name, located at the tasklet.
    #[test]
    fn only_the_names_dace_cublas_expansions_use_are_provided() {
        let cublas = |code| {
            node(
                code,
                CUBLAS_ENVIRONMENT,
                "_MatMult_gemm",
                "/nodes/0/nodes/3",
            )
        };
        let ok = "cublasHandle_t &__dace_cublas_handle = __state->cublas_handle.Get(__dace_cuda_device);\n\
                  cublasDgemm(__dace_cublas_handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, \
                  __state->cublas_handle.Constants(__dace_cuda_device).DoublePone(), b, N, a, K, \
                  __state->cublas_handle.Constants(__dace_cuda_device).DoubleZero(), c, N);";
        let (n, t) = cublas(ok);
        assert!(environments::calls_cublas(&t));
        check_cublas(&n, &t).unwrap();
        for (code, name) in [
            (
                "x = __state->cublas_handle.Constants(-1).DoubleMone();",
                "Constants(..).DoubleMone",
            ),
            (
                "x = __state->cublas_handle.Constants(-1).HalfPone();",
                "Constants(..).HalfPone",
            ),
            (
                "__state->cusolverDn_handle.Get(-1);",
                "__state->cusolverDn_handle",
            ),
            (
                "__state->cublas_handle.handles_.size();",
                "cublas_handle.handles_",
            ),
        ] {
            let (n, t) = cublas(code);
            let err = check_cublas(&n, &t).unwrap_err().to_string();
            assert!(err.contains(name), "{err}");
            assert!(err.contains("/nodes/0/nodes/3"), "{err}");
            assert!(err.contains("which sdfgc does not provide"), "{err}");
        }
    }

    /// The cuSOLVER, cuSPARSE and cuFFT handles and the file's state fields
    /// pass; other members of the state are refused by name, located at
    /// the tasklet.
    #[test]
    fn only_the_handles_and_declared_fields_are_provided() {
        let lib = |code, env| node(code, env, "csrmv", "/nodes/0/nodes/2");
        let ok = "cusparseHandle_t &__dace_cusparse_handle = __state->cusparse_handle.Get(__dace_cuda_device);\n\
                  dace::sparse::CheckCusparseError(cusparseSetStream(__dace_cusparse_handle, __dace_current_stream));";
        let (n, t) = lib(ok, CUSPARSE.environment);
        assert_eq!(environments::gpu_lib_of(&t), Some(&CUSPARSE));
        check_gpu_lib(&n, &t, &CUSPARSE, &[]).unwrap();
        let (n, t) = lib(
            "cufftXtExec(__state->fwdplan0, _inp, _out, CUFFT_FORWARD);",
            CUFFT.environment,
        );
        check_gpu_lib(&n, &t, &CUFFT, &["fwdplan0".to_string()]).unwrap();
        let err = check_gpu_lib(&n, &t, &CUFFT, &[]).unwrap_err().to_string();
        assert!(err.contains("'__state->fwdplan0'"), "{err}");
        for (code, name) in [
            (
                "__state->cusparse_handle.handles_.size();",
                "cusparse_handle.handles_",
            ),
            ("__state->cublas_handle.Get(-1);", "__state->cublas_handle"),
        ] {
            let (n, t) = lib(code, CUSPARSE.environment);
            let err = check_gpu_lib(&n, &t, &CUSPARSE, &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains(name), "{err}");
            assert!(err.contains("/nodes/0/nodes/2"), "{err}");
            assert!(err.contains("which sdfgc does not provide"), "{err}");
        }
    }

    /// State-field declarations name their members.
    #[test]
    fn declared_member_names() {
        let fields = [
            "int __pgrid_coords[2];".to_string(),
            "cufftHandle plan = 0;".into(),
        ];
        assert_eq!(declared_members(&fields), ["__pgrid_coords", "plan"]);
        let members = declared_members(&fields);
        assert_eq!(
            undeclared_member("__state->plan; __state->other;", &members),
            Some("other")
        );
    }
}
