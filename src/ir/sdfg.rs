//! SDFGs, control flow and dataflow.
//!
//! Ownership follows the nesting of the SDFG: an [`Sdfg`] owns its root
//! [`Region`], regions own their [`Block`]s, states own their nodes and
//! edges, and a nested SDFG node owns the whole inner [`Sdfg`]. Within a
//! region or state, elements are addressed by typed indices ([`BlockId`],
//! [`NodeId`]) that stay stable while passes append.

use indexmap::IndexMap;

use crate::ir::data::{Constant, DataDesc};
use crate::ir::dtype::DType;
use crate::ir::expr::{BinaryOp, Expr, Stmt, Target};

/// A map keyed by names, in insertion order (hashed with FxHash: names are
/// short and looked up often).
pub type NameMap<V> = IndexMap<String, V, rustc_hash::FxBuildHasher>;

/// A whole SDFG (also used for nested SDFGs).
#[derive(Clone, Debug)]
pub struct Sdfg {
    /// Position in the SDFG tree (depth-first, top level = 0); DaCe's `cfg_id` of the SDFG.
    pub id: u32,
    /// `attributes.name`: used in exported symbol names.
    pub name: String,
    /// Positional argument names (informational).
    pub arg_names: Vec<String>,
    /// Data containers in JSON order.
    pub arrays: NameMap<DataDesc>,
    /// Symbols with their types.
    pub symbols: NameMap<DType>,
    /// Symbols of DaCe's `callback` type: function pointers into Python,
    /// passed in as parameters where the program calls them (not in `symbols`).
    pub callbacks: NameMap<crate::ir::Callback>,
    /// DaCe's redistributions of distributed arrays (`_rdistrarrays`): name
    /// -> the process grids of its input and output subarrays (`pgrid` of
    /// `array_a` and `array_b` in `_subarrays`).
    pub redistributions: NameMap<(String, String)>,
    /// Types of the symbols the control flow assigns and `symbols` does not
    /// declare, inferred as DaCe does ([`crate::ir::symtypes`]).
    pub assigned_types: NameMap<DType>,
    /// Compile-time constants.
    pub constants: NameMap<Constant>,
    /// C struct types of this SDFG's `Structure` containers, nested
    /// structures' types before the types that point to them.
    pub struct_types: Vec<crate::ir::StructType>,
    /// Code placed at file scope, per location (`frame`, `cuda`, ...).
    pub global_code: NameMap<CodeBlock>,
    /// Code run in `__dace_init_<name>`, per location.
    pub init_code: NameMap<CodeBlock>,
    /// Code run in `__dace_exit_<name>`, per location.
    pub exit_code: NameMap<CodeBlock>,
    /// The root control-flow region.
    pub body: Region,
    /// JSON pointer of this SDFG object.
    pub path: String,
    /// The `dace_version` that saved the SDFG ("" when absent): DaCe 1.x's
    /// CPU `float16` computes differently from DaCe 2's ([`crate::back::half`]).
    pub dace_version: String,
}

impl Sdfg {
    /// The type of a symbol: declared, else inferred from its assignments.
    pub fn symbol_type(&self, name: &str) -> Option<DType> {
        self.symbols
            .get(name)
            .or_else(|| self.assigned_types.get(name))
            .copied()
    }
}

/// Language of a code block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Python (translated by sdfgc).
    Python,
    /// C++ (passed through).
    Cpp,
}

/// A piece of code as stored in the SDFG.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeBlock {
    /// Source text.
    pub code: String,
    /// Its language.
    pub language: Language,
}

/// Index of a block inside its region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// Index of a node inside its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl BlockId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl NodeId {
    /// As a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A control-flow region: blocks connected by interstate edges.
#[derive(Clone, Debug)]
pub struct Region {
    /// Label from the JSON.
    pub label: String,
    /// Plain region or loop.
    pub kind: RegionKind,
    /// The blocks (index = [`BlockId`]).
    pub blocks: Vec<Block>,
    /// Interstate edges.
    pub edges: Vec<InterstateEdge>,
    /// Entry block (None only for an empty region).
    pub start: Option<BlockId>,
    /// JSON pointer of the region object.
    pub path: String,
}

/// What a region is.
#[derive(Clone, Debug)]
pub enum RegionKind {
    /// SDFG body or `ControlFlowRegion` (also conditional branch bodies).
    Plain,
    /// `LoopRegion`.
    Loop(LoopInfo),
}

/// The loop attributes of a `LoopRegion`.
#[derive(Clone, Debug)]
pub struct LoopInfo {
    /// The loop variable (may be empty for while-loops).
    pub variable: Option<String>,
    /// `init_statement`.
    pub init: Vec<Stmt>,
    /// `loop_condition`.
    pub condition: Expr,
    /// `update_statement`.
    pub update: Vec<Stmt>,
    /// do-while form (condition checked after the body).
    pub inverted: bool,
    /// With `inverted`: update runs before the condition check.
    pub update_before_condition: bool,
}

