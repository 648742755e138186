//! The GPU writers: CUDA and HIP from one code path, differing only in the
//! [`Dialect`] table (API prefix, headers, file extension).

pub mod coalesce;
pub mod cublas;

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

impl Dialect {
    /// `#define`s that map the other runtime's names used in user C++ code
    /// (tasklets, init/exit/global code) to this runtime, e.g. a gt4py SDFG
    /// made for CUDA (`cudaDeviceSynchronize()`) compiled for HIP.
    pub fn foreign_names<'a>(&self, code: impl Iterator<Item = &'a str>) -> Vec<String> {
        let mut names: Vec<&str> = code
            .flat_map(crate::passes::abi::cpp_identifiers)
            .filter(|n| {
                n.len() > self.foreign_prefix.len()
                    && n.starts_with(self.foreign_prefix)
                    && n.as_bytes()[self.foreign_prefix.len()].is_ascii_uppercase()
            })
            .collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|n| {
                format!(
                    "#define {n} {}{}",
                    self.prefix,
                    &n[self.foreign_prefix.len()..]
                )
            })
            .collect()
    }
}
