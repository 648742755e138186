//! Per-thread slices: a transient allocated inside a GPU kernel (in the
//! scope of the kernel's map, or in a nested SDFG called there) whose size
//! is not a small compile-time constant cannot live on a thread's stack.
//! It gets a device buffer of `copies x elements`, allocated by the host
//! function that launches the kernel (like other device transients: the
//! memory mode decides heap, pool, persistent or workspace), and each thread
//! uses its own copy: the one at its flat iteration index of the kernel's
//! map (threads past the range return before any work, so the indices of
//! the threads that run are `0..copies`, one each). The transient keeps its
//! shape and strides inside its copy.
//!
//! The size must be fixed for the launch: in the symbols of the SDFG that
//! launches the kernel, not depending on a map parameter or on a value the
//! kernel computes; otherwise it is refused by name.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Error, Result};
use crate::ir::simplify::{eval_int, free_symbols, simplify, substitute};
use crate::ir::*;

/// The per-thread copies of one transient.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSlice {
    /// Id of the SDFG whose function launches the kernel.
    pub host_sdfg: u32,
    /// JSON pointer of the state of the kernel.
    pub state: String,
    /// The kernel's map entry.
    pub kernel: NodeId,
    /// Elements of one copy, in the launching SDFG's symbols.
    pub elements: Expr,
    /// Number of copies: iterations of the kernel's map, in the launching SDFG's symbols.
    pub copies: Expr,
    /// Element type.
    pub dtype: DType,
}

/// The device pointer to all copies (a kernel parameter).
pub fn base_name(sdfg: u32, name: &str) -> String {
    format!("__slices_{sdfg}_{name}")
}

/// The pointer to the calling thread's copy (in the kernel and device functions).
pub fn slice_name(sdfg: u32, name: &str) -> String {
    format!("__slice_{sdfg}_{name}")
}

/// True if a transient inside a kernel cannot be a local variable or a
/// stack array (the writer's rule: arrays of 1 to 4096 elements known at
/// compile time are stack arrays).
pub fn needs_slice(d: &DataDesc) -> bool {
    d.kind == DataKind::Array
        && d.storage != Storage::GpuShared
        && !eval_int(&d.total_size, &mut |_| None).is_some_and(|n| n > 0 && n <= 4096)
}

/// What the planner knows about the kernel a nested SDFG runs in.
#[derive(Clone, Debug)]
pub struct KernelCtx {
    /// Launching SDFG, state, kernel map entry, kernel label.
    pub host_sdfg: u32,
    pub state: String,
    pub kernel: NodeId,
    pub label: String,
    /// Iterations of the kernel's map (launching SDFG's symbols).
    pub copies: Expr,
    /// Symbols of the SDFG being planned that are fixed for the launch, as
    /// expressions in the launching SDFG's symbols.
    pub env: BTreeMap<String, Expr>,
    /// The kernel has GPU_ThreadBlock maps (threads share an iteration).
    pub thread_blocks: bool,
    /// How the launching SDFG's symbols map to the top-level ones (None if
    /// they do not: the copies are then allocated at each launch).
    pub to_top: Option<indexmap::IndexMap<String, Expr>>,
    /// The counted loops around the kernel's state in the launching SDFG.
    pub loops: Vec<crate::passes::bounds::LoopRange>,
}

/// The outermost `GPU_Device` map around `scope`, if it is at the top of
/// the state (the kernel the writer launches).
pub fn kernel_of(st: &State, scope: Option<NodeId>) -> Option<NodeId> {
    let mut found = None;
    let mut s = scope;
    let mut guard = 0;
    while let Some(id) = s {
        if let NodeKind::MapEntry(m) = &st.nodes[id.index()].kind
            && matches!(m.schedule, Schedule::GpuDevice | Schedule::GpuDefault)
        {
            found = Some(id);
        }
        s = st.nodes[id.index()].scope;
        guard += 1;
        if guard > st.nodes.len() {
            return None;
        }
    }
    found.filter(|k| st.nodes[k.index()].scope.is_none())
}

/// The parameters of the maps around `scope` (innermost first), up to the state.
fn enclosing_params(st: &State, scope: Option<NodeId>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut s = scope;
    let mut guard = 0;
    while let Some(id) = s {
        if let NodeKind::MapEntry(m) = &st.nodes[id.index()].kind {
            out.extend(m.scope_names().cloned());
        }
        s = st.nodes[id.index()].scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    out
}

/// True if some map in the kernel's scope (or in a nested SDFG there) is a
/// thread-block map.
fn has_thread_blocks(st: &State, kernel: NodeId) -> bool {
    let below = |id: usize| st.is_below(NodeId(id as u32), kernel);
    // A GPU_ThreadBlock_Dynamic map runs in each thread (kernel.rs).
    let tb = |s: Schedule| s == Schedule::GpuThreadBlock;
    st.nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| below(*i))
        .any(|(_, n)| match &n.kind {
            NodeKind::MapEntry(m) => tb(m.schedule),
            NodeKind::Nested(ns) => {
                let mut found = false;
                ns.sdfg
                    .for_each_sdfg(&mut |s| found |= region_has_thread_blocks(&s.body));
                found
            }
            _ => false,
        })
}