/// A control-flow block.
#[derive(Clone, Debug)]
pub struct Block {
    /// Label from the JSON.
    pub label: String,
    /// What the block is.
    pub kind: BlockKind,
    /// JSON pointer.
    pub path: String,
}

/// The kinds of control-flow block.
#[derive(Clone, Debug)]
pub enum BlockKind {
    /// A dataflow state.
    State(State),
    /// A nested region (`ControlFlowRegion`, `LoopRegion`).
    Region(Region),
    /// `ConditionalBlock`: branches tried in order; `None` condition is `else`.
    Conditional(Vec<(Option<Expr>, Region)>),
    /// `BreakBlock`: leaves the innermost loop.
    Break,
    /// `ContinueBlock`: next iteration of the innermost loop.
    Continue,
    /// `ReturnBlock`: leaves the SDFG.
    Return,
}

/// An interstate edge.
#[derive(Clone, Debug)]
pub struct InterstateEdge {
    /// Source block.
    pub src: BlockId,
    /// Destination block.
    pub dst: BlockId,
    /// Condition (`true` when absent).
    pub condition: Expr,
    /// Symbol assignments, in order.
    pub assignments: Vec<(String, Expr)>,
    /// JSON pointer.
    pub path: String,
}

/// A dataflow state.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Nodes (index = [`NodeId`]).
    pub nodes: Vec<Node>,
    /// Memlet edges.
    pub edges: Vec<DataEdge>,
    /// DaCe's `symbol_instrument`: the symbols defined at the state are
    /// saved or restored when it starts.
    pub symbol_instrument: Option<Box<DataInstrument>>,
}

/// A dataflow node.
#[derive(Clone, Debug)]
pub struct Node {
    /// Label from the JSON.
    pub label: String,
    /// The map entry whose scope contains this node (None at top level).
    pub scope: Option<NodeId>,
    /// What the node is.
    pub kind: NodeKind,
    /// JSON pointer.
    pub path: String,
}

/// The kinds of dataflow node.
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// Reads or writes a data container.
    Access(AccessNode),
    /// Opens a map scope.
    MapEntry(MapEntry),
    /// Closes the map scope opened by `entry`.
    MapExit {
        /// The matching entry.
        entry: NodeId,
    },
    /// A computation.
    Tasklet(Tasklet),
    /// A nested SDFG.
    Nested(NestedSdfg),
    /// A library node (expanded by a pass).
    Library(LibraryNode),
}

/// `AccessNode` attributes.
#[derive(Clone, Debug)]
pub struct AccessNode {
    /// Name of the container.
    pub data: String,
    /// Zero the container before first use in the state.
    pub setzero: bool,
    /// DaCe's data instrumentation of the node (`instrument`), if any.
    pub instrument: Option<Box<DataInstrument>>,
}

/// DaCe's `DataInstrumentationType` other than `No_Instrumentation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstrumentKind {
    /// `Save`: the data (or the state's symbols) is written to the report folder.
    Save,
    /// `Restore`: the data (or the state's symbols) is read back from a report.
    Restore,
}

/// When an instrumentation runs (DaCe's `instrument_condition`).
#[derive(Clone, Debug, PartialEq)]
pub enum InstrumentCondition {
    /// Every time (absent, or the code `1`).
    Always,
    /// A Python condition, translated.
    Expr(Expr),
    /// A C++ condition, passed through.
    Cpp(String),
}

/// DaCe's data instrumentation of an access node (its data) or of a state
/// (its defined symbols, `symbol_instrument`).
#[derive(Clone, Debug, PartialEq)]
pub struct DataInstrument {
    /// Save or restore.
    pub kind: InstrumentKind,
    /// When it runs.
    pub condition: InstrumentCondition,
    /// The file stem DaCe gives it: `<cfg id>_<state id>_<node id>` for an
    /// access node, `<state id>` for a state's symbols (set by the reader).
    pub uuid: String,
}

/// Map schedules (DaCe's `ScheduleType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    Default,
    Sequential,
    CpuMulticore,
    CpuPersistent,
    GpuDefault,
    GpuDevice,
    GpuThreadBlock,
    GpuThreadBlockDynamic,
    GpuPersistent,
    Unrolled,
}

