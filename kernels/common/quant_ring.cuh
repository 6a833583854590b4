// The pipelined tile kernel of the MXFP8 quantizer for 16-bit inputs (bf16, fp16) without fusion:
// columnwise (32x1 blocks, data transposed [cols, rows] or not) and both orientations from one read.
// Instantiated by kernels/generic/quantize_ring_<in>.cu; chosen over the tiled kernel
// (common/quant_kernels.cuh) for every plan it covers. fp32 inputs, SwiGLU and 32x32 blocks keep
// the tiled kernel.
//
// Why it is shaped this way. A columnwise tile must sit in shared memory before any 32-row block can
// be reduced, so the kernel lives or dies by how well loads of the next tile overlap the work on the
// current one. The tiles go through a two-stage shared-memory ring filled with cp.async (16 bytes
// per thread, zero-filled at ragged edges): the loads of tile n+1 are issued before any work on
// tile n starts, so HBM reads stay in flight through all of tile n (rowwise pass, columnwise pass,
// stores), and no register holds them. Blocks are persistent (a grid-stride loop over tiles), two
// per SM (the ring, the FP8 staging tile and the scale tiles take 85 KB of shared memory).
// Measured on an H100 against the register-prefetching tiled kernel, and against variants that store
// the transposed FP8 bytes straight from registers (2 or 3 blocks per SM) or run both passes after
// one barrier: docs/PERFORMANCE.md, "Quantization".
//
// Per tile: (A) each thread reads back the chunks it loaded itself (only its own cp.async group needs
// to have landed) and writes rowwise FP8 data and scales, as the tiled kernel does from registers;
// (B) after one barrier each thread takes two adjacent columns of one 32-row block, read as 32
// packed 32-bit words (a warp reads 128 contiguous bytes of one row: no bank conflicts), and stages
// both columns' FP8 bytes; (C) after a second barrier the scale tiles and the staged FP8 tile leave
// as 16-byte stores (tiled_epilogue). The rowwise scale tile alternates between two buffers, so no
// third barrier is needed before the next tile's pass A.
#pragma once

#include <cstdint>

#include "common/quant_kernels.cuh"

