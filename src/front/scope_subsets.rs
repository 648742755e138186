//! Outer memlets of map scopes that name a nested SDFG's own symbol.
//!
//! DaCe propagates a nested SDFG's memlets out through the maps around it,
//! and after some transformations (NPBench's azimint_hist offloaded by
//! `apply_gpu_transformations`) the propagated subset still names the
//! nested SDFG's symbol (`histu[0:bins]`, where the nested SDFG maps `bins`
//! to `npt`), which is not defined where the edge is. DaCe's generator never
//! reads those subsets; sdfgc does (liveness, offloading, kernels' data). A
//! name undefined at the edge that every nested SDFG below the map maps to
//! the same outer expression is replaced by that expression.
//!
//! Likewise a dynamic map-range input (DaCe's `__map_167_b0`, a map's
//! bounds read from an array) is defined only inside the map that reads it,
//! yet after `MapInterchange` the subsets propagated out of the maps around
//! name it (`test_nested_dynamic_map`: `A2_crd[__map_167_b0:__map_167_e1]`
//! on the kernel's edges). A dimension that names such an input of a map
//! below the edge becomes the container's whole dimension, the
//! over-approximation DaCe's propagation makes of a range it cannot bound.
//! Anything else is left for validation to refuse.

use rustc_hash::FxHashSet as HashSet;

use crate::ir::simplify::substitute;
use crate::ir::*;

/// Repairs the outer memlets of map scopes in `sdfg` and its nested SDFGs.
pub fn repair(sdfg: &mut Sdfg) {
    repair_sdfg(sdfg, &[]);
}

/// `mapped`: the symbols the parent maps into this SDFG.
fn repair_sdfg(sdfg: &mut Sdfg, mapped: &[String]) {
    let mut nested_in_map = false;
    each_state(&sdfg.body, &mut |st| {
        nested_in_map |= st.nodes.iter().any(|n| match &n.kind {
            NodeKind::Nested(_) => n.scope.is_some(),
            NodeKind::MapEntry(m) => !m.dynamic_inputs.is_empty(),
            _ => false,
        });
    });
    let names: Option<HashSet<String>> = nested_in_map.then(|| {
        sdfg.defined_names(mapped.iter().map(String::as_str))
            .into_iter()
            .map(str::to_string)
            .collect()
    });
    // One walk: this state's edges, then the SDFGs nested in it.
    let arrays = &sdfg.arrays;
    each_state_mut(&mut sdfg.body, &mut |st| {
        if let Some(names) = &names {
            repair_state(st, names, arrays);
        }
        for n in &mut st.nodes {
            if let NodeKind::Nested(ns) = &mut n.kind {
                let keys: Vec<String> = ns.symbol_mapping.keys().cloned().collect();
                repair_sdfg(&mut ns.sdfg, &keys);
            }
        }
    });
}