impl Schedule {
    /// Parses DaCe's enum member name.
    pub fn from_dace_name(s: &str) -> Option<Schedule> {
        Some(match s {
            "Default" => Schedule::Default,
            "Sequential" => Schedule::Sequential,
            "CPU_Multicore" => Schedule::CpuMulticore,
            "CPU_Persistent" => Schedule::CpuPersistent,
            "GPU_Default" => Schedule::GpuDefault,
            "GPU_Device" => Schedule::GpuDevice,
            "GPU_ThreadBlock" => Schedule::GpuThreadBlock,
            "GPU_ThreadBlock_Dynamic" => Schedule::GpuThreadBlockDynamic,
            "GPU_Persistent" => Schedule::GpuPersistent,
            "Unrolled" => Schedule::Unrolled,
            _ => return None,
        })
    }

    /// DaCe's enum member name.
    pub fn dace_name(self) -> &'static str {
        match self {
            Schedule::Default => "Default",
            Schedule::Sequential => "Sequential",
            Schedule::CpuMulticore => "CPU_Multicore",
            Schedule::CpuPersistent => "CPU_Persistent",
            Schedule::GpuDefault => "GPU_Default",
            Schedule::GpuDevice => "GPU_Device",
            Schedule::GpuThreadBlock => "GPU_ThreadBlock",
            Schedule::GpuThreadBlockDynamic => "GPU_ThreadBlock_Dynamic",
            Schedule::GpuPersistent => "GPU_Persistent",
            Schedule::Unrolled => "Unrolled",
        }
    }
}

/// One dimension of a range: `start`, inclusive `end`, `step`, `tile`.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeDim {
    /// First index.
    pub start: Expr,
    /// Last index (inclusive, as DaCe stores it).
    pub end: Expr,
    /// Step.
    pub step: Expr,
    /// Tile size (1 unless tiled).
    pub tile: Expr,
}

impl RangeDim {
    /// Number of indices in the range: `(end - start) / step + 1`, simplified;
    /// times the tile size for a tiled range (DaCe's `Range.size`).
    pub fn extent(&self) -> Expr {
        use crate::ir::simplify::simplify;
        let span = Expr::bin(BinaryOp::Sub, self.end.clone(), self.start.clone());
        let steps = if simplify(&self.step) == Expr::Int(1) {
            Expr::bin(BinaryOp::Add, span, Expr::Int(1))
        } else {
            Expr::bin(
                BinaryOp::Add,
                Expr::bin(BinaryOp::FloorDiv, span, self.step.clone()),
                Expr::Int(1),
            )
        };
        simplify(&self.tiled(steps))
    }

    /// True for a tiled range (`begin:end:step:tile`, tile not 1).
    pub fn is_tiled(&self) -> bool {
        crate::ir::simplify::simplify(&self.tile) != Expr::Int(1)
    }

    fn tiled(&self, e: Expr) -> Expr {
        if self.is_tiled() {
            Expr::bin(BinaryOp::Mul, self.tile.clone(), e)
        } else {
            e
        }
    }

    /// The index of position `i` (0-based) of the range: `start + i * step`;
    /// for a tiled range `tile` consecutive indices at every step,
    /// `start + (i / tile) * step + i % tile`.
    pub fn index_at(&self, i: Expr) -> Expr {
        use crate::ir::simplify::simplify;
        if !self.is_tiled() {
            return simplify(&Expr::bin(
                BinaryOp::Add,
                self.start.clone(),
                Expr::bin(BinaryOp::Mul, i, self.step.clone()),
            ));
        }
        let block = Expr::bin(BinaryOp::FloorDiv, i.clone(), self.tile.clone());
        let within = Expr::bin(BinaryOp::Mod, i, self.tile.clone());
        simplify(&Expr::bin(
            BinaryOp::Add,
            Expr::bin(
                BinaryOp::Add,
                self.start.clone(),
                Expr::bin(BinaryOp::Mul, block, self.step.clone()),
            ),
            within,
        ))
    }
}

/// A subset of a container: one range per dimension (indices have start == end).
pub type Subset = Vec<RangeDim>;

/// `MapEntry` attributes.
#[derive(Clone, Debug)]
pub struct MapEntry {
    /// The map's own label.
    pub label: String,
    /// Iteration variables.
    pub params: Vec<String>,
    /// One range per parameter.
    pub range: Subset,
    /// How iterations are scheduled.
    pub schedule: Schedule,
    /// OpenMP collapse depth (1 = none).
    pub collapse: i64,
    /// GPU block size, if given.
    pub gpu_block_size: Option<Vec<i64>>,
    /// OpenMP thread count (0 = default).
    pub omp_num_threads: i64,
    /// Unroll request.
    pub unroll: bool,
    /// The matching exit node.
    pub exit: NodeId,
    /// A consume scope (DaCe's `ConsumeEntry`), not a map: `params` is its
    /// processing-element index, `range` `0:num_pes`.
    pub consume: Option<Consume>,
    /// Dynamic map inputs: the input connectors not named `IN_*`, with
    /// their declared types. Each is fed by one memlet (the edge into this
    /// entry at that connector, found by [`State::dynamic_input_edge`]: the
    /// edge stays the one source of the memlet, which passes may rewrite)
    /// reading one element, whose value the map's range and everything in
    /// its scope use under the connector's name, as a symbol defined by the
    /// map (DaCe's `const T name = element;` before the map's loops).
    pub dynamic_inputs: NameMap<ConnType>,
}

