//! Control flow: regions (loops, conditionals), blocks and states.

use super::*;

impl Reader {
    /// Reads a region-like object (SDFG, ControlFlowRegion, LoopRegion, branch body).
    pub(super) fn region(&mut self, v: &mut Json, path: &str, kind: RegionKind) -> Result<Region> {
        let np = ptr(path, "nodes");
        let ids = id_index(get_array(v, "nodes", path)?, &np)?;
        let nodes = array_mut(v, "nodes");
        let mut blocks = Vec::with_capacity(nodes.len());
        for (i, b) in nodes.iter_mut().enumerate() {
            blocks.push(self.block(b, &ptr(&np, i))?);
            self.done(b);
        }
        let ep = ptr(path, "edges");
        let mut edges = Vec::with_capacity(get_array(v, "edges", path)?.len());
        for (i, e) in array_mut(v, "edges").iter_mut().enumerate() {
            let p = ptr(&ep, i);
            let src = BlockId(lookup(
                &ids,
                e.get("src"),
                || ptr(&p, "src"),
                "source block",
            )?);
            let dst = BlockId(lookup(
                &ids,
                e.get("dst"),
                || ptr(&p, "dst"),
                "destination block",
            )?);
            let dp = format!("{p}/attributes/data/attributes");
            let data = e
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(|d| d.get("attributes"));
            let a: InterstateDto = dto(data, &dp)?;
            let condition = condition(a.condition, &ptr(&dp, "condition"))?;
            let mut assignments = Vec::new();
            for (k, val) in entries(data, "assignments") {
                let vp = ptr(&ptr(&dp, "assignments"), k);
                let e = match val {
                    Json::String(s) => {
                        python::parse_expr(s).map_err(|e| py_err(e, &vp, "assignment"))?
                    }
                    other => sym(other, &vp)?,
                };
                assignments.push((k.to_string(), e));
            }
            edges.push(InterstateEdge {
                src,
                dst,
                condition,
                assignments,
                path: p,
            });
            self.done(e);
        }
        // DaCe's rule: the unique source block if there is one (then
        // `start_block` is not read: it may name a block a transformation
        // removed), else `start_block`.
        let start = match (unique_source(blocks.len(), &edges), v.get("start_block")) {
            (Some(b), _) => Some(b),
            (None, Some(s)) if !s.is_null() => Some(BlockId(lookup(
                &ids,
                Some(s),
                || ptr(path, "start_block"),
                "start block",
            )?)),
            _ => (!blocks.is_empty()).then_some(BlockId(0)),
        };
        Ok(Region {
            label: label_of(v),
            kind,
            blocks,
            edges,
            start,
            path: path.to_string(),
        })
    }

    pub(super) fn block(&mut self, v: &mut Json, path: &str) -> Result<Block> {
        let t = type_of(v, path)?;
        let label = label_of(v);
        let kind = match t {
            "SDFGState" => BlockKind::State(self.state(v, path)?),
            "ControlFlowRegion" | "FunctionCallRegion" | "NamedRegion" => {
                self.enter(path)?;
                let r = self.region(v, path, RegionKind::Plain)?;
                self.depth -= 1;
                BlockKind::Region(r)
            }
            "LoopRegion" => {
                self.enter(path)?;
                let ap = ptr(path, "attributes");
                let a: LoopAttrsDto = dto(v.get("attributes"), &ap)?;
                let info = LoopInfo {
                    variable: a.loop_variable.filter(|s| !s.is_empty()),
                    init: statements(a.init_statement, &ptr(&ap, "init_statement"))?,
                    condition: condition(a.loop_condition, &ptr(&ap, "loop_condition"))?,
                    update: statements(a.update_statement, &ptr(&ap, "update_statement"))?,
                    inverted: a.inverted,
                    update_before_condition: a.update_before_condition.unwrap_or(true),
                };
                let r = self.region(v, path, RegionKind::Loop(info))?;
                self.depth -= 1;
                BlockKind::Region(r)
            }
            "ConditionalBlock" => {
                self.enter(path)?;
                let bp = ptr(path, "branches");
                let mut branches = Vec::new();
                get_array(v, "branches", path)?;
                for (i, br) in array_mut(v, "branches").iter_mut().enumerate() {
                    let p = ptr(&bp, i);
                    let pair = br
                        .as_array_mut()
                        .filter(|a| a.len() == 2)
                        .ok_or_else(|| Error::format(&p, "a branch must be [condition, region]"))?;
                    let cond = if pair[0].is_null() {
                        None
                    } else {
                        let c: CodeDto = dto(Some(&pair[0]), &ptr(&p, 0))?;
                        Some(condition(Some(c), &ptr(&p, 0))?)
                    };
                    let rp = ptr(&p, 1);
                    let rt = type_of(&pair[1], &rp)?;
                    if rt != "ControlFlowRegion" {
                        return Err(Error::format(
                            ptr(&rp, "type"),
                            format!("branch body must be a ControlFlowRegion, found '{rt}'"),
                        ));
                    }
                    branches.push((cond, self.region(&mut pair[1], &rp, RegionKind::Plain)?));
                }
                self.depth -= 1;
                BlockKind::Conditional(branches)
            }
            "BreakBlock" => BlockKind::Break,
            "ContinueBlock" => BlockKind::Continue,
            "ReturnBlock" => BlockKind::Return,
            other => {
                return Err(Error::unsupported(
                    ptr(path, "type"),
                    format!("control-flow block type '{other}'"),
                ));
            }
        };
        Ok(Block {
            label,
            kind,
            path: path.to_string(),
        })
    }

