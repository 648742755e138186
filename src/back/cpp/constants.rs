//! Constant arrays on GPU targets: the device copies the state owns (copied
//! once in `__dace_init_*`, freed in `__dace_exit_*`, in every memory mode),
//! or with `--constant-memory` `__constant__` arrays filled at init.

use crate::back::body::constants::{constant_symbol, device_member};
use crate::back::gpu::Dialect;
use crate::diag::{Error, Result};
use crate::ir::*;

/// Bytes of `__constant__` memory a GPU offers (CUDA and HIP alike).
pub const CONSTANT_MEMORY_BYTES: u64 = 64 * 1024;

/// What the translation unit needs for the constant arrays device code reads.
#[derive(Default)]
pub(crate) struct DeviceConstants {
    /// State members (device copies).
    pub members: Vec<String>,
    /// File-scope declarations (`__constant__` arrays).
    pub globals: String,
    /// Statements of `__dace_init_*` (allocation and copy).
    pub init: String,
    /// Statements of `__dace_exit_*` (free).
    pub exit: String,
}

/// True if `text` uses the identifier `ident` (a whole word).
pub(crate) fn uses_identifier(text: &str, ident: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(ident).any(|(i, _)| {
        let next = text[i + ident.len()..].chars().next();
        let prev = text[..i].chars().next_back();
        !next.is_some_and(word) && !prev.is_some_and(word)
    })
}

/// The device side of the constant arrays of `all` (first definition of a
/// name wins, as for the host copies) that the generated device code `code`
/// reads. With `constant_memory`, refuses any array, and any total, over
/// [`CONSTANT_MEMORY_BYTES`].
pub(crate) fn device_constants(
    g: &Dialect,
    all: &[&Sdfg],
    code: &str,
    constant_memory: bool,
) -> Result<DeviceConstants> {
    let mut out = DeviceConstants::default();
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0u64;
    let ok = g.api("Success");
    for s in all {
        for (k, c) in &s.constants {
            if c.shape.is_empty() || s.arrays.contains_key(k) || seen.contains(&k.as_str()) {
                continue;
            }
            let device_name = if constant_memory {
                constant_symbol(k)
            } else {
                device_member(k)
            };
            if !uses_identifier(code, &device_name) {
                continue;
            }
            seen.push(k);
            let ct = c.dtype.ctype();
            let elements = c.values.len().max(1);
            let bytes = elements as u64 * c.dtype.size();
            let location = format!("{}/attributes/constants_prop/{k}", s.path);
            if constant_memory {
                if bytes > CONSTANT_MEMORY_BYTES {
                    return Err(Error::unsupported(
                        location,
                        format!(
                            "--constant-memory: constant array '{k}' ({elements} x {}) is {bytes} bytes, over the {CONSTANT_MEMORY_BYTES}-byte (64 KiB) limit of __constant__ memory; compile without --constant-memory to keep it in device global memory",
                            c.dtype
                        ),
                    ));
                }
                total += bytes;
                if total > CONSTANT_MEMORY_BYTES {
                    return Err(Error::unsupported(
                        location,
                        format!(
                            "--constant-memory: the constant arrays up to '{k}' need {total} bytes together, over the {CONSTANT_MEMORY_BYTES}-byte (64 KiB) limit of __constant__ memory; compile without --constant-memory to keep them in device global memory"
                        ),
                    ));
                }
                out.globals.push_str(&format!(
                    "__constant__ {ct} {device_name}[{elements}];  // constant {k}, filled in __dace_init_*\n"
                ));
                out.init.push_str(&format!(
                    "    if ({}({}, {k}, sizeof({k}), 0, {}) != {ok}) {{ delete __state; return nullptr; }}  // constant {k} -> __constant__\n",
                    g.api("MemcpyToSymbol"),
                    g.symbol(&device_name),
                    g.api("MemcpyHostToDevice"),
                ));
            } else {
                out.members.push(format!(
                    "{ct} *{device_name} = nullptr;  // device copy of constant {k}: copied in init, freed in exit"
                ));
                out.init.push_str(&format!(
                    "    if ({m}(reinterpret_cast<void **>(&__state->{device_name}), sizeof({k})) != {ok} ||\n        {cp}(__state->{device_name}, {k}, sizeof({k}), {h2d}) != {ok}) {{ delete __state; return nullptr; }}  // constant {k} -> device\n",
                    m = g.api("Malloc"),
                    cp = g.api("Memcpy"),
                    h2d = g.api("MemcpyHostToDevice"),
                ));
                out.exit.push_str(&format!(
                    "    sdfgc_gpu_check({f}(__state->{device_name}), \"{f} constant {k}\");\n",
                    f = g.api("Free")
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::uses_identifier;

    #[test]
    fn identifiers_match_whole_names_only() {
        assert!(uses_identifier(
            "f(__s->__sdfgc_const_W);",
            "__sdfgc_const_W"
        ));
        assert!(!uses_identifier("__sdfgc_const_W2[0]", "__sdfgc_const_W"));
        assert!(uses_identifier("x = __sdfgc_const_W", "__sdfgc_const_W"));
    }
}
