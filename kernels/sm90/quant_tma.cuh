// The sm_90 tile kernel of the MXFP8 quantizer for 16-bit inputs without fusion: columnwise (32x1
// blocks) and both orientations from one read, ungrouped, with a 16-byte aligned input. Everything
// else, and every other architecture, keeps the generic cp.async ring kernel
// (common/quant_ring.cuh), whose passes this kernel shares.
//
// What differs from the ring kernel. The input tiles come in by TMA: one thread issues one
// cp.async.bulk.tensor per 128 x 128 tile (instead of 8 cp.async per thread), and the tile's arrival
// is one mbarrier phase, so no thread waits for "its own" chunks and no barrier is needed before
// the passes read other threads' data. Out-of-range rows and columns arrive as zeros (the tensor
// map's bounds), so ragged tiles need no zero-fill code. Per tile there is exactly one block-wide
// barrier, between the passes (which read the stage and write the scale tiles, and the staged FP8
// tile) and the epilogue (which stores them); right after it the stage is free and the same thread
// issues the load of the tile kStages rounds ahead into it. The scale tiles (and the staged FP8
// tile) alternate between two buffers, so the next tile's passes never wait for this epilogue.
//
// Variants (template parameters; docs/PERFORMANCE.md has the measurements):
//   kDirect = 0  transposed or not: the columnwise FP8 tile is staged in shared memory and leaves as
//                16-byte row pieces (as in the ring kernel); two stages;
//   kDirect = 1  transposed only: each thread stores its two 32-byte column pieces from registers;
//   kDirect = 2  transposed only: as 1, but the two lanes of a pair swap 16-byte halves first, so
//                each store instruction writes whole 32-byte sectors.
// Without the staging tiles three stages fit at two blocks per SM.
#pragma once

#include <cstdint>

#include "common/quant_ring.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "sm90/quant_tma_params.cuh"

