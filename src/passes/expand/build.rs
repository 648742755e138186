//! The building blocks of every expansion: the operands of a library node
//! (its memlets), and [`Contraction`], one shape that covers every node
//! sdfgc expands: a parallel map over the output, an optional reduction over
//! inner indices, and a final value written to the output element.

use std::collections::BTreeSet;

use crate::diag::{Error, Result};
use crate::ir::simplify::{simplify, substitute};
use crate::ir::*;

/// One memlet of a library node, seen from the node.
#[derive(Clone, Debug)]
pub(super) struct Operand {
    /// The library connector.
    pub conn: String,
    /// Index of the edge in the state.
    pub edge: usize,
    /// Container the memlet names.
    pub data: String,
    /// Its descriptor.
    pub desc: DataDesc,
    /// The memlet's subset (the whole container when the memlet has none).
    pub sub: Subset,
    /// Dimensions of `sub` whose extent is not the literal 1 (DaCe's squeeze).
    pub nonunit: Vec<usize>,
    /// Write-conflict resolution of the memlet.
    pub wcr: Option<Wcr>,
}

impl Operand {
    /// Extent of the `k`-th non-unit dimension.
    pub fn extent(&self, k: usize) -> Expr {
        self.sub[self.nonunit[k]].extent()
    }

    /// The single element at the given positions: `(dim, index)` pairs,
    /// index 0 being the first element of the subset in that dimension;
    /// the other dimensions stay at their start.
    pub fn at(&self, dims: &[(usize, Expr)]) -> Subset {
        self.sub
            .iter()
            .enumerate()
            .map(|(d, r)| {
                let idx = match dims.iter().find(|(k, _)| *k == d) {
                    Some((_, v)) => simplify(&Expr::bin(
                        BinaryOp::Add,
                        r.start.clone(),
                        Expr::bin(BinaryOp::Mul, v.clone(), r.step.clone()),
                    )),
                    None => r.start.clone(),
                };
                RangeDim {
                    start: idx.clone(),
                    end: idx,
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                }
            })
            .collect()
    }

    /// The element at the given positions of the non-unit dimensions, in order.
    pub fn at_nonunit(&self, idx: &[Expr]) -> Subset {
        let dims: Vec<(usize, Expr)> = self
            .nonunit
            .iter()
            .copied()
            .zip(idx.iter().cloned())
            .collect();
        self.at(&dims)
    }
}

/// An input element a tasklet reads.
#[derive(Clone, Debug)]
pub(super) struct Read {
    /// Tasklet connector (a name the tasklet's expression uses).
    pub conn: String,
    /// Operand read.
    pub op: usize,
    /// The element.
    pub at: Subset,
}

/// How the values of the inner iterations combine.
#[derive(Clone, Debug)]
pub(super) struct Fold {
    /// The combining lambda.
    pub wcr: Wcr,
    /// Initial value; None folds into the output's previous value (DaCe's
    /// pure Reduce without identity).
    pub identity: Option<Expr>,
}

/// `out[outer] = finish(fold over inner of body(reads))`.
#[derive(Clone, Debug)]
pub(super) struct Contraction {
    /// Extents of the parallel output loops (variables from [`Builder::outer_var`]).
    pub outer: Vec<Expr>,
    /// Extents of the reduction loops (variables from [`Builder::inner_var`]).
    pub inner: Vec<Expr>,
    /// Elements read per inner iteration.
    pub reads: Vec<Read>,
    /// The value of one inner iteration, in the reads' connectors.
    pub body: Expr,
    /// Required when `inner` is not empty.
    pub fold: Option<Fold>,
    /// Elements the final value reads.
    pub finish_reads: Vec<Read>,
    /// The final value in `__acc` (the fold) and the finish reads; None: `__acc`.
    pub finish: Option<Expr>,
    /// The output operand.
    pub out: usize,
    /// The output element.
    pub out_at: Subset,
    /// Write-conflict resolution of the final write (the output memlet's own
    /// one, when it has one, must be absent).
    pub out_wcr: Option<Wcr>,
}

/// Name of the fold's value in a finish expression.
pub(super) const ACC: &str = "__acc";