    pub(super) fn state(&mut self, v: &mut Json, path: &str) -> Result<State> {
        let np = ptr(path, "nodes");
        let ids = id_index(get_array(v, "nodes", path)?, &np)?;
        let nodes = array_mut(v, "nodes");
        // Nested SDFGs are numbered in document order: read those states in order.
        let parallel = !nodes
            .iter()
            .any(|n| n.get("type").and_then(Json::as_str) == Some("NestedSDFG"));
        let read = |r: &mut Reader, i: usize, n: &mut Json<'_>| {
            let p = ptr(&np, i);
            let entry = match n.get("scope_entry") {
                Some(s) if !s.is_null() => Some(NodeId(lookup(
                    &ids,
                    Some(s),
                    || ptr(&p, "scope_entry"),
                    "scope entry",
                )?)),
                _ => None,
            };
            Ok((entry, r.node(n, &p, &ids)?))
        };
        let (scope_entry_of, mut out): (Vec<Option<NodeId>>, Vec<Node>) =
            self.read_list(nodes, parallel, &read)?.into_iter().unzip();
        // A map exit's `scope_entry` is its own entry; its scope is the entry's scope.
        for i in 0..out.len() {
            out[i].scope = match &out[i].kind {
                NodeKind::MapExit { entry } => scope_entry_of[entry.index()],
                _ => scope_entry_of[i],
            };
        }
        let ep = ptr(path, "edges");
        get_array(v, "edges", path)?;
        let read = |_: &mut Reader, i: usize, e: &mut Json<'_>| {
            let p = ptr(&ep, i);
            let src = NodeId(lookup(
                &ids,
                e.get("src"),
                || ptr(&p, "src"),
                "source node",
            )?);
            let dst = NodeId(lookup(
                &ids,
                e.get("dst"),
                || ptr(&p, "dst"),
                "destination node",
            )?);
            let conn = |k: &str| -> Result<Option<String>> {
                match e.get(k) {
                    None | Some(Json::Null) => Ok(None),
                    Some(Json::String(s)) => Ok(Some(s.to_string())),
                    Some(other) => Err(Error::format(
                        ptr(&p, k),
                        format!("connector must be a string, found {}", kind_of(other)),
                    )),
                }
            };
            let (src_conn, dst_conn) = (conn("src_connector")?, conn("dst_connector")?);
            let data = e
                .get("attributes")
                .and_then(|a| a.get("data"))
                .and_then(|d| d.get("attributes"));
            let memlet = memlet(data, &|| format!("{p}/attributes/data/attributes"))?;
            Ok(DataEdge {
                src,
                src_conn,
                dst,
                dst_conn,
                memlet,
                path: p,
            })
        };
        let edges = self.read_list(array_mut(v, "edges"), true, &read)?;
        let ap = ptr(path, "attributes");
        let a: StateAttrsDto = dto(v.get("attributes"), &ap)?;
        let symbol_instrument = data_instrument(
            a.symbol_instrument.as_deref(),
            a.symbol_instrument_condition,
            &ap,
            "symbol_instrument",
        )?;
        Ok(State {
            nodes: out,
            edges,
            symbol_instrument,
        })
    }
}

pub(super) fn unique_source(n: usize, edges: &[InterstateEdge]) -> Option<BlockId> {
    let mut has_in = vec![false; n];
    for e in edges {
        has_in[e.dst.index()] = true;
    }
    let mut sources = has_in
        .iter()
        .enumerate()
        .filter(|(_, h)| !**h)
        .map(|(i, _)| BlockId(i as u32));
    match (sources.next(), sources.next()) {
        (Some(s), None) => Some(s),
        _ => None,
    }
}