fn repair_state(st: &mut State, names: &HashSet<String>, arrays: &NameMap<DataDesc>) {
    let mut fixes: Vec<(usize, Vec<(String, Expr)>)> = Vec::new();
    // (edge, dimensions) whose ranges become the container's whole dimension.
    let mut widen: Vec<(usize, Vec<usize>)> = Vec::new();
    for (idx, e) in st.edges.iter().enumerate() {
        // The nested SDFGs whose symbols the edge may name: the one it
        // connects, or those below the map whose outer edge it is.
        let nested_end = [e.src, e.dst]
            .into_iter()
            .find(|&id| matches!(st.nodes[id.index()].kind, NodeKind::Nested(_)));
        let entry = match (&st.nodes[e.src.index()].kind, &st.nodes[e.dst.index()].kind) {
            (NodeKind::MapExit { entry }, _) => Some(*entry),
            (_, NodeKind::MapEntry(_)) => Some(e.dst),
            _ => None,
        };
        let scope = match (nested_end, entry) {
            (Some(n), _) => st.nodes[n.index()].scope,
            (None, Some(entry)) => Some(entry),
            (None, None) => continue,
        };
        let Some(sub) = &e.memlet.subset else {
            continue;
        };
        // Names visible at the edge: the SDFG's, and the parameters of the
        // maps around it (and, as validation allows, of the map it enters
        // or leaves).
        let mut known: Vec<&str> = Vec::new();
        let around = scope
            .into_iter()
            .chain(scope.into_iter().flat_map(|s| st.enclosing_scopes(s)));
        for s in around.chain(entry) {
            if let NodeKind::MapEntry(m) = &st.nodes[s.index()].kind {
                known.extend(m.scope_names().map(String::as_str));
            }
        }
        let mut undefined: Vec<String> = Vec::new();
        for r in sub {
            for x in [&r.start, &r.end, &r.step] {
                x.visit_names(&mut |n| {
                    if !names.contains(n)
                        && !known.contains(&n)
                        && !undefined.iter().any(|u| u == n)
                    {
                        undefined.push(n.to_string());
                    }
                });
            }
        }
        if undefined.is_empty() {
            continue;
        }
        // Dynamic inputs of the maps below the edge's scope.
        let dynamic: Vec<&str> = st
            .nodes
            .iter()
            .enumerate()
            .filter(|&(i, _)| scope.is_some_and(|s| st.is_below(NodeId(i as u32), s)))
            .filter_map(|(_, n)| match &n.kind {
                NodeKind::MapEntry(m) => Some(m.dynamic_inputs.keys().map(String::as_str)),
                _ => None,
            })
            .flatten()
            .filter(|n| undefined.iter().any(|u| u == n))
            .collect();
        if !dynamic.is_empty() {
            let dims: Vec<usize> = sub
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    let mut hit = false;
                    for x in [&r.start, &r.end, &r.step] {
                        x.visit_names(&mut |n| hit |= dynamic.contains(&n));
                    }
                    hit
                })
                .map(|(d, _)| d)
                .collect();
            widen.push((idx, dims));
        }
        let mut replace = Vec::new();
        for u in undefined {
            let mut values = st
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| match &n.kind {
                    NodeKind::Nested(ns)
                        if nested_end.map_or_else(
                            || entry.is_some_and(|m| st.is_below(NodeId(i as u32), m)),
                            |x| x.index() == i,
                        ) =>
                    {
                        ns.symbol_mapping.get(&u)
                    }
                    _ => None,
                });
            let Some(first) = values.next() else {
                continue;
            };
            // The replacement must be the same for every nested SDFG and
            // defined at the edge.
            let mut defined = true;
            first.visit_names(&mut |n| defined &= names.contains(n) || known.contains(&n));
            if defined && values.all(|v| v == first) {
                replace.push((u, first.clone()));
            }
        }
        if !replace.is_empty() {
            fixes.push((idx, replace));
        }
    }
    for (idx, dims) in widen {
        let m = &mut st.edges[idx].memlet;
        let Some(d) = m.data.as_ref().and_then(|n| arrays.get(n)) else {
            continue;
        };
        let Some(sub) = m.subset.as_mut() else {
            continue;
        };
        if sub.len() != d.shape.len() {
            continue;
        }
        for k in dims {
            sub[k].start = Expr::Int(0);
            sub[k].end = Expr::bin(BinaryOp::Sub, d.shape[k].clone(), Expr::Int(1));
            sub[k].step = Expr::Int(1);
        }
    }
    for (idx, replace) in fixes {
        let mut with = |n: &str| replace.iter().find(|(u, _)| u == n).map(|(_, v)| v.clone());
        let m = &mut st.edges[idx].memlet;
        for r in m.subset.iter_mut().flatten() {
            r.start = substitute(&r.start, &mut with);
            r.end = substitute(&r.end, &mut with);
            r.step = substitute(&r.step, &mut with);
        }
        m.volume = substitute(&m.volume, &mut with);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A top-level map over `i` around a nested SDFG that maps `bins` to
    /// `npt`; the nested SDFG's output edge and the map's exit edge write
    /// `histu[0:exit_end]` (DaCe's `histu[0:bins-1]`).
    fn sdfg(mapping: &str, exit_end: &str) -> String {
        format!(
            r#"{{"type":"SDFG","attributes":{{"name":"p","symbols":{{"npt":"int64","N":"int64"}},
            "_arrays":{{"histu":{{"type":"Array","attributes":{{"shape":["npt"],"dtype":"float64"}}}},
                        "r":{{"type":"Array","attributes":{{"shape":["N"],"dtype":"float64"}}}}}}}},
            "nodes":[{{"type":"SDFGState","label":"s","id":0,"attributes":{{}},
              "nodes":[
                {{"type":"AccessNode","id":0,"label":"r","attributes":{{"data":"r"}}}},
                {{"type":"MapEntry","id":1,"label":"m","scope_entry":null,"scope_exit":"2",
                  "attributes":{{"label":"m","params":["i"],"range":{{"type":"Range","ranges":[{{"start":"0","end":"N - 1","step":"1","tile":"1"}}]}},
                  "in_connectors":{{"IN_r":null}},"out_connectors":{{"OUT_r":null}}}}}},
                {{"type":"MapExit","id":2,"label":"m","scope_entry":"1","scope_exit":"2",
                  "attributes":{{"in_connectors":{{"IN_h":null}},"out_connectors":{{"OUT_h":null}}}}}},
                {{"type":"NestedSDFG","id":3,"label":"inner","scope_entry":"1","scope_exit":"2",
                  "attributes":{{"label":"inner","symbol_mapping":{mapping},
                  "in_connectors":{{"x":null}},"out_connectors":{{"h":null}},
                  "sdfg":{{"type":"SDFG","attributes":{{"name":"inner","symbols":{{"bins":"int64"}},
                    "_arrays":{{"x":{{"type":"Scalar","attributes":{{"dtype":"float64"}}}},
                               "h":{{"type":"Array","attributes":{{"shape":["bins"],"dtype":"float64"}}}}}}}},
                    "nodes":[{{"type":"SDFGState","label":"t","id":0,"attributes":{{}},"nodes":[],"edges":[]}}],
                    "edges":[],"start_block":0}}}}}},
                {{"type":"AccessNode","id":4,"label":"histu","attributes":{{"data":"histu"}}}}],
              "edges":[
                {{"type":"MultiConnectorEdge","src":"0","dst":"1","src_connector":null,"dst_connector":"IN_r",
                  "attributes":{{"data":{{"type":"Memlet","attributes":{{"data":"r","subset":{{"type":"Range","ranges":[{{"start":"0","end":"N - 1","step":"1","tile":"1"}}]}}}}}}}}}},
                {{"type":"MultiConnectorEdge","src":"1","dst":"3","src_connector":"OUT_r","dst_connector":"x",
                  "attributes":{{"data":{{"type":"Memlet","attributes":{{"data":"r","subset":{{"type":"Range","ranges":[{{"start":"i","end":"i","step":"1","tile":"1"}}]}}}}}}}}}},
                {{"type":"MultiConnectorEdge","src":"3","dst":"2","src_connector":"h","dst_connector":"IN_h",
                  "attributes":{{"data":{{"type":"Memlet","attributes":{{"data":"histu","subset":{{"type":"Range","ranges":[{{"start":"0","end":"{exit_end}","step":"1","tile":"1"}}]}}}}}}}}}},
                {{"type":"MultiConnectorEdge","src":"2","dst":"4","src_connector":"OUT_h","dst_connector":null,
                  "attributes":{{"data":{{"type":"Memlet","attributes":{{"data":"histu","subset":{{"type":"Range","ranges":[{{"start":"0","end":"{exit_end}","step":"1","tile":"1"}}]}}}}}}}}}}]}}],
            "edges":[],"start_block":0}}"#
        )
    }

    /// The ends of the nested SDFG's output edge and of the map's exit edge.
    fn exit_end(s: &Sdfg) -> String {
        let BlockKind::State(st) = &s.body.blocks[0].kind else {
            panic!("a state")
        };
        let end = |i: usize| {
            crate::ir::cexpr::to_cpp(&st.edges[i].memlet.subset.as_ref().unwrap()[0].end)
        };
        assert_eq!(end(2), end(3));
        end(3)
    }

    #[test]
    fn a_nested_symbol_on_an_outer_edge_becomes_its_mapped_value() {
        let s = crate::front::json::load_str(&sdfg(r#"{"bins":"npt"}"#, "bins - 1")).unwrap();
        assert_eq!(exit_end(&s), "npt - 1");
        crate::valid::validate(&s).unwrap();
    }

    #[test]
    fn a_mapping_to_an_undefined_name_is_left_for_validation() {
        let s = crate::front::json::load_str(&sdfg(r#"{"bins":"nope"}"#, "bins - 1")).unwrap();
        assert_eq!(exit_end(&s), "bins - 1");
        let e = crate::valid::validate(&s).unwrap_err().to_string();
        assert!(e.contains("'bins', which is not defined"), "{e}");
    }
}