impl MapEntry {
    /// The names the map defines for its scope: its parameters, then its
    /// dynamic inputs (map-local: never symbols of the SDFG or the ABI).
    pub fn scope_names(&self) -> impl Iterator<Item = &String> + '_ {
        self.params.iter().chain(self.dynamic_inputs.keys())
    }

    /// True if `conn` (an input connector of a map entry) is a dynamic input.
    pub fn is_dynamic_connector(conn: &str) -> bool {
        !conn.starts_with("IN_")
    }
}

/// The attributes of a consume scope (DaCe's `Consume`): `num_pes`
/// processing elements pop the stream feeding the entry's `IN_stream`
/// connector, and run the scope once per element, until the stream is
/// empty and no element is being processed.
#[derive(Clone, Debug)]
pub struct Consume {
    /// Number of processing elements.
    pub num_pes: Expr,
    /// Elements handed to one run of the scope (only 1 is supported).
    pub chunksize: i64,
    /// The quiescence condition (Python), if any.
    pub condition: Option<CodeBlock>,
}

/// Type of a tasklet or nested-SDFG connector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnType {
    /// Not given in the JSON (inferred from the memlet).
    Unknown,
    /// A value.
    Scalar(DType),
    /// A pointer to elements.
    Pointer(DType),
    /// DaCe's `dace.vector`: a value of that many consecutive elements
    /// (`dace::vec<T, N>`), read from and written to its memlet's first
    /// element on.
    Vector(DType, u32),
}

/// `Tasklet` attributes.
#[derive(Clone, Debug)]
pub struct Tasklet {
    /// The code.
    pub code: CodeBlock,
    /// Parsed statements (Python tasklets only).
    pub stmts: Vec<Stmt>,
    /// File-scope code.
    pub code_global: CodeBlock,
    /// Code run at init.
    pub code_init: CodeBlock,
    /// Code run at exit.
    pub code_exit: CodeBlock,
    /// Has side effects (never removed or reordered).
    pub side_effects: bool,
    /// Calls back into the host: DaCe's `side_effects` set explicitly to true,
    /// its mark for a tasklet that calls Python or a stateful host function
    /// (a map holding one stays on the host under `--offload`).
    pub callback: bool,
    /// Input connectors.
    pub inputs: NameMap<ConnType>,
    /// Output connectors.
    pub outputs: NameMap<ConnType>,
    /// DaCe library environments the code calls into (`environments`:
    /// cuBLAS, LAPACKE, ...), which sdfgc does not provide.
    pub environments: Vec<String>,
    /// C++ declarations of members the program's state struct gets
    /// (`state_fields`; DaCe's MPI Dummy node declares process grids with them).
    pub state_fields: Vec<String>,
}

impl Tasklet {
    /// A C++ tasklet of `code` alone (no file-scope, init or exit code, no
    /// state members, no side effects): the library calls sdfgc's expansions
    /// write, in the DaCe `environments` they call into.
    pub fn cpp(
        code: &str,
        inputs: NameMap<ConnType>,
        outputs: NameMap<ConnType>,
        environments: Vec<String>,
    ) -> Tasklet {
        let block = |code: &str| CodeBlock {
            code: code.to_string(),
            language: Language::Cpp,
        };
        Tasklet {
            code: block(code),
            stmts: Vec::new(),
            code_global: block(""),
            code_init: block(""),
            code_exit: block(""),
            side_effects: false,
            callback: false,
            inputs,
            outputs,
            environments,
            state_fields: Vec::new(),
        }
    }
}

/// The cuSOLVER library nodes ([`LibraryKind::Solver`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverOp {
    /// LU factorization with partial pivoting (`_xin` -> `_xout`, `_ipiv`, `_res`).
    Getrf,
    /// Solve with LU factors (`_a`, `_rhs_in`, `_ipiv` -> `_rhs_out`, `_res`).
    Getrs,
    /// Cholesky factorization (`_xin` -> `_xout`, `_res`).
    Potrf,
    /// `_b`: the Cholesky factor of `_a`, the other triangle zero.
    Cholesky,
    /// `_bout`: the solution of `_ain @ X = _bin`.
    Solve,
    /// `_aout`: the inverse of `_ain` (in place where `_aout` is `_ain`'s
    /// memory: DaCe's `overwrite_a`).
    Inv,
}

