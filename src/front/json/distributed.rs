//! DaCe 2.x's distributed descriptors: `ProcessGrid`, `SubArray` and
//! `RedistrArray` entries of `_arrays`. They are no memory (DaCe allocates
//! nothing for them and passes none as an argument): their state fields are
//! declared by MPI Dummy nodes and created by the SDFG's init code, as in
//! DaCe 1.0.2. An MPI library node reads them through access nodes on its
//! connectors (`_grid`, `_scatter_grid`, `_subarray`, `_rdistrarray`, ...);
//! the reader turns those edges into the node's grid and field names (DaCe
//! 1.0.2's attributes) and drops the access nodes. Any other use is refused
//! by name.

use super::*;

/// One distributed descriptor.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Distributed {
    /// A process grid (an MPI Cartesian communicator).
    Grid,
    /// A subarray datatype over the process grid `pgrid`, if any.
    SubArray { pgrid: Option<String> },
    /// A redistribution from subarray `array_a` to subarray `array_b`.
    Redistr { array_a: String, array_b: String },
}

impl Distributed {
    fn what(&self) -> &'static str {
        match self {
            Distributed::Grid => "process grid",
            Distributed::SubArray { .. } => "subarray",
            Distributed::Redistr { .. } => "redistribution",
        }
    }
}

/// The descriptor `v` of type `t`, if it is a distributed one.
pub(super) fn descriptor(t: &str, v: &Json, path: &str) -> Result<Option<Distributed>> {
    let av = v.get("attributes");
    let text = |k: &str| member(av, k).and_then(Json::as_str).map(str::to_string);
    let need = |k: &str| {
        text(k).ok_or_else(|| {
            Error::format(
                ptr(&ptr(path, "attributes"), k),
                format!("{t} without '{k}'"),
            )
        })
    };
    Ok(Some(match t {
        "ProcessGrid" => Distributed::Grid,
        "SubArray" => Distributed::SubArray {
            pgrid: text("pgrid"),
        },
        "RedistrArray" => Distributed::Redistr {
            array_a: need("array_a")?,
            array_b: need("array_b")?,
        },
        _ => return Ok(None),
    }))
}

