//! Synthetic SDFGs for the scaling benchmarks: DaCe 2.x-style JSON (the
//! shape of `fixtures/corpus/*/program.v2.sdfg`) of a requested size.
//!
//! Shapes:
//! * `chain`: one state, a chain `A -> map -> T0 -> map -> T1 ... -> B` of
//!   element-wise maps whose intermediates are transients;
//! * `states`: the same chain cut into states of 8 maps, the states in
//!   sequence (interstate edges), every intermediate a transient;
//! * `tree`: a tree of nested SDFGs (4 children per level, each child a
//!   NestedSDFG node in its parent's state, linked through transients), the
//!   leaves holding a 2-map chain;
//! * `loops`: a sequence of LoopRegions, each holding a second LoopRegion
//!   whose state runs a 2-map chain through a transient;
//! * `machine`: a state machine of for-loops in DaCe 1.0.2's form (a guard
//!   state, a body state with a 2-map chain through a transient, a back
//!   edge from the body to the guard and an exit edge to the next guard).
//!
//! "Nodes" counts every element of every `nodes` list: dataflow nodes
//! (access nodes, map entries and exits, tasklets, nested SDFGs) and control
//! flow blocks (states, regions), at every nesting level. The generated
//! program has one symbol `N` and two arguments `A`, `B` (float64[N]).
//!
//! Used by `benches/codegen.rs` (`mod synth;`) and `examples/synth.rs`
//! (writes files for `sdfgc check` and the process-level scaling runs).
#![allow(dead_code)]

use serde_json::{Value, json};

/// The synthetic shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Chain,
    States,
    Tree,
    Loops,
    Machine,
}

