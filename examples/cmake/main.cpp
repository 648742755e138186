// Calls the jacobi_1d library that sdfgc generated, through its C header, the
// way an application does in external mode: query the workspace size, allocate
// it once with the library's alignment, set it through the checked setter, run
// the program, and check the result against a plain C++ reference.
#include "cases_dev_jacobi_1d.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// The reference: npbench's jacobi_1d kernel.
static void reference(int tsteps, std::vector<double> &a, std::vector<double> &b) {
    const size_t n = a.size();
    for (int t = 1; t < tsteps; ++t) {
        for (size_t i = 1; i + 1 < n; ++i) b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1]);
        for (size_t i = 1; i + 1 < n; ++i) a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1]);
    }
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 400;
    const int tsteps = argc > 2 ? std::atoi(argv[2]) : 20;
    std::vector<double> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = (i + 2.0) / n;
        b[i] = (i + 3.0) / n;
    }
    std::vector<double> ra = a, rb = b;
    reference(tsteps, ra, rb);

    cases_dev_jacobi_1d_state_t *state = __dace_init_cases_dev_jacobi_1d(n);
    if (state == nullptr) {
        std::fprintf(stderr, "init failed\n");
        return 1;
    }
    // The workspace: allocated once (it could be sized for the largest n), aligned as the library says.
    size_t bytes = __dace_get_external_memory_size_CPU_Heap(state, n);
    size_t align = __sdfgc_workspace_alignment_CPU_Heap();
    void *workspace = std::aligned_alloc(align, (bytes + align - 1) / align * align + align);
    int rc = __sdfgc_set_workspace_CPU_Heap(state, workspace, bytes, n);
    if (rc != 0) {
        std::fprintf(stderr, "set workspace: %s\n", __sdfgc_error_string(rc));
        return 1;
    }
    __program_cases_dev_jacobi_1d(state, a.data(), b.data(), n, tsteps);
    if (__dace_exit_cases_dev_jacobi_1d(state) != 0) return 1;
    std::free(workspace);

    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
        worst = std::fmax(worst, std::fabs(a[i] - ra[i]));
        worst = std::fmax(worst, std::fabs(b[i] - rb[i]));
    }
    std::printf("jacobi_1d n=%d tsteps=%d workspace=%zu bytes max error %.3g\n", n, tsteps, bytes, worst);
    if (!(worst <= 1e-12)) {
        std::fprintf(stderr, "FAILED: the library's result differs from the reference\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
