//! Element types of data containers, symbols and connectors.

use std::fmt;

use crate::ir::record::Record;

/// A scalar element type as DaCe names it (`float64`, `int32`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    Complex64,
    Complex128,
    /// DaCe's `dace.string` (`{"type": "string"}`): a C string, `char *`.
    Str,
    /// DaCe's `dace.pyobject` (`{"type": "opaque", "ctype": "pyobject"}`):
    /// a Python object the program only passes between callbacks, `void *`.
    PyObject,
    /// MPI's `MPI_Request` (`{"type": "opaque", "ctype": "MPI_Request"}`):
    /// the handles of DaCe's nonblocking MPI nodes. Its size is MPI's; 8
    /// bytes are reserved per element (the file asserts it is no more).
    MpiRequest,
    /// A pointer-sized handle to a DaCe `Structure` (`{"type": "pointer",
    /// "dtype": {"type": "struct", ...}}`): the element type of a structure
    /// container, whose C type is the struct's name
    /// ([`crate::ir::StructType`] defines its fields).
    Struct(StructName),
    /// The element of a DaCe `ContainerArray` (`{"type": "pointer", ...}`
    /// with a `stype`): a pointer to another container, named by its full C
    /// type (`double*`, `CSRMatrix*`, `double**`), as DaCe's
    /// `dtypes.pointer(...).ctype` writes it.
    Pointer(StructName),
    /// A C struct held by value (`{"type": "struct", "data": [...]}` as an
    /// array's or scalar's element type: `dace.struct('pair', idx=int32,
    /// val=float64)`): its fields are scalars, its layout is C's.
    Record(Record),
}

/// The name of a C struct type, interned: [`DType`] stays `Copy`. Each
/// distinct name is stored once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructName(&'static str);

impl StructName {
    /// Interns a struct type name (a C identifier).
    pub fn new(name: &str) -> StructName {
        use std::collections::BTreeSet;
        use std::sync::Mutex;
        static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = names.get(name) {
            return StructName(n);
        }
        let n: &'static str = Box::leak(name.to_string().into_boxed_str());
        names.insert(n);
        StructName(n)
    }