/// `NestedSDFG` attributes.
#[derive(Clone, Debug)]
pub struct NestedSdfg {
    /// The inner SDFG.
    pub sdfg: Box<Sdfg>,
    /// Inner symbol → outer expression.
    pub symbol_mapping: NameMap<Expr>,
    /// Input connectors (inner container names).
    pub inputs: NameMap<ConnType>,
    /// Output connectors.
    pub outputs: NameMap<ConnType>,
    /// Schedule.
    pub schedule: Schedule,
    /// The symbols the inner SDFG uses, computed once by
    /// [`crate::passes::abi::nested_symbol_args`] (the IR does not change
    /// once the passes run).
    pub used_symbols: std::sync::OnceLock<std::collections::BTreeSet<String>>,
}

/// Library nodes sdfgc knows (expanded into maps and tasklets by
/// [`crate::passes::expand`] before any other pass runs).
#[derive(Clone, Debug)]
pub enum LibraryKind {
    /// `dace.libraries.standard.nodes.reduce.Reduce`
    Reduce {
        /// Reduced axes (None = all).
        axes: Option<Vec<i64>>,
        /// The reduction lambda.
        wcr: Wcr,
        /// Identity value, if given.
        identity: Option<Expr>,
        /// DaCe's implementation "CUDA (block)": every thread of the
        /// block holds a part of the input, the result combines the block's.
        block: bool,
    },
    /// `dace.libraries.blas.nodes.matmul.MatMul` (specialised by operand ranks, as DaCe does).
    MatMul {
        /// Scale of the product.
        alpha: Expr,
        /// Scale of the accumulated output.
        beta: Expr,
    },
    /// `dace.libraries.blas.nodes.dot.Dot`: `_result = sum(_x * _y)`.
    Dot,
    /// `dace.libraries.blas.nodes.gemv.Gemv`: `_y = alpha * op(_A) @ _x + beta * _y`.
    Gemv {
        /// Scale of the product.
        alpha: Expr,
        /// Scale of the input `_y`.
        beta: Expr,
        /// Use the transpose of `_A`.
        trans_a: bool,
    },
    /// `dace.libraries.blas.nodes.gemm.Gemm`: `_c = alpha * op(_a) @ op(_b) + beta * _cin`.
    Gemm {
        /// Scale of the product.
        alpha: Expr,
        /// Scale of `_cin`.
        beta: Expr,
        /// Use the transpose of `_a`.
        trans_a: bool,
        /// Use the transpose of `_b`.
        trans_b: bool,
    },
    /// `dace.libraries.blas.nodes.ger.Ger`: `_res = alpha * outer(_x, _y) + _A`.
    Ger {
        /// Scale of the outer product.
        alpha: Expr,
    },
    /// `dace.libraries.blas.nodes.axpy.Axpy`: `_res = a * _x + _y`.
    Axpy {
        /// Scale of `_x`.
        a: Expr,
    },
    /// `dace.libraries.standard.nodes.transpose.Transpose` (matrices).
    Transpose,
    /// `dace.libraries.standard.nodes.ttranspose.TensorTranspose`:
    /// `_out_tensor = alpha * permute(_inp_tensor, axes) + beta * _out_tensor`.
    TensorTranspose {
        /// Input mode of each output mode.
        axes: Vec<i64>,
        /// Scale of the input.
        alpha: Expr,
        /// Scale of the previous output.
        beta: Expr,
    },
    /// `dace.libraries.blas.nodes.batched_matmul.BatchedMatMul`: `_c[b] = _a[b] @ _b[b]`
    /// (an operand without batch dimensions is shared by every batch).
    BatchedMatMul {
        /// Scale of the product (DaCe's pure expansion ignores it: refused unless 1).
        alpha: Expr,
        /// Scale of the previous output (DaCe's pure expansion ignores it: refused unless 0).
        beta: Expr,
    },
    /// `dace.libraries.blas.nodes.einsum.Einsum`: the Einstein sum `spec`
    /// over the inputs in the order of their sorted connector names;
    /// `out = alpha * sum + beta * out`.
    Einsum {
        /// The einsum string (`ij,jk->ik`).
        spec: String,
        /// Scale of the sum.
        alpha: Expr,
        /// Scale of the previous output.
        beta: Expr,
    },
    /// `dace.libraries.linalg.nodes.tensordot.TensorDot`: contracts
    /// `left_axes` of `_left_tensor` with `right_axes` of `_right_tensor`;
    /// output mode `k` is mode `permutation[k]` of the free modes (left's, then right's).
    TensorDot {
        /// Contracted modes of the left tensor.
        left_axes: Vec<i64>,
        /// Contracted modes of the right tensor (paired with `left_axes`).
        right_axes: Vec<i64>,
        /// Permutation of the output modes, if any.
        permutation: Option<Vec<i64>>,
    },
    /// `dace.libraries.fft.nodes.fft.FFT` / `IFFT`: a one-dimensional
    /// discrete Fourier transform, times `factor` (DaCe's pure expansion, a DFT).
    Fft {
        /// IFFT (positive exponent).
        inverse: bool,
        /// The normalisation factor.
        factor: Expr,
    },
    /// DaCe's LAPACK and linalg nodes with implementation `cuSolverDn`
    /// (`dace.libraries.lapack.nodes` Getrf, Getrs, Potrf;
    /// `dace.libraries.linalg.nodes` Cholesky, Solve, Inv): cuSOLVER calls on
    /// device data, as DaCe's expansions make them.
    Solver {
        /// The node.
        op: SolverOp,
        /// Potrf and Cholesky: factor the lower triangle (DaCe's `lower`).
        lower: bool,
    },
    /// gt4py's `ReduceWithSkipValues`: `output = fold(wcr, init, [mask[k] !=
    /// -1 ? input[k] : identity for k < max_neighbors])`, one output element.
    ReduceWithSkipValues {
        /// The reduction lambda.
        wcr: Wcr,
        /// Value taken for a skipped neighbor.
        identity: Expr,
        /// Initial value of the output.
        init: Expr,
        /// Connector of the neighbor values.
        input_conn: String,
        /// Connector of the output element.
        output_conn: String,
        /// Connector of the neighbor table row (skip value -1).
        mask_conn: String,
    },
    /// A node of `dace.libraries.mpi` (expanded to MPI calls, see
    /// `passes::expand::mpi`).
    Mpi {
        /// The node class.
        call: MpiCall,
        /// The reduction operator (`op`, e.g. `MPI_SUM`) of Reduce and Allreduce.
        op: Option<String>,
        /// The process grid whose communicator the call uses (`grid`).
        grid: Option<String>,
        /// A Fortran communicator handle (`fcomm`, Bcast).
        fcomm: Option<String>,
        /// State fields of a Dummy node (`fields`).
        fields: Vec<String>,
        /// The names of state fields a BlockScatter or BlockGather uses:
        /// `subarray_type`, `scatter_grid`/`gather_grid` and
        /// `bcast_grid`/`reduce_grid`, by attribute name.
        names: Vec<(String, String)>,
        /// The grids, subarrays and redistribution are DaCe 2.x data
        /// descriptors read through connectors (`_grid`, `_scatter_grid`,
        /// ...): a grid's communicator is the state field `<grid>`, not
        /// DaCe 1.0.2's `<grid>_comm`.
        descriptors: bool,
    },
}