namespace mxq {
namespace dev {
namespace quant {

constexpr int kTmaOutTile = kT * kQuantOutPitch;  // one FP8 staging tile

__device__ __forceinline__ uint4 sel16(bool a, const uint4& x, const uint4& y) {
  return make_uint4(a ? x.x : y.x, a ? x.y : y.y, a ? x.z : y.z, a ? x.w : y.w);
}
__device__ __forceinline__ uint4 shfl_xor16(const uint4& v, int m) {
  return make_uint4(__shfl_xor_sync(0xFFFFFFFFu, v.x, m), __shfl_xor_sync(0xFFFFFFFFu, v.y, m),
                    __shfl_xor_sync(0xFFFFFFFFu, v.z, m), __shfl_xor_sync(0xFFFFFFFFu, v.w, m));
}

// Pass B with the transposed FP8 bytes stored from registers (kDirect 1 or 2): the unit of
// ring_colwise (columns c = 2 (tid % 64), c + 1; rows 32 rb .. 32 rb + 31), whose 32 bytes per
// column are one 32-byte sector of rows c0 + c and c0 + c + 1 of the [cols, rows] output.
template <In I, Fp8 F, bool kProp, int kDirect>
__device__ __forceinline__ void tma_colwise_direct(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                                   uint8_t* s_cs, float& amax_all) {
  const int tid = threadIdx.x;
  const int cp = tid & 63, rb = tid >> 6, c = 2 * cp;
  uint32_t qlo[8], qhi[8], elo, ehi;
  colwise_pair<I, F, kProp>(p, stage + 32 * rb * kRingRowBytes + 4 * cp, qlo, qhi, elo, ehi, amax_all);
  const int64_t ld = p.rows;
  uint8_t* base = p.col_data + (t.b * p.cols + t.c0) * ld + t.r0 + 32 * rb;  // row k of the tile: base + k * ld
  // Whole, aligned 32-byte pieces (both lanes of a pair agree: same rb).
  const bool fast = 32 * rb + 32 <= t.nrows && ((reinterpret_cast<uintptr_t>(p.col_data) | ld | t.r0) & 15) == 0;
  const uint4 p00 = make_uint4(qlo[0], qlo[1], qlo[2], qlo[3]), p01 = make_uint4(qlo[4], qlo[5], qlo[6], qlo[7]);
  const uint4 p10 = make_uint4(qhi[0], qhi[1], qhi[2], qhi[3]), p11 = make_uint4(qhi[4], qhi[5], qhi[6], qhi[7]);
  if constexpr (kDirect == 2) {
    // Lane pair (even, odd) owns columns cb .. cb + 3 (cb = c of the even lane). Store j writes
    // column cb + j: the even lane its first 16 bytes, the odd lane its last 16.
    const bool odd = (tid & 1) != 0;
    const uint4 r0 = shfl_xor16(sel16(odd, p00, p01), 1);
    const uint4 r1 = shfl_xor16(sel16(odd, p10, p11), 1);
    if (fast) {
      const int cb = c & ~3;
      uint8_t* d = base + cb * ld + (odd ? 16 : 0);
      const uint4 v0 = sel16(odd, r0, p00), v1 = sel16(odd, r1, p10), v2 = sel16(odd, p01, r0), v3 = sel16(odd, p11, r1);
      if (cb < t.ncols) store16(d, v0);
      if (cb + 1 < t.ncols) store16(d + ld, v1);
      if (cb + 2 < t.ncols) store16(d + 2 * ld, v2);
      if (cb + 3 < t.ncols) store16(d + 3 * ld, v3);
    }
  } else {
    if (fast) {
      if (c < t.ncols) {
        store16(base + c * ld, p00);
        store16(base + c * ld + 16, p01);
      }
      if (c + 1 < t.ncols) {
        store16(base + (c + 1) * ld, p10);
        store16(base + (c + 1) * ld + 16, p11);
      }
    }
  }
  if (!fast) {
    // Ragged or unaligned: byte stores (static register indices, no local-memory copy of qlo / qhi).
    const bool lo_live = c < t.ncols, hi_live = c + 1 < t.ncols;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      if (32 * rb + i < t.nrows) {
        if (lo_live) base[c * ld + i] = static_cast<uint8_t>(qlo[i >> 2] >> ((i & 3) * 8));
        if (hi_live) base[(c + 1) * ld + i] = static_cast<uint8_t>(qhi[i >> 2] >> ((i & 3) * 8));
      }
    }
  }
  const bool rows_live = 32 * rb < t.nrows;
  s_cs[local_scale(c, rb)] = static_cast<uint8_t>(rows_live && c < t.ncols ? elo : 0u);
  s_cs[local_scale(c + 1, rb)] = static_cast<uint8_t>(rows_live && c + 1 < t.ncols ? ehi : 0u);
}

template <In I, Fp8 F, bool kProp, int kStages, int kDirect>
__device__ __forceinline__ void quantize_tma(const QuantizeTmaParams& pp) {
  static_assert(kStages >= 2, "the stage of tile n is refilled with tile n + kStages");
  const QuantizeParams& p = pp.q;
  extern __shared__ uint8_t smem_raw[];  // quantize_tma_smem_bytes(kStages, kDirect == 0)
  __shared__ __align__(8) uint64_t full[kStages];
  __shared__ float s_warp[kWarps];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 127) & ~uintptr_t(127));
  uint8_t* stages = smem;
  uint8_t* s_rs = smem + kStages * kQuantTmaStageBytes;  // two rowwise scale tiles, alternating
  uint8_t* s_cs = s_rs + 2 * 512;                        // two columnwise scale tiles, alternating
  uint8_t* s_out = s_cs + 2 * 512;                       // two FP8 staging tiles (kDirect == 0)
  const GroupMeta meta{};                                // ungrouped: unused
  const int64_t ntiles = p.tiles_c * p.tiles_r * p.batch;
  if (blockIdx.x >= ntiles) return;  // the launcher never starts more blocks than tiles
  const int tid = threadIdx.x;
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) ptx::mbar_init(&full[s], 1);
    ptx::mbar_fence_init();
  }
  __syncthreads();
  auto issue = [&](int64_t tile, int s) {
    const QuantTile t = quant_tile(p, tile, nullptr, meta);
    ptx::mbar_arrive_expect_tx(&full[s], kQuantTmaStageBytes);
    ptx::tma_load_3d(ptx::smem_addr(stages + s * kQuantTmaStageBytes), pp.tmap, static_cast<int32_t>(t.c0),
                     static_cast<int32_t>(t.r0), static_cast<int32_t>(t.b), &full[s]);
  };
  if (tid == 0) {
    ptx::tma_prefetch_desc(pp.tmap);
#pragma unroll
    for (int j = 0; j < kStages; ++j) {
      const int64_t tile = blockIdx.x + static_cast<int64_t>(j) * gridDim.x;
      if (tile < ntiles) issue(tile, j);
    }
  }
  const bool row = (p.flags & kQuantRowwise) != 0;
  float amax_all = 0.0f;
  int s = 0, buf = 0;
  uint32_t phase = 0;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const QuantTile t = quant_tile(p, tile, nullptr, meta);
    uint8_t* rs = s_rs + buf * 512;
    uint8_t* cs = s_cs + buf * 512;
    uint8_t* out = s_out + buf * kTmaOutTile;
    ptx::mbar_wait(&full[s], phase);  // the whole tile has landed
    const uint8_t* st = stages + s * kQuantTmaStageBytes;
    if (row) ring_rowwise<I, F, kProp>(p, t, st, rs);
    if constexpr (kDirect == 0) ring_colwise<I, F, kProp>(p, t, st, out, cs, amax_all);
    else tma_colwise_direct<I, F, kProp, kDirect>(p, t, st, cs, amax_all);
    __syncthreads();  // stage s read by all; scale tiles (and the FP8 tile) complete
    if (tid == 0) {
      const int64_t next = tile + static_cast<int64_t>(kStages) * gridDim.x;
      if (next < ntiles) issue(next, s);
    }
    tiled_epilogue(p, t, meta, out, rs, cs, kDirect == 0);
    buf ^= 1;
    if (++s == kStages) {
      s = 0;
      phase ^= 1u;
    }
  }
  if (p.amax) commit_amax(p.amax, amax_all, s_warp);
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

