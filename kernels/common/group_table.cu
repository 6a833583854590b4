// mxq_group_table: turns the caller's group end offsets (device memory, possibly invalid) into the
// clamped ends and the per-group scale bases every grouped kernel needs (group_table.h). One block
// walks the G offsets in chunks of 1024 with three block-wide scans (running max for the clamp,
// two exclusive sums for the bases); G is at most 2^24 and usually a few hundred, so a single block
// costs a few microseconds and keeps the whole computation on the device.
#include <cstdint>

#include "common/group_table.h"
#include "core/layout.h"

namespace {

constexpr int kThreads = mxq::kGroupTableThreads;
constexpr int kWarps = kThreads / 32;

struct MaxOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};
struct SumOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a + b; }
};

// Inclusive scan over the block; `warp_totals` is kWarps entries of shared memory. Ends with a
// barrier so the caller may reuse `warp_totals` right away.
template <typename Op>
__device__ int64_t block_inclusive_scan(int64_t v, int64_t* warp_totals, Op op) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int64_t o = __shfl_up_sync(0xFFFFFFFFu, v, d);
    if (lane >= d) v = op(v, o);
  }
  if (lane == 31) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int64_t t = lane < kWarps ? warp_totals[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const int64_t o = __shfl_up_sync(0xFFFFFFFFu, t, d);
      if (lane >= d && lane < kWarps) t = op(t, o);
    }
    if (lane < kWarps) warp_totals[lane] = t;
  }
  __syncthreads();
  if (warp > 0) v = op(v, warp_totals[warp - 1]);
  __syncthreads();
  return v;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads) mxq_group_table(const mxq::GroupTableParams p) {
  __shared__ int64_t warp_totals[kWarps];
  __shared__ int64_t chunk_ends[kThreads];
  // Carries from the previous chunk: running max of the offsets, last clamped end, base sums.
  int64_t carry_max = 0, carry_end = 0, carry_row = 0, carry_col = 0;
  for (int64_t base = 0; base < p.num_groups; base += kThreads) {
    const int64_t g = base + threadIdx.x;
    const bool valid = g < p.num_groups;
    int64_t o = 0;
    if (valid) {
      o = p.offsets_are_i64 ? static_cast<const int64_t*>(p.offsets)[g]
                            : static_cast<int64_t>(static_cast<const int32_t*>(p.offsets)[g]);
    }
    int64_t run_max = block_inclusive_scan(o, warp_totals, MaxOp{});
    run_max = run_max > carry_max ? run_max : carry_max;
    const int64_t end = run_max < p.total ? run_max : p.total;  // carry_max >= 0 keeps end >= 0
    chunk_ends[threadIdx.x] = end;
    __syncthreads();
    const int64_t prev_end = threadIdx.x == 0 ? carry_end : chunk_ends[threadIdx.x - 1];
    const int64_t size = valid ? end - prev_end : 0;
    const int64_t row_pad = mxq::layout::mgroup_row_pad(size);
    const int64_t col_pad = mxq::layout::kgroup_col_pad(p.col_swizzled != 0, size);
    const int64_t row_incl = block_inclusive_scan(row_pad, warp_totals, SumOp{});
    const int64_t col_incl = block_inclusive_scan(col_pad, warp_totals, SumOp{});
    if (valid) {
      p.ends[g] = end;
      p.row_base[g] = carry_row + row_incl - row_pad;
      p.col_base[g] = carry_col + col_incl - col_pad;
    }
    // Every thread derives the next carries from the chunk's last lane (invalid lanes add 0 and
    // repeat the last end, so lane kThreads-1 always holds the chunk totals).
    __shared__ int64_t last[4];
    if (threadIdx.x == kThreads - 1) {
      last[0] = run_max;
      last[1] = end;
      last[2] = row_incl;
      last[3] = col_incl;
    }
    __syncthreads();
    carry_max = last[0];
    carry_end = last[1];
    carry_row += last[2];
    carry_col += last[3];
    __syncthreads();
  }
}