/// Builds the expansion of one library node in its state.
pub(super) struct Builder<'a> {
    st: &'a mut State,
    arrays: &'a mut NameMap<DataDesc>,
    /// The library node.
    pub id: NodeId,
    /// Its label (for names and messages).
    pub label: String,
    /// Its JSON pointer.
    pub path: String,
    scope: Option<NodeId>,
    schedule: Schedule,
    /// The node runs inside a map (of this SDFG or around a nested SDFG).
    in_map: bool,
    /// Prefix of every name the expansion introduces.
    tag: String,
    /// Operands taken so far.
    pub ops: Vec<Operand>,
    used: BTreeSet<usize>,
    /// Edges already added from (operand, map entry) on, to share memlet paths.
    routed: BTreeSet<(usize, NodeId)>,
    first: Option<NodeId>,
    last: Option<NodeId>,
}

fn is_gpu_schedule(s: Schedule) -> bool {
    matches!(
        s,
        Schedule::GpuDevice | Schedule::GpuDefault | Schedule::GpuPersistent
    )
}

fn element_memlet(data: &str, at: Subset, wcr: Option<Wcr>) -> Memlet {
    Memlet {
        data: Some(data.to_string()),
        subset: Some(at),
        other_subset: None,
        wcr,
        dynamic: false,
        volume: Expr::Int(1),
        is_data_src: None,
    }
}

fn empty_memlet() -> Memlet {
    Memlet {
        data: None,
        subset: None,
        other_subset: None,
        wcr: None,
        dynamic: false,
        volume: Expr::Int(0),
        is_data_src: None,
    }
}

/// True for the literal 0 (integer or float) after simplification.
pub(super) fn is_zero(e: &Expr) -> bool {
    matches!(simplify(e), Expr::Int(0)) || matches!(simplify(e), Expr::Float(f) if f == 0.0)
}

/// True for the literal 1 (integer or float) after simplification.
pub(super) fn is_one(e: &Expr) -> bool {
    matches!(simplify(e), Expr::Int(1)) || matches!(simplify(e), Expr::Float(f) if f == 1.0)
}

/// `a * b`, leaving out a factor that is the literal 1.
pub(super) fn scaled(alpha: &Expr, x: Expr) -> Expr {
    if is_one(alpha) {
        x
    } else {
        Expr::bin(BinaryOp::Mul, simplify(alpha), x)
    }
}

/// `lambda a, b: <body>` over the parameters `__a` (old) and `__b` (new).
pub(super) fn lambda(body: Expr) -> Wcr {
    let text = format!("lambda __a, __b: {}", crate::ir::cexpr::to_cpp(&body));
    let kind = match &body {
        Expr::Binary(BinaryOp::Add, a, b) if **a == Expr::sym("__a") && **b == Expr::sym("__b") => {
            WcrKind::Sum
        }
        _ => WcrKind::Custom,
    };
    Wcr {
        text,
        kind,
        params: ("__a".to_string(), "__b".to_string()),
        body,
    }
}

/// `lambda a, b: a + b`.
pub(super) fn sum_wcr() -> Wcr {
    lambda(Expr::bin(BinaryOp::Add, Expr::sym("__a"), Expr::sym("__b")))
}

/// The write-conflict resolution `old = beta * old + new` (`+=` for beta 1).
pub(super) fn beta_wcr(beta: &Expr) -> Wcr {
    if is_one(beta) {
        return sum_wcr();
    }
    lambda(Expr::bin(
        BinaryOp::Add,
        Expr::bin(BinaryOp::Mul, simplify(beta), Expr::sym("__a")),
        Expr::sym("__b"),
    ))
}