// Entry points mxq_quantize_tma<variant>_<input>_<fp8>[_prop]; each kernels/sm90/quantize_tma_<input>.cu
// holds one MXQ_QUANT_TMA_ENTRIES_IN line per variant.
#define MXQ_QUANT_TMA_ENTRY(VNAME, STAGES, DIRECT, IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)          \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 2)                                \
      mxq_quantize_tma##VNAME##_##IN_NAME##_##F_NAME##PROP_NAME(                                     \
          const __grid_constant__ mxq::QuantizeTmaParams p) {                                        \
    mxq::dev::quant::quantize_tma<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, STAGES, DIRECT>(p);      \
  }
#define MXQ_QUANT_TMA_ENTRIES_IN(VNAME, STAGES, DIRECT, IN, IN_NAME)                     \
  MXQ_QUANT_TMA_ENTRY(VNAME, STAGES, DIRECT, IN, IN_NAME, E4M3, e4m3, false, )          \
  MXQ_QUANT_TMA_ENTRY(VNAME, STAGES, DIRECT, IN, IN_NAME, E4M3, e4m3, true, _prop)      \
  MXQ_QUANT_TMA_ENTRY(VNAME, STAGES, DIRECT, IN, IN_NAME, E5M2, e5m2, false, )          \
  MXQ_QUANT_TMA_ENTRY(VNAME, STAGES, DIRECT, IN, IN_NAME, E5M2, e5m2, true, _prop)