/// True if a state of the region (not inside nested SDFGs) has a thread-block map.
fn region_has_thread_blocks(r: &Region) -> bool {
    r.blocks.iter().any(|b| match &b.kind {
        BlockKind::State(st) => st.nodes.iter().any(
            |n| matches!(&n.kind, NodeKind::MapEntry(m) if m.schedule == Schedule::GpuThreadBlock),
        ),
        BlockKind::Region(inner) => region_has_thread_blocks(inner),
        BlockKind::Conditional(brs) => brs.iter().any(|(_, body)| region_has_thread_blocks(body)),
        _ => false,
    })
}

/// The kernel around `scope` in state `st` (at `path`) of `sdfg`, with the
/// symbols fixed for its launch: those of `sdfg` that are not parameters
/// of the maps around `scope` and not data containers.
pub fn kernel_ctx(sdfg: &Sdfg, st: &State, path: &str, scope: Option<NodeId>) -> Option<KernelCtx> {
    let kernel = kernel_of(st, scope)?;
    let NodeKind::MapEntry(m) = &st.nodes[kernel.index()].kind else {
        return None;
    };
    let copies = simplify(
        &m.range
            .iter()
            .map(|r| Expr::Call(Func::Max, vec![Expr::Int(0), r.extent()]))
            .reduce(|a, b| Expr::bin(BinaryOp::Mul, a, b))
            .unwrap_or(Expr::Int(1)),
    );
    let varying = enclosing_params(st, scope);
    let mut env = BTreeMap::new();
    let mut names = BTreeSet::new();
    for s in sdfg.symbols.keys() {
        names.insert(s.clone());
    }
    for s in free_symbols(&copies) {
        names.insert(s);
    }
    for n in names {
        if !varying.contains(&n) && !sdfg.arrays.contains_key(&n) {
            env.insert(n.clone(), Expr::Sym(n));
        }
    }
    Some(KernelCtx {
        host_sdfg: sdfg.id,
        state: path.to_string(),
        kernel,
        label: m.label.clone(),
        copies,
        env,
        thread_blocks: has_thread_blocks(st, kernel),
        to_top: None,
        loops: Vec::new(),
    })
}

impl KernelCtx {
    /// The context of a nested SDFG called at `scope` of state `st` of
    /// `sdfg` (which runs in this kernel): its symbols whose mapping is fixed.
    pub fn nested(
        &self,
        sdfg: &Sdfg,
        assigned: &BTreeSet<String>,
        st: &State,
        scope: Option<NodeId>,
        ns: &NestedSdfg,
    ) -> KernelCtx {
        let varying = enclosing_params(st, scope);
        let fixed = |n: &str| {
            !varying.contains(n)
                && !assigned.contains(n)
                && !sdfg.arrays.contains_key(n)
                && self.env.contains_key(n)
        };
        let env = ns
            .symbol_mapping
            .iter()
            .filter(|(_, v)| free_symbols(v).iter().all(|n| fixed(n)))
            .map(|(k, v)| {
                (
                    k.clone(),
                    simplify(&substitute(v, &mut |n| self.env.get(n).cloned())),
                )
            })
            .collect();
        KernelCtx {
            env,
            ..self.clone()
        }
    }

    /// The slice of transient `name` (of `sdfg`, which assigns `assigned`);
    /// `None` when its size is known only inside the thread (it depends on a
    /// map parameter, a symbol the nested SDFG assigns, or data): each thread
    /// then allocates its own copy from the device heap, as DaCe does. A
    /// located refusal in a kernel with thread-block maps.
    pub fn slice(
        &self,
        sdfg: &Sdfg,
        assigned: &BTreeSet<String>,
        extra_varying: &BTreeSet<String>,
        name: &str,
        d: &DataDesc,
    ) -> Result<Option<KernelSlice>> {
        if self.thread_blocks {
            let whose = if sdfg.id == self.host_sdfg {
                format!("transient '{name}'")
            } else {
                format!("transient '{name}' of nested SDFG '{}'", sdfg.name)
            };
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "{whose} inside GPU kernel '{}' has a size that is not a small compile-time constant, and the kernel has GPU_ThreadBlock maps (per-thread copies need one thread per map iteration)",
                    self.label
                ),
            ));
        }
        let varies = free_symbols(&d.total_size).into_iter().any(|s| {
            assigned.contains(&s) || extra_varying.contains(&s) || !self.env.contains_key(&s)
        });
        if varies {
            return Ok(None);
        }
        Ok(Some(KernelSlice {
            host_sdfg: self.host_sdfg,
            state: self.state.clone(),
            kernel: self.kernel,
            elements: simplify(&substitute(&d.total_size, &mut |n| {
                self.env.get(n).cloned()
            })),
            copies: self.copies.clone(),
            dtype: d.dtype,
        }))
    }
}

