//! DaCe's Stream containers on the CPU: the stream type of the prelude,
//! where each stream is declared, copies between streams and arrays, and
//! consume scopes (DaCe's `cpu.py`: `allocate_array`, `copy_memory`,
//! `_generate_ConsumeEntry`; `runtime/include/dace/stream.h`).
//!
//! Every stream is one `sdfgc_stream<T>`: a thread-safe FIFO queue, or,
//! constructed on an array, DaCe's array stream view (pushes append to the
//! array; see [`crate::passes::datastream`]). Where a stream lives:
//!
//! * a view: a local object (a pointer and a count) at the start of its
//!   scope, in every memory mode; it allocates nothing;
//! * a queue of the top-level SDFG outside any map, in the persistent and
//!   external modes: a member of the state struct, emptied where its scope
//!   starts (DaCe constructs it there), so that its storage, grown by the
//!   first call, serves the next calls without allocating;
//! * any other queue: a local object at the start of its scope, whose
//!   pushes allocate from the heap as they need (DaCe's queue does too).

use std::collections::BTreeSet;

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::FnWriter;
use crate::diag::{Error, Result};
use crate::ir::simplify::simplify;
use crate::ir::*;
use crate::options::Mode;
use crate::passes::datastream::consumed_stream;
use crate::passes::{AllocScope, Program};

/// The stream type, only in files that use it.
pub(crate) const PRELUDE: &str = r#"// ---- streams: DaCe's dace::Stream (a thread-safe FIFO queue) and
// dace::ArrayStreamView (pushes append to an array) in one type ----
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
static inline int sdfgc_consume_pe() { return omp_get_thread_num(); }
/// The team of a consume scope: at least its processing elements, and the
/// team the program's maps use (the same team: OpenMP allocates nothing).
static inline int sdfgc_consume_team(int64_t pes) {
    return static_cast<int>(std::max<int64_t>(omp_get_max_threads(), pes));
}
#else
static inline int sdfgc_consume_pe() { return 0; }
static inline int sdfgc_consume_team(int64_t) { return 1; }
#endif
template <typename T>
class sdfgc_stream {
public:
    sdfgc_stream() = default;
    /// A view: pushes append to `sink`, which holds `capacity` elements.
    sdfgc_stream(T *sink, int64_t capacity) : m_sink(sink), m_capacity(capacity) {}
    sdfgc_stream(const sdfgc_stream &) = delete;
    sdfgc_stream &operator=(const sdfgc_stream &) = delete;
    void push(const T &v) { push(&v, 1); }
    void push(const T *v, int64_t n) {
        if (n <= 0) return;
        if (m_sink) {
            const int64_t at = m_count.fetch_add(n);
            if (at + n > m_capacity) {
                std::fprintf(stderr, "sdfgc: a stream pushed more elements than its array holds (%lld)\n",
                             static_cast<long long>(m_capacity));
                std::abort();
            }
            std::copy(v, v + n, m_sink + at);
            return;
        }
        {
            std::lock_guard<std::mutex> g(m_mutex);
            for (int64_t i = 0; i < n; ++i) put(v[i]);
            m_count.fetch_add(n);
        }
        m_ready.notify_all();
    }
    /// The elements a view appended (DaCe pushes a view into a stream so).
    void push(const sdfgc_stream &view) { push(view.m_sink, view.m_sink ? view.m_count.load() : 0); }
    /// Pops one element, waiting for one as DaCe's `pop` does.
    T pop() {
        no_view();
        std::unique_lock<std::mutex> g(m_mutex);
        m_ready.wait(g, [this] { return m_size > 0; });
        T v = take();
        m_count.fetch_sub(1);
        return v;
    }
    /// Pops up to `max` elements into `dst` without waiting; the number popped.
    int64_t pop(T *dst, int64_t max) {
        no_view();
        std::lock_guard<std::mutex> g(m_mutex);
        const int64_t n = std::min(max, m_size);
        for (int64_t i = 0; i < n; ++i) dst[i] = take();
        m_count.fetch_sub(n);
        return n;
    }
    /// Consume: takes up to `max` elements into `out` without waiting, still
    /// counted until `done(n)`; the number taken.
    int64_t pop_try(T *out, int64_t max) {
        no_view();
        std::lock_guard<std::mutex> g(m_mutex);
        const int64_t n = std::min(max, m_size);
        for (int64_t i = 0; i < n; ++i) out[i] = take();
        return n;
    }
    void done(int64_t n) { m_count.fetch_sub(n); }
    /// Consume: takes an element, still counted until `done()`.
    bool pop_try(T &out) {
        no_view();
        std::lock_guard<std::mutex> g(m_mutex);
        if (m_size == 0) return false;
        out = take();
        return true;
    }
    void done() { m_count.fetch_sub(1); }
    /// Elements pushed and not popped (during consume: not done).
    int64_t size() const { return m_count.load(); }
    /// Empties the queue, keeping its storage.
    void clear() {
        std::lock_guard<std::mutex> g(m_mutex);
        m_head = 0;
        m_size = 0;
        m_count.store(0);
    }

private:
    void no_view() const {
        if (m_sink) {
            std::fprintf(stderr, "sdfgc: a stream that appends to an array was popped\n");
            std::abort();
        }
    }
    void put(const T &v) {
        if (m_size == static_cast<int64_t>(m_buf.size())) {
            std::vector<T> b(std::max<size_t>(16, 2 * m_buf.size()));
            for (int64_t i = 0; i < m_size; ++i) b[i] = m_buf[(m_head + i) % m_buf.size()];
            m_buf.swap(b);
            m_head = 0;
        }
        m_buf[(m_head + m_size) % m_buf.size()] = v;
        ++m_size;
    }
    T take() {
        T v = m_buf[m_head];
        m_head = (m_head + 1) % static_cast<int64_t>(m_buf.size());
        --m_size;
        return v;
    }
    T *m_sink = nullptr;
    int64_t m_capacity = 0;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::vector<T> m_buf;
    int64_t m_head = 0;
    int64_t m_size = 0;
    std::atomic<int64_t> m_count{0};
};"#;

