//! When the host waits for device-to-host copies.
//!
//! A copy into host memory is asynchronous on its stream, and host code
//! after it may read the copied data, so the host waits for it; consecutive
//! copies share one wait, placed before the next operation that is not such
//! a copy (and at the end of the scope).

use crate::back::body::FnWriter;

impl FnWriter<'_> {
    /// Notes a device-to-host copy on `stream`: the host waits before the
    /// next operation that is not such a copy.
    pub(crate) fn after_copy_to_host(&mut self, stream: String) {
        if !self.pending_syncs.contains(&stream) {
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