/// The nodes of `dace.libraries.mpi` that sdfgc expands (the class name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiCall {
    Send,
    Recv,
    Isend,
    Irecv,
    Wait,
    Waitall,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Alltoall,
    Scatter,
    Gather,
    BlockScatter,
    BlockGather,
    Redistribute,
    Dummy,
}

impl MpiCall {
    /// The node class for a class name of `dace.libraries.mpi.nodes`.
    pub fn from_class(class: &str) -> Option<MpiCall> {
        Some(match class {
            "Send" => MpiCall::Send,
            "Recv" => MpiCall::Recv,
            "Isend" => MpiCall::Isend,
            "Irecv" => MpiCall::Irecv,
            "Wait" => MpiCall::Wait,
            "Waitall" => MpiCall::Waitall,
            "Bcast" => MpiCall::Bcast,
            "Reduce" => MpiCall::Reduce,
            "Allreduce" => MpiCall::Allreduce,
            "Allgather" => MpiCall::Allgather,
            "Alltoall" => MpiCall::Alltoall,
            "Scatter" => MpiCall::Scatter,
            "Gather" => MpiCall::Gather,
            "BlockScatter" => MpiCall::BlockScatter,
            "BlockGather" => MpiCall::BlockGather,
            "Redistribute" => MpiCall::Redistribute,
            "Dummy" => MpiCall::Dummy,
            _ => return None,
        })
    }
}

/// A library node.
#[derive(Clone, Debug)]
pub struct LibraryNode {
    /// The node's `name` attribute.
    pub name: String,
    /// Full `classpath` from the JSON.
    pub classpath: String,
    /// Kind-specific attributes.
    pub kind: LibraryKind,
    /// Input connectors.
    pub inputs: Vec<String>,
    /// Output connectors.
    pub outputs: Vec<String>,
    /// Schedule for the expansion.
    pub schedule: Schedule,
}

