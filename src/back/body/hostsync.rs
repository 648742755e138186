//! When the host waits for device-to-host copies.
//!
//! A copy into host memory is asynchronous on its stream. The host waits
//! for it only where host code may read the copied data: consecutive copies
//! share one wait, placed before the next operation that is not such a copy.
//! A copy into a container the program never reads on the host (an output
//! only the caller reads) is waited for once, at the end of the call.

use std::collections::BTreeSet;

use crate::back::body::FnWriter;
use crate::ir::{BlockKind, Expr, NodeKind, Region, RegionKind, Sdfg, Stmt, all_stmts};

/// The host containers of `sdfg` (top level) that no dataflow edge reads
/// (no access node of them has an outgoing memlet), nothing but copies from
/// device memory writes, and no interstate edge, loop or branch condition
/// names.
pub(crate) fn unread_on_host(sdfg: &Sdfg) -> BTreeSet<String> {
    let mut read = BTreeSet::new();
    walk(sdfg, &sdfg.body, &mut read);
    sdfg.arrays
        .iter()
        .filter(|(n, d)| !d.storage.is_gpu() && !read.contains(*n))
        .map(|(n, _)| n.clone())
        .collect()
}

fn names(e: &Expr, out: &mut BTreeSet<String>) {
    e.visit_names(&mut |n| {
        out.insert(n.to_string());
    });
}

fn stmts(ss: &[Stmt], out: &mut BTreeSet<String>) {
    for s in all_stmts(ss) {
        for e in s.own_exprs() {
            names(e, out);
        }
    }
}

fn walk(sdfg: &Sdfg, r: &Region, read: &mut BTreeSet<String>) {
    if let RegionKind::Loop(l) = &r.kind {
        names(&l.condition, read);
        stmts(&l.init, read);
        stmts(&l.update, read);
    }
    for e in &r.edges {
        names(&e.condition, read);
        for (_, v) in &e.assignments {
            names(v, read);
        }
    }
    for b in &r.blocks {
        match &b.kind {
            BlockKind::State(st) => {
                for e in &st.edges {
                    if e.memlet.is_empty() {
                        continue;
                    }
                    if let NodeKind::Access(a) = &st.nodes[e.src.index()].kind {
                        read.insert(a.data.clone());
                    }
                    // Written by anything but a copy from device memory: the
                    // host must not write it while a copy into it is in flight.
                    let from_device = matches!(&st.nodes[e.src.index()].kind,
                        NodeKind::Access(a) if sdfg.arrays.get(&a.data).is_some_and(|d| d.storage.is_gpu()));
                    if let NodeKind::Access(a) = &st.nodes[e.dst.index()].kind
                        && !from_device
                    {
                        read.insert(a.data.clone());
                    }
                }
            }
            BlockKind::Region(inner) => walk(sdfg, inner, read),
            BlockKind::Conditional(brs) => {
                for (c, body) in brs {
                    if let Some(c) = c {
                        names(c, read);
                    }
                    walk(sdfg, body, read);
                }
            }
            BlockKind::Break | BlockKind::Continue | BlockKind::Return => {}
        }
    }
}

impl FnWriter<'_> {
    /// Notes a device-to-host copy into `dst` on `stream`: the host waits
    /// before the next operation that is not such a copy, or (a container
    /// the program never reads on the host) at the end of the call.
    pub(crate) fn after_copy_to_host(&mut self, dst: &str, stream: String) {
        if self.sdfg.id == 0 && self.unread_host.contains(dst) {
            self.sync_at_end = true;
        } else if !self.pending_syncs.contains(&stream) {
            self.pending_syncs.push(stream);
        }
    }

    /// The host waits for the device-to-host copies written since the last
    /// wait.
    pub(crate) fn flush_host_syncs(&mut self) {
        let Some(g) = self.gpu else {
            return;
        };
        for stream in std::mem::take(&mut self.pending_syncs) {
            self.out.line(format!(
                "sdfgc_gpu_check({}({stream}), \"synchronize after copy\");",
                g.api("StreamSynchronize")
            ));
        }
    }
}