/// True if stream transient `name` of SDFG `sdfg` is a state-struct member
/// (see the module documentation).
pub(crate) fn is_member(p: &Program, sdfg: u32, name: &str) -> bool {
    sdfg == 0
        && matches!(p.mode, Some(Mode::Persistent | Mode::External))
        && p.data_streams.view(sdfg, name).is_none()
        && p.alloc
            .get(sdfg, name)
            .is_some_and(|t| !matches!(t.scope, AllocScope::Map(..)))
}

/// The C++ type of a stream of `d`'s elements.
pub(crate) fn stream_type(d: &DataDesc) -> String {
    format!("sdfgc_stream<{}>", d.dtype.ctype())
}

/// The variable holding the element a consume scope popped.
pub(crate) fn consumed_var(entry: NodeId) -> String {
    format!("__sdfgc_consumed_{}", entry.0)
}

/// The variables of a consume scope with chunks above one element: the
/// chunk's elements and their number, named as DaCe names them (C++ tasklet
/// code reads `__dace_<label>_numelems`).
pub(crate) fn chunk_vars(m: &MapEntry) -> (String, String) {
    (
        format!("__dace_{}_elements", m.label),
        format!("__dace_{}_numelems", m.label),
    )
}

impl FnWriter<'_> {
    /// The declaration of stream transient `name` where its scope starts.
    pub(crate) fn stream_decl(&self, name: &str, d: &DataDesc) -> Result<String> {
        let ty = stream_type(d);
        if is_member(self.p, self.sdfg.id, name) {
            let member = crate::back::body::member_name(self.sdfg.id, name);
            return Ok(format!(
                "{ty} &{name} = __state->{member};\n{name}.clear();"
            ));
        }
        let Some(v) = self.p.data_streams.view(self.sdfg.id, name) else {
            return Ok(format!("{ty} {name};"));
        };
        let st = find_state(&self.sdfg.body, &v.state).ok_or_else(|| {
            Error::invalid(&d.path, format!("stream '{name}': its state is gone"))
        })?;
        let e = &st.edges[v.edge];
        let c = self.copy_sides(&e.memlet, name, &v.sink);
        let sd = self.data_desc(&v.sink, &e.path)?;
        // Room from the first element to the end of the array (DaCe's view
        // has no bound; pushing past the array aborts instead).
        let mut room = sd.total_size.clone();
        if c.dst.len() == sd.rank() {
            for ((r, off), stride) in c.dst.iter().zip(&sd.offset).zip(&sd.strides) {
                let at = Expr::bin(BinaryOp::Add, r.start.clone(), off.clone());
                room = Expr::bin(
                    BinaryOp::Sub,
                    room,
                    Expr::bin(BinaryOp::Mul, at, stride.clone()),
                );
            }
        }
        let room = self.sym(&simplify(&room));
        // DaCe's class for it, named for readers of both outputs.
        let class = if self
            .p
            .alloc
            .get(self.sdfg.id, name)
            .is_some_and(|t| matches!(t.scope, AllocScope::Map(..)))
        {
            "ArrayStreamViewThreadlocal"
        } else {
            "ArrayStreamView"
        };
        Ok(format!(
            "{ty} {name}({}, {room});  // DaCe's {class}: pushes append to {}",
            self.subset_pointer(&v.sink, sd, &c.dst),
            v.sink
        ))
    }

    /// A copy between a stream and an array (or scalar), as DaCe's
    /// `copy_memory` writes it: stream to array pops up to the array
    /// subset's size (nothing for a view into that array), array to stream
    /// pushes the memlet's elements (a view's appended elements for the
    /// array it fills).
    pub(crate) fn stream_copy(
        &mut self,
        ctx: &StateCtx,
        e: &DataEdge,
        src: &str,
        dst: &str,
    ) -> Result<()> {
        let sd = self.data_desc(src, &e.path)?;
        let dd = self.data_desc(dst, &e.path)?;
        let refuse = |what: &str| {
            Err(Error::unsupported(
                &e.path,
                format!("copy {src} -> {dst}: {what}"),
            ))
        };
        if e.memlet.wcr.is_some() {
            return refuse("write-conflict resolution on a stream");
        }
        match (sd.kind == DataKind::Stream, dd.kind == DataKind::Stream) {
            (true, true) => refuse("a copy from a stream into a stream"),
            (true, false) => {
                if self
                    .p
                    .data_streams
                    .view(self.sdfg.id, src)
                    .is_some_and(|v| v.sink == dst && v.state == ctx.path)
                {
                    self.out.line(format!(
                        "// copy {src} -> {dst}: {src} appended to {dst} directly"
                    ));
                    return Ok(());
                }
                let c = self.copy_sides(&e.memlet, src, dst);
                let n = simplify(&crate::back::body::copies::element_count(&c.dst));
                let at = self.subset_pointer(dst, dd, &c.dst);
                self.out.line(format!("{src}.pop({at}, {});", self.sym(&n)));
                Ok(())
            }
            (false, true) => {
                if sd.kind == DataKind::Scalar {
                    let at = self.subset_pointer(src, sd, &[]);
                    self.out.line(format!("{dst}.push({at}, 1);"));
                    return Ok(());
                }
                if let Some(v) = self.p.data_streams.view_into(self.sdfg.id, ctx.path, src) {
                    self.out.line(format!("{dst}.push({v});"));
                    return Ok(());
                }
                // DaCe pushes as many elements as the memlet's own subset has.
                let sub = e.memlet.subset.clone().unwrap_or_default();
                let n = simplify(&crate::back::body::copies::element_count(&sub));
                let c = self.copy_sides(&e.memlet, src, dst);
                let at = self.subset_pointer(src, sd, &c.src);
                self.out
                    .line(format!("{dst}.push({at}, {});", self.sym(&n)));
                Ok(())
            }
            (false, false) => unreachable!("stream_copy of two arrays"),
        }
    }

    /// The variable holding the consumed element, if tasklet input edge
    /// `ei` comes (through scopes) from a consume entry's `OUT_stream`.
    ///
    /// With chunks above one element, the array of the chunk's elements
    /// (second: true).
    pub(crate) fn consumed_element(&self, ctx: &StateCtx, ei: usize) -> Option<(String, bool)> {
        let st = ctx.st;
        let mut e = &st.edges[ei];
        for _ in 0..st.nodes.len() {
            let NodeKind::MapEntry(m) = &st.nodes[e.src.index()].kind else {
                return None;
            };
            let conn = e.src_conn.as_deref()?;
            if let Some(c) = &m.consume
                && conn == "OUT_stream"
            {
                return Some(if c.chunksize > 1 {
                    (chunk_vars(m).0, true)
                } else {
                    (consumed_var(e.src), false)
                });
            }
            let inner = format!("IN_{}", conn.strip_prefix("OUT_")?);
            e = st
                .edges
                .iter()
                .find(|x| x.dst == e.src && x.dst_conn.as_deref() == Some(inner.as_str()))?;
        }
        None
    }

    /// A consume scope: `num_pes` threads of an OpenMP team (one, inside a
    /// parallel region) pop the stream and run the scope's body per element until
    /// the stream is empty and no element is being processed (DaCe's
    /// `dace::Consume<1>::consume`, with threads from OpenMP so that
    /// per-thread slots and nested parallelism follow the rules of maps).
    pub(crate) fn consume(&mut self, ctx: &StateCtx, id: NodeId, m: &MapEntry) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        let (Some(c), Some(stream)) = (&m.consume, consumed_stream(ctx.st, id)) else {
            return Err(Error::invalid(
                &node.path,
                format!("consume scope '{}' without an input stream", m.label),
            ));
        };
        let stream = stream.to_string();
        let d = self.data_desc(&stream, &node.path)?;
        let pe = &m.params[0];
        let pes = self.sym(&c.num_pes);
        let elem = consumed_var(id);
        self.out.line(format!(
            "// consume {} [{pe}=0:{pes}] from {stream}",
            m.label
        ));
        let parallel = !self.in_parallel;
        if parallel {
            // Threads beyond the processing elements leave at once; with
            // per-thread slots, no more threads than the slots have copies.
            let team = if self.p.alloc.has_per_thread() {
                format!("__state->{}", crate::passes::alloc::THREADS)
            } else {
                format!("sdfgc_consume_team({pes})")
            };
            self.out
                .line(format!("#pragma omp parallel num_threads({team})"));
            self.out.open("");
            self.out
                .line(format!("const int64_t {pe} = sdfgc_consume_pe();"));
            self.out.open(format!("if ({pe} < {pes})"));
        } else {
            self.out.open("");
            self.out
                .line(format!("[[maybe_unused]] const int64_t {pe} = 0;"));
            self.out.open("");
        }
        // Chunks: up to `chunksize` elements a turn, DaCe's `Consume<N>`.
        let chunk = (c.chunksize > 1).then(|| chunk_vars(m));
        self.out.open(format!("while ({stream}.size() > 0)"));
        match &chunk {
            Some((elems, count)) => {
                self.out
                    .line(format!("{} {elems}[{}];", d.dtype.ctype(), c.chunksize));
                self.out.line(format!(
                    "const size_t {count} = static_cast<size_t>({stream}.pop_try({elems}, {}));",
                    c.chunksize
                ));
                self.out.open(format!("if ({count} == 0)"));
            }
            None => {
                self.out.line(format!("{} {elem};", d.dtype.ctype()));
                self.out.open(format!("if (!{stream}.pop_try({elem}))"));
            }
        }
        self.out.line("std::this_thread::yield();");
        self.out.line("continue;");
        self.out.close();
        let was = self.in_parallel;
        let was_params = self.parallel_params.replace(vec![pe.clone()]);
        let was_reductions = std::mem::take(&mut self.reductions);
        let body_maps: BTreeSet<NodeId> = (0..ctx.st.nodes.len() as u32)
            .map(NodeId)
            .filter(|&n| {
                (n == id || ctx.st.is_below(n, id))
                    && matches!(ctx.st.nodes[n.index()].kind, NodeKind::MapEntry(_))
            })
            .collect();
        let was_maps = std::mem::replace(&mut self.parallel_maps, body_maps);
        self.in_parallel = true;
        let frees = self.map_locals(ctx, id)?;
        let body = ctx.children[id.index()].clone();
        self.scope(ctx, &body)?;
        for f in frees {
            self.out.line(f);
        }
        self.in_parallel = was;
        self.parallel_params = was_params;
        self.reductions = was_reductions;
        self.parallel_maps = was_maps;
        match &chunk {
            Some((_, count)) => self
                .out
                .line(format!("{stream}.done(static_cast<int64_t>({count}));")),
            None => self.out.line(format!("{stream}.done();")),
        }
        self.out.close();
        self.out.close();
        self.out.close();
        Ok(())
    }
}

fn find_state<'a>(r: &'a Region, path: &str) -> Option<&'a State> {
    for b in &r.blocks {
        let found = match &b.kind {
            BlockKind::State(st) if b.path == path => Some(st),
            BlockKind::Region(inner) => find_state(inner, path),
            BlockKind::Conditional(brs) => brs.iter().find_map(|(_, r)| find_state(r, path)),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}
