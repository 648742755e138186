// Hand-written implementation of the corpus case `structure_members` (a DaCe
// Structure argument, fixtures/corpus/structure_members) following the ABI
// recorded in its case.json (abi["program.sdfg"]). Used by
// tests/harness_selftest.rs to check how the run harness builds structs.
//
//   out[i]    = S.vals[i] * S.p.scale + S.p.w[i]
//   gath[j]   = S.vals[S.idx[j]] + S.shift
//   S.vals[i] = out[i] - 1;  S.p.w[i] = 2 * S.p.w[i] + i
//
// Build switches:
//   -DNO_MEMBER_WRITE  leaves S.p.w unchanged (a member output)
//   -DBUMP_SHIFT       adds 1 to the scalar member S.shift after reading it
#include <cstdlib>

struct Params {
  double* w;
  double scale;
};

struct Mesh {
  double* vals;
  int* idx;
  int shift;
  Params* p;
};

extern "C" {

void* __dace_init_structure_members(int M, int N) {
  (void)M;
  (void)N;
  return std::malloc(1);
}

void __program_structure_members(void* state, Mesh* S, double* gath, double* out, int M, int N) {
  (void)state;
  for (int i = 0; i < N; ++i) out[i] = S->vals[i] * S->p->scale + S->p->w[i];
  for (int j = 0; j < M; ++j) gath[j] = S->vals[S->idx[j]] + S->shift;
#ifdef BUMP_SHIFT
  S->shift += 1;
#endif
  for (int i = 0; i < N; ++i) {
    S->vals[i] = out[i] - 1;
#ifndef NO_MEMBER_WRITE
    S->p->w[i] = 2 * S->p->w[i] + i;
#endif
  }
}

int __dace_exit_structure_members(void* state) {
  std::free(state);
  return 0;
}
}
