//! Constant arrays (`constants_prop`) in device code. On GPU targets the host
//! keeps its `static const` copy; device code reads either the state's device
//! copy (made once in `__dace_init_*`, passed to kernels and device functions
//! as a pointer parameter of the constant's name) or, with
//! `--constant-memory`, a `__constant__` array of its own name.

use std::collections::BTreeSet;

use crate::back::body::function::FnWriter;
use crate::ir::*;

/// The state member holding the device copy of constant array `name`.
pub fn device_member(name: &str) -> String {
    format!("__sdfgc_const_{name}")
}

/// The `__constant__` array holding constant array `name` (`--constant-memory`).
pub fn constant_symbol(name: &str) -> String {
    format!("__sdfgc_cmem_{name}")
}

/// True if `name` is a constant array of `sdfg` (not shadowed by a data container).
pub(crate) fn is_constant_array(sdfg: &Sdfg, name: &str) -> bool {
    !sdfg.arrays.contains_key(name)
        && sdfg
            .constants
            .get(name)
            .is_some_and(|c| !c.shape.is_empty())
}

/// Constant arrays that the tasklets among `nodes` read, and those that
/// nested SDFGs among them read anywhere inside, as (name, C element type).
pub(crate) fn used_by_nodes(
    sdfg: &Sdfg,
    st: &State,
    nodes: &[NodeId],
) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for &id in nodes {
        node(sdfg, &st.nodes[id.index()].kind, &mut out);
    }
    out
}

/// Constant arrays read anywhere in `sdfg` (nested SDFGs included).
pub(crate) fn used_by_sdfg(sdfg: &Sdfg) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    region(sdfg, &sdfg.body, &mut out);
    out
}

fn region(sdfg: &Sdfg, r: &Region, out: &mut BTreeSet<(String, String)>) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => st.nodes.iter().for_each(|n| node(sdfg, &n.kind, out)),
            BlockKind::Region(inner) => region(sdfg, inner, out),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, body)| region(sdfg, body, out)),
            _ => {}
        }
    }
}

fn node(sdfg: &Sdfg, kind: &NodeKind, out: &mut BTreeSet<(String, String)>) {
    match kind {
        NodeKind::Tasklet(t) => {
            let mut add = |n: &str| {
                if is_constant_array(sdfg, n) {
                    out.insert((n.to_string(), sdfg.constants[n].dtype.ctype().to_string()));
                }
            };
            for s in all_stmts(&t.stmts) {
                for e in s.own_exprs() {
                    e.visit_names(&mut |n| add(n));
                }
            }
        }
        NodeKind::Nested(ns) => out.extend(used_by_sdfg(&ns.sdfg)),
        _ => {}
    }
}

/// Flat C-order index of `idx` (printed indices) into a constant of `shape`.
pub(crate) fn linear_index(shape: &[usize], idx: &[String]) -> Option<String> {
    if idx.len() != shape.len() {
        return None;
    }
    if let [i] = idx {
        return Some(i.clone());
    }
    let terms: Vec<String> = idx
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let stride: usize = shape[k + 1..].iter().product();
            if stride == 1 {
                format!("({i})")
            } else {
                format!("({i}) * {stride}")
            }
        })
        .collect();
    Some(terms.join(" + "))
}

impl FnWriter<'_> {
    /// True if device code reads constant arrays from `__constant__` memory.
    pub(crate) fn constants_in_constant_memory(&self) -> bool {
        self.gpu.is_some() && self.p.options.constant_memory
    }

    /// `data[index]` for a constant array, or None if `data` is none.
    pub(crate) fn constant_element(&self, data: &str, idx: &[String]) -> Option<String> {
        if !is_constant_array(self.sdfg, data) {
            return None;
        }
        let c = &self.sdfg.constants[data];
        let name = if self.in_kernel && self.constants_in_constant_memory() {
            constant_symbol(data)
        } else {
            data.to_string()
        };
        let index = linear_index(&c.shape, idx).unwrap_or_else(|| idx.join("]["));
        Some(format!("{name}[{index}]"))
    }

    /// Parameters and arguments that pass the device copies of the constant
    /// arrays in `used` to a kernel (from host code) or a device function
    /// (from device code). None with `--constant-memory`.
    pub(crate) fn constant_params(
        &self,
        used: &BTreeSet<(String, String)>,
    ) -> (Vec<String>, Vec<String>) {
        if self.gpu.is_none() || self.constants_in_constant_memory() {
            return (Vec::new(), Vec::new());
        }
        used.iter()
            .map(|(n, ct)| {
                let arg = if self.in_kernel {
                    n.clone()
                } else {
                    format!("__state->{}", device_member(n))
                };
                (format!("const {ct} * __restrict__ {n}"), arg)
            })
            .unzip()
    }
}
