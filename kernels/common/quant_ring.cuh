// The pipelined tile kernel of the MXFP8 quantizer for 16-bit inputs (bf16, fp16) without fusion:
// columnwise (32x1 blocks, data transposed [cols, rows] or not) and both orientations from one read.
// Instantiated by kernels/generic/quantize_ring_<in>.cu; chosen over the tiled kernel
// (common/quant_kernels.cuh) for every plan it covers. fp32 inputs, SwiGLU and 32x32 blocks keep
// the tiled kernel. A rowwise-only instantiation (kCol = false, mxq_quantize_ringrow_*) takes small
// ungrouped rowwise tensors and most M-grouped rowwise plans from the register rowwise kernel (the
// launcher's rule: src/cuda/op_quantize.cpp). Ungrouped plans with at least 16 tiles per block run
// the counter-order instantiation (kDyn, mxq_quantize_ringdyn_*): tiles taken in order from a counter.
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
// as 16-byte stores. The rowwise scale tile alternates between two buffers, so no third barrier is
// needed before the next tile's pass A.
//
// With the stores overlapped, the kernel is bound by its own instruction stream (16 warps per SM), so
// the per-element work is kept short (docs/PERFORMANCE.md, "Fourth round"): the scale math is
// branch-free (quant_math.cuh, block_exponent_bf), the NaN fix of E4M3 codes is three operations per
// 4 codes, pass A computes each 32-block's scale once per quad of lanes instead of four times, and
// full tiles of ungrouped plans (the common case) take predicate-free paths: plain cp.async issue
// from one stepped address, tile positions stepped without divisions, a lean epilogue. Ragged,
// unaligned and grouped tiles keep the general paths.
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

// Pass A, general form (ragged or unaligned tiles): rowwise 1x32 output of the chunks this thread
// loaded (rows 16 i + tid / 16); the 4 lanes of a 32-block each compute its scale.
// kAmax: also fold the maxima into amax_all (rowwise-only plans, which have no pass B).
template <In I, Fp8 F, bool kProp, bool kAmax>
__device__ __forceinline__ void ring_rowwise(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                             uint8_t* s_rs, const ExpRule& er, float& amax_all) {
  const int tid = threadIdx.x;
  const int chunk = tid & (kChunksPerRow - 1);
  const int cl = chunk * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  uint8_t* ob = p.row_data + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl;
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const int rl = i * kRowsPerPass + (tid >> 4);
    const bool live = rl < t.nrows && nvalid > 0;
    const uint4 x = *reinterpret_cast<const uint4*>(stage + rl * kRingRowBytes + cl * 2);
    uint2 q;
    float amax;
    const uint32_t e = quantize_chunk16_e<I, F, kProp, kAmax>(x, er, q, amax, &amax_all);
    if (live) store_fp8x8(ob + rl * p.cols, q.x, q.y, nvalid);
    if ((chunk & 3) == 0) s_rs[local_scale(rl, chunk >> 2)] = static_cast<uint8_t>(live ? e : 0u);
  }
}

// Pass B: columns c = 2 (tid % 64) and c + 1, rows 32 rb .. 32 rb + 31 with rb = tid / 64. Stages the
// FP8 bytes in s_out (transposed: bytes 32 rb .. 32 rb + 31 of rows c and c + 1 of the [cols, rows]
// tile), writes the two exponents to the columnwise scale tile and folds the block maxima into
// amax_all.
template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void ring_colwise(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                             uint8_t* s_out, uint8_t* s_cs, float& amax_all, const ExpRule& er) {
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
  const uint32_t elo = block_exponent_bf<kProp>(alo, plo, er);
  const uint32_t ehi = block_exponent_bf<kProp>(ahi, phi, er);
  const float ilo = scale_inverse_bf<kProp>(elo), ihi = scale_inverse_bf<kProp>(ehi);
  uint32_t qlo[8], qhi[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    qlo[k] = quantize4_bf<F>(lo(4 * k), lo(4 * k + 1), lo(4 * k + 2), lo(4 * k + 3), ilo);
    qhi[k] = quantize4_bf<F>(hi(4 * k), hi(4 * k + 1), hi(4 * k + 2), hi(4 * k + 3), ihi);
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

// ---- pass A of full tiles ---------------------------------------------------------------------------

// Reduce-scatter of four per-lane values over the 4 lanes of a quad: lane j (= lane % 4) of each
// quad returns op over the quad of m[j]. 3 shuffles instead of 4 x 2 for four separate quad_max.
template <typename Op>
__device__ __forceinline__ float quad_scatter(const float (&m)[4], int j, Op op) {
  const bool odd = (j & 1) != 0;
  const float s0 = odd ? m[0] : m[1], s1 = odd ? m[2] : m[3];
  float k0 = odd ? m[1] : m[0], k1 = odd ? m[3] : m[2];  // passes (j & 1) and (j & 1) + 2
  k0 = op(k0, __shfl_xor_sync(0xFFFFFFFFu, s0, 1));
  k1 = op(k1, __shfl_xor_sync(0xFFFFFFFFu, s1, 1));
  const bool hi = (j & 2) != 0;
  const float s = hi ? k0 : k1;
  const float k = hi ? k1 : k0;  // pass j
  return op(k, __shfl_xor_sync(0xFFFFFFFFu, s, 2));
}

struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct MaxNanOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmax_nan(a, b); }
};

