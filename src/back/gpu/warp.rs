//! DaCe's warp reduction (`dace::warpReduce<ReductionType, T>::reduce`),
//! which DaCe's GPU reduce expansion (`GPUAuto`) writes into C++ tasklets:
//! each of a warp's 32 threads holds a partial value and gets the whole
//! warp's result through butterfly shuffles. The file defines it only where
//! a tasklet calls it.

use super::Dialect;

/// The definition for one dialect: DaCe's `ReductionType` numbering and
/// `reduce`/`mini_reduce<N>` over 32 lanes. (DaCe's HIP header shuffles
/// across `warpSize` lanes, 64 on AMD, which reads lanes beyond the 32
/// threads its expansion launches; sdfgc reduces the 32 on both.)
pub fn runtime(d: &Dialect) -> String {
    let shuffle = if d.prefix == "cuda" {
        "__shfl_xor_sync(0xffffffffu, v, i)"
    } else {
        "__shfl_xor(v, i)"
    };
    format!(
        r#"// ---- DaCe's warp reduction (dace::warpReduce) ----
namespace dace {{
enum class ReductionType {{
    Custom = 0, Min = 1, Max = 2, Sum = 3, Product = 4, Logical_And = 5, Bitwise_And = 6,
    Logical_Or = 7, Bitwise_Or = 8, Logical_Xor = 9, Bitwise_Xor = 10, Min_Location = 11,
    Max_Location = 12, Exchange = 13
}};
template <ReductionType R, typename T>
struct warpReduce {{
    static __device__ __forceinline__ T combine(T a, T b) {{
        static_assert(R != ReductionType::Custom && R != ReductionType::Min_Location &&
                          R != ReductionType::Max_Location && R != ReductionType::Exchange,
                      "sdfgc: this warp reduction type is not supported");
        if constexpr (R == ReductionType::Min) return b < a ? b : a;
        else if constexpr (R == ReductionType::Max) return b > a ? b : a;
        else if constexpr (R == ReductionType::Sum) return a + b;
        else if constexpr (R == ReductionType::Product) return a * b;
        else if constexpr (R == ReductionType::Logical_And) return a && b;
        else if constexpr (R == ReductionType::Bitwise_And) return a & b;
        else if constexpr (R == ReductionType::Logical_Or) return a || b;
        else if constexpr (R == ReductionType::Bitwise_Or) return a | b;
        else if constexpr (R == ReductionType::Logical_Xor) return (a != 0) != (b != 0);
        else return a ^ b;
    }}
    // Every lane of the first `lanes` (a power of two up to 32) gets their combined value.
    static __device__ __forceinline__ T butterfly(T v, int lanes) {{
        for (int i = 1; i < lanes; i *= 2) v = combine(v, {shuffle});
        return v;
    }}
    static __device__ __forceinline__ T reduce(T v) {{ return butterfly(v, 32); }}
    template <int NUM_MW>
    static __device__ __forceinline__ T mini_reduce(T v) {{ return butterfly(v, NUM_MW); }}
}};
}}  // namespace dace
"#
    )
}

/// The block-wide reduction of DaCe's Reduce implementation "CUDA (block)"
/// (a CUB `BlockReduce` in DaCe's code): every thread of the block passes
/// its value and gets the block's result, combined by `op` in a tree over
/// a block-shared buffer (1,024 values, the most threads a block has).
pub const BLOCK_REDUCE: &str = r#"// ---- Block-wide reduction (Reduce, implementation "CUDA (block)") ----
template <typename T, typename Op>
__device__ T sdfgc_block_reduce(T v, Op op) {
    __shared__ T sdfgc_block_reduce_buf[1024];
    const int n = int(blockDim.x * blockDim.y * blockDim.z);
    const int t = int((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
    __syncthreads();
    sdfgc_block_reduce_buf[t] = v;
    __syncthreads();
    for (int s = 1; s < n; s *= 2) {
        if (t % (2 * s) == 0 && t + s < n) {
            sdfgc_block_reduce_buf[t] = T(op(sdfgc_block_reduce_buf[t], sdfgc_block_reduce_buf[t + s]));
        }
        __syncthreads();
    }
    return sdfgc_block_reduce_buf[0];
}
"#;