/// A write-conflict resolution lambda `lambda a, b: body`.
#[derive(Clone, Debug, PartialEq)]
pub struct Wcr {
    /// The lambda as written.
    pub text: String,
    /// Recognised reduction kind.
    pub kind: WcrKind,
    /// Parameter names.
    pub params: (String, String),
    /// The lambda body.
    pub body: Expr,
}

/// Recognised reductions (others are `Custom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WcrKind {
    Sum,
    Product,
    Min,
    Max,
    LogicalAnd,
    LogicalOr,
    BitAnd,
    BitOr,
    BitXor,
    /// Replace the old value (`lambda a, b: b`).
    Replace,
    /// Any other lambda.
    Custom,
}

/// A memlet edge between two nodes.
#[derive(Clone, Debug)]
pub struct DataEdge {
    /// Source node.
    pub src: NodeId,
    /// Source connector.
    pub src_conn: Option<String>,
    /// Destination node.
    pub dst: NodeId,
    /// Destination connector.
    pub dst_conn: Option<String>,
    /// What moves along the edge.
    pub memlet: Memlet,
    /// JSON pointer.
    pub path: String,
}

/// A memlet.
#[derive(Clone, Debug)]
pub struct Memlet {
    /// Container name (None for an empty memlet).
    pub data: Option<String>,
    /// Subset of `data`.
    pub subset: Option<Subset>,
    /// Subset of the other side of a copy.
    pub other_subset: Option<Subset>,
    /// Write-conflict resolution.
    pub wcr: Option<Wcr>,
    /// Dynamic (pointer) access.
    pub dynamic: bool,
    /// Number of accessed elements.
    pub volume: Expr,
    /// When given, whether `data` is the source side of a copy.
    pub is_data_src: Option<bool>,
}

impl Memlet {
    /// True for an empty memlet (ordering only).
    pub fn is_empty(&self) -> bool {
        self.data.is_none()
    }
}

impl State {
    /// Removes `dead` nodes and the edges that still touch them; renumbers the
    /// rest (scopes, map entry/exit links, edge ends).
    pub fn remove_nodes(&mut self, dead: &[NodeId]) {
        let n = self.nodes.len();
        let mut new_id = vec![None; n];
        let mut k = 0u32;
        for (i, slot) in new_id.iter_mut().enumerate() {
            if !dead.contains(&NodeId(i as u32)) {
                *slot = Some(NodeId(k));
                k += 1;
            }
        }
        let map = |id: NodeId| new_id[id.index()];
        self.edges
            .retain(|e| map(e.src).is_some() && map(e.dst).is_some());
        for e in &mut self.edges {
            e.src = map(e.src).expect("kept");
            e.dst = map(e.dst).expect("kept");
        }
        let old = std::mem::take(&mut self.nodes);
        for (i, mut node) in old.into_iter().enumerate() {
            if new_id[i].is_none() {
                continue;
            }
            node.scope = node.scope.and_then(map);
            match &mut node.kind {
                NodeKind::MapEntry(m) => m.exit = map(m.exit).unwrap_or(m.exit),
                NodeKind::MapExit { entry } => *entry = map(*entry).unwrap_or(*entry),
                _ => {}
            }
            self.nodes.push(node);
        }
    }

    /// The scope entries around node `id`, innermost first (a scope cycle,
    /// which validation refuses, ends the walk).
    pub fn enclosing_scopes(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut next = self.nodes[id.index()].scope;
        let mut left = self.nodes.len();
        std::iter::from_fn(move || {
            let s = next.filter(|_| left > 0)?;
            left -= 1;
            next = self.nodes[s.index()].scope;
            Some(s)
        })
    }

    /// The edge that feeds dynamic input `conn` of map entry `entry`.
    pub fn dynamic_input_edge(&self, entry: NodeId, conn: &str) -> Option<&DataEdge> {
        self.edges
            .iter()
            .find(|e| e.dst == entry && e.dst_conn.as_deref() == Some(conn))
    }

    /// True if node `id` lies (transitively) in the scope of `entry`.
    pub fn is_below(&self, id: NodeId, entry: NodeId) -> bool {
        self.enclosing_scopes(id).any(|s| s == entry)
    }

    /// A topological order of the nodes (Kahn's algorithm, ties broken by
    /// node index so the order is deterministic and close to the JSON's);
    /// None if the dataflow has a cycle.
    pub fn topological_order(&self) -> Option<Vec<NodeId>> {
        let n = self.nodes.len();
        let mut indeg = vec![0usize; n];
        let mut succ = vec![Vec::new(); n];
        for e in &self.edges {
            indeg[e.dst.index()] += 1;
            succ[e.src.index()].push(e.dst.index());
        }
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
            .filter(|&i| indeg[i] == 0)
            .map(std::cmp::Reverse)
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse(i)) = ready.pop() {
            order.push(NodeId(i as u32));
            for &s in &succ[i] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    ready.push(std::cmp::Reverse(s));
                }
            }
        }
        (order.len() == n).then_some(order)
    }
}