/// Each redistribution's input and output process grids (the `pgrid` of its
/// subarrays), as DaCe 1.0.2's `_rdistrarrays` gives them.
pub(super) fn redistributions(
    descs: &NameMap<Distributed>,
    ap: &str,
) -> Result<Vec<(String, (String, String))>> {
    let grid_of = |sa: &str| match descs.get(sa) {
        Some(Distributed::SubArray { pgrid: Some(g) }) => Some(g.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, d) in descs.iter() {
        if let Distributed::Redistr { array_a, array_b } = d {
            let mut grids = Vec::new();
            for (side, sa) in [("array_a", array_a), ("array_b", array_b)] {
                grids.push(grid_of(sa).ok_or_else(|| {
                    Error::invalid(
                        ptr(&ptr(&ptr(ap, "_arrays"), name), "attributes"),
                        format!("redistribution '{name}': its {side} '{sa}' is no SubArray with a process grid in '_arrays'"),
                    )
                })?);
            }
            out.push((name.clone(), (grids[0].clone(), grids[1].clone())));
        }
    }
    Ok(out)
}

/// The MPI node connectors that take a distributed descriptor: (connector,
/// the descriptor it takes, the node attribute DaCe 1.0.2 named it by).
const CONNECTORS: &[(&str, &str, &str)] = &[
    ("_grid", "process grid", "grid"),
    ("_scatter_grid", "process grid", "scatter_grid"),
    ("_bcast_grid", "process grid", "bcast_grid"),
    ("_gather_grid", "process grid", "gather_grid"),
    ("_reduce_grid", "process grid", "reduce_grid"),
    // A sub-grid's Dummy reads its parent (the init code uses it).
    ("_parent_grid", "process grid", ""),
    ("_subarray", "subarray", "subarray_type"),
    ("_rdistrarray", "redistribution", "redistr"),
];

/// The calls whose DaCe 2.x expansion calls on the `_grid` connector's
/// communicator (the others call on `MPI_COMM_WORLD` whatever it is).
const GRID_CALLS: &[MpiCall] = &[
    MpiCall::Bcast,
    MpiCall::Reduce,
    MpiCall::Allreduce,
    MpiCall::Alltoall,
    MpiCall::Isend,
    MpiCall::Irecv,
];

/// Turns the edges between the access nodes of distributed descriptors and
/// MPI library nodes into the nodes' attributes and removes those access
/// nodes (see the module documentation).
pub(super) fn attach(body: &mut Region, descs: &NameMap<Distributed>) -> Result<()> {
    if descs.is_empty() {
        return Ok(());
    }
    let mut err = None;
    each_state_mut(body, &mut |st| {
        if err.is_none()
            && let Err(e) = attach_state(st, descs)
        {
            err = Some(e);
        }
    });
    err.map_or(Ok(()), Err)
}

fn attach_state(st: &mut State, descs: &NameMap<Distributed>) -> Result<()> {
    let desc_of = |st: &State, n: NodeId| match &st.nodes[n.index()].kind {
        NodeKind::Access(a) => descs.get(&a.data).map(|d| (a.data.clone(), d)),
        _ => None,
    };
    let is_mpi = |st: &State, n: NodeId| {
        matches!(
            &st.nodes[n.index()].kind,
            NodeKind::Library(LibraryNode {
                kind: LibraryKind::Mpi { .. },
                ..
            })
        )
    };
    let mut keep = Vec::with_capacity(st.edges.len());
    for e in std::mem::take(&mut st.edges) {
        let (src, dst) = (desc_of(st, e.src), desc_of(st, e.dst));
        let named = e
            .memlet
            .data
            .as_deref()
            .and_then(|d| descs.get(d).map(|x| (d, x)));
        if src.is_none() && dst.is_none() {
            if let Some((d, x)) = named {
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "{} '{d}' moved along an edge between '{}' and '{}' (DaCe 2.x's distributed descriptors are read only by MPI library nodes)",
                        x.what(),
                        st.nodes[e.src.index()].label,
                        st.nodes[e.dst.index()].label
                    ),
                ));
            }
            keep.push(e);
            continue;
        }
        // A Dummy node declares the descriptor's fields (its edge to it).
        if dst.is_some() && src.is_none() && is_mpi(st, e.src) && e.memlet.data.is_none() {
            continue;
        }
        let (Some((name, d)), None, true) = (&src, &dst, is_mpi(st, e.dst)) else {
            let Some((name, d)) = src.or(dst) else {
                continue; // one end is a descriptor (checked above)
            };
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "{} '{name}' ({}) connected to '{}' (DaCe 2.x's distributed descriptors are read only by MPI library nodes, on their grid, subarray and redistribution connectors)",
                    d.what(),
                    descriptor_type(d),
                    st.nodes[if desc_of(st, e.src).is_some() {
                        e.dst
                    } else {
                        e.src
                    }
                    .index()]
                    .label
                ),
            ));
        };
        let conn = e.dst_conn.as_deref().unwrap_or("");
        let Some(&(_, takes, attr)) = CONNECTORS.iter().find(|(c, _, _)| *c == conn) else {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "{} '{name}' read by '{}' on connector '{conn}' (one of {} expected)",
                    d.what(),
                    st.nodes[e.dst.index()].label,
                    CONNECTORS
                        .iter()
                        .map(|c| c.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if takes != d.what() {
            return Err(Error::invalid(
                &e.path,
                format!(
                    "'{}' reads the {} '{name}' on connector '{conn}', which takes a {takes}",
                    st.nodes[e.dst.index()].label,
                    d.what()
                ),
            ));
        }
        let not_mpi = || Error::invalid(&e.path, "an MPI node expected");
        let NodeKind::Library(lib) = &mut st.nodes[e.dst.index()].kind else {
            return Err(not_mpi());
        };
        lib.inputs.retain(|c| c != conn);
        let LibraryKind::Mpi {
            call,
            grid,
            names,
            descriptors,
            ..
        } = &mut lib.kind
        else {
            return Err(not_mpi());
        };
        if attr.is_empty() && *call != MpiCall::Dummy {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "MPI {call:?} '{}' reads the process grid '{name}' on '{conn}' (a sub-grid's Dummy node's connector)",
                    lib.name
                ),
            ));
        }
        if attr == "grid" && !GRID_CALLS.contains(call) {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "MPI {call:?} '{}' on the process grid '{name}': DaCe 2.x's {call:?} ignores '_grid' and calls on MPI_COMM_WORLD (only {} take a grid)",
                    lib.name,
                    GRID_CALLS
                        .iter()
                        .map(|c| format!("{c:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        *descriptors = true;
        match attr {
            "" => {}
            "grid" => *grid = Some(name.clone()),
            _ => {
                if let Some((_, old)) = names.iter().find(|(k, _)| k == attr) {
                    if old != name {
                        return Err(Error::invalid(
                            &e.path,
                            format!(
                                "'{}' names the {} '{old}' but reads '{name}' on connector '{conn}'",
                                lib.name,
                                d.what()
                            ),
                        ));
                    }
                } else {
                    names.push((attr.to_string(), name.clone()));
                }
            }
        }
    }
    st.edges = keep;
    let dead: Vec<NodeId> = (0..st.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&n| desc_of(st, n).is_some())
        .collect();
    st.remove_nodes(&dead);
    Ok(())
}

fn descriptor_type(d: &Distributed) -> &'static str {
    match d {
        Distributed::Grid => "ProcessGrid",
        Distributed::SubArray { .. } => "SubArray",
        Distributed::Redistr { .. } => "RedistrArray",
    }
}