    /// The C type name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl DType {
    /// Parses DaCe's dtype name (`"float64"`, also `"bool_"`).
    pub fn from_dace_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" | "bool_" => DType::Bool,
            "int8" => DType::Int8,
            "int16" => DType::Int16,
            "int32" => DType::Int32,
            "int64" => DType::Int64,
            "uint8" => DType::UInt8,
            "uint16" => DType::UInt16,
            "uint32" => DType::UInt32,
            "uint64" => DType::UInt64,
            "float16" => DType::Float16,
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            _ => return None,
        })
    }

    /// DaCe's name of the type.
    pub fn dace_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float16 => "float16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
            DType::Str => "string",
            DType::PyObject => "pyobject",
            DType::MpiRequest => "MPI_Request",
            DType::Struct(n) | DType::Pointer(n) => n.as_str(),
            DType::Record(r) => r.name(),
        }
    }

    /// The C type DaCe uses in its ABI (`typeclass.ctype`); `int8` is plain `char`;
    /// complex types are DaCe's `dace::complex64` / `dace::complex128`, which the
    /// generated file defines (`std::complex` on CPUs, `thrust::complex` on GPUs).
    pub fn ctype(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "char",
            DType::Int16 => "short",
            DType::Int32 => "int",
            DType::Int64 => "int64_t",
            DType::UInt8 => "uint8_t",
            DType::UInt16 => "uint16_t",
            DType::UInt32 => "unsigned int",
            DType::UInt64 => "uint64_t",
            DType::Float16 => "dace::float16",
            DType::Float32 => "float",
            DType::Float64 => "double",
            DType::Complex64 => "dace::complex64",
            DType::Complex128 => "dace::complex128",
            DType::Str => "sdfgc_string",
            DType::PyObject => "pyobject",
            DType::MpiRequest => "MPI_Request",
            DType::Struct(n) | DType::Pointer(n) => n.as_str(),
            DType::Record(r) => r.name(),
        }
    }

    /// The type in the C header: DaCe's C++ type, except complex types, which
    /// are the header's `sdfgc_complex64` / `sdfgc_complex128` (C99 `_Complex`
    /// in C, `std::complex` in C++; the same layout as DaCe's types).
    pub fn header_ctype(self) -> &'static str {
        match self {
            DType::Complex64 => "sdfgc_complex64",
            DType::Complex128 => "sdfgc_complex128",
            DType::Float16 => "uint16_t",
            DType::Str => "char *",
            DType::PyObject => "void *",
            DType::MpiRequest => "MPI_Request",
            t => t.ctype(),
        }
    }

    /// The type of a complex number's real and imaginary parts (the type
    /// itself for real types).
    pub fn real_part(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            t => t,
        }
    }

    /// Size of one element in bytes.
    pub fn size(self) -> u64 {
        match self {
            DType::Bool | DType::Int8 | DType::UInt8 => 1,
            DType::Int16 | DType::UInt16 | DType::Float16 => 2,
            DType::Int32 | DType::UInt32 | DType::Float32 => 4,
            DType::Int64
            | DType::UInt64
            | DType::Float64
            | DType::Complex64
            | DType::Str
            | DType::PyObject
            | DType::MpiRequest
            | DType::Struct(_)
            | DType::Pointer(_) => 8,
            DType::Complex128 => 16,
            DType::Record(r) => r.size(),
        }
    }

    /// C's alignment of one element (a complex number's is its parts').
    pub fn align(self) -> u64 {
        match self {
            DType::Record(r) => r.align(),
            t if t.is_complex() => t.real_part().size(),
            t => t.size(),
        }
    }

    /// The smallest and largest value of an integer type (None otherwise).
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::Int8 => (i8::MIN.into(), i8::MAX.into()),
            DType::Int16 => (i16::MIN.into(), i16::MAX.into()),
            DType::Int32 => (i32::MIN.into(), i32::MAX.into()),
            DType::Int64 => (i64::MIN.into(), i64::MAX.into()),
            DType::UInt8 => (0, u8::MAX.into()),
            DType::UInt16 => (0, u16::MAX.into()),
            DType::UInt32 => (0, u32::MAX.into()),
            DType::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// True for the integer types (bool excluded).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::Int8
                | DType::Int16
                | DType::Int32
                | DType::Int64
                | DType::UInt8
                | DType::UInt16
                | DType::UInt32
                | DType::UInt64
        )
    }

    /// True for the floating-point and complex types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::Float16 | DType::Float32 | DType::Float64 | DType::Complex64 | DType::Complex128
        )
    }

    /// True for the types no arithmetic applies to: strings, Python objects,
    /// MPI requests, structures, pointers and records.
    pub fn is_opaque(self) -> bool {
        matches!(
            self,
            DType::Str
                | DType::PyObject
                | DType::MpiRequest
                | DType::Struct(_)
                | DType::Pointer(_)
                | DType::Record(_)
        )
    }

    /// True for the complex types.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// Rank for C-like arithmetic promotion: the larger wins.
    pub fn promotion_rank(self) -> u8 {
        match self {
            DType::Bool => 0,
            DType::Int8 => 1,
            DType::UInt8 => 2,
            DType::Int16 => 3,
            DType::UInt16 => 4,
            DType::Int32 => 5,
            DType::UInt32 => 6,
            DType::Int64 => 7,
            DType::UInt64 => 8,
            DType::Float16 => 9,
            DType::Float32 => 10,
            DType::Float64 => 11,
            DType::Complex64 => 12,
            DType::Complex128 => 13,
            DType::Str
            | DType::PyObject
            | DType::MpiRequest
            | DType::Struct(_)
            | DType::Pointer(_)
            | DType::Record(_) => 14,
        }
    }

    /// The type of `a op b` for arithmetic operators (C/numpy-like promotion; ints become at least int32 as in C).
    /// With a complex operand the result is complex: `complex128` if either
    /// side is `complex128` or `float64` (numpy), else `complex64`.
    pub fn promote(a: DType, b: DType) -> DType {
        if a.is_complex() || b.is_complex() {
            let wide = [a, b]
                .iter()
                .any(|t| matches!(t, DType::Complex128 | DType::Float64));
            return if wide {
                DType::Complex128
            } else {
                DType::Complex64
            };
        }
        let t = if a.promotion_rank() >= b.promotion_rank() {
            a
        } else {
            b
        };
        if t.promotion_rank() < DType::Int32.promotion_rank() {
            DType::Int32
        } else {
            t
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dace_name())
    }
}
