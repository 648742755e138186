//! Write-conflict resolutions the writers cannot express, refused by name.

use crate::diag::{Error, Result};
use crate::ir::*;

/// Refuses, by name, the write-conflict resolutions (memlets and Reduce
/// nodes) on complex data that the writers cannot express: min / max
/// (complex numbers are unordered), and on GPU targets a complex128 update
/// other than a sum (device atomics stop at 8 bytes; a sum is two atomic adds).
pub fn refuse_wcr(sdfgs: &[&Sdfg], gpu: bool) -> Result<()> {
    fn check(sdfg: &Sdfg, w: &Wcr, data: &str, path: &str, gpu: bool) -> Result<()> {
        let Some(d) = sdfg.arrays.get(data) else {
            return Ok(());
        };
        // Struct values: only a replacement or a lambda (of struct fields
        // and values), on the CPU.
        let params = |n: &str| (n == w.params.0 || n == w.params.1).then_some(d.dtype);
        let named = |n: &str| match d.dtype {
            DType::Record(r) if r.name() == n => Some(r),
            _ => None,
        };
        let why = match d.dtype {
            DType::Record(_) if gpu => Some("on a GPU target".to_string()),
            DType::Record(_) if !matches!(w.kind, WcrKind::Replace | WcrKind::Custom) => {
                Some("(C++ has no such operator on a struct)".to_string())
            }
            _ => crate::ir::record::record_error(&w.body, &params, &named),
        };
        if let Some(why) = why {
            return Err(Error::unsupported(
                path,
                format!(
                    "write-conflict resolution '{}' on '{data}' of type {} {why}",
                    w.text, d.dtype
                ),
            ));
        }
        let refused = d.dtype.is_complex()
            && (matches!(w.kind, WcrKind::Min | WcrKind::Max)
                || (gpu
                    && d.dtype == DType::Complex128
                    && !matches!(w.kind, WcrKind::Sum | WcrKind::Replace)));
        if refused {
            return Err(Error::unsupported(
                path,
                format!(
                    "write-conflict resolution '{}' on '{data}' of type {}{}",
                    w.text,
                    d.dtype,
                    if gpu { " on a GPU target" } else { "" }
                ),
            ));
        }
        Ok(())
    }
    fn region(sdfg: &Sdfg, r: &Region, gpu: bool) -> Result<()> {
        for b in &r.blocks {
            match &b.kind {
                BlockKind::State(st) => {
                    for e in &st.edges {
                        if let (Some(w), Some(data)) = (&e.memlet.wcr, &e.memlet.data) {
                            check(sdfg, w, data, &e.path, gpu)?;
                        }
                        // A reduction writes its output with its lambda.
                        if let NodeKind::Library(LibraryNode {
                            kind: LibraryKind::Reduce { wcr, .. },
                            ..
                        }) = &st.nodes[e.src.index()].kind
                            && let Some(data) = &e.memlet.data
                        {
                            let path = &st.nodes[e.src.index()].path;
                            if let Some(DType::Record(r)) = sdfg.arrays.get(data).map(|d| d.dtype) {
                                return Err(Error::unsupported(
                                    path,
                                    format!(
                                        "a Reduce node into '{data}' of struct type '{}'",
                                        r.name()
                                    ),
                                ));
                            }
                            check(sdfg, wcr, data, path, gpu)?;
                        }
                    }
                }
                BlockKind::Region(inner) => region(sdfg, inner, gpu)?,
                BlockKind::Conditional(brs) => {
                    for (_, body) in brs {
                        region(sdfg, body, gpu)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
    for s in sdfgs {
        region(s, &s.body, gpu)?;
    }
    Ok(())
}
