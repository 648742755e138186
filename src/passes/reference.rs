//! References (DaCe's `ArrayReference` containers): what sdfgc refuses of
//! them, and the edges that set them.
//!
//! A reference is a pointer with an array's shape and strides. An edge into
//! the `set` connector of one of its access nodes points it at the first
//! element of the edge's subset of another container (DaCe 1.0.2's
//! `cpu.py`: `ref = A + offset;`); it keeps pointing there, across states,
//! until the next set. Every other access goes through the pointer.
//!
//! sdfgc compiles them on the CPU with the meaning DaCe's CPU code gives
//! them, and refuses by name: references on GPU targets; reference arguments
//! (DaCe's references are transients); a reference never set, or used in a
//! state before every state that sets it (DaCe's validation); one set by
//! code (a tasklet's pointer output: sdfgc cannot see where it points, nor
//! keep it in bounds); a set memlet that names the reference itself, a
//! stream, or data of another element type; a set whose reference, from
//! the set element on, reaches past the end of the container (where both
//! sizes are numbers); an access node both set and written; a set inside a
//! parallel map of a reference used outside it (one pointer for all
//! threads); and a view of a reference in a state that sets it (views are
//! pointed at their data where their state or scope starts).

use std::collections::BTreeMap;

use crate::diag::{Error, Result};
use crate::ir::simplify::eval_int;
use crate::ir::*;
use crate::options::{CompileOptions, Target};

/// True if edge `e` of `st` sets a reference: its destination is an access
/// node of a reference container of `sdfg` and its connector is `set`.
pub fn is_set(sdfg: &Sdfg, st: &State, e: &DataEdge) -> bool {
    e.dst_conn.as_deref() == Some("set")
        && matches!(&st.nodes[e.dst.index()].kind,
            NodeKind::Access(a) if sdfg.arrays.get(&a.data).is_some_and(|d| d.kind == DataKind::Reference))
}

