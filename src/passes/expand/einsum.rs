//! `Einsum` (`dace.libraries.blas.nodes.einsum`): one contraction, a
//! parallel map over the output's indices and a sequential sum over the
//! others, `out = alpha * sum(prod(inputs)) + beta * out`.
//!
//! DaCe's `SpecializeEinsum` lowers the node to a Reduce, a BLAS MatMul
//! (batched or not) or a map with a summing write, by the shape of the
//! string; all compute the sum above, except where DaCe drops `alpha` or
//! `beta` (its batched MatMul and dot products ignore both, its map without
//! summed indices overwrites `beta * out`): those are refused by name, so
//! that sdfgc never gives such a node another meaning than DaCe's.
//! Operands are the inputs in the order of their sorted connector names
//! (DaCe's expansion sorts them), each seen through its memlet's non-unit
//! dimensions.

use crate::diag::Result;
use crate::ir::*;

use super::build::{Builder, Contraction, Fold, Read, beta_wcr, is_one, is_zero, scaled, sum_wcr};

/// A class of indices (batch, summed, own) as a test on a letter.
type Group<'a> = dyn Fn(&char) -> bool + 'a;

/// A parsed einsum string: the index letters of each input and of the output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Spec {
    /// Letters of each input term.
    pub inputs: Vec<Vec<char>>,
    /// Letters of the output term.
    pub output: Vec<char>,
}

impl Spec {
    /// Parses `spec` as DaCe's `EinsumParser` does: letters and commas, one
    /// optional `->`; without it, the output is the sorted letters that no
    /// later input repeats (DaCe's rule).
    pub fn parse(spec: &str) -> std::result::Result<Spec, String> {
        let (ins, out) = match spec.split_once("->") {
            Some((i, o)) => (i, Some(o)),
            None => (spec, None),
        };
        if ins
            .chars()
            .chain(out.unwrap_or("").chars())
            .any(|c| !(c.is_ascii_alphabetic() || c == ','))
        {
            return Err("subscripts must be letters, commas and one '->'".to_string());
        }
        let inputs: Vec<Vec<char>> = ins.split(',').map(|t| t.chars().collect()).collect();
        let output: Vec<char> = match out {
            Some(o) => o.chars().collect(),
            None => {
                let mut free = std::collections::BTreeSet::new();
                let mut nonfree = std::collections::BTreeSet::new();
                for (i, t) in inputs.iter().enumerate() {
                    let mut seen = t.clone();
                    seen.sort_unstable();
                    seen.dedup();
                    for c in seen {
                        if !inputs[i + 1..].iter().any(|l| l.contains(&c)) && !nonfree.contains(&c)
                        {
                            free.insert(c);
                        } else {
                            nonfree.insert(c);
                        }
                    }
                }
                free.into_iter().collect()
            }
        };
        let mut sorted = output.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != output.len() {
            return Err("an output index appears twice".to_string());
        }
        if let Some(c) = output
            .iter()
            .find(|c| !inputs.iter().any(|t| t.contains(c)))
        {
            return Err(format!("output index '{c}' is in no input"));
        }
        Ok(Spec { inputs, output })
    }

    /// Some input index is not an output index (the sum has terms to add).
    pub fn sums(&self) -> bool {
        self.inputs
            .iter()
            .flatten()
            .any(|c| !self.output.contains(c))
    }

    /// DaCe's `EinsumParser.is_bmm`: two inputs whose batch, summed and own
    /// indices each sit in consecutive positions of every term (lowered to a
    /// MatMul). Returns (is it, has batch indices, has free indices of `a`
    /// or `b`).
    pub fn bmm(&self) -> Option<(bool, bool)> {
        let [a, b] = self.inputs.as_slice() else {
            return None;
        };
        let c = &self.output;
        let batch = |x: &char| a.contains(x) && b.contains(x) && c.contains(x);
        let sum = |x: &char| a.contains(x) && b.contains(x) && !c.contains(x);
        let only_a = |x: &char| a.contains(x) && !b.contains(x) && !sum(x) && !batch(x);
        let only_b = |x: &char| b.contains(x) && !a.contains(x) && !sum(x) && !batch(x);
        let positions = |t: &[char], f: &Group| -> Vec<usize> {
            t.iter()
                .enumerate()
                .filter(|(_, x)| f(x))
                .map(|(i, _)| i)
                .collect()
        };
        let sequential = |p: Vec<usize>| p.windows(2).all(|w| w[1] == w[0] + 1);
        let groups: [(&[char], &Group); 9] = [
            (a, &batch),
            (a, &sum),
            (a, &only_a),
            (b, &batch),
            (b, &sum),
            (b, &only_b),
            (c, &only_a),
            (c, &only_b),
            (c, &batch),
        ];
        if !groups.iter().all(|(t, f)| sequential(positions(t, f))) {
            return None;
        }
        let batched = c.iter().any(batch);
        let free = a.iter().any(only_a) || b.iter().any(only_b);
        Some((batched, free))
    }
}

