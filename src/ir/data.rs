//! Data containers: arrays, scalars, views and streams, with storage and lifetime.

use crate::ir::dtype::DType;
use crate::ir::expr::Expr;

/// What kind of container a descriptor describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// A (possibly multi-dimensional) array.
    Array,
    /// A single value.
    Scalar,
    /// A view into another container (`View` / `ArrayView`).
    View,
    /// DaCe's `Stream`: a FIFO queue of elements that tasklets push to and
    /// pop from (`shape` is 1; DaCe's `buffer_size` is a capacity hint only).
    Stream,
    /// DaCe's `ArrayReference`: a pointer with the shape and strides of an
    /// array, pointed at (a part of) another container by an edge into the
    /// `set` connector of one of its access nodes, and re-pointed by later
    /// sets; reads and writes through it reach the container it points at.
    Reference,
}

/// Where a container lives (DaCe's `StorageType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Storage {
    Default,
    Register,
    CpuHeap,
    CpuPinned,
    CpuThreadLocal,
    GpuGlobal,
    GpuShared,
}

impl Storage {
    /// Parses DaCe's enum member name.
    pub fn from_dace_name(s: &str) -> Option<Storage> {
        Some(match s {
            "Default" => Storage::Default,
            "Register" => Storage::Register,
            "CPU_Heap" => Storage::CpuHeap,
            "CPU_Pinned" => Storage::CpuPinned,
            "CPU_ThreadLocal" => Storage::CpuThreadLocal,
            "GPU_Global" => Storage::GpuGlobal,
            "GPU_Shared" => Storage::GpuShared,
            _ => return None,
        })
    }

    /// DaCe's enum member name (used in exported function names).
    pub fn dace_name(self) -> &'static str {
        match self {
            Storage::Default => "Default",
            Storage::Register => "Register",
            Storage::CpuHeap => "CPU_Heap",
            Storage::CpuPinned => "CPU_Pinned",
            Storage::CpuThreadLocal => "CPU_ThreadLocal",
            Storage::GpuGlobal => "GPU_Global",
            Storage::GpuShared => "GPU_Shared",
        }
    }

    /// True for storages that live in GPU memory.
    pub fn is_gpu(self) -> bool {
        matches!(self, Storage::GpuGlobal | Storage::GpuShared)
    }
}

/// How long a transient lives (DaCe's `AllocationLifetime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lifetime {
    Scope,
    State,
    Sdfg,
    Global,
    Persistent,
    External,
}

impl Lifetime {
    /// Parses DaCe's enum member name.
    pub fn from_dace_name(s: &str) -> Option<Lifetime> {
        Some(match s {
            "Scope" => Lifetime::Scope,
            "State" => Lifetime::State,
            "SDFG" => Lifetime::Sdfg,
            "Global" => Lifetime::Global,
            "Persistent" => Lifetime::Persistent,
            "External" => Lifetime::External,
            _ => return None,
        })
    }

    /// DaCe's enum member name.
    pub fn dace_name(self) -> &'static str {
        match self {
            Lifetime::Scope => "Scope",
            Lifetime::State => "State",
            Lifetime::Sdfg => "SDFG",
            Lifetime::Global => "Global",
            Lifetime::Persistent => "Persistent",
            Lifetime::External => "External",
        }
    }
}

/// A data descriptor (`_arrays` entry).
#[derive(Clone, Debug, PartialEq)]
pub struct DataDesc {
    /// Array, scalar or view.
    pub kind: DataKind,
    /// Element type.
    pub dtype: DType,
    /// Extent per dimension.
    pub shape: Vec<Expr>,
    /// Stride per dimension, in elements.
    pub strides: Vec<Expr>,
    /// Number of elements to allocate.
    pub total_size: Expr,
    /// Per-dimension index offset.
    pub offset: Vec<Expr>,
    /// Element offset of index 0 inside the allocation.
    pub start_offset: Expr,
    /// Intermediate data owned by the program (not an argument).
    pub transient: bool,
    /// Where it lives.
    pub storage: Storage,
    /// How long it lives.
    pub lifetime: Lifetime,
    /// Allocated with the stream-ordered pool allocator (GPU).
    pub pool: bool,
    /// Pointer may alias other arguments (no `__restrict__`).
    pub may_alias: bool,
    /// JSON pointer of the descriptor.
    pub path: String,
    /// A member of a DaCe `Structure` argument (`A.indptr`, renamed to a C
    /// identifier at load): not a parameter; bound at the top of the
    /// function from its structure's pointer (`A->indptr`).
    pub member: Option<Member>,
}

/// Where a member of a structure lives: the field of its parent structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The container of the parent structure (an argument, or a member itself).
    pub parent: String,
    /// The C field name.
    pub field: String,
}

/// A C struct type of DaCe `Structure` containers, as DaCe declares it
/// (`dtypes.struct.emit_definition`): arrays and nested structures are
/// pointers, scalars values, in the members' order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructType {
    /// The C type name (the Structure's `name`).
    pub name: String,
    /// Fields in order: name and C type (`int*`, `float`, `CSRMatrix*`).
    pub fields: Vec<(String, String)>,
    /// The struct types its fields point to.
    pub uses: Vec<String>,
}

impl DataDesc {
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// A compile-time constant (`constants_prop`).
#[derive(Clone, Debug, PartialEq)]
pub struct Constant {
    /// Element type.
    pub dtype: DType,
    /// Shape (empty for a scalar).
    pub shape: Vec<usize>,
    /// The values, flattened in C order (the real parts of complex values).
    pub values: Vec<ConstValue>,
    /// The imaginary parts of complex values (empty for real types).
    pub imag: Vec<f64>,
}

/// One value of a constant, exactly as stored (an `int64` beyond 2^53 stays exact).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    /// `true` / `false` (also the strings `"True"` / `"False"` DaCe writes for numpy bools).
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A floating-point number (`inf`, `nan` included).
    Float(f64),
}

impl ConstValue {
    /// The value as a float (booleans are 0 and 1).
    pub fn as_f64(self) -> f64 {
        match self {
            ConstValue::Bool(b) => f64::from(u8::from(b)),
            ConstValue::Int(i) => i as f64,
            ConstValue::Float(f) => f,
        }
    }

    /// The value as an integer (floats truncated toward zero), if it has one.
    pub fn as_int(self) -> Option<i128> {
        match self {
            ConstValue::Bool(b) => Some(i128::from(b)),
            ConstValue::Int(i) => Some(i),
            ConstValue::Float(f) if f.is_finite() => Some(f.trunc() as i128),
            ConstValue::Float(_) => None,
        }
    }

    /// True unless zero or false.
    pub fn truthy(self) -> bool {
        match self {
            ConstValue::Bool(b) => b,
            ConstValue::Int(i) => i != 0,
            ConstValue::Float(f) => f != 0.0,
        }
    }
}
