//! DaCe's JSON → IR. The graph structure is walked by hand so that every
//! error carries an exact JSON pointer; the attribute bags of each element
//! are serde DTOs whose `Default`s are DaCe's defaults (DaCe omits every
//! property that equals its default).

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};

use indexmap::IndexMap;
use serde::Deserialize;

use crate::diag::{Error, ErrorKind, Result};
use crate::front::python::{self, PyError};
use crate::front::tree::Json;
use crate::front::tree_de::{AnyMap, AnySeq};
use crate::ir::*;

mod control;
mod distributed;
mod dto;
mod fields;
mod ids;
mod memlet;
mod nodes;
mod sdfg;
mod structure;
#[cfg(test)]
mod tests;
mod values;
mod vector;
mod wcr;

use dto::*;
use fields::*;
use ids::*;
use memlet::*;
pub use values::parse_complex;
use values::*;
pub use wcr::parse_wcr;

/// Deepest nesting of SDFGs and regions sdfgc accepts (guards the stack).
pub const MAX_NESTING: usize = 64;

/// Parses one SDFG JSON document.
pub fn load_str(text: &str) -> Result<Sdfg> {
    load_str_with(text, true)
}

/// [`load_str`], with or without reading long lists on two threads.
fn load_str_with(text: &str, parallel: bool) -> Result<Sdfg> {
    let text = super::nonfinite::quote_nonfinite(text);
    let mut value = Json::parse(&text).map_err(syntax_error)?;
    if !value.is_object() {
        return Err(Error::format(
            "",
            format!(
                "the document must be an SDFG (a JSON object), found {}",
                kind_of(&value)
            ),
        ));
    }
    EXPRS.with(|c| c.borrow_mut().clear());
    let sdfg = Reader {
        depth: 0,
        next_id: 0,
        discard: DISCARD.load(Ordering::Relaxed),
        parallel,
        callbacks: Vec::new(),
        dace2_math: true,
    }
    .sdfg(&mut value, "");
    EXPRS.with(|c| *c.borrow_mut() = HashMap::default());
    let mut sdfg = sdfg?;
    crate::ir::symtypes::infer_tree(&mut sdfg);
    crate::front::scope_subsets::repair(&mut sdfg);
    Ok(sdfg)
}

thread_local! {
    /// The symbolic expressions parsed so far in the document being read:
    /// SDFGs repeat a few (`i`, `N`, `0`, `N - 1`) in every memlet and
    /// array, and a clone is cheaper than a parse. Emptied after each document.
    static EXPRS: RefCell<HashMap<String, Expr>> = RefCell::new(HashMap::default());
}

/// A located JSON syntax error; serde_json's nesting limit (128 levels) is
/// reported as such, since it is what deeply nested SDFGs run into first.
fn syntax_error(e: serde_json::Error) -> Error {
    let location = format!("line {}, column {}", e.line(), e.column());
    let message = if e.to_string().starts_with("recursion limit exceeded") {
        format!("JSON nested too deeply (more than 128 levels of lists and objects): {e}")
    } else {
        e.to_string()
    };
    Error::new(ErrorKind::Syntax, location, message)
}

/// Set by [`discard_read_subtrees`].
static DISCARD: AtomicBool = AtomicBool::new(false);

/// Makes [`load_str`] free each block, node and edge of the JSON tree as
/// soon as its IR is built, so that the IR reuses the tree's memory and the
/// peak is lower. Worth it with an allocator that reuses freed blocks of
/// other sizes cheaply (the `sdfgc` command uses mimalloc); with glibc's
/// malloc the reuse costs more CPU time than the fresh pages it saves (a
/// 100,000-node chain: 17% less peak memory, about 20% more CPU), so
/// the library default keeps the whole tree until the document is read.
pub fn discard_read_subtrees() {
    DISCARD.store(true, Ordering::Relaxed);
}

struct Reader {
    depth: usize,
    next_id: u32,
    /// Whether to free each element of the tree once read ([`discard_read_subtrees`]).
    discard: bool,
    /// Whether long lists may be read on two threads ([`Reader::read_list`]).
    parallel: bool,
    /// The callback symbols of the SDFG being read (its tasklets call them).
    callbacks: Vec<String>,
    /// The SDFG being read was saved by DaCe 2 (or names no version): its
    /// tasklets' `math.f` is DaCe 2's runtime (see `python::MathRuntime`).
    dace2_math: bool,
}

/// Lists at least this long are read by two threads, when reading their
/// elements cannot create SDFGs (which are numbered in document order).
const PARALLEL_ELEMENTS: usize = 8192;

/// Reads one element of a list: (reader, index in the list, element).
type ReadElement<'f, T> =
    dyn for<'x> Fn(&mut Reader, usize, &mut Json<'x>) -> Result<T> + Sync + 'f;

impl Reader {
    /// `read` applied to every element of `items`, in order; the first
    /// error in list order is returned, as reading one by one would. With
    /// `parallel`, a long list is read in two halves on two threads, each
    /// with its own reader: the result is the same, element by element.
    fn read_list<T: Send>(
        &mut self,
        items: &mut [Json<'_>],
        parallel: bool,
        read: &ReadElement<'_, T>,
    ) -> Result<Vec<T>> {
        let in_order = |r: &mut Reader, from: usize, items: &mut [Json<'_>]| -> Result<Vec<T>> {
            let mut out = Vec::with_capacity(items.len());
            for (k, x) in items.iter_mut().enumerate() {
                out.push(read(r, from + k, x)?);
                r.done(x);
            }
            Ok(out)
        };
        let two = parallel
            && self.parallel
            && items.len() >= PARALLEL_ELEMENTS
            && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        if !two {
            return in_order(self, 0, items);
        }
        let mid = items.len() / 2;
        let (first, second) = items.split_at_mut(mid);
        let mut other = Reader {
            depth: self.depth,
            next_id: self.next_id,
            discard: self.discard,
            parallel: self.parallel,
            callbacks: self.callbacks.clone(),
            dace2_math: self.dace2_math,
        };
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| in_order(&mut other, mid, second));
            let a = in_order(self, 0, first);
            (a, h.join())
        });
        let mut out = a?;
        out.extend(b.unwrap_or_else(|e| std::panic::resume_unwind(e))?);
        Ok(out)
    }

    /// Frees an element of the tree that has been read, if so configured.
    fn done(&self, v: &mut Json) {
        if self.discard {
            v.discard();
        }
    }
}