// Pass A of a full tile with 8-byte aligned FP8 rows (other tiles take ring_rowwise): the chunks of
// passes 4h .. 4h+3 are reduced together, so lane j of a quad computes the scale of pass 4h + j only
// (one exponent per 32-block instead of four copies), writes that scale byte, and the quad exchanges
// the four multipliers. Every row and column is live: no predicate.
template <In I, Fp8 F, bool kProp, bool kAmax>
__device__ __forceinline__ void ring_rowwise_scatter(const QuantizeParams& p, const QuantTile& t, const uint8_t* stage,
                                                     uint8_t* s_rs, const ExpRule& er, float& amax_all) {
  if (t.nrows != (t.sub ? kT / 2 : kT) || t.ncols != kT ||
      ((reinterpret_cast<uintptr_t>(p.row_data) | static_cast<uintptr_t>(p.cols)) & 7) != 0) {
    ring_rowwise<I, F, kProp, kAmax>(p, t, stage, s_rs, er, amax_all);
    return;
  }
  // A half tile (t.sub) is passes 0-3 (h = 0): rows 0-63, scale bytes 0-7 of each 16-byte line.
  const int tid = threadIdx.x, lane = tid & 31;
  const int chunk = tid & (kChunksPerRow - 1), j = chunk & 3, cb = chunk >> 2, r0 = tid >> 4;
  const int cl = chunk * kChunk;
  uint8_t* ob = p.row_data + (t.b * p.rows + t.r0 + r0) * p.cols + t.c0 + cl;
  const int64_t ostep = static_cast<int64_t>(kRowsPerPass) * p.cols;
  const uint8_t* src = stage + r0 * kRingRowBytes + cl * 2;
  // local_scale(16 (4h + j) + r0, cb) = sdst + 8 h
  uint8_t* sdst = s_rs + (16 * (j & 1) + r0) * 16 + (j >> 1) * 4 + cb;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (h == 1 && t.sub) break;
    float v[4][kChunk];
    float am[4], pm[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint4 q = *reinterpret_cast<const uint4*>(src + (4 * h + k) * kRowsPerPass * kRingRowBytes);
      const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int e = 0; e < kChunk; ++e) v[k][e] = bits_to_f32<I>(elem_bits<I>(w, e));
      chunk_max<kProp>(v[k], am[k], pm[k]);
      if constexpr (kAmax) amax_all = fmaxf(amax_all, am[k]);
    }
    const float m = quad_scatter(am, j, MaxOp{});
    const float pmx = kProp ? quad_scatter(pm, j, MaxNanOp{}) : 0.0f;
    const uint32_t e = block_exponent_bf<kProp>(m, pmx, er);
    const float inv = scale_inverse_bf<kProp>(e);
    sdst[8 * h] = static_cast<uint8_t>(e);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float ik = __shfl_sync(0xFFFFFFFFu, inv, (lane & ~3) | k);
      const uint32_t q0 = quantize4_bf<F>(v[k][0], v[k][1], v[k][2], v[k][3], ik);
      const uint32_t q1 = quantize4_bf<F>(v[k][4], v[k][5], v[k][6], v[k][7], ik);
      *reinterpret_cast<uint2*>(ob + (4 * h + k) * ostep) = make_uint2(q0, q1);
    }
  }
}

