//! The GPU writers: CUDA and HIP from one code path, differing only in the
//! [`Dialect`] table (API prefix, headers, file extension; defined with the
//! targets in [`crate::options`], since the plan picks it).

pub mod coalesce;
pub mod cublas;
pub mod device_heap;
pub mod libs;
pub mod warp;

pub use crate::options::{CUDA, Dialect, HIP};

/// `#define`s that map the other runtime's names used in user C++ code
/// (tasklets, init/exit/global code) to this runtime, e.g. a gt4py SDFG
/// made for CUDA (`cudaDeviceSynchronize()`) compiled for HIP.
pub fn foreign_names<'a>(d: &Dialect, code: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut names: Vec<&str> = code
        .flat_map(crate::passes::abi::cpp_identifiers)
        .filter(|n| {
            n.len() > d.foreign_prefix.len()
                && n.starts_with(d.foreign_prefix)
                && n.as_bytes()[d.foreign_prefix.len()].is_ascii_uppercase()
        })
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| format!("#define {n} {}{}", d.prefix, &n[d.foreign_prefix.len()..]))
        .collect()
}