impl Shape {
    pub const ALL: [Shape; 5] = [
        Shape::Chain,
        Shape::States,
        Shape::Tree,
        Shape::Loops,
        Shape::Machine,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::States => "states",
            Shape::Tree => "tree",
            Shape::Loops => "loops",
            Shape::Machine => "machine",
        }
    }

    pub fn parse(s: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// A generated SDFG: its JSON text and its node count.
pub struct Synth {
    pub json: String,
    pub nodes: usize,
}

/// Generates an SDFG of `shape` with at least `target` nodes (and at most a
/// few more: one map, one state or one tree leaf).
pub fn generate(shape: Shape, target: usize) -> Synth {
    let mut g = Gen { guid: 0, nodes: 0 };
    let name = format!("synth_{}_{}", shape.name(), target);
    let v = match shape {
        Shape::Chain => g.chain_sdfg(&name, target),
        Shape::States => g.states_sdfg(&name, target),
        Shape::Tree => g.tree_sdfg(&name, target),
        Shape::Loops => g.loops_sdfg(&name, target),
        Shape::Machine => g.machine_sdfg(&name, target),
    };
    Synth {
        json: serde_json::to_string(&v).expect("serializable"),
        nodes: g.nodes,
    }
}

struct Gen {
    guid: u64,
    nodes: usize,
}

fn range(start: &str, end: &str) -> Value {
    json!({"type": "Range", "ranges": [{"start": start, "end": end, "step": "1", "tile": "1"}]})
}

fn array(transient: bool) -> Value {
    let mut a = json!({"strides": ["1"], "total_size": "N", "offset": ["0"],
                       "optional": false, "dtype": "float64", "shape": ["N"]});
    if transient {
        a["transient"] = json!(true);
    }
    json!({"type": "Array", "attributes": a})
}

/// An interstate edge `src -> dst` (no condition key when `cond` is None).
fn interstate_edge(src: usize, dst: usize, cond: Option<&str>, assignments: Value) -> Value {
    let mut attributes = json!({ "assignments": assignments });
    if let Some(c) = cond {
        attributes["condition"] = json!({"string_data": c, "language": "Python"});
    }
    json!({"type": "Edge",
        "attributes": {"data": {"type": "InterstateEdge", "attributes": attributes, "label": ""}},
        "src": src.to_string(), "dst": dst.to_string()})
}

fn empty_code() -> Value {
    json!({"frame": {"string_data": "", "language": "CPP"}})
}

/// Builds the dataflow of one state incrementally.
struct StateBuilder {
    nodes: Vec<Value>,
    edges: Vec<Value>,
    /// scope_dict: "-1" -> top-level ids, entry id -> inner ids.
    top: Vec<usize>,
    inner: Vec<(usize, Vec<usize>)>,
}

impl StateBuilder {
    fn new() -> Self {
        StateBuilder {
            nodes: Vec::new(),
            edges: Vec::new(),
            top: Vec::new(),
            inner: Vec::new(),
        }
    }

    fn push(&mut self, g: &mut Gen, mut n: Value, scope: Option<usize>) -> usize {
        let id = self.nodes.len();
        n["id"] = json!(id);
        if n["attributes"].is_object() {
            n["attributes"]["guid"] = json!(g.guid());
        }
        g.nodes += 1;
        self.nodes.push(n);
        match scope {
            None => self.top.push(id),
            Some(e) => self
                .inner
                .iter_mut()
                .find(|(k, _)| *k == e)
                .expect("entry registered")
                .1
                .push(id),
        }
        id
    }

    fn access(&mut self, g: &mut Gen, data: &str) -> usize {
        self.push(
            g,
            json!({"type": "AccessNode", "label": data, "attributes": {"data": data},
                   "scope_entry": null, "scope_exit": null}),
            None,
        )
    }

    fn edge(&mut self, src: usize, sc: Option<&str>, dst: usize, dc: Option<&str>, memlet: Value) {
        self.edges.push(json!({
            "type": "MultiConnectorEdge",
            "attributes": {"data": memlet},
            "src": src.to_string(), "dst": dst.to_string(),
            "src_connector": sc, "dst_connector": dc,
        }));
    }

    /// `dst[i] = src[i] + c` over `i in 0:N`, between two existing access nodes.
    fn map(&mut self, g: &mut Gen, src: (usize, &str), dst: (usize, &str), c: usize) {
        let (sa, sname) = src;
        let (da, dname) = dst;
        let label = format!("m{}", g.guid);
        let entry = self.nodes.len();
        let exit = entry + 2;
        self.inner.push((entry, Vec::new()));
        let in_c = format!("IN_{sname}");
        let out_c = format!("OUT_{sname}");
        let ex_in = format!("IN_{dname}");
        let ex_out = format!("OUT_{dname}");
        self.push(
            g,
            json!({"type": "MapEntry", "label": format!("{label}[i=0:N]"),
                   "attributes": {"label": label, "params": ["i"], "range": range("0", "N - 1"),
                                  "in_connectors": {in_c.clone(): null},
                                  "out_connectors": {out_c.clone(): null}},
                   "scope_entry": null, "scope_exit": exit.to_string()}),
            None,
        );
        let t = self.push(
            g,
            json!({"type": "Tasklet", "label": "add",
                   "attributes": {"code": {"string_data": format!("__out = (__in1 + {c}.0)"),
                                           "language": "Python"},
                                  "label": "add",
                                  "in_connectors": {"__in1": null},
                                  "out_connectors": {"__out": null}},
                   "scope_entry": entry.to_string(), "scope_exit": exit.to_string()}),
            Some(entry),
        );
        self.push(
            g,
            json!({"type": "MapExit", "label": format!("{label}[i=0:N]"),
                   "attributes": {"in_connectors": {ex_in.clone(): null},
                                  "out_connectors": {ex_out.clone(): null}},
                   "scope_entry": entry.to_string(), "scope_exit": exit.to_string()}),
            Some(entry),
        );
        let m = memlet(g, sname, range("0", "N - 1"), "N", true);
        self.edge(sa, None, entry, Some(&in_c), m);
        let m = memlet(g, sname, range("i", "i"), "1", true);
        self.edge(entry, Some(&out_c), t, Some("__in1"), m);
        let m = memlet(g, dname, range("i", "i"), "1", false);
        self.edge(t, Some("__out"), exit, Some(&ex_in), m);
        let m = memlet(g, dname, range("0", "N - 1"), "N", false);
        self.edge(exit, Some(&ex_out), da, None, m);
    }

    fn finish(self, g: &mut Gen, label: &str, id: usize) -> Value {
        let mut sd = serde_json::Map::new();
        sd.insert("-1".into(), json!(self.top));
        for (k, v) in self.inner {
            sd.insert(k.to_string(), json!(v));
        }
        g.nodes += 1;
        json!({"type": "SDFGState", "label": label, "id": id, "collapsed": false,
               "scope_dict": sd, "nodes": self.nodes, "edges": self.edges})
    }
}

fn memlet(g: &mut Gen, data: &str, subset: Value, volume: &str, is_src: bool) -> Value {
    json!({"type": "Memlet", "attributes": {
        "volume": volume, "subset": subset, "data": data, "guid": g.guid(),
        "is_data_src": is_src, "num_accesses": volume}})
}

impl Gen {
    fn guid(&mut self) -> String {
        self.guid += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.guid)
    }

    fn sdfg(
        &mut self,
        name: &str,
        arrays: serde_json::Map<String, Value>,
        top: bool,
        nodes: Vec<Value>,
        edges: Vec<Value>,
    ) -> Value {
        let mut attrs = json!({
            "name": name, "_arrays": arrays, "symbols": {"N": "int32"},
            "global_code": empty_code(), "init_code": empty_code(), "exit_code": empty_code(),
            "guid": self.guid(),
        });
        if top {
            attrs["arg_names"] = json!(["A", "B"]);
            attrs["using_explicit_control_flow"] = json!(true);
        }
        let mut v = json!({"type": "SDFG", "attributes": attrs, "nodes": nodes, "edges": edges,
                           "collapsed": false, "label": "", "id": null, "cfg_list_id": 0,
                           "start_block": 0});
        if top {
            v["dace_version"] = json!("2.0.0a10");
        }
        v
    }

    fn io_arrays() -> serde_json::Map<String, Value> {
        let mut a = serde_json::Map::new();
        a.insert("A".into(), array(false));
        a.insert("B".into(), array(false));
        a
    }

    /// A chain of `maps` maps from `first` to `last` through fresh transients
    /// `{prefix}{k}` (registered in `arrays`), inside one state builder.
    fn chain_into(
        &mut self,
        s: &mut StateBuilder,
        arrays: &mut serde_json::Map<String, Value>,
        prefix: &str,
        first: &str,
        last: &str,
        maps: usize,
    ) {
        let mut cur = first.to_string();
        let mut cur_id = s.access(self, first);
        for k in 0..maps {
            let next = if k + 1 == maps {
                last.to_string()
            } else {
                let t = format!("{prefix}{k}");
                arrays.insert(t.clone(), array(true));
                t
            };
            let nid = s.access(self, &next);
            s.map(self, (cur_id, &cur), (nid, &next), k % 7 + 1);
            cur = next;
            cur_id = nid;
        }
    }

    fn chain_sdfg(&mut self, name: &str, target: usize) -> Value {
        // 2 + 4 per map (access + entry + tasklet + exit) + 1 state.
        let maps = target.saturating_sub(3).div_ceil(4).max(1);
        let mut arrays = Self::io_arrays();
        let mut s = StateBuilder::new();
        self.chain_into(&mut s, &mut arrays, "T", "A", "B", maps);
        let st = s.finish(self, "chain", 0);
        self.sdfg(name, arrays, true, vec![st], vec![])
    }

    fn states_sdfg(&mut self, name: &str, target: usize) -> Value {
        const PER: usize = 8;
        // per state: 2 + 4*PER dataflow nodes + 1 state.
        let per_state = 3 + 4 * PER;
        let n_states = target.div_ceil(per_state).max(1);
        let mut arrays = Self::io_arrays();
        let mut states = Vec::new();
        let mut edges = Vec::new();
        for k in 0..n_states {
            let first = if k == 0 {
                "A".to_string()
            } else {
                format!("S{}", k - 1)
            };
            let last = if k + 1 == n_states {
                "B".to_string()
            } else {
                let t = format!("S{k}");
                arrays.insert(t.clone(), array(true));
                t
            };
            let mut s = StateBuilder::new();
            self.chain_into(&mut s, &mut arrays, &format!("T{k}_"), &first, &last, PER);
            states.push(s.finish(self, &format!("s{k}"), k));
            if k > 0 {
                edges.push(interstate_edge(k - 1, k, Some("1"), json!({})));
            }
        }
        self.sdfg(name, arrays, true, states, edges)
    }

    fn loops_sdfg(&mut self, name: &str, target: usize) -> Value {
        // per group: outer loop + inner loop + state + 3 access + 2*3 map nodes = 12.
        let groups = target.div_ceil(12).max(1);
        let mut arrays = Self::io_arrays();
        let mut blocks = Vec::new();
        let mut edges = Vec::new();
        for k in 0..groups {
            let st = self.two_map_state(&mut arrays, &format!("L{k}"), "body", 0);
            let inner = self.loop_region(&format!("j{k}"), "3", vec![st], 0);
            let outer = self.loop_region(&format!("i{k}"), "2", vec![inner], k);
            blocks.push(outer);
            if k > 0 {
                edges.push(interstate_edge(k - 1, k, None, json!({})));
            }
        }
        self.sdfg(name, arrays, true, blocks, edges)
    }

    fn machine_sdfg(&mut self, name: &str, target: usize) -> Value {
        // per loop: guard state + body state + 3 access + 2*3 map nodes = 11
        // (plus an initial and a final state).
        let loops = target.div_ceil(11).max(1);
        let mut arrays = Self::io_arrays();
        let mut states = Vec::new();
        let mut edges = Vec::new();
        let edge = |src, dst, cond, assign| interstate_edge(src, dst, Some(cond), assign);
        states.push(StateBuilder::new().finish(self, "init", 0));
        edges.push(edge(0, 1, "1", json!({"i": "0"})));
        for k in 0..loops {
            let (guard, body, next) = (1 + 2 * k, 2 + 2 * k, 3 + 2 * k);
            states.push(StateBuilder::new().finish(self, &format!("guard{k}"), guard));
            states.push(self.two_map_state(
                &mut arrays,
                &format!("M{k}"),
                &format!("body{k}"),
                body,
            ));
            edges.push(edge(guard, body, "(i < 2)", json!({})));
            edges.push(edge(body, guard, "1", json!({"i": "(i + 1)"})));
            // The exit edge leads to the next guard, or to the final state.
            edges.push(edge(guard, next, "(not (i < 2))", json!({"i": "0"})));
        }
        states.push(StateBuilder::new().finish(self, "end", 2 * loops + 1));
        let mut v = self.sdfg(name, arrays, true, states, edges);
        v["attributes"]["symbols"]["i"] = json!("int32");
        v
    }

    /// A state `label` computing transient `t` from A and B from `t` (two maps).
    fn two_map_state(
        &mut self,
        arrays: &mut serde_json::Map<String, Value>,
        t: &str,
        label: &str,
        id: usize,
    ) -> Value {
        arrays.insert(t.to_string(), array(true));
        let mut s = StateBuilder::new();
        let a = s.access(self, "A");
        let tt = s.access(self, t);
        let b = s.access(self, "B");
        s.map(self, (a, "A"), (tt, t), 1);
        s.map(self, (tt, t), (b, "B"), 2);
        s.finish(self, label, id)
    }

    fn loop_region(&mut self, var: &str, trips: &str, nodes: Vec<Value>, id: usize) -> Value {
        self.nodes += 1;
        json!({"type": "LoopRegion",
               "attributes": {
                   "update_statement": {"string_data": format!("{var} = ({var} + 1)"), "language": "Python"},
                   "init_statement": {"string_data": format!("{var} = 0"), "language": "Python"},
                   "loop_condition": {"string_data": format!("({var} < {trips})"), "language": "Python"},
                   "loop_variable": var, "guid": self.guid()},
               "nodes": nodes, "edges": [], "collapsed": false, "label": format!("loop_{var}"),
               "id": id, "cfg_list_id": 0, "start_block": 0})
    }

    fn tree_sdfg(&mut self, name: &str, target: usize) -> Value {
        // A leaf is 10 nodes (its state, x, t, y and two maps of 3 nodes);
        // the inner levels above it (a state, the accesses between children
        // and the NestedSDFG nodes, with 4 children each) bring it to about
        // 14.5 nodes per leaf in all, as counted on generated files.
        let leaves = (target * 2).div_ceil(29).max(1);
        let mut counter = 0usize;
        let (nodes, arrays) = self.tree_body(leaves, &mut counter);
        let mut top_arrays = Self::io_arrays();
        for (k, v) in arrays {
            top_arrays.insert(k, v);
        }
        self.sdfg(name, top_arrays, true, nodes, vec![])
    }

    /// The body (one state) of an SDFG that computes `B` from `A` (named
    /// `A`/`B` at the top, `x`/`y` inside nested SDFGs); returns the state
    /// list and the transients it needs.
    fn tree_body(
        &mut self,
        leaves: usize,
        counter: &mut usize,
    ) -> (Vec<Value>, serde_json::Map<String, Value>) {
        self.tree_level(leaves, counter, "A", "B")
    }

    fn tree_level(
        &mut self,
        leaves: usize,
        counter: &mut usize,
        x: &str,
        y: &str,
    ) -> (Vec<Value>, serde_json::Map<String, Value>) {
        let mut arrays = serde_json::Map::new();
        let mut s = StateBuilder::new();
        if leaves <= 1 {
            self.chain_into(&mut s, &mut arrays, "t", x, y, 2);
            let st = s.finish(self, "leaf", 0);
            return (vec![st], arrays);
        }
        const B: usize = 4;
        let kids = leaves.min(B);
        let mut cur = x.to_string();
        let mut cur_id = s.access(self, x);
        for k in 0..kids {
            let share = leaves / kids + usize::from(k < leaves % kids);
            let next = if k + 1 == kids {
                y.to_string()
            } else {
                let t = format!("c{k}");
                arrays.insert(t.clone(), array(true));
                t
            };
            let nid = s.access(self, &next);
            // The child SDFG.
            *counter += 1;
            let child_name = format!("nested_{}", *counter);
            let (cnodes, mut carrays) = self.tree_level(share, counter, "x", "y");
            carrays.insert("x".into(), array(false));
            carrays.insert("y".into(), array(false));
            let child = self.sdfg(&child_name, carrays, false, cnodes, vec![]);
            let nsdfg = s.push(
                self,
                json!({"type": "NestedSDFG", "label": child_name,
                       "attributes": {"sdfg": child, "label": child_name,
                                      "symbol_mapping": {"N": "N"},
                                      "in_connectors": {"x": null}, "out_connectors": {"y": null}},
                       "scope_entry": null, "scope_exit": null}),
                None,
            );
            let m = memlet(self, &cur, range("0", "N - 1"), "N", true);
            s.edge(cur_id, None, nsdfg, Some("x"), m);
            let m = memlet(self, &next, range("0", "N - 1"), "N", false);
            s.edge(nsdfg, Some("y"), nid, None, m);
            cur = next;
            cur_id = nid;
        }
        let st = s.finish(self, "level", 0);
        (vec![st], arrays)
    }
}