// ---- per-tile work of ungrouped plans ----------------------------------------------------------------

// Position of an ungrouped tile: column tile, row tile, batch entry. Persistent blocks step by
// gridDim.x tiles, which is (dq row tiles, dc column tiles) plus a carry: no division per tile.
struct TilePos {
  int tc, tr, b;
  int sub;  // 0 a whole tile, 1 / 2 its first / second 64-row half (quant_tick)
};

__device__ __forceinline__ TilePos tile_pos(const QuantizeParams& p, uint32_t tile) {
  const uint32_t tcs = static_cast<uint32_t>(p.tiles_c), trs = static_cast<uint32_t>(p.tiles_r);
  const uint32_t rest = tile / tcs;
  TilePos q;
  q.tc = static_cast<int>(tile - rest * tcs);
  q.b = static_cast<int>(rest / trs);
  q.tr = static_cast<int>(rest - static_cast<uint32_t>(q.b) * trs);
  q.sub = 0;
  return q;
}

// The position of ticket k in the counter order (halves from p.split_from on).
__device__ __forceinline__ TilePos tick_pos(const QuantizeParams& p, int64_t k) {
  int sub;
  const int64_t tile = quant_tick(p, k, sub);
  TilePos q = tile_pos(p, static_cast<uint32_t>(tile));
  q.sub = sub;
  return q;
}

__device__ __forceinline__ void tile_advance(const QuantizeParams& p, TilePos& q, int dc, int dq) {
  const int tcs = static_cast<int>(p.tiles_c), trs = static_cast<int>(p.tiles_r);
  q.tc += dc;
  const bool carry = q.tc >= tcs;
  if (carry) q.tc -= tcs;
  q.tr += dq + (carry ? 1 : 0);
  if (q.tr >= trs) {
    const int n = q.tr / trs;
    q.b += n;
    q.tr -= n * trs;
  }
}

__device__ __forceinline__ QuantTile tile_at(const QuantizeParams& p, const TilePos& q) {
  QuantTile t;
  t.b = q.b;
  t.tc = q.tc;
  t.tile_r = q.tr;
  t.sub = q.sub;
  t.c0 = static_cast<int64_t>(q.tc) * kQuantTile;
  t.r0 = static_cast<int64_t>(q.tr) * kQuantTile + sub_row0(q.sub);
  const int64_t cleft = p.cols - t.c0, rleft = p.rows - t.r0, rmax = sub_rows(q.sub);
  t.ncols = static_cast<int>(cleft < kQuantTile ? cleft : kQuantTile);
  t.nrows = static_cast<int>(rleft <= 0 ? 0 : rleft < rmax ? rleft : rmax);
  t.nload = t.nrows;
  t.col_c0 = static_cast<int64_t>(q.tr) * (kQuantTile / layout::kBlock);
  return t;
}