/// Checks the references of `sdfg` and its nested SDFGs; true if any.
pub fn check(sdfg: &Sdfg, opts: &CompileOptions) -> Result<bool> {
    let mut used = false;
    let mut err = None;
    sdfg.for_each_sdfg(&mut |s| {
        if err.is_none() {
            match check_sdfg(s, opts) {
                Ok(u) => used |= u,
                Err(e) => err = Some(e),
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(used),
    }
}

fn check_sdfg(sdfg: &Sdfg, opts: &CompileOptions) -> Result<bool> {
    let refs: Vec<(&String, &DataDesc)> = sdfg
        .arrays
        .iter()
        .filter(|(_, d)| d.kind == DataKind::Reference)
        .collect();
    if refs.is_empty() {
        return Ok(false);
    }
    for (name, d) in &refs {
        let refuse = |what: &str| {
            Err(Error::unsupported(
                &d.path,
                format!("reference '{name}': {what}"),
            ))
        };
        if opts.target != Target::Cpp || d.storage.is_gpu() {
            return refuse("references are compiled for the CPU (--target cpp) only");
        }
        if !d.transient {
            return refuse(
                "a reference that is not transient (an argument); DaCe's references are transients",
            );
        }
    }
    let mut set_somewhere: BTreeMap<&str, bool> =
        refs.iter().map(|(n, _)| (n.as_str(), false)).collect();
    let mut err = None;
    each_state(&sdfg.body, &mut |st| {
        if err.is_none()
            && let Err(e) = check_state(sdfg, st, &mut set_somewhere)
        {
            err = Some(e);
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    used_before_set(sdfg, &set_somewhere)?;
    Ok(true)
}

/// DaCe's validation rule (`validate_state`: "Reference data descriptor was
/// used before it was set"), with the states in program order (a reverse
/// postorder, loops contiguous): an access node of a reference in a state
/// before every state that sets it (a null pointer there), or of one
/// never set at all.
fn used_before_set(sdfg: &Sdfg, set_somewhere: &BTreeMap<&str, bool>) -> Result<()> {
    let mut states = Vec::new();
    in_program_order(&sdfg.body, &mut states);
    let mut set = std::collections::BTreeSet::new();
    for st in states {
        for e in &st.edges {
            if is_set(sdfg, st, e)
                && let Some(r) = access_data(st, e.dst)
            {
                set.insert(r);
            }
        }
        for n in &st.nodes {
            if let NodeKind::Access(a) = &n.kind
                && sdfg
                    .arrays
                    .get(&a.data)
                    .is_some_and(|d| d.kind == DataKind::Reference)
                && !set.contains(a.data.as_str())
            {
                let why = if set_somewhere.get(a.data.as_str()) == Some(&true) {
                    "is used before it is set (DaCe's validation refuses it too)"
                } else {
                    "is never set (no edge into the 'set' connector of one of its access nodes)"
                };
                return Err(Error::unsupported(
                    &n.path,
                    format!("reference '{}' {why}", a.data),
                ));
            }
        }
    }
    Ok(())
}

fn in_program_order<'a>(r: &'a Region, out: &mut Vec<&'a State>) {
    let Some(start) = r.start else {
        return;
    };
    for b in r.program_order(start) {
        match &r.blocks[b.index()].kind {
            BlockKind::State(st) => out.push(st),
            BlockKind::Region(inner) => in_program_order(inner, out),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, r)| in_program_order(r, out)),
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

fn each_state<'a>(r: &'a Region, f: &mut dyn FnMut(&'a State)) {
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => f(st),
            BlockKind::Region(inner) => each_state(inner, f),
            BlockKind::Conditional(brs) => brs.iter().for_each(|(_, r)| each_state(r, f)),
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

fn access_data(st: &State, id: NodeId) -> Option<&str> {
    match &st.nodes[id.index()].kind {
        NodeKind::Access(a) => Some(&a.data),
        _ => None,
    }
}

/// The container a set edge `ei` of `st` points its reference into: the
/// access node where its memlet path starts (None: set by code).
pub fn set_source(st: &State, ei: usize) -> Option<&str> {
    access_data(st, path_source(st, ei))
}

/// The node where the memlet path of edge `ei` starts (through map entries,
/// `OUT_x` fed by `IN_x`).
fn path_source(st: &State, ei: usize) -> NodeId {
    let mut cur = ei;
    for _ in 0..=st.edges.len() {
        let e = &st.edges[cur];
        let Some(conn) = e.src_conn.as_deref().and_then(|c| c.strip_prefix("OUT_")) else {
            break;
        };
        if !matches!(st.nodes[e.src.index()].kind, NodeKind::MapEntry(_)) {
            break;
        }
        let want = format!("IN_{conn}");
        match st
            .edges
            .iter()
            .position(|x| x.dst == e.src && x.dst_conn.as_deref() == Some(want.as_str()))
        {
            Some(i) => cur = i,
            None => break,
        }
    }
    st.edges[cur].src
}

/// The innermost map around `id` whose iterations run in parallel.
fn parallel_map(st: &State, id: NodeId) -> Option<NodeId> {
    let mut scope = st.nodes[id.index()].scope;
    for _ in 0..=st.nodes.len() {
        let s = scope?;
        if let NodeKind::MapEntry(m) = &st.nodes[s.index()].kind
            && !matches!(m.schedule, Schedule::Sequential | Schedule::Unrolled)
        {
            return Some(s);
        }
        scope = st.nodes[s.index()].scope;
    }
    None
}

/// True if node `id` lies inside the scope of map entry `map`.
fn inside(st: &State, id: NodeId, map: NodeId) -> bool {
    let mut scope = st.nodes[id.index()].scope;
    for _ in 0..=st.nodes.len() {
        match scope {
            Some(s) if s == map => return true,
            Some(s) => scope = st.nodes[s.index()].scope,
            None => return false,
        }
    }
    false
}

/// The number of elements from the first to the last one an array of
/// `shape` and `strides` spans, where both are numbers.
fn span(shape: &[Expr], strides: &[Expr]) -> Option<i64> {
    let mut last = 0i64;
    for (n, s) in shape.iter().zip(strides) {
        let (n, s) = (eval_int(n, &mut |_| None)?, eval_int(s, &mut |_| None)?);
        if n <= 0 {
            return Some(0);
        }
        last = last.checked_add((n - 1).checked_mul(s)?)?;
    }
    last.checked_add(1)
}

fn check_state(sdfg: &Sdfg, st: &State, set_somewhere: &mut BTreeMap<&str, bool>) -> Result<()> {
    let is_ref = |n: &str| {
        sdfg.arrays
            .get(n)
            .is_some_and(|d| d.kind == DataKind::Reference)
    };
    let mut set_here: Vec<&str> = Vec::new();
    for (ei, e) in st.edges.iter().enumerate() {
        if !is_set(sdfg, st, e) {
            continue;
        }
        let dst = &st.nodes[e.dst.index()];
        let r = access_data(st, e.dst).unwrap_or_default();
        let refuse = |what: String| {
            Err(Error::unsupported(
                &e.path,
                format!("reference '{r}' {what}"),
            ))
        };
        let src = path_source(st, ei);
        match (&st.nodes[src.index()].kind, access_data(st, src)) {
            (_, Some(s)) => check_data_set(sdfg, e, r, s)?,
            // A tasklet's pointer output (DaCe's `o = a + 1` on a pointer
            // connector, then `ref = o;`): where it points is the code's
            // business, as in DaCe.
            (NodeKind::Tasklet(_), None) if e.src == src => {
                if e.memlet.wcr.is_some() {
                    return refuse("is set with write-conflict resolution".to_string());
                }
            }
            (_, None) => {
                return refuse(format!(
                    "is set by '{}', which is neither data nor a tasklet (sdfgc sets references to \
                     data or to a tasklet's pointer output)",
                    st.nodes[src.index()].label
                ));
            }
        }
        let ins = st.edges.iter().filter(|x| x.dst == e.dst).count();
        if ins > 1 {
            return Err(Error::unsupported(
                &dst.path,
                format!("access node of reference '{r}' is both set and written (or set twice)"),
            ));
        }
        // One pointer for all threads of a parallel map is a race.
        if let Some(m) = parallel_map(st, e.dst) {
            let outside = st.nodes.iter().enumerate().any(|(i, n)| {
                matches!(&n.kind, NodeKind::Access(a) if a.data == r)
                    && !inside(st, NodeId(i as u32), m)
            });
            if outside || !single_state(sdfg, r) {
                return refuse(format!(
                    "is set inside parallel map '{}' and used outside it (one pointer for all its threads)",
                    st.nodes[m.index()].label
                ));
            }
        }
        if let Some(v) = set_somewhere.get_mut(r) {
            *v = true;
        }
        set_here.push(r);
    }
    // Views are pointed at their data where their state or scope starts,
    // before a set in that state (a set from a view is no view of it).
    for e in st.edges.iter().filter(|e| !is_set(sdfg, st, e)) {
        let ends = [access_data(st, e.src), access_data(st, e.dst)];
        let view = ends.iter().flatten().any(|n| {
            sdfg.arrays
                .get(*n)
                .is_some_and(|d| d.kind == DataKind::View)
        });
        let names = ends
            .iter()
            .flatten()
            .copied()
            .chain(e.memlet.data.as_deref());
        if view && let Some(r) = names.filter(|n| is_ref(n)).find(|n| set_here.contains(n)) {
            return Err(Error::unsupported(
                &e.path,
                format!("a view of reference '{r}' in the state that sets it"),
            ));
        }
    }
    Ok(())
}

/// The checks of a reference `r` set to data `s` by edge `e`: the memlet
/// names `s`, which is no stream, of `r`'s element type, and long enough
/// from the set element on (where the sizes are numbers).
fn check_data_set(sdfg: &Sdfg, e: &DataEdge, r: &str, s: &str) -> Result<()> {
    let rd = &sdfg.arrays[r];
    let refuse = |what: String| {
        Err(Error::unsupported(
            &e.path,
            format!("reference '{r}' {what}"),
        ))
    };
    if e.memlet.data.as_deref() != Some(s) {
        return refuse(format!(
            "is set by a memlet on '{}', not on the container it points at ('{s}')",
            e.memlet.data.as_deref().unwrap_or("")
        ));
    }
    let sd = &sdfg.arrays[s];
    if sd.kind == DataKind::Stream {
        return refuse(format!("is set to stream '{s}'"));
    }
    if sd.dtype != rd.dtype {
        return refuse(format!(
            "of {} is set to '{s}' of another element type ({})",
            rd.dtype.dace_name(),
            sd.dtype.dace_name()
        ));
    }
    // From the set element on, the reference must fit in the container.
    if let Some(sub) = &e.memlet.subset
        && sub.len() == sd.rank()
    {
        let start = sub.iter().zip(&sd.strides).try_fold(0i64, |acc, (d, s)| {
            let (a, s) = (
                eval_int(&d.start, &mut |_| None)?,
                eval_int(s, &mut |_| None)?,
            );
            acc.checked_add(a.checked_mul(s)?)
        });
        if let (Some(start), Some(rs), Some(ss)) = (
            start,
            span(&rd.shape, &rd.strides),
            span(&sd.shape, &sd.strides),
        ) && (start < 0 || start.saturating_add(rs) > ss)
        {
            return refuse(format!(
                "spans {rs} elements from element {start} of '{s}', which has {ss}: past its end"
            ));
        }
    }
    Ok(())
}

/// True if all access nodes of `name` lie in one state.
fn single_state(sdfg: &Sdfg, name: &str) -> bool {
    let mut states = 0;
    each_state(&sdfg.body, &mut |st| {
        if st
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Access(a) if a.data == name))
        {
            states += 1;
        }
    });
    states <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Sdfg {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/corpus/reference_set/program.sdfg");
        crate::front::load_file(&p).unwrap()
    }

    fn edit_edges(r: &mut Region, f: &mut dyn FnMut(&mut DataEdge)) {
        for b in &mut r.blocks {
            match &mut b.kind {
                BlockKind::State(st) => st.edges.iter_mut().for_each(&mut *f),
                BlockKind::Region(inner) => edit_edges(inner, f),
                BlockKind::Conditional(brs) => brs.iter_mut().for_each(|(_, r)| edit_edges(r, f)),
                _ => {}
            }
        }
    }

    #[test]
    fn fixture_is_accepted_on_the_cpu_and_refused_by_name_on_gpus() {
        let sdfg = fixture();
        assert!(check(&sdfg, &CompileOptions::new(Target::Cpp)).unwrap());
        let e = check(&sdfg, &CompileOptions::new(Target::Cuda)).unwrap_err();
        assert!(
            e.to_string()
                .contains("compiled for the CPU (--target cpp) only"),
            "{e}"
        );
    }

    #[test]
    fn a_reference_never_set_is_refused() {
        let mut sdfg = fixture();
        // The sets to all of A (of `r`, and of `b` in one branch) become
        // copies: `r` has no other set.
        edit_edges(&mut sdfg.body, &mut |e| {
            let whole = e
                .memlet
                .subset
                .as_ref()
                .is_some_and(|s| s[0].start == Expr::Int(0));
            if e.dst_conn.as_deref() == Some("set")
                && e.memlet.data.as_deref() == Some("A")
                && whole
            {
                e.dst_conn = None;
            }
        });
        let e = check(&sdfg, &CompileOptions::new(Target::Cpp)).unwrap_err();
        assert!(e.to_string().contains("reference 'r' is never set"), "{e}");
    }

    #[test]
    fn span_counts_elements_from_first_to_last() {
        let n = |v: i64| Expr::Int(v);
        assert_eq!(span(&[n(4)], &[n(8)]), Some(25));
        assert_eq!(span(&[n(2), n(3)], &[n(8), n(1)]), Some(11));
        assert_eq!(span(&[n(0)], &[n(1)]), Some(0));
        assert_eq!(span(&[Expr::Sym("N".into())], &[n(1)]), None);
    }
}
