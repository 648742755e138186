//! Per-thread arrays whose size a GPU thread computes itself (it depends on
//! data or on a map parameter): allocated from the device heap when their
//! scope starts and freed when it ends, as DaCe's generated code does.

/// The statements that allocate and free `name` (`elements` of `ctype`) in
/// device code.
pub fn alloc_free(name: &str, ctype: &str, elements: &str) -> (String, String) {
    (
        format!("{name} = sdfgc_device_new<{ctype}>({elements}, \"{name}\");"),
        format!("delete[] {name};"),
    )
}

/// The helper the allocations call, written only into files that use it.
pub const PRELUDE: &str = r#"// Per-thread arrays sized inside a GPU thread come from the device heap
// (its size: cudaLimitMallocHeapSize / hipLimitMallocHeapSize, 8 MB by
// default); an exhausted heap stops the kernel with a message.
template <typename T>
__device__ inline T *sdfgc_device_new(long long n, const char *name) {
    T *p = new T[n > 0 ? n : 1];
    if (p == nullptr) {
        printf("sdfgc: the device heap is exhausted (%lld elements of '%s'); raise the malloc heap limit\n", n, name);
#if defined(__CUDA_ARCH__)
        __trap();
#else
        abort();
#endif
    }
    return p;
}"#;
