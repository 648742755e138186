//! DaCe's `callback` data type: a function pointer into Python that the
//! program receives as a parameter (DaCe's `CompiledSDFG` passes a ctypes
//! trampoline), called by the tasklets DaCe's frontend writes for calls it
//! cannot parse (`print`, `time.time`, NumPy functions, any Python function).
//!
//! The C type is DaCe 1.0.2's (`dtypes.callback.as_arg`, unchanged in
//! 2.0): array arguments are `T const *`, scalar arguments are passed by
//! value; a function with no return value or one scalar return value
//! returns it, any other returns through pointer arguments after the inputs
//! (`T const *` for arrays, `T *` for scalars).

use crate::ir::dtype::DType;

/// One argument or return value of a callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbValue {
    /// An array (DaCe's `data.Array` and its views): its first element's address.
    Array(DType),
    /// A scalar (DaCe's `data.Scalar` or a bare typeclass).
    Scalar(DType),
}

impl CbValue {
    /// The element type.
    pub fn dtype(self) -> DType {
        match self {
            CbValue::Array(t) | CbValue::Scalar(t) => t,
        }
    }
}

/// A callback's type (DaCe's `dtypes.callback`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Callback {
    /// Arguments in order.
    pub inputs: Vec<CbValue>,
    /// Return values in order.
    pub returns: Vec<CbValue>,
}

impl Callback {
    /// DaCe's `is_scalar_function`: nothing or one scalar returned (as the
    /// C function's return value).
    pub fn scalar_function(&self) -> bool {
        matches!(self.returns.as_slice(), [] | [CbValue::Scalar(_)])
    }

    /// The C function's return type.
    pub fn return_ctype(&self, ctype: fn(DType) -> &'static str) -> &'static str {
        match self.returns.as_slice() {
            [CbValue::Scalar(t)] => ctype(*t),
            _ => "void",
        }
    }

    /// The C parameters: the inputs, then (unless a scalar function) the
    /// returns as pointers; `ctype` spells an element type.
    pub fn param_ctypes(&self, ctype: fn(DType) -> &'static str) -> Vec<String> {
        let mut out: Vec<String> = self
            .inputs
            .iter()
            .map(|v| match v {
                CbValue::Array(t) => format!("{} const *", ctype(*t)),
                CbValue::Scalar(t) => ctype(*t).to_string(),
            })
            .collect();
        if !self.scalar_function() {
            out.extend(self.returns.iter().map(|v| match v {
                CbValue::Array(t) => format!("{} const *", ctype(*t)),
                CbValue::Scalar(t) => format!("{}*", ctype(*t)),
            }));
        }
        out
    }

    /// The values a call passes, in order: the inputs, then (unless a
    /// scalar function) the returns, which the callee writes.
    pub fn call_params(&self) -> Vec<(CbValue, bool)> {
        let mut out: Vec<(CbValue, bool)> = self.inputs.iter().map(|v| (*v, false)).collect();
        if !self.scalar_function() {
            out.extend(self.returns.iter().map(|v| (*v, true)));
        }
        out
    }

    /// The declaration of a parameter or variable `name` of this type, as
    /// DaCe writes it: `double (*name)(double const *, int)`.
    pub fn decl(&self, name: &str, ctype: fn(DType) -> &'static str) -> String {
        format!(
            "{} (*{name})({})",
            self.return_ctype(ctype),
            self.param_ctypes(ctype).join(", ")
        )
    }

    /// The C type alone: `double (*)(double const *, int)`.
    pub fn ctype(&self, ctype: fn(DType) -> &'static str) -> String {
        self.decl("", ctype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_daces() {
        let ct = DType::ctype;
        let gemm = Callback {
            inputs: vec![
                CbValue::Array(DType::Float64),
                CbValue::Array(DType::Float64),
            ],
            returns: vec![CbValue::Array(DType::Float64)],
        };
        assert_eq!(
            gemm.decl("almost_gemm", ct),
            "void (*almost_gemm)(double const *, double const *, double const *)"
        );
        let scale = Callback {
            inputs: vec![
                CbValue::Array(DType::Float64),
                CbValue::Scalar(DType::Float64),
            ],
            returns: vec![],
        };
        assert_eq!(
            scale.decl("scale", ct),
            "void (*scale)(double const *, double)"
        );
        let time = Callback {
            inputs: vec![],
            returns: vec![CbValue::Scalar(DType::Float64)],
        };
        assert_eq!(time.decl("time_time", ct), "double (*time_time)()");
        assert_eq!(time.ctype(ct), "double (*)()");
        let two = Callback {
            inputs: vec![CbValue::Array(DType::Int32)],
            returns: vec![
                CbValue::Array(DType::Float64),
                CbValue::Scalar(DType::Float64),
            ],
        };
        assert_eq!(
            two.decl("f", ct),
            "void (*f)(int const *, double const *, double*)"
        );
        assert!(!two.scalar_function());
    }
}