/// Expands an `Einsum` node.
pub(super) fn einsum(b: &mut Builder, spec: &str, alpha: &Expr, beta: &Expr) -> Result<()> {
    let s =
        Spec::parse(spec).map_err(|why| b.unsupported(format_args!("Einsum '{spec}': {why}")))?;
    let default_scales = is_one(alpha) && is_zero(beta);
    match s.bmm() {
        Some(_) if s.inputs.iter().any(|t| has_repeat(t)) => {
            return Err(b.unsupported(format_args!(
                "Einsum '{spec}': a repeated index within a term of a matrix product"
            )));
        }
        Some((true, _)) if !default_scales => {
            return Err(b.unsupported(format_args!(
                "Einsum '{spec}' with alpha or beta: a batched matrix product (DaCe's BatchedMatMul ignores them)"
            )));
        }
        Some((false, false)) if !default_scales => {
            return Err(b.unsupported(format_args!(
                "Einsum '{spec}' with alpha or beta: a dot product (DaCe's Dot ignores them)"
            )));
        }
        None if !s.sums() && !is_zero(beta) => {
            return Err(b.unsupported(format_args!(
                "Einsum '{spec}' with beta and no summed index (DaCe's expansion overwrites beta * out)"
            )));
        }
        _ => {}
    }
    // Inputs in the order of their sorted connectors.
    let mut conns: Vec<String> = b
        .connected_inputs()
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    conns.sort();
    conns.dedup();
    if conns.len() != s.inputs.len() {
        return Err(b.invalid(format_args!(
            "Einsum '{spec}' has {} input terms and {} inputs",
            s.inputs.len(),
            conns.len()
        )));
    }
    let ops: Vec<usize> = conns.iter().map(|c| b.input(c)).collect::<Result<_>>()?;
    let out = b.any_output()?;
    if b.op(out).wcr.is_some() {
        return Err(b.unsupported(format_args!(
            "Einsum '{spec}' whose output memlet has a write-conflict resolution"
        )));
    }
    for (term, &o) in s
        .inputs
        .iter()
        .chain([&s.output])
        .zip(ops.iter().chain([&out]))
    {
        if b.op(o).nonunit.len() != term.len() {
            return Err(b.unsupported(format_args!(
                "Einsum '{spec}': term '{}' for '{}' ({}), which has {} non-unit dimensions",
                term.iter().collect::<String>(),
                b.op(o).conn,
                b.op(o).data,
                b.op(o).nonunit.len()
            )));
        }
    }
    // Output indices are the parallel loops, the others the summed ones.
    let mut summed: Vec<char> = Vec::new();
    for &c in s.inputs.iter().flatten() {
        if !s.output.contains(&c) && !summed.contains(&c) {
            summed.push(c);
        }
    }
    let var = |c: char| -> Expr {
        match s.output.iter().position(|&x| x == c) {
            Some(k) => b.outer_var(k),
            None => b.inner_var(summed.iter().position(|&x| x == c).unwrap_or(0)),
        }
    };
    let extent = |c: char| -> Result<Expr> {
        let mut found: Option<Expr> = None;
        for (term, &o) in s.inputs.iter().zip(&ops) {
            for (p, &x) in term.iter().enumerate() {
                if x != c {
                    continue;
                }
                let e = b.op(o).extent(p);
                match &found {
                    Some(f) if matches!((f, &e), (Expr::Int(u), Expr::Int(v)) if u != v) => {
                        return Err(b.invalid(format_args!(
                            "Einsum '{spec}': index '{c}' has extents {f:?} and {e:?}"
                        )));
                    }
                    Some(_) => {}
                    None => found = Some(e),
                }
            }
        }
        found.ok_or_else(|| b.invalid(format_args!("Einsum '{spec}': index '{c}' is in no input")))
    };
    let outer: Vec<Expr> = s.output.iter().map(|&c| extent(c)).collect::<Result<_>>()?;
    let inner: Vec<Expr> = summed.iter().map(|&c| extent(c)).collect::<Result<_>>()?;
    let reads: Vec<Read> = s
        .inputs
        .iter()
        .zip(&ops)
        .enumerate()
        .map(|(k, (term, &o))| {
            let dims: Vec<(usize, Expr)> = term
                .iter()
                .enumerate()
                .map(|(p, &c)| (b.op(o).nonunit[p], var(c)))
                .collect();
            Read {
                conn: format!("__in{k}"),
                op: o,
                at: b.op(o).at(&dims),
            }
        })
        .collect();
    let product = reads
        .iter()
        .map(|r| Expr::sym(&r.conn))
        .reduce(|x, y| Expr::bin(BinaryOp::Mul, x, y))
        .unwrap_or(Expr::Int(1));
    let out_idx: Vec<Expr> = s.output.iter().map(|&c| var(c)).collect();
    let c = Contraction {
        fold: (!inner.is_empty()).then(|| Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        outer,
        inner,
        reads,
        body: scaled(alpha, product),
        finish_reads: vec![],
        finish: None,
        out,
        out_at: b.op(out).at_nonunit(&out_idx),
        out_wcr: (!is_zero(beta)).then(|| beta_wcr(beta)),
    };
    b.emit(c)
}

fn has_repeat(t: &[char]) -> bool {
    t.iter().enumerate().any(|(i, c)| t[i + 1..].contains(c))
}
