//! A parser for the Python subset that DaCe writes: symbolic expressions
//! (sympy syntax, `$`-prefixed symbols in DaCe 2.x) and tasklet code.

mod lexer;
mod parser;

pub use parser::{
    MAX_BLOCKS, MAX_DEPTH, MAX_NESTING, MathRuntime, PyError, parse_code, parse_expr,
    parse_tasklet, parse_tasklet_calling, parse_wcr_body,
};