impl<'a> Builder<'a> {
    /// Starts the expansion of library node `id`.
    pub fn new(
        st: &'a mut State,
        arrays: &'a mut NameMap<DataDesc>,
        id: NodeId,
        in_map: bool,
        serial: usize,
    ) -> Builder<'a> {
        let node = &st.nodes[id.index()];
        let schedule = match &node.kind {
            NodeKind::Library(l) => l.schedule,
            _ => Schedule::Default,
        };
        let label = node.label.clone();
        let path = node.path.clone();
        let scope = node.scope;
        Builder {
            in_map: in_map || scope.is_some(),
            st,
            arrays,
            id,
            label,
            path,
            scope,
            schedule,
            tag: format!("__lib{serial}"),
            ops: Vec::new(),
            used: BTreeSet::new(),
            routed: BTreeSet::new(),
            first: None,
            last: None,
        }
    }

    /// An error about this node.
    pub fn unsupported(&self, what: impl std::fmt::Display) -> Error {
        Error::unsupported(&self.path, format!("library node '{}': {what}", self.label))
    }

    /// An invalid-input error about this node.
    pub fn invalid(&self, what: impl std::fmt::Display) -> Error {
        Error::invalid(&self.path, format!("library node '{}': {what}", self.label))
    }

    /// Variable of the `k`-th outer (output) loop.
    pub fn outer_var(&self, k: usize) -> Expr {
        Expr::sym(format!("{}_o{k}", self.tag))
    }

    /// Variable of the `k`-th inner (reduction) loop.
    pub fn inner_var(&self, k: usize) -> Expr {
        Expr::sym(format!("{}_r{k}", self.tag))
    }

    /// True if operand `o` is an input (its edge enters the node).
    pub fn is_input(&self, o: &Operand) -> bool {
        self.st.edges[o.edge].dst == self.id
    }

    /// True if the node runs inside a map (of this SDFG or a caller).
    pub fn in_map(&self) -> bool {
        self.in_map
    }

    /// The operand `i`.
    pub fn op(&self, i: usize) -> &Operand {
        &self.ops[i]
    }

    fn take(&mut self, conn: Option<&str>, incoming: bool) -> Result<Option<usize>> {
        let found = self.st.edges.iter().enumerate().find(|(i, e)| {
            let (node, c) = if incoming {
                (e.dst, &e.dst_conn)
            } else {
                (e.src, &e.src_conn)
            };
            node == self.id
                && !e.memlet.is_empty()
                && !self.ops.iter().any(|o| o.edge == *i)
                && conn.is_none_or(|want| c.as_deref() == Some(want))
        });
        let Some((edge, e)) = found else {
            return Ok(None);
        };
        let data = e.memlet.data.clone().unwrap_or_default();
        let desc = self
            .arrays
            .get(&data)
            .ok_or_else(|| Error::invalid(&e.path, format!("unknown data '{data}'")))?
            .clone();
        let sub: Subset = match &e.memlet.subset {
            Some(s) if s.len() == desc.rank() => s.clone(),
            Some(_) => {
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "library node '{}': memlet of '{data}' with a subset of another rank than the container",
                        self.label
                    ),
                ));
            }
            None => desc
                .shape
                .iter()
                .map(|s| RangeDim {
                    start: Expr::Int(0),
                    end: simplify(&Expr::bin(BinaryOp::Sub, s.clone(), Expr::Int(1))),
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                })
                .collect(),
        };
        let nonunit = (0..sub.len())
            .filter(|&k| sub[k].extent() != Expr::Int(1))
            .collect();
        let conn = (if incoming { &e.dst_conn } else { &e.src_conn })
            .clone()
            .unwrap_or_else(|| if incoming { "_in" } else { "_out" }.to_string());
        self.ops.push(Operand {
            conn,
            edge,
            data,
            desc,
            sub,
            nonunit,
            wcr: e.memlet.wcr.clone(),
        });
        Ok(Some(self.ops.len() - 1))
    }

    /// The connectors of the node's inputs with data, in edge order.
    pub fn connected_inputs(&self) -> Vec<String> {
        self.st
            .edges
            .iter()
            .filter(|e| e.dst == self.id && !e.memlet.is_empty())
            .map(|e| e.dst_conn.clone().unwrap_or_default())
            .collect()
    }

    /// The input on connector `conn`.
    pub fn input(&mut self, conn: &str) -> Result<usize> {
        self.take(Some(conn), true)?
            .ok_or_else(|| self.invalid(format_args!("no input on connector '{conn}'")))
    }

    /// The input on connector `conn`, if connected.
    pub fn input_opt(&mut self, conn: &str) -> Result<Option<usize>> {
        self.take(Some(conn), true)
    }

    /// The output on `conn`, if it has an edge.
    pub fn output_opt(&mut self, conn: &str) -> Result<Option<usize>> {
        self.take(Some(conn), false)
    }

    /// The output on connector `conn`.
    pub fn output(&mut self, conn: &str) -> Result<usize> {
        self.take(Some(conn), false)?
            .ok_or_else(|| self.invalid(format_args!("no output on connector '{conn}'")))
    }

    /// The first input, whatever its connector (Reduce, Transpose).
    pub fn any_input(&mut self) -> Result<usize> {
        self.take(None, true)?
            .ok_or_else(|| self.invalid("no input"))
    }

    /// The first output, whatever its connector.
    pub fn any_output(&mut self) -> Result<usize> {
        self.take(None, false)?
            .ok_or_else(|| self.invalid("no output"))
    }

    /// Requires exactly `n` non-unit dimensions on operand `i`.
    pub fn require_dims(&self, i: usize, n: &[usize], what: &str) -> Result<()> {
        let o = &self.ops[i];
        if n.contains(&o.nonunit.len()) {
            return Ok(());
        }
        Err(self.unsupported(format_args!(
            "{what} '{}' ({}) has {} non-unit dimensions",
            o.conn,
            o.data,
            o.nonunit.len()
        )))
    }

    /// True when the node runs at the top of a state (not inside a map) on
    /// GPU data or with a GPU schedule: its loops become kernels there.
    fn device_level(&self) -> bool {
        !self.in_map
            && (is_gpu_schedule(self.schedule) || self.ops.iter().any(|o| o.desc.storage.is_gpu()))
    }

    /// Schedule of the expansion's parallel map.
    fn parallel_schedule(&self) -> Schedule {
        if self.in_map {
            return Schedule::Default;
        }
        match self.schedule {
            _ if self.device_level() => Schedule::GpuDevice,
            Schedule::Sequential => Schedule::Sequential,
            Schedule::CpuMulticore => Schedule::CpuMulticore,
            _ => Schedule::Default,
        }
    }

    fn add_node(&mut self, label: String, scope: Option<NodeId>, kind: NodeKind) -> NodeId {
        self.st.nodes.push(Node {
            label,
            scope,
            kind,
            path: self.path.clone(),
        });
        NodeId((self.st.nodes.len() - 1) as u32)
    }

    fn add_edge(
        &mut self,
        src: NodeId,
        src_conn: Option<String>,
        dst: NodeId,
        dst_conn: Option<String>,
        memlet: Memlet,
    ) -> usize {
        self.st.edges.push(DataEdge {
            src,
            src_conn,
            dst,
            dst_conn,
            memlet,
            path: self.path.clone(),
        });
        self.st.edges.len() - 1
    }

    /// A map over `0..extent` per variable; returns (entry, exit).
    fn add_map(
        &mut self,
        what: &str,
        vars: &[Expr],
        extents: &[Expr],
        schedule: Schedule,
        scope: Option<NodeId>,
    ) -> (NodeId, NodeId) {
        let params: Vec<String> = vars
            .iter()
            .map(|v| match v {
                Expr::Sym(s) => s.clone(),
                _ => unreachable!("map variables are symbols"),
            })
            .collect();
        let range = extents
            .iter()
            .map(|n| RangeDim {
                start: Expr::Int(0),
                end: simplify(&Expr::bin(BinaryOp::Sub, n.clone(), Expr::Int(1))),
                step: Expr::Int(1),
                tile: Expr::Int(1),
            })
            .collect();
        let label = format!("{}_{what}", self.label);
        let entry_id = NodeId(self.st.nodes.len() as u32);
        let exit_id = NodeId(entry_id.0 + 1);
        self.add_node(
            label.clone(),
            scope,
            NodeKind::MapEntry(MapEntry {
                label: label.clone(),
                params,
                range,
                schedule,
                collapse: 1,
                gpu_block_size: None,
                omp_num_threads: 0,
                unroll: false,
                exit: exit_id,
                consume: None,
                dynamic_inputs: NameMap::default(),
            }),
        );
        self.add_node(label, scope, NodeKind::MapExit { entry: entry_id });
        (entry_id, exit_id)
    }

    /// A tasklet `__out = value` with the given input connectors.
    fn add_tasklet(
        &mut self,
        what: &str,
        inputs: &[String],
        value: Expr,
        scope: Option<NodeId>,
    ) -> NodeId {
        let text = format!("__out = {}", crate::ir::cexpr::to_cpp(&value));
        let none = CodeBlock {
            code: String::new(),
            language: Language::Cpp,
        };
        let mut ins = NameMap::default();
        for c in inputs {
            ins.insert(c.clone(), ConnType::Unknown);
        }
        let mut outs = NameMap::default();
        outs.insert("__out".to_string(), ConnType::Unknown);
        self.add_node(
            format!("{}_{what}", self.label),
            scope,
            NodeKind::Tasklet(Tasklet {
                code: CodeBlock {
                    code: text,
                    language: Language::Python,
                },
                stmts: vec![Stmt::Assign {
                    target: Target::Name("__out".to_string()),
                    op: None,
                    value,
                }],
                code_global: none.clone(),
                code_init: none.clone(),
                code_exit: none,
                side_effects: false,
                callback: false,
                environments: Vec::new(),
                state_fields: Vec::new(),
                inputs: ins,
                outputs: outs,
            }),
        )
    }

    fn add_access(&mut self, data: &str, scope: Option<NodeId>) -> NodeId {
        self.add_node(
            data.to_string(),
            scope,
            NodeKind::Access(AccessNode {
                data: data.to_string(),
                setzero: false,
                instrument: None,
            }),
        )
    }

    /// A register scalar transient of type `t`, private to the expansion.
    fn add_scalar(&mut self, what: &str, t: DType) -> String {
        let mut name = format!("{}_{what}", self.tag);
        while self.arrays.contains_key(&name) {
            name.push('_');
        }
        self.arrays.insert(
            name.clone(),
            DataDesc {
                kind: DataKind::Scalar,
                dtype: t,
                shape: vec![Expr::Int(1)],
                strides: vec![Expr::Int(1)],
                total_size: Expr::Int(1),
                offset: vec![Expr::Int(0)],
                start_offset: Expr::Int(0),
                transient: true,
                storage: Storage::Register,
                lifetime: Lifetime::Scope,
                pool: false,
                may_alias: false,
                path: self.path.clone(),
                member: None,
            },
        );
        name
    }

    /// Connects each read from its operand's source through the map entries
    /// `chain` (outermost first) to `tasklet`.
    fn route_reads(&mut self, reads: &[Read], chain: &[NodeId], tasklet: NodeId) {
        for r in reads {
            let op = self.ops[r.op].clone();
            let in_conn = format!("IN_{}", op.conn);
            let out_conn = format!("OUT_{}", op.conn);
            // The memlet from the operand's source into the first node.
            let first = chain.first().copied().unwrap_or(tasklet);
            if chain.is_empty() || !self.routed.contains(&(r.op, first)) {
                let (dst_conn, subset) = if chain.is_empty() {
                    (Some(r.conn.clone()), r.at.clone())
                } else {
                    (Some(in_conn.clone()), op.sub.clone())
                };
                let e = if self.used.insert(op.edge) {
                    op.edge
                } else {
                    let copy = self.st.edges[op.edge].clone();
                    self.st.edges.push(copy);
                    self.st.edges.len() - 1
                };
                let edge = &mut self.st.edges[e];
                edge.dst = first;
                edge.dst_conn = dst_conn;
                edge.memlet.subset = Some(subset);
                if chain.is_empty() {
                    edge.memlet.volume = Expr::Int(1);
                }
                if !chain.is_empty() {
                    self.routed.insert((r.op, first));
                }
            }
            for w in chain.windows(2) {
                if self.routed.insert((r.op, w[1])) {
                    let m = element_memlet(&op.data, op.sub.clone(), None);
                    self.add_edge(w[0], Some(out_conn.clone()), w[1], Some(in_conn.clone()), m);
                }
            }
            if let Some(&last) = chain.last() {
                let m = element_memlet(&op.data, r.at.clone(), None);
                self.add_edge(last, Some(out_conn), tasklet, Some(r.conn.clone()), m);
            }
        }
    }

    /// Connects `tasklet`'s output through the map exits `chain` (innermost
    /// first) to the output operand's destination.
    fn route_write(
        &mut self,
        tasklet: NodeId,
        chain: &[NodeId],
        out: usize,
        at: Subset,
        wcr: Option<Wcr>,
    ) {
        let op = self.ops[out].clone();
        let in_conn = format!("IN_{}", op.conn);
        let out_conn = format!("OUT_{}", op.conn);
        let mut src = (tasklet, "__out".to_string());
        let mut sub = at.clone();
        for &x in chain {
            let m = element_memlet(&op.data, sub.clone(), wcr.clone());
            self.add_edge(src.0, Some(src.1), x, Some(in_conn.clone()), m);
            src = (x, out_conn.clone());
            sub = op.sub.clone();
        }
        self.used.insert(op.edge);
        let e = &mut self.st.edges[op.edge];
        e.src = src.0;
        e.src_conn = Some(src.1);
        e.memlet.wcr = wcr;
        if chain.is_empty() {
            e.memlet.subset = Some(at);
            e.memlet.volume = Expr::Int(1);
        }
    }

    /// Writes the contraction in place of the library node.
    pub fn emit(&mut self, c: Contraction) -> Result<()> {
        let out_wcr = match (&self.ops[c.out].wcr, &c.out_wcr) {
            // `beta = 1` into a memlet that already accumulates with `+`.
            (Some(a), Some(b)) if a.kind == b.kind && a.kind != WcrKind::Custom => Some(a.clone()),
            (Some(_), Some(_)) => {
                return Err(self.unsupported(
                    "an output memlet with write-conflict resolution on top of the node's own accumulation",
                ));
            }
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let scope = self.scope;
        let par = self.parallel_schedule();
        let outer_vars: Vec<Expr> = (0..c.outer.len()).map(|k| self.outer_var(k)).collect();
        let inner_vars: Vec<Expr> = (0..c.inner.len()).map(|k| self.inner_var(k)).collect();
        let (oe, ox) = if c.outer.is_empty() {
            (None, None)
        } else {
            let (e, x) = self.add_map("map", &outer_vars, &c.outer, par, scope);
            (Some(e), Some(x))
        };
        let in_scope = oe.or(scope);
        let outer_entry: Vec<NodeId> = oe.into_iter().collect();
        let outer_exit: Vec<NodeId> = ox.into_iter().collect();
        let out = c.out;
        if c.inner.is_empty() {
            let value = match &c.finish {
                Some(f) => substitute(f, &mut |n| (n == ACC).then(|| c.body.clone())),
                None => c.body.clone(),
            };
            let reads: Vec<Read> = c.reads.iter().chain(&c.finish_reads).cloned().collect();
            let conns: Vec<String> = reads.iter().map(|r| r.conn.clone()).collect();
            let t = self.add_tasklet("compute", &conns, value, in_scope);
            if let (Some(e), true) = (oe, reads.is_empty()) {
                self.add_edge(e, None, t, None, empty_memlet());
            }
            self.route_reads(&reads, &outer_entry, t);
            self.route_write(t, &outer_exit, out, c.out_at.clone(), out_wcr);
            self.first = Some(oe.unwrap_or(t));
            self.last = Some(ox.unwrap_or(t));
            return Ok(());
        }
        let fold = c
            .fold
            .clone()
            .ok_or_else(|| self.invalid("a reduction without a combining function"))?;
        let conns: Vec<String> = c.reads.iter().map(|r| r.conn.clone()).collect();
        let device_full = c.outer.is_empty() && self.device_level();
        let plain = c.finish.is_none() && c.finish_reads.is_empty();
        // The output memlet accumulates with the fold's own operator: every
        // value may combine into the output directly.
        let same_wcr = out_wcr
            .as_ref()
            .is_some_and(|w| w.kind == fold.wcr.kind && w.kind != WcrKind::Custom);
        let direct = fold.identity.is_none() || (device_full && plain && same_wcr);
        if device_full && !plain {
            return Err(self.unsupported(
                "a full reduction on GPU data whose result is scaled or combined with other inputs",
            ));
        }
        if direct && !(plain && (out_wcr.is_none() || same_wcr)) {
            return Err(self.unsupported(
                "a reduction without identity whose result is scaled or written with another write-conflict resolution",
            ));
        }
        if device_full && out_wcr.is_some() && !direct {
            return Err(self.unsupported(
                "a full reduction on GPU data written with another write-conflict resolution",
            ));
        }
        match fold.identity.clone() {
            _ if direct => {
                // Every value is combined into the output element (DaCe's pure
                // Reduce without identity folds into the previous output).
                let sched = if device_full {
                    par
                } else {
                    Schedule::Sequential
                };
                let (me, mx) = self.add_map("reduce", &inner_vars, &c.inner, sched, in_scope);
                let t = self.add_tasklet("value", &conns, c.body.clone(), Some(me));
                let chain: Vec<NodeId> = outer_entry.iter().copied().chain([me]).collect();
                self.route_reads(&c.reads, &chain, t);
                let exits: Vec<NodeId> =
                    [mx].into_iter().chain(outer_exit.iter().copied()).collect();
                self.route_write(t, &exits, out, c.out_at.clone(), Some(fold.wcr));
                self.first = Some(oe.unwrap_or(me));
                self.last = Some(ox.unwrap_or(mx));
            }
            None => unreachable!("no identity is direct"),
            Some(identity) if device_full => {
                // The output element starts at the identity; every point of a
                // parallel map (a kernel) combines into it.
                let dtype = self.ops[out].desc.dtype;
                let init = self.add_tasklet("init", &[], identity_value(&identity, dtype), scope);
                let data = self.ops[out].data.clone();
                let d1 = self.add_access(&data, scope);
                let m = element_memlet(&data, c.out_at.clone(), None);
                self.add_edge(init, Some("__out".to_string()), d1, None, m);
                let (me, mx) = self.add_map("reduce", &inner_vars, &c.inner, par, scope);
                self.add_edge(d1, None, me, None, empty_memlet());
                let t = self.add_tasklet("value", &conns, c.body.clone(), Some(me));
                self.route_reads(&c.reads, &[me], t);
                self.route_write(t, &[mx], out, c.out_at.clone(), Some(fold.wcr));
                self.first = Some(init);
                self.last = Some(mx);
            }
            Some(identity) => {
                // A register accumulates the inner loop sequentially; the
                // outer map is parallel.
                let dtype = self.ops[out].desc.dtype;
                let acc = self.add_scalar("acc", dtype);
                let init =
                    self.add_tasklet("init", &[], identity_value(&identity, dtype), in_scope);
                if let Some(e) = oe {
                    self.add_edge(e, None, init, None, empty_memlet());
                }
                let a1 = self.add_access(&acc, in_scope);
                let acc_at = vec![RangeDim {
                    start: Expr::Int(0),
                    end: Expr::Int(0),
                    step: Expr::Int(1),
                    tile: Expr::Int(1),
                }];
                self.add_edge(
                    init,
                    Some("__out".to_string()),
                    a1,
                    None,
                    element_memlet(&acc, acc_at.clone(), None),
                );
                let (me, mx) = self.add_map(
                    "reduce",
                    &inner_vars,
                    &c.inner,
                    Schedule::Sequential,
                    in_scope,
                );
                self.add_edge(a1, None, me, None, empty_memlet());
                let t = self.add_tasklet("value", &conns, c.body.clone(), Some(me));
                let chain: Vec<NodeId> = outer_entry.iter().copied().chain([me]).collect();
                self.route_reads(&c.reads, &chain, t);
                let a2 = self.add_access(&acc, in_scope);
                self.add_edge(
                    t,
                    Some("__out".to_string()),
                    mx,
                    Some("IN___acc".to_string()),
                    element_memlet(&acc, acc_at.clone(), Some(fold.wcr.clone())),
                );
                self.add_edge(
                    mx,
                    Some("OUT___acc".to_string()),
                    a2,
                    None,
                    element_memlet(&acc, acc_at.clone(), Some(fold.wcr)),
                );
                let mut conns: Vec<String> = vec![ACC.to_string()];
                conns.extend(c.finish_reads.iter().map(|r| r.conn.clone()));
                let value = c.finish.clone().unwrap_or_else(|| Expr::sym(ACC));
                let fin = self.add_tasklet("store", &conns, value, in_scope);
                self.add_edge(
                    a2,
                    None,
                    fin,
                    Some(ACC.to_string()),
                    element_memlet(&acc, acc_at, None),
                );
                self.route_reads(&c.finish_reads, &outer_entry, fin);
                self.route_write(fin, &outer_exit, out, c.out_at.clone(), out_wcr);
                self.first = Some(oe.unwrap_or(init));
                self.last = Some(ox.unwrap_or(fin));
            }
        }
        Ok(())
    }

    /// Makes the expansion just emitted a block-wide reduction (DaCe's
    /// Reduce implementation "CUDA (block)", a CUB `BlockReduce`): the
    /// final tasklet combines the value of every thread of the block with
    /// `wcr` (`sdfgc_block_reduce`, every thread gets the result; CUB's is
    /// defined in the first thread only). Refused where the expansion does
    /// not end in one tasklet writing one value (DaCe's expansion takes
    /// full reductions only).
    pub fn block_wide(&mut self, wcr: &Wcr) -> Result<()> {
        let refusal = self.unsupported(
            "Reduce with implementation 'CUDA (block)' that is not a full reduction into one element",
        );
        let refuse = move || refusal;
        let Some(last) = self.last else {
            return Err(refuse());
        };
        let NodeKind::Tasklet(t) = &mut self.st.nodes[last.index()].kind else {
            return Err(refuse());
        };
        let [
            Stmt::Assign {
                target: Target::Name(out),
                op: None,
                value,
            },
        ] = t.stmts.as_slice()
        else {
            return Err(refuse());
        };
        if out != "__out" {
            return Err(refuse());
        }
        let (a, b) = &wcr.params;
        t.code = CodeBlock {
            code: format!(
                "__out = sdfgc_block_reduce({}, [](const auto &{a}, const auto &{b}) {{ return {}; }});",
                crate::ir::cexpr::to_cpp(value),
                crate::ir::cexpr::to_cpp(&wcr.body)
            ),
            language: Language::Cpp,
        };
        t.stmts.clear();
        Ok(())
    }

    /// Moves the node's remaining empty (ordering) edges to the expansion's
    /// first and last nodes; edges of unused inputs are dropped with the node.
    pub fn finish(self) -> Result<()> {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return Err(self.invalid("expansion produced nothing"));
        };
        let id = self.id;
        for e in self.st.edges.iter_mut() {
            if !e.memlet.is_empty() {
                continue;
            }
            if e.dst == id {
                e.dst = first;
                e.dst_conn = None;
            }
            if e.src == id {
                e.src = last;
                e.src_conn = None;
            }
        }
        Ok(())
    }
}

