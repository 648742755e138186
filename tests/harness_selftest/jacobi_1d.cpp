// Hand-written implementation of the corpus case `jacobi_1d` following the
// DaCe C ABI recorded in fixtures/corpus/jacobi_1d/case.json
// (abi["program.sdfg"], and abi["program.external.sdfg"] with -DEXTERNAL).
// Used by tests/harness_selftest.rs to validate the run harness itself.
//
//   for t in 1 .. TSTEPS-1:
//     B[1:-1] = 0.33333 * ((A[:-2] + A[1:-1]) + A[2:])
//     A[1:-1] = 0.33333 * ((B[:-2] + B[1:-1]) + B[2:])
//
// Build switches (each breaks one property the harness must notice):
//   -DPERTURB        changes one output element (A[N/2]) by 1e-6
//   -DALLOC_IN_CALL  mallocs and frees once per program call
//   -DEXTERNAL       keeps the four temporaries in a CPU_Heap workspace
//                    (size 4*(N-2) doubles, as DaCe's program.external.sdfg)
//   -DOVERRUN        (with EXTERNAL) writes one byte past the workspace
//   -DREAD_WS_UNINIT (with EXTERNAL) accumulates into a temporary without
//                    initialising it (correct only on a zeroed workspace)
//   -DSTATEFUL       the second and later calls compute a wrong result
//   -DEXIT_FAIL      __dace_exit returns 1
//   -DPARALLEL       (without EXTERNAL) the sweep is an OpenMP parallel loop
//                    with a per-iteration temporary (race-free)
//   -DRACE           (with PARALLEL) that temporary is declared outside the
//                    parallel loop, so all threads share it: a data race
#include <cstddef>
#include <cstdlib>

struct jacobi_state_t {
  int N;
  char* workspace;
  int calls;
};

extern "C" {

void* __dace_init_cases_dev_jacobi_1d(int N) {
  jacobi_state_t* s = new jacobi_state_t();
  s->N = N;
  return s;
}

#ifdef EXTERNAL
size_t __dace_get_external_memory_size_CPU_Heap(void* state, int N) {
  (void)state;
  return 4 * (size_t)(N - 2) * sizeof(double);
}

void __dace_set_external_memory_CPU_Heap(void* state, char* ptr, int N) {
  (void)N;
  static_cast<jacobi_state_t*>(state)->workspace = ptr;
}
#endif

// dst[1:-1] = 0.33333 * ((src[:-2] + src[1:-1]) + src[2:]), through the
// temporaries t0 = src[:-2] + src[1:-1] and t1 = t0 + src[2:] when given.
static void sweep(const double* src, double* dst, int N, double* t0, double* t1) {
  if (t0) {
#ifdef READ_WS_UNINIT
    for (int i = 0; i < N - 2; ++i) t0[i] += src[i] + src[i + 1];
#else
    for (int i = 0; i < N - 2; ++i) t0[i] = src[i] + src[i + 1];
#endif
    for (int i = 0; i < N - 2; ++i) t1[i] = t0[i] + src[i + 2];
    for (int i = 0; i < N - 2; ++i) dst[i + 1] = 0.33333 * t1[i];
#ifdef READ_WS_UNINIT
    for (int i = 0; i < N - 2; ++i) t0[i] = 0;
#endif
  } else {
#ifdef PARALLEL
#ifdef RACE
    double v;
#endif
#pragma omp parallel for
    for (int i = 0; i < N - 2; ++i) {
#ifndef RACE
      double v;
#endif
      v = (src[i] + src[i + 1]) + src[i + 2];
      dst[i + 1] = 0.33333 * v;
    }
#else
    for (int i = 0; i < N - 2; ++i) dst[i + 1] = 0.33333 * ((src[i] + src[i + 1]) + src[i + 2]);
#endif
  }
}

void __program_cases_dev_jacobi_1d(void* state, double* __restrict__ A, double* __restrict__ B,
                                   int N, int TSTEPS) {
  jacobi_state_t* s = static_cast<jacobi_state_t*>(state);
  double* tmp[4] = {nullptr, nullptr, nullptr, nullptr};
#ifdef EXTERNAL
  for (int k = 0; k < 4; ++k) tmp[k] = reinterpret_cast<double*>(s->workspace) + k * (size_t)(N - 2);
#endif
  for (int t = 1; t < TSTEPS; ++t) {
    sweep(A, B, N, tmp[0], tmp[1]);
    sweep(B, A, N, tmp[2], tmp[3]);
  }
#ifdef PERTURB
  A[N / 2] += 1e-6;
#endif
#ifdef ALLOC_IN_CALL
  // Through a volatile function pointer so the compiler cannot elide the pair.
  void* (*volatile do_malloc)(size_t) = std::malloc;
  void* p = do_malloc(64);
  std::free(p);
#endif
#if defined(EXTERNAL) && defined(OVERRUN)
  s->workspace[4 * (size_t)(N - 2) * sizeof(double)] = 0;
#endif
#ifdef STATEFUL
  if (s->calls > 0) B[1] = 0;
#endif
  s->calls++;
}

int __dace_exit_cases_dev_jacobi_1d(void* state) {
  delete static_cast<jacobi_state_t*>(state);
#ifdef EXIT_FAIL
  return 1;
#else
  return 0;
#endif
}

#if defined(SIGNATURE_RIGHT)
// The parameter lists of this file, as sdfgc's libraries state theirs.
const char* __sdfgc_signature_cases_dev_jacobi_1d(void) {
  return "{\"program\":[[\"A\",\"double *\"],[\"B\",\"double *\"],[\"N\",\"int\"],"
         "[\"TSTEPS\",\"int\"]],\"init\":[[\"N\",\"int\"]]}";
}
#elif defined(SIGNATURE_WRONG)
// A stray stride symbol, as an untouched array argument once added.
const char* __sdfgc_signature_cases_dev_jacobi_1d(void) {
  return "{\"program\":[[\"A\",\"double *\"],[\"B\",\"double *\"],[\"N\",\"int\"],"
         "[\"TSTEPS\",\"int\"],[\"__B_stride\",\"int\"]],\"init\":[[\"N\",\"int\"]]}";
}
#endif

}  // extern "C"