namespace mxq {
namespace dev {
namespace quant {

constexpr int kRingStages = kQuantRingStages;
constexpr int kRingRowBytes = kT * 2;                  // one tile row of 16-bit elements
constexpr int kRingStageBytes = kT * kRingRowBytes;    // one 128 x 128 tile

// Issues the loads of tile t into `stage` ([128][128] elements, row-major) and commits them as one
// cp.async group. Rows past nload and columns past ncols are zero-filled. Unaligned inputs take the
// element path: synchronous loads, then a 16-byte shared store (the group is then empty).
template <In I>
__device__ __forceinline__ void ring_issue(const QuantizeParams& p, const QuantTile& t, uint8_t* stage) {
  using T = typename InTraits<I>::T;
  static_assert(sizeof(T) == 2, "the ring kernel is for 16-bit inputs");
  const int tid = threadIdx.x;
  const int cl = (tid & (kChunksPerRow - 1)) * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  const T* xb = static_cast<const T*>(p.x) + t.b * p.in_bstride + t.r0 * p.in_ld + t.c0 + cl;
  uint8_t* dst = stage + (tid >> 4) * kRingRowBytes + cl * 2;
  if (p.flags & kQuantVecIn) {
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int rl = i * kRowsPerPass + (tid >> 4);
      const bool in = rl < t.nload && nvalid > 0;
      cp_async16(dst + i * kRowsPerPass * kRingRowBytes, in ? static_cast<const void*>(xb + rl * p.in_ld) : p.x,
                 in ? static_cast<uint32_t>(nvalid * 2) : 0u);
    }
  } else {
#pragma unroll 2
    for (int i = 0; i < kPasses; ++i) {
      const int rl = i * kRowsPerPass + (tid >> 4);
      uint32_t w[4] = {0u, 0u, 0u, 0u};
      if (rl < t.nload) load_words<I>(w, xb + rl * p.in_ld, nvalid, false);
      *reinterpret_cast<uint4*>(dst + i * kRowsPerPass * kRingRowBytes) = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
  cp_async_commit();
}

// Pass A: rowwise 1x32 output of the chunks this thread loaded (rows 16 i + tid / 16).
template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void ring_rowwise(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                             uint8_t* s_rs) {
  using Raw = RawChunk<I, false>;
  const int tid = threadIdx.x;
  const int chunk = tid & (kChunksPerRow - 1);
  const int cl = chunk * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  uint8_t* ob = p.row_data + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl;
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int rl = i * kRowsPerPass + (tid >> 4);
    const bool live = rl < t.nrows && nvalid > 0;
    const uint4 q = *reinterpret_cast<const uint4*>(stage + rl * kRingRowBytes + cl * 2);
    Raw rc;
    rc.g[0] = q.x;
    rc.g[1] = q.y;
    rc.g[2] = q.z;
    rc.g[3] = q.w;
    float v[kChunk];
    uint32_t bits[Raw::kWords];
    chunk_values<I, false>(rc, v, bits);
    float amax, pmax;
    chunk_max<kProp>(v, amax, pmax);
    quad_max<kProp>(amax, pmax);
    const uint32_t e = block_exponent<F, kProp>(amax, pmax, p.mode);
    uint32_t q0, q1;
    quantize8<F>(v, scale_inverse(e), q0, q1);
    if (live) store_fp8x8(ob + rl * p.cols, q0, q1, nvalid);
    if ((chunk & 3) == 0) s_rs[local_scale(rl, chunk >> 2)] = static_cast<uint8_t>(live ? e : 0u);
  }
}

// Pass B: columns c = 2 (tid % 64) and c + 1, rows 32 rb .. 32 rb + 31 with rb = tid / 64. Stages the
// FP8 bytes in s_out (transposed: bytes 32 rb .. 32 rb + 31 of rows c and c + 1 of the [cols, rows]
// tile), writes the two exponents to the columnwise scale tile and folds the block maxima into
// amax_all.
template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void ring_colwise(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                             uint8_t* s_out, uint8_t* s_cs, float& amax_all) {
  const int tid = threadIdx.x;
  const int cp = tid & 63, rb = tid >> 6, c = 2 * cp;
  const uint8_t* col = stage + 32 * rb * kRingRowBytes + 4 * cp;
  uint32_t w[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) w[i] = *reinterpret_cast<const uint32_t*>(col + i * kRingRowBytes);
  auto lo = [&](int i) { return bits_to_f32<I>(w[i] & 0xFFFFu); };
  auto hi = [&](int i) { return bits_to_f32<I>(w[i] >> 16); };
  // Four independent partial maxima per column (max is exact and order-free): short chains.
  float al[4] = {0.0f, 0.0f, 0.0f, 0.0f}, ah[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float pl[4] = {0.0f, 0.0f, 0.0f, 0.0f}, ph[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    al[i & 3] = fmaxf(al[i & 3], fabsf(lo(i)));
    ah[i & 3] = fmaxf(ah[i & 3], fabsf(hi(i)));
    if constexpr (kProp) {
      pl[i & 3] = fmax_nan(pl[i & 3], fabsf(lo(i)));
      ph[i & 3] = fmax_nan(ph[i & 3], fabsf(hi(i)));
    }
  }
  const float alo = fmaxf(fmaxf(al[0], al[1]), fmaxf(al[2], al[3]));
  const float ahi = fmaxf(fmaxf(ah[0], ah[1]), fmaxf(ah[2], ah[3]));
  float plo = 0.0f, phi = 0.0f;
  if constexpr (kProp) {
    plo = fmax_nan(fmax_nan(pl[0], pl[1]), fmax_nan(pl[2], pl[3]));
    phi = fmax_nan(fmax_nan(ph[0], ph[1]), fmax_nan(ph[2], ph[3]));
  }
  amax_all = fmaxf(amax_all, fmaxf(alo, ahi));
  const uint32_t elo = block_exponent<F, kProp>(alo, plo, p.mode);
  const uint32_t ehi = block_exponent<F, kProp>(ahi, phi, p.mode);
  const float ilo = scale_inverse(elo), ihi = scale_inverse(ehi);
  uint32_t qlo[8], qhi[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    qlo[k] = quantize4<F>(lo(4 * k), lo(4 * k + 1), lo(4 * k + 2), lo(4 * k + 3), ilo);
    qhi[k] = quantize4<F>(hi(4 * k), hi(4 * k + 1), hi(4 * k + 2), hi(4 * k + 3), ihi);
  }
  if (p.flags & kQuantTransposed) {
    uint4* d0 = reinterpret_cast<uint4*>(s_out + c * kQuantOutPitch + 32 * rb);
    uint4* d1 = reinterpret_cast<uint4*>(s_out + (c + 1) * kQuantOutPitch + 32 * rb);
    d0[0] = make_uint4(qlo[0], qlo[1], qlo[2], qlo[3]);
    d0[1] = make_uint4(qlo[4], qlo[5], qlo[6], qlo[7]);
    d1[0] = make_uint4(qhi[0], qhi[1], qhi[2], qhi[3]);
    d1[1] = make_uint4(qhi[4], qhi[5], qhi[6], qhi[7]);
  } else {
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const uint32_t sh = (i & 3) * 8;
      *reinterpret_cast<uint16_t*>(s_out + (32 * rb + i) * kQuantOutPitch + c) =
          static_cast<uint16_t>(((qlo[i >> 2] >> sh) & 0xFFu) | (((qhi[i >> 2] >> sh) & 0xFFu) << 8));
    }
  }
  const bool rows_live = 32 * rb < t.nrows;
  s_cs[local_scale(c, rb)] = static_cast<uint8_t>(rows_live && c < t.ncols ? elo : 0u);
  s_cs[local_scale(c + 1, rb)] = static_cast<uint8_t>(rows_live && c + 1 < t.ncols ? ehi : 0u);
}

template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void quantize_ring(const QuantizeParams& p) {
  extern __shared__ __align__(16) uint8_t smem[];  // ring, scale tiles, FP8 tile, then the group table
  __shared__ float s_warp[kWarps];
  __shared__ GroupMeta meta;
  __shared__ int64_t scan_tmp[kWarps];
  uint8_t* stages = smem;
  uint8_t* s_rs = smem + kRingStages * kRingStageBytes;  // two rowwise scale tiles, alternating
  uint8_t* s_cs = s_rs + 2 * 512;                        // columnwise scale tile
  uint8_t* s_out = s_cs + 512;                           // [128][kQuantOutPitch] FP8 staging
  uint8_t* group_smem = smem + quantize_ring_smem_bytes();
  if (p.flags & kQuantGrouped) build_group_table(p, group_smem, &meta, scan_tmp);
  const int64_t ntiles = p.tiles_c * p.tiles_r * p.batch;
  if (blockIdx.x >= ntiles) return;  // the launcher never starts more blocks than tiles
  const bool row = (p.flags & kQuantRowwise) != 0;
  float amax_all = 0.0f;
  ring_issue<I>(p, quant_tile(p, blockIdx.x, group_smem, meta), stages);
  int s = 0;
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const int64_t next = tile + gridDim.x;
    if (next < ntiles) ring_issue<I>(p, quant_tile(p, next, group_smem, meta), stages + (s ^ 1) * kRingStageBytes);
    else cp_async_commit();  // an empty group keeps the wait count uniform
    // Recomputed rather than carried over from the issue: fewer registers live across the loop.
    const QuantTile t = quant_tile(p, tile, group_smem, meta);
    cp_async_wait<1>();  // this thread's chunks of tile `tile` have landed
    const uint8_t* st = stages + s * kRingStageBytes;
    uint8_t* rs = s_rs + s * 512;
    if (row) ring_rowwise<I, F, kProp>(p, t, st, rs);
    __syncthreads();  // every thread's chunks (and rowwise scales) are in shared memory
    ring_colwise<I, F, kProp>(p, t, st, s_out, s_cs, amax_all);
    __syncthreads();  // FP8 tile and columnwise scales staged
    tiled_epilogue(p, t, meta, s_out, rs, s_cs);
    s ^= 1;
  }
  cp_async_wait<0>();
  if (p.amax) commit_amax(p.amax, amax_all, s_warp);
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

// Entry points mxq_quantize_ring_<input>_<fp8>[_prop]; each kernels/generic/quantize_ring_<input>.cu
// holds one MXQ_QUANT_RING_ENTRIES_IN line.
#define MXQ_QUANT_RING_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                       \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 2)                                      \
      mxq_quantize_ring_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                     \
    mxq::dev::quant::quantize_ring<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP>(p);                           \
  }
#define MXQ_QUANT_RING_ENTRIES_IN(IN, IN_NAME)                \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )      \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)  \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )      \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop)