/// Parameters of the maps around `scope` (for a transient of the launching
/// SDFG allocated in a map inside the kernel).
pub fn params_around(st: &State, scope: Option<NodeId>) -> BTreeSet<String> {
    enclosing_params(st, scope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{CompileOptions, Mode, Target};
    use crate::passes::{Memory, Program, prepare};

    fn load(rel: &str) -> Sdfg {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(rel);
        crate::driver::load_valid(&p).expect("fixture loads")
    }

    fn prepared(sdfg: Sdfg, offload: bool, mode: Option<Mode>) -> crate::diag::Result<Program> {
        let opts = CompileOptions {
            offload,
            mode,
            ..CompileOptions::new(Target::Cuda)
        };
        prepare(sdfg, &opts)
    }

    /// The nested SDFG called in the kernel of `nested_transient_parallel_map`.
    fn nested_node(sdfg: &mut Sdfg) -> &mut NestedSdfg {
        let BlockKind::State(st) = &mut sdfg.body.blocks[0].kind else {
            panic!("state");
        };
        st.nodes
            .iter_mut()
            .find_map(|n| match &mut n.kind {
                NodeKind::Nested(ns) => Some(ns),
                _ => None,
            })
            .expect("nested SDFG")
    }

    #[test]
    fn a_nested_transient_of_symbolic_size_gets_one_copy_per_map_iteration_in_every_mode() {
        // rows[i=0:M] calls row_work, whose transient `tmp` has shape [N].
        for mode in [
            None,
            Some(Mode::Scoped),
            Some(Mode::Pool),
            Some(Mode::Persistent),
            Some(Mode::External),
        ] {
            let sdfg = load("corpus/nested_transient_parallel_map/program.sdfg");
            let p = prepared(sdfg, true, mode).expect("offloads");
            let (id, t) = p
                .alloc
                .transients
                .iter()
                .find(|((id, n), _)| *id != 0 && n == "tmp")
                .map(|((id, _), t)| (*id, t))
                .expect("tmp is planned");
            let s = t.slice.as_ref().expect("tmp has per-thread copies");
            assert_eq!(s.host_sdfg, 0);
            assert_eq!(s.elements, Expr::sym("N"));
            let copies = crate::ir::simplify::eval_int(&s.copies, &mut |n| (n == "M").then_some(7));
            assert_eq!(
                copies,
                Some(7),
                "one copy per iteration of rows: {:?}",
                s.copies
            );
            assert!(p.alloc.is_device(id, "tmp"));
            assert!(
                p.alloc
                    .slices_of(0, &s.state, s.kernel)
                    .contains(&(id, "tmp".to_string()))
            );
            let memory_ok = match mode {
                Some(Mode::Pool) => t.memory == Memory::Pool,
                // Offloaded, the default mode allocates at init what init can size.
                None | Some(Mode::Persistent) => t.memory == Memory::Persistent,
                Some(Mode::External) => matches!(t.memory, Memory::External { .. }),
                Some(Mode::Scoped) => t.memory == Memory::Heap,
            };
            assert!(memory_ok, "{mode:?}: {:?}", t.memory);
            if mode == Some(Mode::External) {
                let slot = p.alloc.external[&Storage::GpuGlobal]
                    .iter()
                    .find(|x| x.sdfg == id && x.name == "tmp")
                    .expect("a workspace slot");
                let n = crate::ir::simplify::eval_int(&slot.elements, &mut |n| match n {
                    "M" => Some(7),
                    "N" => Some(5),
                    _ => None,
                });
                assert_eq!(n, Some(35), "M copies of N elements: {:?}", slot.elements);
            }
            if mode == Some(Mode::Persistent) {
                assert!(t.top_elements.is_some());
            }
        }
    }

    #[test]
    fn the_kernel_passes_each_thread_its_copy_and_device_code_allocates_nothing() {
        let opts = CompileOptions {
            offload: true,
            ..CompileOptions::new(Target::Cuda)
        };
        let sdfg = load("corpus/nested_transient_parallel_map/program.sdfg");
        let outs = crate::driver::generate_sdfg(sdfg, &opts).expect("generates");
        let cu = &outs.iter().find(|(n, _)| n.ends_with(".cu")).unwrap().1;
        let device: Vec<&str> = cu
            .split("\n}\n")
            .filter(|f| f.contains("__device__") || f.contains("__global__"))
            .collect();
        assert!(!device.is_empty());
        for f in &device {
            assert!(!f.contains("Malloc") && !f.contains("sdfgc_alloc"), "{f}");
        }
        // The flat iteration index (`__tx`) times the elements of one copy.
        assert!(
            cu.contains(
                "__slice_1_tmp = __slices_1_tmp + static_cast<size_t>(__tx * (1)) * static_cast<size_t>(N);"
            ),
            "{cu}"
        );
        assert!(cu.contains("double * __restrict__ tmp = __slice_1_tmp;"));
    }

    #[test]
    fn a_map_scoped_transient_of_a_gpu_sdfg_gets_per_thread_copies_too() {
        // DaCe's own GPU SDFG: `__tmp1` ([N, K, K, C_in, C_out]) in the
        // scope of the GPU_Device map over (i, j).
        let p = prepared(
            load("npbench/conv2d_bias/program.gpu.autoopt.sdfg"),
            false,
            None,
        )
        .expect("compiles");
        let s = p.alloc.get(0, "__tmp1").unwrap().slice.as_ref().unwrap();
        let env = |n: &str| match n {
            "H" | "W" => Some(10),
            "K" => Some(3),
            "N" | "C_in" | "C_out" => Some(2),
            _ => None,
        };
        let mut f = env;
        assert_eq!(crate::ir::simplify::eval_int(&s.copies, &mut f), Some(64));
        assert_eq!(crate::ir::simplify::eval_int(&s.elements, &mut f), Some(72));
    }

    /// The device functions and kernels of `sdfg` compiled for CUDA.
    fn device_code(sdfg: Sdfg, offload: bool) -> Vec<String> {
        let opts = CompileOptions {
            offload,
            ..CompileOptions::new(Target::Cuda)
        };
        let outs = crate::driver::generate_sdfg(sdfg, &opts).expect("generates");
        let cu = &outs.iter().find(|(n, _)| n.ends_with(".cu")).unwrap().1;
        cu.split("\n}\n")
            .filter(|f| f.contains("__device__ void") || f.contains("__global__"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_size_that_changes_inside_the_kernel_comes_from_the_device_heap_per_thread() {
        // The nested SDFG's N is the kernel's map parameter: each thread
        // allocates its own copy where its scope starts and frees it at the end.
        let mut sdfg = load("corpus/nested_transient_parallel_map/program.sdfg");
        let ns = nested_node(&mut sdfg);
        ns.symbol_mapping.insert("N".into(), Expr::sym("i"));
        let p = prepared(sdfg.clone(), true, None).expect("offloads");
        let t = p
            .alloc
            .transients
            .iter()
            .find(|((id, n), _)| *id != 0 && n == "tmp")
            .map(|(_, t)| t)
            .expect("tmp is planned");
        assert!(t.slice.is_none() && t.memory == Memory::Local, "{t:?}");
        let device = device_code(sdfg, true);
        let f = device
            .iter()
            .find(|f| f.contains("tmp = sdfgc_device_new<double>(N, \"tmp\");"))
            .expect("tmp from the device heap");
        assert!(f.contains("delete[] tmp;"), "{f}");
        // A transient of the launching SDFG in the kernel's map, sized by
        // the map parameter: allocated in the kernel's body.
        let mut sdfg = load("npbench/conv2d_bias/program.gpu.autoopt.sdfg");
        let d = sdfg.arrays.get_mut("__tmp1").unwrap();
        d.shape[0] = Expr::sym("i");
        d.total_size = Expr::bin(BinaryOp::Mul, d.total_size.clone(), Expr::sym("i"));
        let device = device_code(sdfg, false);
        let k = device
            .iter()
            .find(|f| f.contains("__tmp1 = sdfgc_device_new<"))
            .expect("__tmp1 from the device heap");
        assert!(
            k.contains("__global__") && k.contains("delete[] __tmp1;"),
            "{k}"
        );
        for f in &device {
            assert!(!f.contains("Malloc") && !f.contains("sdfgc_alloc"), "{f}");
        }
    }

    #[test]
    fn small_constant_arrays_stay_on_the_stack() {
        let mut d = load("corpus/nested_transient_parallel_map/program.sdfg").arrays["row"].clone();
        d.total_size = Expr::Int(16);
        assert!(!needs_slice(&d));
        d.total_size = Expr::Int(5000);
        assert!(needs_slice(&d));
        d.total_size = Expr::sym("N");
        assert!(needs_slice(&d));
        d.kind = DataKind::Scalar;
        assert!(!needs_slice(&d));
    }
}