// The epilogue of a full, aligned, ungrouped, swizzled tile with transposed columnwise data: the
// same stores as tiled_epilogue without its general cases (warp 0 writes the rowwise scale tile,
// warp 1 the columnwise one, every thread 4 x 16 bytes of the FP8 tile). `lean` is that launch-wide
// condition; ragged tiles take tiled_epilogue.
template <bool kCol>
__device__ __forceinline__ void ring_epilogue(const QuantizeParams& p, const QuantTile& t, const GroupMeta& meta,
                                              const uint8_t* s_out, const uint8_t* s_rs, const uint8_t* s_cs,
                                              bool lean) {
  const int tid = threadIdx.x;
  if constexpr (!kCol) {
    if (t.sub) {
      // A 64-row half: its scale rows are bytes 8 (sub - 1) .. + 7 of each of the 32 lines of the
      // swizzled tile (row r of the 128: line r % 32, byte 4 (r / 32) + column); pass A left them in
      // bytes 0-7 of the local tile (rows past nrows as zeros). LINEAR: the general rows.
      if (!(p.flags & kQuantSwizzled)) {
        write_rowwise_scales(p, t, s_rs);
      } else if (tid < 32) {
        uint8_t* d = rowwise_scale_tile(p, t) + 16 * tid + 8 * (t.sub - 1);
        const uint2 v = *reinterpret_cast<const uint2*>(s_rs + 16 * tid);
        if ((reinterpret_cast<uintptr_t>(d) & 7u) == 0) {
          *reinterpret_cast<uint2*>(d) = v;
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) d[j] = static_cast<uint8_t>((j < 4 ? v.x : v.y) >> (8 * (j & 3)));
        }
      }
      return;
    }
  }
  if (!lean || t.nrows != kT || t.ncols != kT) {
    tiled_epilogue(p, t, meta, s_out, s_rs, s_cs);
    return;
  }
  if constexpr (!kCol) {
    if (tid < 32) {
      uint8_t* d = p.row_scales + t.b * p.row_scale_bstride + (t.tile_r * (p.row_scale_ld >> 2) + t.tc) * 512;
      store16(d + 16 * tid, *reinterpret_cast<const uint4*>(s_rs + 16 * tid));
    }
    return;
  }
  if (tid < 32) {
    if (p.flags & kQuantRowwise) {
      uint8_t* d = p.row_scales + t.b * p.row_scale_bstride + (t.tile_r * (p.row_scale_ld >> 2) + t.tc) * 512;
      store16(d + 16 * tid, *reinterpret_cast<const uint4*>(s_rs + 16 * tid));
    }
  } else if (tid < 64) {
    uint8_t* d = p.col_scales + t.b * p.col_scale_bstride + (t.tc * p.col_scale_tiles + t.tile_r) * 512;
    store16(d + 16 * (tid - 32), *reinterpret_cast<const uint4*>(s_cs + 16 * (tid - 32)));
  }
  uint8_t* base = p.col_data + (t.b * p.cols + t.c0 + (tid >> 3)) * p.rows + t.r0 + (tid & 7) * 16;
  const uint8_t* src = s_out + (tid >> 3) * kQuantOutPitch + (tid & 7) * 16;
  const int64_t step = 32 * p.rows;
#pragma unroll
  for (int j = 0; j < 4; ++j)
    store16(base + j * step, *reinterpret_cast<const uint4*>(src + j * 32 * kQuantOutPitch));
}

// ring_issue with the row addresses stepped from one base (16 rows apart) instead of one 64-bit
// product per row; a tile whose chunks are all in the input issues 8 plain 16-byte copies.
template <In I>
__device__ __forceinline__ void ring_issue_lean(const QuantizeParams& p, const QuantTile& t, uint8_t* stage) {
  using T = typename InTraits<I>::T;
  if (!(p.flags & kQuantVecIn)) {
    ring_issue<I>(p, t, stage);
    return;
  }
  const int tid = threadIdx.x;
  if (t.nload == kT && t.ncols == kT) {
    // Every chunk of the tile is in the input: 8 plain 16-byte copies from one stepped address.
    const int rr = tid >> 4, cc = (tid & (kChunksPerRow - 1)) * kChunk;
    const T* xr = static_cast<const T*>(p.x) + t.b * p.in_bstride + (t.r0 + rr) * p.in_ld + t.c0 + cc;
    const int64_t st = kRowsPerPass * p.in_ld;
    uint8_t* d = stage + rr * kRingRowBytes + cc * 2;
#pragma unroll
    // With the 256-byte L2 prefetch hint: a row's 16 chunks are one aligned 256-byte segment
    // (docs/PERFORMANCE.md, "Eleventh round": 0.2-0.4% less time than without).
    for (int i = 0; i < kPasses; ++i) cp_async16_full_l2_256(d + i * kRowsPerPass * kRingRowBytes, xr + i * st);
    cp_async_commit();
    return;
  }
  const int cl = (tid & (kChunksPerRow - 1)) * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  const int r0 = tid >> 4;
  const T* x0 = static_cast<const T*>(p.x) + t.b * p.in_bstride + (t.r0 + r0) * p.in_ld + t.c0 + cl;
  const int64_t step = kRowsPerPass * p.in_ld;
  uint8_t* dst = stage + r0 * kRingRowBytes + cl * 2;
  const uint32_t nbytes = static_cast<uint32_t>(nvalid * 2);
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    const bool in = i * kRowsPerPass + r0 < t.nload && nvalid > 0;
    cp_async16(dst + i * kRowsPerPass * kRingRowBytes, in ? static_cast<const void*>(x0 + i * step) : p.x,
               in ? nbytes : 0u);
  }
  cp_async_commit();
}