/// The identity of a reduction as a value of type `t`: integral values as
/// integers, float infinities and out-of-range values clamped to the limits
/// of an integer type.
pub(super) fn identity_value(e: &Expr, t: DType) -> Expr {
    let v = simplify(e);
    let Some((lo, hi)) = t.int_range() else {
        return v;
    };
    let x: i128 = match v {
        Expr::Float(f) if f.is_nan() => return v,
        Expr::Float(f) if f <= lo as f64 => lo,
        Expr::Float(f) if f >= hi as f64 => hi,
        Expr::Float(f) if f.fract() == 0.0 => f as i128,
        Expr::Int(i) => i128::from(i).clamp(lo, hi),
        _ => return v,
    };
    int_literal(x, t)
}

/// An integer literal of type `t` that C++ reads without overflow.
fn int_literal(x: i128, t: DType) -> Expr {
    if x == i128::from(i64::MIN) {
        return Expr::bin(BinaryOp::Sub, Expr::Int(-i64::MAX), Expr::Int(1));
    }
    match i64::try_from(x) {
        Ok(v) => Expr::Int(v),
        // u64 values above i64::MAX: the cast of their two's complement.
        Err(_) => Expr::Call(Func::Cast(t), vec![Expr::Int(x as u64 as i64)]),
    }
}
