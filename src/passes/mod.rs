//! Passes: check what the writers need and plan, once per SDFG, every
//! decision the writers must not recompute (ABI, where each transient lives
//! and when it is allocated, the workspace layout).

pub mod abi;
pub mod alloc;
pub mod bounds;
pub mod datastream;
pub mod expand;
pub mod inplace;
pub mod layout;
pub mod liveness;
pub mod offload;
pub mod padding;
pub mod reference;
pub mod schedules;
pub mod slices;
pub mod span;
pub mod structure;

use crate::diag::Result;
use crate::ir::Sdfg;
use crate::options::CompileOptions;

pub use alloc::{AllocPlan, AllocScope, Memory};

/// An SDFG with everything the writers need.
#[derive(Debug)]
pub struct Program {
    /// The SDFG, library nodes expanded into maps and tasklets.
    pub sdfg: Sdfg,
    /// Exported interface.
    pub abi: abi::Abi,
    /// Where each transient lives.
    pub alloc: AllocPlan,
    /// The memory mode asked for.
    pub mode: Option<crate::options::Mode>,
    /// Live ranges of every container, in program order, and in-place pairs.
    pub live: liveness::Liveness,
    /// Containers that share bytes with another one at an in-place map:
    /// never declared `__restrict__`.
    pub aliased: std::collections::BTreeSet<(u32, String)>,
    /// Workspace containers whose shelf holds another container (same address):
    /// the host function declares them without `__restrict__`.
    pub shared: std::collections::BTreeSet<(u32, String)>,
    /// Workspace layout per storage (External memory only).
    pub layouts: layout::Layouts,
    /// The GPU dialect for CUDA and HIP targets.
    pub gpu: Option<&'static crate::options::Dialect>,
    /// GPU streams (`--streams`).
    pub streams: u32,
    /// DaCe's Stream containers: which are array stream views.
    pub data_streams: datastream::StreamPlan,
    /// What `--offload` did (None without it).
    pub offload: Option<offload::OffloadStats>,
    /// The options the program was prepared with.
    pub options: CompileOptions,
    /// BLAS nodes call the library of `options.blas` (the file links it).
    pub blas_calls: bool,
    /// Tasklets call cuBLAS (`--blas cublas`, or DaCe's own cuBLAS expansions).
    pub cublas_calls: bool,
    /// Tasklets call MPI (the expansions of `dace.libraries.mpi` nodes): the
    /// file includes `<mpi.h>`, initialises MPI and builds with `mpicxx`.
    pub mpi_calls: bool,
}

/// Runs the passes for one SDFG.
pub fn prepare(mut sdfg: Sdfg, opts: &CompileOptions) -> Result<Program> {
    // The interface follows DaCe's rules on the SDFG as stored (library
    // nodes included); everything after it sees the expanded SDFG.
    if opts.target == crate::options::Target::Cpp && opts.offload {
        return Err(crate::diag::Error::new(
            crate::diag::ErrorKind::Usage,
            "",
            "--offload moves the program to a GPU; use it with --target cuda or hip",
        ));
    }
    if opts.offload && opts.blas != crate::options::Blas::None {
        return Err(crate::diag::Error::new(
            crate::diag::ErrorKind::Usage,
            "",
            "--blas calls a host BLAS library on host data; it cannot be combined with --offload",
        ));
    }
    if !opts.offload && !opts.host_maps.is_empty() {
        return Err(crate::diag::Error::new(
            crate::diag::ErrorKind::Usage,
            "",
            "--host-map keeps a map on the host of an offloaded program; use it with --offload",
        ));
    }
    if opts.blas == crate::options::Blas::Cublas && opts.target != crate::options::Target::Cuda {
        return Err(crate::diag::Error::new(
            crate::diag::ErrorKind::Usage,
            "",
            "--blas cublas calls cuBLAS on device data; use it with --target cuda",
        ));
    }
    // References: CPU only, and what sdfgc refuses of them (before any
    // pass rewrites the program).
    reference::check(&sdfg, opts)?;
    if opts.target != crate::options::Target::Cpp {
        schedules::infer_thread_block_maps(&mut sdfg);
    }
    let abi = abi::compute(&sdfg);
    let blas_calls = expand::expand_for(
        &mut sdfg,
        opts.blas,
        opts.target != crate::options::Target::Cpp,
    )?;
    if opts.target == crate::options::Target::Hip
        && let Some(l) = crate::back::gpu::libs::used(&sdfg).first()
    {
        return Err(crate::diag::Error::unsupported(
            "",
            format!(
                "{} calls (DaCe's environment {}) on --target hip: not implemented (use --target cuda)",
                l.env.name, l.env.environment
            ),
        ));
    }
    let cublas_calls = expand::blascall::cublas_in(&sdfg);
    let mpi_calls = expand::mpi::mpi_in(&sdfg);
    // Offloading sees expanded library nodes: they become kernels too.
    let offloaded = if opts.offload {
        let available = abi
            .init
            .iter()
            .map(|p| p.name.clone())
            .chain(sdfg.constants.keys().cloned())
            .collect();
        Some(offload::offload_with(
            &mut sdfg,
            &available,
            &offload::Settings::of(opts),
        )?)
    } else {
        None
    };
    padding::pad_rows(&mut sdfg, opts);
    let data_streams = datastream::plan(&sdfg, opts)?;
    let alloc = alloc::plan(&sdfg, &abi, opts)?;
    let concurrent = opts.target != crate::options::Target::Cpp && opts.streams > 1;
    let live = liveness::live_ranges(&sdfg, concurrent);
    let layouts: layout::Layouts = alloc
        .external
        .iter()
        .map(|(storage, slots)| {
            let align = opts
                .workspace_align
                .unwrap_or(if storage.is_gpu() { 256 } else { 64 });
            // Transients zeroed at the start of their scope never share bytes.
            let keep_apart =
                |s: &alloc::ExternalSlot| alloc.get(s.sdfg, &s.name).is_some_and(|t| t.zero);
            (
                *storage,
                layout::StorageLayout::new(slots, &live, align, opts.layout, &keep_apart),
            )
        })
        .collect();
    let aliased = layouts.values().flat_map(|l| l.aliased()).collect();
    let shared = layouts.values().flat_map(|l| l.shared()).collect();
    let gpu = opts.target.dialect();
    let streams = if gpu.is_some() {
        opts.streams.max(1)
    } else {
        1
    };
    Ok(Program {
        sdfg,
        abi,
        alloc,
        mode: opts.mode,
        live,
        aliased,
        shared,
        layouts,
        gpu,
        streams,
        data_streams,
        offload: offloaded,
        options: opts.clone(),
        blas_calls,
        cublas_calls,
        mpi_calls,
    })
}