// kCol = false: the rowwise-only instantiation (mxq_quantize_ringrow_*): pass A only, one barrier per
// tile, no columnwise staging, 3 blocks per SM.
// kDyn (mxq_quantize_ringdyn_* / ringrowdyn_*, plans with many tiles per block; kQuantDynamicTiles): after
// its first tile (blockIdx.x) a block takes tiles in order from the counter in the workspace (ticket +
// gridDim.x) instead of every gridDim.x-th tile, so the tiles in flight stay one window of the tensor:
// the static order lets the blocks drift apart, and the scattered DRAM traffic cost 3-5 points of the
// copy at the large shapes (docs/PERFORMANCE.md, "Sixth round"). The ticket of the tile after next is
// taken at the top of each tile and published before barrier 2, so its round trip is hidden.
template <In I, Fp8 F, bool kProp, bool kCol = true, bool kDyn = false>
__device__ __forceinline__ void quantize_ring(const QuantizeParams& p) {
  extern __shared__ __align__(16) uint8_t smem[];  // ring, scale tiles, FP8 tile, then the group table
  __shared__ float s_warp[kWarps];
  __shared__ GroupMeta meta;
  __shared__ int64_t scan_tmp[kWarps];
  uint8_t* stages = smem;
  uint8_t* s_rs = smem + kRingStages * kRingStageBytes;  // two rowwise scale tiles, alternating
  uint8_t* s_cs = s_rs + 2 * 512;                        // columnwise scale tile
  uint8_t* s_out = s_cs + 512;                           // [128][kQuantOutPitch] FP8 staging
  uint8_t* group_smem = smem + (kCol ? quantize_ring_smem_bytes() : quantize_ringrow_smem_bytes());
  const bool grouped = (p.flags & kQuantGrouped) != 0;
  // Rowwise-only M-grouped plans cut the data like an ungrouped tensor and move only the scale rows
  // (quant_tile_mgrouped, write_mgrouped_scales), as the register rowwise kernel does.
  const bool mgrouped = !kCol && grouped;
  const int64_t ntiles = p.tiles_c * p.tiles_r * p.batch;
  if (blockIdx.x >= ntiles) return;  // the launcher never starts more blocks than tiles
  // The rowwise counter order hands out tickets: whole tiles, then the last tiles' 64-row halves
  // (quant_tick; split_from == ntiles: no halves).
  constexpr bool kSplit = kDyn && !kCol;
  const int64_t nticks = kSplit ? 2 * ntiles - p.split_from : ntiles;
  // M-grouped: the first tile's loads go out before the group table is built (the offsets' loads and
  // the block scans then overlap them), with every row < rows loaded; rows the groups do not cover
  // (past meta.covered) are zeroed in the stage once the table is known (first iteration below).
  int first_nload = 0;
  // The first ticket and the group offsets are requested before the first tile's loads: behind its
  // 32 KB they arrived last, and the group table (and the second tile's issue) waited for them
  // (2048x4096 M-grouped: 0.68 -> 0.80 of copy with 128 groups, 0.75 -> 0.85 with 8).
  unsigned long long ticket0 = 0;
  if constexpr (kDyn) {
    if (threadIdx.x == 0) ticket0 = atomicAdd(p.tile_counter, 1ull);
  }
  const GroupOffsets goff = load_group_offsets(p);  // zeros for ungrouped plans, no loads
  if (mgrouped) {
    GroupMeta all;
    all.covered = p.rows;
    int sub0 = 0;
    const int64_t tile0 = kSplit ? quant_tick(p, blockIdx.x, sub0) : blockIdx.x;
    const QuantTile t0 = quant_tile_mgrouped(p, tile0, all, sub0);
    first_nload = t0.nload;
    ring_issue_lean<I>(p, t0, stages);
  }
  if (grouped) build_group_table(p, group_smem, &meta, scan_tmp, goff);
  const GroupView gv(p, group_smem, meta);
  if (mgrouped) build_row_tile_groups(p, gv);
  const bool row = (p.flags & kQuantRowwise) != 0;
  float amax_all = 0.0f;
  const ExpRule er = exp_rule<F>(p.mode);
  // Ungrouped plans step their tile positions (grouped tiles need the group table: quant_tile).
  const bool walk = !grouped;
  const bool lean_epi = walk && (p.flags & kQuantSwizzled) && ((p.flags & kQuantTransposed) || !kCol) &&
                        ((reinterpret_cast<uintptr_t>(p.col_data) | static_cast<uintptr_t>(p.rows) |
                          reinterpret_cast<uintptr_t>(p.row_scales) | reinterpret_cast<uintptr_t>(p.col_scales)) &
                         15) == 0;
  const int dc = static_cast<int>(gridDim.x % static_cast<uint32_t>(p.tiles_c));
  const int dq = static_cast<int>(gridDim.x / static_cast<uint32_t>(p.tiles_c));
  TilePos cur{0, 0, 0}, nxt{0, 0, 0};
  if (walk) {
    cur = kSplit ? tick_pos(p, blockIdx.x) : tile_pos(p, blockIdx.x);
    nxt = cur;
    tile_advance(p, nxt, dc, dq);
  }
  auto tile_of = [&](int64_t tile, const TilePos& q) {
    if (walk) return tile_at(p, q);
    if (mgrouped) {
      int sub = 0;
      const int64_t k = kSplit ? quant_tick(p, tile, sub) : tile;
      return quant_tile_mgrouped(p, k, meta, sub);
    }
    return quant_tile(p, tile, group_smem, meta);
  };
  // kDyn: scan_tmp holds the tickets (build_group_table, the only other user, is done with it).
  if constexpr (kDyn) {
    if (threadIdx.x == 0) scan_tmp[0] = gridDim.x + static_cast<int64_t>(ticket0);
  }
  if (!mgrouped) ring_issue_lean<I>(p, tile_of(blockIdx.x, cur), stages);
  if constexpr (kDyn) __syncthreads();  // the first ticket is visible
  int s = 0;
  int it = 0;                  // kDyn: tile number of this block
  int64_t ticket_next = 0;     // kDyn: the tile after `tile`
  // kSplit: from p.jit_from on (by default from the start: op_quantize.cpp, jit_tickets) the block
  // takes its tickets just in time: no ticket is held a tile ahead; the next one is drawn here, at the
  // top of the tile during which its loads are issued, and published by one more barrier. So no block
  // holds a third tile, and at the launch's end no ticket waits in a busy block while others idle
  // (docs/PERFORMANCE.md, "Eleventh round": 0.8-1.6% less time). Block-uniform.
  bool jit = false;
  bool ahead = true;  // kDyn: a ticket was drawn one tile ahead in this iteration (published below)
  for (int64_t tile = blockIdx.x; tile < nticks; tile = kDyn ? ticket_next : tile + gridDim.x) {
    int64_t next = tile + gridDim.x;
    unsigned long long ticket = 0;
    if constexpr (kDyn) {
      if (kSplit && jit) {
        if (threadIdx.x == 0) scan_tmp[it & 1] = gridDim.x + static_cast<int64_t>(atomicAdd(p.tile_counter, 1ull));
        __syncthreads();  // the ticket is visible (slot it & 1 was last read two barriers ago)
      }
      next = scan_tmp[it & 1];
      ticket_next = next;
      // From jit_from on no ticket is drawn ahead; the next iteration draws its own.
      ahead = !(kSplit && (jit || next >= p.jit_from));
      if (kSplit && !jit && !ahead) jit = true;
      if (ahead && threadIdx.x == 0) ticket = atomicAdd(p.tile_counter, 1ull);
      if (next < nticks) nxt = kSplit ? tick_pos(p, next) : tile_pos(p, static_cast<uint32_t>(next));
    }
    if (next < nticks) ring_issue_lean<I>(p, tile_of(next, nxt), stages + (s ^ 1) * kRingStageBytes);
    else cp_async_commit();  // an empty group keeps the wait count uniform
    // Recomputed rather than carried over from the issue: fewer registers live across the loop.
    const QuantTile t = tile_of(tile, cur);
    // M-grouped swizzled: the scale rows' group lookups happen while the tile's data is in flight.
    const MgScaleDst md = mgrouped && (p.flags & kQuantSwizzled) ? mgrouped_scale_dst(p, t, gv)
                                                                 : MgScaleDst{MgScaleDst::kNoRow};
    cp_async_wait<1>();  // this thread's chunks of tile `tile` have landed
    const uint8_t* st = stages + s * kRingStageBytes;
    if (mgrouped && t.nload < first_nload) {
      // The first tile was loaded before the table: zero this thread's own chunks of uncovered rows
      // (pass A reads back only its own chunks, so no barrier is needed). Later tiles load nload rows.
      uint8_t* own = stages + s * kRingStageBytes + (threadIdx.x >> 4) * kRingRowBytes +
                     (threadIdx.x & (kChunksPerRow - 1)) * kChunk * 2;
#pragma unroll
      for (int i = 0; i < kPasses; ++i)
        if (i * kRowsPerPass + static_cast<int>(threadIdx.x >> 4) >= t.nload)
          *reinterpret_cast<uint4*>(own + i * kRowsPerPass * kRingRowBytes) = make_uint4(0u, 0u, 0u, 0u);
    }
    first_nload = 0;
    uint8_t* rs = s_rs + s * 512;
    if (row) ring_rowwise_scatter<I, F, kProp, !kCol>(p, t, st, rs, er, amax_all);
    // kDyn, rowwise only (one barrier per tile): slot (it + 1) & 1 was last read at the top of the
    // previous tile, before its barrier.
    if constexpr (kDyn && !kCol) {
      if (ahead && threadIdx.x == 0) scan_tmp[(it + 1) & 1] = gridDim.x + static_cast<int64_t>(ticket);
    }
    __syncthreads();  // every thread's chunks (and rowwise scales) are in shared memory
    // Rowwise only (!kCol): pass A reads back only this thread's own chunks, so the stages need no
    // barrier of their own; the one above orders the scale tile before the epilogue.
    if constexpr (kCol) {
      ring_colwise<I, F, kProp>(p, t, st, s_out, s_cs, amax_all, er);
      // kDyn: slot (it + 1) & 1 was last read at the top of the previous tile, before its barrier 1.
      if constexpr (kDyn) {
        if (threadIdx.x == 0) scan_tmp[(it + 1) & 1] = gridDim.x + static_cast<int64_t>(ticket);
      }
      __syncthreads();  // FP8 tile and columnwise scales staged
    }
    if (mgrouped) {
      if (p.flags & kQuantSwizzled) write_mgrouped_scales(p, t, rs, gv, md);
      else write_rowwise_scales(p, t, rs);
    } else {
      ring_epilogue<kCol>(p, t, meta, s_out, rs, s_cs, lean_epi);
    }
    if (walk) {
      cur = nxt;
      if constexpr (!kDyn) tile_advance(p, nxt, dc, dq);
    }
    s ^= 1;
    if constexpr (kDyn) ++it;
  }
  // M-grouped: the padded scale tensor's tail, after the tiles (blocks that run out of tiles early
  // do it while the others finish theirs; before the loop it delayed every block's first tile).
  if (mgrouped && (p.flags & kQuantSwizzled)) zero_mgrouped_tail(p, meta);
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
#define MXQ_QUANT_RINGDYN_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                    \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 2)                                      \
      mxq_quantize_ringdyn_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                  \
    mxq::dev::quant::quantize_ring<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, true, true>(p);               \
  }
