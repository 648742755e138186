//! GPU streams and events. Stream 0 is the host's stream (the default
//! stream, or the one set with `__dace_gpu_set_stream`); with `--streams N`
//! the kernels of a state go round-robin to streams 0..N-1, every
//! cross-stream dependency in the dataflow waits on the event its producer
//! recorded, and each state forks from and joins back into stream 0. Event
//! numbers come from one counter in the writer state, so `__dace_init_*` creates
//! exactly the events the code uses: 0 forks, 1..N-1 join stream i, the rest
//! follow operations.

use std::collections::BTreeSet;

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::ir::*;

/// Event number of the fork of internal streams from stream 0.
const FORK_EVENT: usize = 0;

impl FnWriter<'_> {
    /// True if this program uses several streams.
    pub(crate) fn multi_stream(&self) -> bool {
        self.gpu.is_some() && self.p.streams > 1
    }

    /// Allocates the next operation event.
    fn next_event(&mut self) -> usize {
        let e = self.shared.events;
        self.shared.events += 1;
        e
    }

    /// At the start of a state: internal streams wait for stream 0.
    pub(crate) fn fork_streams(&mut self) {
        if !self.multi_stream() {
            return;
        }
        let g = self.gpu.expect("gpu");
        self.out.line(format!("sdfgc_gpu_check({}(__state->gpu_events[{FORK_EVENT}], __state->gpu_streams[0]), \"fork\");", g.api("EventRecord")));
        for i in 1..self.p.streams {
            self.out.line(format!(
                "sdfgc_gpu_check({}(__state->gpu_streams[{i}], __state->gpu_events[{FORK_EVENT}], 0), \"fork\");",
                g.api("StreamWaitEvent")
            ));
        }
        self.state_ops.clear();
    }

    /// At the end of a state (and of the program): stream 0 waits for every internal stream.
    pub(crate) fn join_streams(&mut self) {
        if !self.multi_stream() {
            return;
        }
        let g = self.gpu.expect("gpu");
        for i in 1..self.p.streams {
            self.out.line(format!("sdfgc_gpu_check({}(__state->gpu_events[{i}], __state->gpu_streams[{i}]), \"join\");", g.api("EventRecord")));
            self.out.line(format!(
                "sdfgc_gpu_check({}(__state->gpu_streams[0], __state->gpu_events[{i}], 0), \"join\");",
                g.api("StreamWaitEvent")
            ));
        }
    }

    /// Before a device operation at `id`: picks its stream (kernels round-robin,
    /// copies on stream 0) and waits for producers on other streams.
    pub(crate) fn op_begin(&mut self, ctx: &StateCtx, id: NodeId, kernel: bool) {
        if !self.multi_stream() {
            self.cur_stream = 0;
            return;
        }
        let g = self.gpu.expect("gpu");
        let s = if kernel {
            let k = self.shared.kernels;
            self.shared.kernels += 1;
            (k % self.p.streams as usize) as u32
        } else {
            0
        };
        self.cur_stream = s;
        let mut waited = BTreeSet::new();
        for anc in ancestors(ctx, id) {
            for &(stream, event) in self.state_ops.get(&anc).into_iter().flatten() {
                if stream != s && waited.insert(event) {
                    self.out.line(format!(
                        "sdfgc_gpu_check({}(__state->gpu_streams[{s}], __state->gpu_events[{event}], 0), \"wait\");",
                        g.api("StreamWaitEvent")
                    ));
                }
            }
        }
    }

    /// After a device operation at `id`: records its event for consumers on other streams.
    pub(crate) fn op_end(&mut self, id: NodeId) {
        if !self.multi_stream() {
            return;
        }
        let g = self.gpu.expect("gpu");
        let event = self.next_event();
        let s = self.cur_stream;
        self.out.line(format!("sdfgc_gpu_check({}(__state->gpu_events[{event}], __state->gpu_streams[{s}]), \"record\");", g.api("EventRecord")));
        self.state_ops.entry(id).or_default().push((s, event));
        self.cur_stream = 0;
    }
}

/// Every node from which `id` is reachable in the state's dataflow.
fn ancestors(ctx: &StateCtx, id: NodeId) -> BTreeSet<NodeId> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        for &e in &ctx.adj.ins[n.index()] {
            let src = ctx.st.edges[e].src;
            if seen.insert(src) {
                stack.push(src);
            }
        }
    }
    seen
}