impl Sdfg {
    /// Calls `f` on this SDFG and every SDFG nested in it, depth first.
    pub fn for_each_sdfg<'a>(&'a self, f: &mut dyn FnMut(&'a Sdfg)) {
        fn region<'a>(r: &'a Region, f: &mut dyn FnMut(&'a Sdfg)) {
            for b in &r.blocks {
                match &b.kind {
                    BlockKind::State(st) => {
                        for n in &st.nodes {
                            if let NodeKind::Nested(ns) = &n.kind {
                                ns.sdfg.for_each_sdfg(f);
                            }
                        }
                    }
                    BlockKind::Region(inner) => region(inner, f),
                    BlockKind::Conditional(brs) => brs.iter().for_each(|(_, r)| region(r, f)),
                    BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
                }
            }
        }
        f(self);
        region(&self.body, f);
    }
}

impl Sdfg {
    /// The names a symbolic expression may refer to inside this SDFG: the
    /// symbols `mapped` into it (a nested SDFG's symbol mapping keys), its
    /// symbols, containers and constants, interstate assignment targets and
    /// loop variables (borrowed from the IR).
    pub fn defined_names<'a>(
        &'a self,
        mapped: impl Iterator<Item = &'a str>,
    ) -> rustc_hash::FxHashSet<&'a str> {
        let mut names = rustc_hash::FxHashSet::with_capacity_and_hasher(
            self.symbols.len() + self.arrays.len() + self.constants.len(),
            Default::default(),
        );
        names.extend(mapped);
        names.extend(self.symbols.keys().map(String::as_str));
        names.extend(self.arrays.keys().map(String::as_str));
        names.extend(self.constants.keys().map(String::as_str));
        control_flow_names(&self.body, &mut names);
        names
    }
}

/// Adds the names control flow defines: interstate assignment targets and
/// loop variables.
fn control_flow_names<'a>(r: &'a Region, names: &mut rustc_hash::FxHashSet<&'a str>) {
    if let RegionKind::Loop(l) = &r.kind {
        if let Some(v) = &l.variable {
            names.insert(v);
        }
        for s in l.init.iter().chain(&l.update) {
            if let Stmt::Assign {
                target: Target::Name(n),
                ..
            } = s
            {
                names.insert(n);
            }
        }
    }
    for e in &r.edges {
        for (k, _) in &e.assignments {
            names.insert(k);
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::Region(inner) => control_flow_names(inner, names),
            BlockKind::Conditional(brs) => brs
                .iter()
                .for_each(|(_, body)| control_flow_names(body, names)),
            _ => {}
        }
    }
}

/// Calls `f` on every node of every state of the region (not inside nested SDFGs).
pub fn each_node<'a>(r: &'a Region, f: &mut dyn FnMut(&'a Node)) {
    each_state(r, &mut |st| st.nodes.iter().for_each(&mut *f));
}

/// Whether a subset is one element in every dimension (`i:i`, or an end
/// that simplifies to its start).
pub fn single_element(sub: &[RangeDim]) -> bool {
    // `i:i` as written (the common case) needs no simplification.
    sub.iter().all(|r| {
        r.end == r.start
            || crate::ir::simplify::simplify(&Expr::bin(
                BinaryOp::Sub,
                r.end.clone(),
                r.start.clone(),
            )) == Expr::Int(0)
    })
}

/// The names the maps of the region's states define for their scopes
/// (parameters and dynamic inputs; not inside nested SDFGs).
pub fn map_scope_names(r: &Region) -> Vec<&str> {
    let mut out = Vec::new();
    each_state(r, &mut |st| {
        for n in &st.nodes {
            if let NodeKind::MapEntry(m) = &n.kind {
                out.extend(m.scope_names().map(String::as_str));
            }
        }
    });
    out
}

/// Calls `f` on every state of the region (not inside nested SDFGs).
pub fn each_state<'a>(r: &'a Region, f: &mut dyn FnMut(&'a State)) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => f(st),
            BlockKind::Region(inner) => each_state(inner, f),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| each_state(body, f)),
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

/// Calls `f` on every state of the region, mutably (not inside nested SDFGs).
pub fn each_state_mut(r: &mut Region, f: &mut dyn FnMut(&mut State)) {
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::State(st) => f(st),
            BlockKind::Region(inner) => each_state_mut(inner, f),
            BlockKind::Conditional(brs) => {
                brs.iter_mut().for_each(|(_, body)| each_state_mut(body, f))
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}