#define MXQ_QUANT_RINGROWDYN_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                 \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 3)                                      \
      mxq_quantize_ringrowdyn_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {               \
    mxq::dev::quant::quantize_ring<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, false, true>(p);              \
  }
#define MXQ_QUANT_RINGROW_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                    \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 3)                                      \
      mxq_quantize_ringrow_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                  \
    mxq::dev::quant::quantize_ring<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, false>(p);                    \
  }
#define MXQ_QUANT_RING_ENTRIES_IN(IN, IN_NAME)                \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )      \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)  \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )      \
  MXQ_QUANT_RING_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop)  \
  MXQ_QUANT_RINGROW_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )      \
  MXQ_QUANT_RINGROW_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)  \
  MXQ_QUANT_RINGROW_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )      \
  MXQ_QUANT_RINGROW_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop) \
  MXQ_QUANT_RINGDYN_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )      \
  MXQ_QUANT_RINGDYN_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)  \
  MXQ_QUANT_RINGDYN_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )      \
  MXQ_QUANT_RINGDYN_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop)  \
  MXQ_QUANT_RINGROWDYN_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )      \
  MXQ_QUANT_RINGROWDYN_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)  \
  MXQ_QUANT_RINGROWDYN_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )      \
  MXQ_QUANT_RINGROWDYN_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop)
