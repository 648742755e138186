//! Library calls on the host: a tasklet of DaCe's cuBLAS environment runs
//! in host code on device data, on the stream the writer gives it (as a
//! kernel gets one), named `__dace_current_stream` as in DaCe's code.
//! So does any C++ tasklet outside a kernel that reads or writes device
//! memory (DaCe's CPU generator writes such code on the host, with
//! `__dace_current_stream` and `__dace_current_stream_id`; its
//! `__state->gpu_context->streams[i]` is the state's stream `i`).

use crate::back::body::FnWriter;
use crate::back::body::dataflow::StateCtx;
use crate::back::gpu::cublas;
use crate::diag::{Error, Result};
use crate::ir::*;

impl FnWriter<'_> {
    /// True if `t` is a host-side library call on device data.
    pub(crate) fn is_library_call(&self, t: &Tasklet) -> bool {
        self.gpu.is_some() && cublas::uses(t)
    }

    /// True if `id`, a C++ tasklet outside kernels, reads or writes device
    /// memory: host code on the node's stream, as DaCe writes it.
    pub(crate) fn is_host_cpp_on_device(&self, ctx: &StateCtx, id: NodeId, t: &Tasklet) -> bool {
        self.gpu.is_some()
            && !self.in_kernel
            && !self.in_parallel
            && t.code.language == Language::Cpp
            && self.touches_device(ctx, &[id])
    }

    /// Writes a cuBLAS tasklet: host code, device operands, the node's stream.
    pub(crate) fn library_call(&mut self, ctx: &StateCtx, id: NodeId, t: &Tasklet) -> Result<()> {
        let node = &ctx.st.nodes[id.index()];
        if self.in_kernel || self.in_parallel {
            return Err(Error::unsupported(
                &node.path,
                format!(
                    "cuBLAS tasklet '{}' inside a kernel or a parallel map (cuBLAS is called from the host)",
                    node.label
                ),
            ));
        }
        let cublas_call = cublas::uses(t);
        for e in ctx
            .st
            .edges
            .iter()
            .filter(|e| cublas_call && (e.src == id || e.dst == id))
        {
            if let Some(data) = e.memlet.data.as_deref().filter(|d| !self.is_device(d)) {
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "cuBLAS tasklet '{}' on host data '{data}' (cuBLAS needs device memory)",
                        node.label
                    ),
                ));
            }
        }
        let g = self.gpu.expect("GPU target");
        self.out.line(if cublas_call {
            format!("// {} calls cuBLAS on the host", node.label)
        } else {
            format!("// {}: C++ on the host, device data", node.label)
        });
        self.op_begin(ctx, id, true);
        self.out.open("");
        if !cublas_call {
            self.out.line(format!(
                "[[maybe_unused]] int __dace_current_stream_id = {};",
                self.cur_stream
            ));
        }
        self.out.line(format!(
            "{}Stream_t __dace_current_stream = {};",
            g.prefix,
            self.stream()
        ));
        self.out.line("(void)__dace_current_stream;");
        self.tasklet(ctx, id, t)?;
        self.out.close();
        self.op_end(id);
        Ok(())
    }
}
