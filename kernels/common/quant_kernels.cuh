// Device code of the MXFP8 quantize kernels (instantiated by kernels/generic/quantize_<kind>_<in>.cu):
// bf16 / fp16 / fp32 -> E4M3 / E5M2 data plus UE8M0 scales, bit-exact with the CPU reference
// (src/cpu/numerics.cpp, docs/NUMERICS.md). A quantizer reads 2-4 bytes and writes ~1 byte per
// element, so it is shaped only by memory traffic: 16-byte loads with several in flight per thread,
// fully coalesced stores, and scales staged in shared memory so that each 512-byte swizzled scale
// tile leaves the block as 32 16-byte stores.
//
// Work is cut into 128 x 128 tiles (common/quant_tile.cuh): a tile is exactly one SWIZZLED_128x4
// scale tile in either orientation, so the grid also writes all swizzle padding. Inside a tile,
// thread t owns chunks of 8 consecutive elements (columns 8*(t%16)..+8) of rows 16*i + t/16,
// i = 0..7: a half-warp covers 128 contiguous columns of one row and one 32-block is 4 adjacent
// lanes, whose amax is two shuffles.
//
// Three kernels, all generic (no sm_90a feature: the embedded compute_90 PTX also runs on Blackwell):
//   rowwise  registers only: load, amax, scale, convert, store; one block per tile, 4 blocks per SM.
//            The bandwidth-critical common case. M-grouped tensors are cut exactly like ungrouped
//            ones (persistent blocks, static or counter-driven tile order); only the scale rows move
//            to their group's padded position, and the layout's padding is zeroed as whole lines.
//   ring     (common/quant_ring.cuh) columnwise and both orientations for 16-bit inputs without
//            fusion: tiles stream through a two-stage cp.async shared-memory ring. Its rowwise-only
//            form also takes small and most M-grouped rowwise tensors (src/cuda/op_quantize.cpp).
//   tiled    the tile also goes to shared memory, for everything else that needs the other axis:
//            columnwise (32x1 blocks; data transposed [cols, rows] or not), both orientations from
//            one read, and 32x32 blocks. Rowwise output is produced from registers on the way in;
//            columnwise reads one column per thread from shared memory, stages its FP8 bytes in a
//            second shared tile and writes whole 128-byte rows. For 16-bit inputs the blocks are
//            persistent and software-pipelined: the next tile's loads are issued as soon as this
//            tile is in shared memory.
// Aligned rows take 16-byte vector paths; unaligned pointers, strides, K % 8 != 0 and ragged edges
// fall back to guarded element accesses (correct, slower).
#pragma once

#include <cstdint>

#include "common/fp8.cuh"
#include "common/quant_math.cuh"
#include "common/quant_params.cuh"
#include "common/quant_tile.cuh"
#include "common/vec.cuh"
#include "core/layout.h"

namespace mxq {
namespace dev {
namespace quant {

constexpr int kT = kQuantTile;
constexpr int kChunk = 8;                                     // elements per thread chunk
constexpr int kChunksPerRow = kT / kChunk;                    // 16: a half-warp per tile row
constexpr int kRowsPerPass = kQuantThreads / kChunksPerRow;   // 16
constexpr int kPasses = kT / kRowsPerPass;                    // 8
constexpr int kWarps = kQuantThreads / 32;

// Byte offset of scale (r, c) inside one 128 x 4 swizzled scale tile.
__device__ __forceinline__ int local_scale(int r, int c) { return static_cast<int>(layout::swizzled_offset(r, c, 4)); }

// ---- one chunk of 8 input elements ---------------------------------------------------------------

template <In I, bool kSwiglu>
struct RawChunk {
  static constexpr int kWords = 4 * InTraits<I>::kVecs;  // 32-bit words holding 8 elements
  uint32_t g[kWords];                                     // the elements (SwiGLU: the gate half)
  uint32_t u[kSwiglu ? kWords : 1];                       // SwiGLU: the up half
};

template <In I>
__device__ __forceinline__ uint32_t elem_bits(const uint32_t* w, int j) {
  if constexpr (I == In::F32) return w[j];
  else return (w[j >> 1] >> ((j & 1) * 16)) & 0xFFFFu;
}

template <In I>
__device__ __forceinline__ float bits_to_f32(uint32_t b) {
  if constexpr (I == In::F32) return __uint_as_float(b);
  else return InTraits<I>::to_f32(static_cast<uint16_t>(b));
}

template <In I>
__device__ __forceinline__ void set_elem_bits(uint32_t* w, int j, uint32_t b) {
  if constexpr (I == In::F32) w[j] = b;
  else w[j >> 1] |= b << ((j & 1) * 16);
}

template <In I>
__device__ __forceinline__ void load_words(uint32_t* w, const typename InTraits<I>::T* src, int n, bool vec) {
  using T = typename InTraits<I>::T;
  constexpr int kVecs = InTraits<I>::kVecs;
  if (vec && n == kChunk) {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) {
      const uint4 q = load16_stream(src + v * (16 / sizeof(T)));
      w[4 * v] = q.x;
      w[4 * v + 1] = q.y;
      w[4 * v + 2] = q.z;
      w[4 * v + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < 4 * kVecs; ++k) w[k] = 0;
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      if (j < n) {
        uint32_t b;
        if constexpr (I == In::F32) b = __float_as_uint(__ldg(src + j));
        else b = __ldg(src + j);
        set_elem_bits<I>(w, j, b);
      }
    }
  }
}

template <In I, bool kSwiglu>
__device__ __forceinline__ void load_chunk(RawChunk<I, kSwiglu>& rc, const typename InTraits<I>::T* src,
                                           int64_t up_offset, int n, bool vec) {
  load_words<I>(rc.g, src, n, vec);
  if constexpr (kSwiglu) load_words<I>(rc.u, src + up_offset, n, vec);
}

template <In I, bool kSwiglu>
__device__ __forceinline__ void zero_chunk(RawChunk<I, kSwiglu>& rc) {
#pragma unroll
  for (int k = 0; k < RawChunk<I, kSwiglu>::kWords; ++k) {
    rc.g[k] = 0;
    if constexpr (kSwiglu) rc.u[k] = 0;
  }
}

// The 8 values that get quantized (fp32) and their input-dtype bits (SwiGLU: the rounded product).
template <In I, bool kSwiglu>
__device__ __forceinline__ void chunk_values(const RawChunk<I, kSwiglu>& rc, float* v, uint32_t* bits) {
#pragma unroll
  for (int k = 0; k < RawChunk<I, kSwiglu>::kWords; ++k) bits[k] = kSwiglu ? 0u : rc.g[k];
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    if constexpr (kSwiglu) {
      const uint32_t b = swiglu_bits<I>(bits_to_f32<I>(elem_bits<I>(rc.g, j)), bits_to_f32<I>(elem_bits<I>(rc.u, j)));
      set_elem_bits<I>(bits, j, b);
      v[j] = bits_to_f32<I>(b);
    } else {
      v[j] = bits_to_f32<I>(elem_bits<I>(rc.g, j));
    }
  }
}

// Stores n (<= 8) elements of input-dtype bits (the SwiGLU activation output).
template <In I>
__device__ __forceinline__ void store_words(typename InTraits<I>::T* dst, const uint32_t* w, int n) {
  using T = typename InTraits<I>::T;
  constexpr int kVecs = InTraits<I>::kVecs;
  if (n == kChunk && aligned16(dst)) {
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
      store16(dst + v * (16 / sizeof(T)), make_uint4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]));
  } else {
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      if (j < n) {
        if constexpr (I == In::F32) dst[j] = __uint_as_float(w[j]);
        else dst[j] = static_cast<uint16_t>(elem_bits<I>(w, j));
      }
    }
  }
}

// Stores n (<= 8) FP8 codes packed in q0 (elements 0-3) and q1 (4-7).
__device__ __forceinline__ void store_fp8x8(uint8_t* dst, uint32_t q0, uint32_t q1, int n) {
  if (n == kChunk && (reinterpret_cast<uintptr_t>(dst) & 7u) == 0) {
    *reinterpret_cast<uint2*>(dst) = make_uint2(q0, q1);
  } else {
#pragma unroll
    for (int j = 0; j < kChunk; ++j)
      if (j < n) dst[j] = static_cast<uint8_t>((j < 4 ? q0 : q1) >> ((j & 3) * 8));
  }
}

// amax (NaN-ignoring) and, under PROPAGATE, the NaN-propagating max of a chunk.
template <bool kProp>
__device__ __forceinline__ void chunk_max(const float* v, float& amax, float& pmax) {
  amax = 0.0f;
  pmax = 0.0f;
#pragma unroll
  for (int j = 0; j < kChunk; ++j) {
    amax = fmaxf(amax, fabsf(v[j]));
    if constexpr (kProp) pmax = fmax_nan(pmax, fabsf(v[j]));
  }
}

// Reduces over the 4 lanes of a 32-block (lanes 4k..4k+3 hold consecutive chunks).
template <bool kProp>
__device__ __forceinline__ void quad_max(float& amax, float& pmax) {
#pragma unroll
  for (int d = 1; d < 4; d <<= 1) {
    amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, d));
    if constexpr (kProp) pmax = fmax_nan(pmax, __shfl_xor_sync(0xFFFFFFFFu, pmax, d));
  }
}

// One 16-byte chunk (8 16-bit elements, lanes 4k..4k+3 holding one 32-block) quantized rowwise: its
// FP8 codes in q, the chunk's own NaN-ignoring amax (before the 32-block's reduction) in amax, and the
// 32-block's scale exponent returned. The ring's pass A and the flat and band kernels (quant_flat.cuh)
// run it; every lane of the warp must call it (shuffles). kFold: amax is also folded into amax_all,
// before the 32-block's shuffles (the ring's place for it; its measured PTX has it there).
template <In I, Fp8 F, bool kProp, bool kFold = false>
__device__ __forceinline__ uint32_t quantize_chunk16_e(const uint4& v, const ExpRule& er, uint2& q, float& amax,
                                                       float* amax_all = nullptr) {
  using Raw = RawChunk<I, false>;
  Raw rc;
  rc.g[0] = v.x;
  rc.g[1] = v.y;
  rc.g[2] = v.z;
  rc.g[3] = v.w;
  float val[kChunk];
  uint32_t bits[Raw::kWords];
  chunk_values<I, false>(rc, val, bits);
  float pmax;
  chunk_max<kProp>(val, amax, pmax);
  if constexpr (kFold) *amax_all = fmaxf(*amax_all, amax);
  float bmax = amax;
  quad_max<kProp>(bmax, pmax);
  const uint32_t e = block_exponent_bf<kProp>(bmax, pmax, er);
  const float inv = scale_inverse_bf<kProp>(e);
  q.x = quantize4_bf<F>(val[0], val[1], val[2], val[3], inv);
  q.y = quantize4_bf<F>(val[4], val[5], val[6], val[7], inv);
  return e;
}

template <Fp8 F>
__device__ __forceinline__ void quantize8(const float* v, float inv, uint32_t& q0, uint32_t& q1) {
  q0 = quantize4<F>(v[0], v[1], v[2], v[3], inv);
  q1 = quantize4<F>(v[4], v[5], v[6], v[7], inv);
}

// Loads the chunks of passes p0 .. p0+N-1 of tile t (rows past nload read as zeros, so every later
// stage sees a fully defined tile).
template <In I, bool kSwiglu, int N>
__device__ __forceinline__ void load_rows(const QuantizeParams& p, const QuantTile& t, int p0,
                                          RawChunk<I, kSwiglu> (&rc)[N]) {
  using T = typename InTraits<I>::T;
  const int tid = threadIdx.x;
  const int cl = (tid & (kChunksPerRow - 1)) * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  const bool vec = (p.flags & kQuantVecIn) != 0;
  const T* xb = static_cast<const T*>(p.x) + t.b * p.in_bstride + t.r0 * p.in_ld + t.c0 + cl;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int rl = (p0 + i) * kRowsPerPass + (tid >> 4);
    if (rl < t.nload) load_chunk<I, kSwiglu>(rc[i], xb + rl * p.in_ld, p.cols, nvalid, vec);
    else zero_chunk<I, kSwiglu>(rc[i]);
  }
}

// ---- block epilogues -----------------------------------------------------------------------------

// One 128 x 4 tile of scales from shared memory (local swizzled order) to its place in either layout.
//   swizzled: 512 contiguous bytes at `tile_base`.
//   LINEAR:   row r (< nrows) of the tile goes to linear_base + r * ld, columns 0..ncb-1.
__device__ __forceinline__ void write_scale_tile(const uint8_t* s, bool swizzled, uint8_t* tile_base,
                                                 uint8_t* linear_base, int64_t ld, int nrows, int ncb) {
  const int tid = threadIdx.x;
  if (swizzled) {
    if (tid < 32) {
      const uint4 v = *reinterpret_cast<const uint4*>(s + 16 * tid);
      if (aligned16(tile_base)) {
        store16(tile_base + 16 * tid, v);
      } else {
#pragma unroll
        for (int j = 0; j < 16; ++j) tile_base[16 * tid + j] = static_cast<uint8_t>(byte_of(v, j));
      }
    }
  } else if (tid < nrows) {
    // A row's 4 scales are 4 consecutive bytes on both sides: one 32-bit store when aligned.
    uint8_t* dst = linear_base + tid * ld;
    if (ncb == 4 && (reinterpret_cast<uintptr_t>(dst) & 3u) == 0) {
      *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(s + local_scale(tid, 0));
    } else {
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (c < ncb) dst[c] = s[local_scale(tid, c)];
    }
  }
}

// Block-wide NaN-ignoring max, folded into the global amax (zeroed by the launcher). Non-negative
// floats order like their bit patterns, so an integer atomicMax is a float max here.
__device__ __forceinline__ void commit_amax(float* out, float v, float* s_warp) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, d));
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) m = fmaxf(m, s_warp[w]);
    if (m > 0.0f) atomicMax(reinterpret_cast<unsigned int*>(out), __float_as_uint(m));
  }
}

__device__ __forceinline__ uint8_t* rowwise_scale_tile(const QuantizeParams& p, const QuantTile& t) {
  // The 128x4 tile holding scale (128*tile_r, 4*tc): its first byte, by core/layout.h.
  return p.row_scales + t.b * p.row_scale_bstride +
         layout::swizzled_offset(t.tile_r * layout::kSwizzleRows, t.tc * layout::kSwizzleCols, p.row_scale_ld);
}

__device__ __forceinline__ void write_rowwise_scales(const QuantizeParams& p, const QuantTile& t, const uint8_t* s) {
  const bool swz = (p.flags & kQuantSwizzled) != 0;
  if (swz && t.tile_r >= p.row_scale_tiles) return;  // grouped: past this tensor's padded bound
  const int64_t left = p.row_scale_ld - t.tc * 4;   // LINEAR: ld == ceil(cols / 32)
  write_scale_tile(s, swz, swz ? rowwise_scale_tile(p, t) : nullptr,
                   p.row_scales + t.b * p.row_scale_bstride + t.r0 * p.row_scale_ld + t.tc * 4, p.row_scale_ld,
                   t.nrows, static_cast<int>(left < 4 ? left : 4));
}

// ---- the rowwise kernel --------------------------------------------------------------------------

// Where this thread's scale row goes (row tid of the tile; none past nload) and whether a group
// ends inside the tile (its padding lines are then zeroed), computed apart from the stores so a
// kernel can do the group lookups while the tile's data is still in flight. A tile inside one group
// (the common case) pays two lookups per thread and no per-row search. One 32-bit word, so a single
// register stays live across the tile's work: bit 31 = a group ends here (block-uniform), bits 0-30
// = the row's byte offset into row_scales (the launcher keeps M-grouped swizzled scale tensors of
// ring plans below 2^31 bytes), kNoRow when the thread has no row.
struct MgScaleDst {
  static constexpr uint32_t kNoRow = 0x7FFFFFFFu, kPad = 0x80000000u;
  uint32_t w;
  __device__ __forceinline__ bool pad() const { return (w & kPad) != 0; }
  __device__ __forceinline__ uint32_t row() const { return w & kNoRow; }
};

// The groups of an M-grouped data tile (t.nload > 0): its first and last group.
struct MgTileGroups {
  int64_t g0, g1;
};
__device__ __forceinline__ MgTileGroups mg_tile_groups(const QuantTile& t, const GroupView& gv) {
  MgTileGroups m;
  gv.tile_groups(t, m.g0, m.g1);
  return m;
}
// MgScaleDst::kPad when a group ends inside the tile, whose last loaded row is last - 1 (its padding
// lines are then zeroed: write_mgrouped_scales_at), else 0.
__device__ __forceinline__ uint32_t mg_pad_bit(const GroupView& gv, const MgTileGroups& m, int64_t last) {
  return (m.g1 > m.g0 || gv.end(m.g0) <= last) ? MgScaleDst::kPad : 0u;
}

// Byte offset of data row r's scale row (r in the tile, groups m.g0 .. m.g1), 64-bit arithmetic.
__device__ __forceinline__ int64_t mg_scale_row(const QuantizeParams& p, const QuantTile& t, const GroupView& gv,
                                                const MgTileGroups& m, int64_t r) {
  const int64_t g = m.g1 == m.g0 ? m.g0 : gv.group_of_row(r, m.g0, m.g1 + 1);
  return layout::swizzled_offset(kQuantTile * gv.tile0(g) + (r - gv.start(g)), 4 * t.tc, p.row_scale_ld);
}

// Ring kernel only (its plans' scale tensors are below 2^31 bytes).
__device__ __forceinline__ MgScaleDst mgrouped_scale_dst(const QuantizeParams& p, const QuantTile& t,
                                                         const GroupView& gv) {
  if (t.nload <= 0) return MgScaleDst{MgScaleDst::kNoRow};
  const int64_t last = t.r0 + t.nload;
  const MgTileGroups m = mg_tile_groups(t, gv);
  const int64_t g0 = m.g0, g1 = m.g1;
  uint32_t w = mg_pad_bit(gv, m, last);
  const int tid = threadIdx.x;
  if (tid < t.nload && !gv.global()) {
    // The shared-memory table, in 32-bit arithmetic: the launcher keeps these scale tensors below
    // 2^31 bytes, so every row, start and scale row fits (the starts are the low words of the int64
    // entries). A row of a tile with few groups counts the group starts at or below it (one
    // broadcast load per group, the same trip count in every thread) instead of a binary search.
    const uint32_t r = static_cast<uint32_t>(t.r0) + static_cast<uint32_t>(tid);
    const uint32_t* st = reinterpret_cast<const uint32_t*>(gv.tab.start);
    const uint32_t gb = static_cast<uint32_t>(g0), ge = static_cast<uint32_t>(g1);
    uint32_t g = gb;
    if (ge - gb <= 8u) {
      for (uint32_t k = gb + 1; k <= ge; ++k) g += st[2 * k] <= r ? 1u : 0u;
    } else {
      g = static_cast<uint32_t>(gv.group_of_row(r, g0, g1 + 1));
    }
    const uint32_t row = kQuantTile * static_cast<uint32_t>(gv.tab.tile0[g]) + (r - st[2 * g]);
    w |= layout::swizzled_offset_in<uint32_t>(row, 4u * static_cast<uint32_t>(t.tc),
                                              static_cast<uint32_t>(p.row_scale_ld));
  } else if (tid < t.nload) {
    w |= static_cast<uint32_t>(mg_scale_row(p, t, gv, m, t.r0 + tid));
  } else {
    w |= MgScaleDst::kNoRow;
  }
  return MgScaleDst{w};
}

// M-grouped swizzled scales. The data is cut exactly like an ungrouped tensor (quant_tile_mgrouped);
// each data row's 4 scale bytes go to its group's scale row, and the tile also zeroes the padding
// rows of each group whose last data row lies in it, inside that group's last swizzled scale tile
// for this column tile: a 16-byte line (rows i, i+32, i+64, i+96) that holds only padding rows is
// one 16-byte store, a mixed line gets 4-byte stores. The rest of the padding is the tail
// (zero_mgrouped_tail). So the padding costs whole-line stores inside data tiles instead of extra
// padding-only tiles (measured: docs/PERFORMANCE.md). d comes from mgrouped_scale_dst. (Handing the
// tile's first and last group over in a static shared slot instead of looking them up again cost the
// ring kernel 4-8 points on every rowwise plan: docs/PERFORMANCE.md, "M-grouped plans, fifth session".)
// has_row / row: this thread's scale row (row tid of the tile) and its byte offset; pad: a group ends
// in this tile (block-uniform).
__device__ __forceinline__ void write_mgrouped_scales_at(const QuantizeParams& p, const QuantTile& t, const uint8_t* s,
                                                         const GroupView& gv, bool has_row, int64_t row, bool pad) {
  const int tid = threadIdx.x;
  const bool al16 = aligned16(p.row_scales);
  const bool al4 = (reinterpret_cast<uintptr_t>(p.row_scales) & 3u) == 0;
  auto put4 = [&](uint8_t* dst, uint32_t w) {
    if (al4) {
      *reinterpret_cast<uint32_t*>(dst) = w;
    } else {
#pragma unroll
      for (int c = 0; c < 4; ++c) dst[c] = static_cast<uint8_t>(w >> (8 * c));
    }
  };
  auto zero16 = [&](uint8_t* dst) {
    if (al16) {
      store16(dst, make_uint4(0u, 0u, 0u, 0u));
    } else {
#pragma unroll
      for (int c = 0; c < 16; ++c) dst[c] = 0;
    }
  };
  if (has_row) put4(p.row_scales + row, *reinterpret_cast<const uint32_t*>(s + local_scale(tid, 0)));
  if (pad) {  // block-uniform
    const int64_t last = t.r0 + t.nload;  // groups ending in (r0, last] end in this tile
    int64_t g0, g1;
    gv.tile_groups(t, g0, g1);
    const int64_t items = (g1 - g0 + 1) * 32;
    for (int64_t k = tid; k < items; k += kQuantThreads) {
      const int64_t g = g0 + (k >> 5);
      const int i = static_cast<int>(k & 31);
      const int64_t end = gv.end(g), size = end - gv.start(g);
      const int sr = static_cast<int>(size & (kQuantTile - 1));
      if (size == 0 || end > last || sr == 0) continue;
      const int64_t tile = gv.tile0(g) + (size - 1) / kQuantTile;  // the group's last scale tile
      uint8_t* line = p.row_scales + layout::swizzled_offset(tile * kQuantTile, 4 * t.tc, p.row_scale_ld) + 16 * i;
      const int k0 = i >= sr ? 0 : (sr - i + 31) / 32;  // first padding row of the line is i + 32 k0
      if (k0 == 0) {
        zero16(line);
      } else {
        for (int q = k0; q < 4; ++q) put4(line + 4 * q, 0u);
      }
    }
  }
}

// The ring kernel: the destination looked up beforehand (mgrouped_scale_dst).
__device__ __forceinline__ void write_mgrouped_scales(const QuantizeParams& p, const QuantTile& t, const uint8_t* s,
                                                      const GroupView& gv, const MgScaleDst& d) {
  write_mgrouped_scales_at(p, t, s, gv, d.row() != MgScaleDst::kNoRow, d.row(), d.pad());
}

// The register rowwise kernel, which also takes scale tensors of 2^31 bytes and more: 64-bit offsets.
__device__ __forceinline__ void write_mgrouped_scales(const QuantizeParams& p, const QuantTile& t, const uint8_t* s,
                                                      const GroupView& gv) {
  if (t.nload <= 0) return;
  const MgTileGroups m = mg_tile_groups(t, gv);
  const bool pad = mg_pad_bit(gv, m, t.r0 + t.nload) != 0u;
  const int tid = threadIdx.x;
  int64_t row = 0;
  if (tid < t.nload) row = mg_scale_row(p, t, gv, m, t.r0 + tid);
  write_mgrouped_scales_at(p, t, s, gv, tid < t.nload, row, pad);
}

// The tail of an M-grouped swizzled scale tensor: scale tiles used_tiles .. row_scale_tiles - 1, which
// the layout's bound pads and no group owns, are one contiguous byte range. Each block zeroes its
// share (by blockIdx) as 16-byte stores.
__device__ __forceinline__ void zero_mgrouped_tail(const QuantizeParams& p, const GroupMeta& meta) {
  const int64_t tile_bytes = static_cast<int64_t>(p.row_scale_ld / 4) * 512;  // one row of scale tiles
  const int64_t first = meta.used_tiles * tile_bytes / 16, end = p.row_scale_tiles * tile_bytes / 16;
  if (end <= first) return;
  const bool al16 = aligned16(p.row_scales);
  const int64_t lines = end - first, nb = gridDim.x, b = blockIdx.x;
  const int64_t l1 = first + lines * (b + 1) / nb;
  for (int64_t l = first + lines * b / nb + threadIdx.x; l < l1; l += kQuantThreads) {
    if (al16) {
      store16(p.row_scales + 16 * l, make_uint4(0u, 0u, 0u, 0u));
    } else {
#pragma unroll
      for (int c = 0; c < 16; ++c) p.row_scales[16 * l + c] = 0;
    }
  }
}

template <In I, Fp8 F, bool kProp, bool kSwiglu>
__device__ __forceinline__ void rowwise_tile(const QuantizeParams& p, const QuantTile& t, uint8_t* s_scale,
                                             float& amax_all, const GroupView& gv) {
  using T = typename InTraits<I>::T;
  using Raw = RawChunk<I, kSwiglu>;
  const int tid = threadIdx.x;
  const int chunk = tid & (kChunksPerRow - 1);
  const int cl = chunk * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  uint8_t* ob = p.row_data + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl;
  T* ab = kSwiglu && p.act ? static_cast<T*>(p.act) + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl : nullptr;
  // 16-bit inputs without SwiGLU keep all 8 chunks (8 x 16 bytes) in flight; wider ones 4 at a time.
  constexpr int kBatch = Raw::kWords * (kSwiglu ? 2 : 1) <= 4 ? kPasses : kPasses / 2;
#pragma unroll
  for (int p0 = 0; p0 < kPasses; p0 += kBatch) {
    Raw rc[kBatch];
    load_rows<I, kSwiglu, kBatch>(p, t, p0, rc);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int rl = (p0 + i) * kRowsPerPass + (tid >> 4);
      const bool live = rl < t.nrows && nvalid > 0;
      float v[kChunk];
      uint32_t bits[Raw::kWords];
      chunk_values<I, kSwiglu>(rc[i], v, bits);
      if (kSwiglu && ab && live) store_words<I>(ab + rl * p.cols, bits, nvalid);
      float amax, pmax;
      chunk_max<kProp>(v, amax, pmax);
      amax_all = fmaxf(amax_all, amax);
      quad_max<kProp>(amax, pmax);
      const uint32_t e = block_exponent<F, kProp>(amax, pmax, p.mode);
      uint32_t q0, q1;
      quantize8<F>(v, scale_inverse(e), q0, q1);
      if (live) store_fp8x8(ob + rl * p.cols, q0, q1, nvalid);
      if ((chunk & 3) == 0) s_scale[local_scale(rl, chunk >> 2)] = static_cast<uint8_t>(live ? e : 0u);
    }
  }
  __syncthreads();
  if ((p.flags & kQuantGrouped) && (p.flags & kQuantSwizzled)) write_mgrouped_scales(p, t, s_scale, gv);
  else write_rowwise_scales(p, t, s_scale);
  __syncthreads();  // s_scale is rewritten by the next tile
}

// Ungrouped plans launch one block per tile and run the loop once. Grouped plans build their group
// table first and loop over tiles with persistent blocks (grid sized to the resident capacity),
// taken either statically (tile += gridDim.x) or, when there are many tiles per block, in order from
// a device counter (kQuantDynamicTiles): the tiles in flight stay one contiguous window of the
// tensor and fast blocks take more tiles, at the price of a counter reset ahead of the launch.
template <In I, Fp8 F, bool kProp, bool kSwiglu>
__device__ __forceinline__ void quantize_rowwise(const QuantizeParams& p) {
  extern __shared__ __align__(16) uint8_t group_smem[];  // inline group table (grouped plans only)
  __shared__ __align__(16) uint8_t s_scale[512];
  __shared__ float s_warp[kWarps];
  __shared__ GroupMeta meta;
  __shared__ int64_t scan_tmp[kWarps];
  __shared__ int64_t s_ticket[3];
  const bool grouped = (p.flags & kQuantGrouped) != 0;
  const bool dynamic = (p.flags & kQuantDynamicTiles) != 0;
  const int64_t ntiles = p.tiles_c * p.tiles_r * p.batch;
  if (dynamic && threadIdx.x == 0) {
    // Tickets run two tiles ahead, so an atomic's round trip never stalls the loop.
    s_ticket[0] = static_cast<int64_t>(atomicAdd(p.tile_counter, 1ull));
    s_ticket[1] = static_cast<int64_t>(atomicAdd(p.tile_counter, 1ull));
  }
  if (grouped) build_group_table(p, group_smem, &meta, scan_tmp);  // has barriers
  else if (dynamic) __syncthreads();
  const GroupView gv(p, group_smem, meta);
  if (grouped && (p.flags & kQuantSwizzled)) zero_mgrouped_tail(p, meta);
  float amax_all = 0.0f;
  int64_t tile = dynamic ? s_ticket[0] : static_cast<int64_t>(blockIdx.x);
  for (int i = 0; tile < ntiles; ++i) {
    int64_t next;
    if (dynamic) {
      next = s_ticket[(i + 1) % 3];
      if (threadIdx.x == 0) s_ticket[(i + 2) % 3] = static_cast<int64_t>(atomicAdd(p.tile_counter, 1ull));
    } else {
      next = tile + gridDim.x;
    }
    const QuantTile t = grouped ? quant_tile_mgrouped(p, tile, meta) : quant_tile(p, tile, group_smem, meta);
    rowwise_tile<I, F, kProp, kSwiglu>(p, t, s_scale, amax_all, gv);  // two barriers: the new ticket is visible
    tile = next;
  }
  if (p.amax) commit_amax(p.amax, amax_all, s_warp);
}

// ---- the tiled kernel ----------------------------------------------------------------------------

// Epilogue of a shared-memory tile: the rowwise and columnwise scale tiles, then the staged columnwise
// FP8 tile as whole 16-byte row pieces (scalar stores for ragged or unaligned tiles).
__device__ __forceinline__ void tiled_epilogue(const QuantizeParams& p, const QuantTile& t, const GroupMeta& meta,
                                               const uint8_t* s_out, const uint8_t* s_rs, const uint8_t* s_cs) {
  const int tid = threadIdx.x;
  const bool row = (p.flags & kQuantRowwise) != 0;
  const bool col = (p.flags & kQuantColwise) != 0;
  const bool transposed = (p.flags & kQuantTransposed) != 0;
  if (row) write_rowwise_scales(p, t, s_rs);
  if (col) {
    const bool swz = (p.flags & kQuantSwizzled) != 0;
    uint8_t* cs = p.col_scales + t.b * p.col_scale_bstride;
    // Rows past the last group have no columnwise scale columns (LINEAR); swizzled tiles past
    // the tensor's padded column bound do not exist.
    if (swz ? t.tile_r < p.col_scale_tiles : t.nload == t.nrows) {
      const int64_t left = layout::ceil_div(t.nrows, layout::kBlock);
      write_scale_tile(s_cs, swz, swz ? cs + layout::swizzled_offset(t.tc * layout::kSwizzleRows, t.tile_r * layout::kSwizzleCols,
                                                                   p.col_scale_tiles * layout::kSwizzleCols)
                                   : nullptr,
                       cs + t.c0 * p.col_scale_ld + t.col_c0, p.col_scale_ld, t.ncols,
                       static_cast<int>(left < 4 ? left : 4));
    }
    if (!swz && (p.flags & kQuantGrouped) && t.tile_r == 0) {
      // Grouped LINEAR: scale columns past the last group are part of the tensor; zero them once
      // (by the first tile row of each column tile).
      const int64_t tail = p.col_scale_ld - meta.total_cols;
      for (int64_t k = tid; k < tail * t.ncols; k += kQuantThreads)
        cs[(t.c0 + k / tail) * p.col_scale_ld + meta.total_cols + k % tail] = 0;
    }
    const int warp = tid >> 5, lane = tid & 31;
    if (transposed) {
      // Row c0 + k of the [cols, rows] output holds bytes r0 .. r0 + nrows - 1 of this tile.
      uint8_t* base = p.col_data + (t.b * p.cols + t.c0) * p.rows + t.r0;
      const bool fast = t.nrows == kT && ((reinterpret_cast<uintptr_t>(p.col_data) | p.rows | t.r0) & 15) == 0;
      if (fast) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int idx = tid + j * kQuantThreads, k = idx >> 3, part = idx & 7;
          if (k < t.ncols)
            store16(base + k * p.rows + part * 16,
                    *reinterpret_cast<const uint4*>(s_out + k * kQuantOutPitch + part * 16));
        }
      } else {
        for (int k = warp; k < t.ncols; k += kWarps)
          for (int r = lane; r < t.nrows; r += 32) base[k * p.rows + r] = s_out[k * kQuantOutPitch + r];
      }
    } else {
      uint8_t* base = p.col_data + (t.b * p.rows + t.r0) * p.cols + t.c0;
      const bool fast = t.ncols == kT && ((reinterpret_cast<uintptr_t>(p.col_data) | p.cols) & 15) == 0;
      if (fast) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int idx = tid + j * kQuantThreads, r = idx >> 3, part = idx & 7;
          if (r < t.nrows)
            store16(base + r * p.cols + part * 16,
                    *reinterpret_cast<const uint4*>(s_out + r * kQuantOutPitch + part * 16));
        }
      } else {
        for (int r = warp; r < t.nrows; r += kWarps)
          for (int c = lane; c < t.ncols; c += 32) base[r * p.cols + c] = s_out[r * kQuantOutPitch + c];
      }
    }
  }
}

// 16-bit inputs without SwiGLU pipeline across tiles: the next tile's 8 chunks are loaded into
// registers right after this tile reached shared memory, so HBM reads continue through the
// columnwise phase and the stores. Wider inputs would need twice the registers; they load per tile.
// (Of the 16-bit plans without SwiGLU only 32x32-block ones run here; the others run the ring
// kernel, common/quant_ring.cuh.)
template <In I, bool kSwiglu>
constexpr bool tiled_prefetch() {
  return RawChunk<I, kSwiglu>::kWords * (kSwiglu ? 2 : 1) <= 4;
}

template <In I, Fp8 F, bool kProp, bool kSwiglu>
__device__ __forceinline__ void tiled_tile(const QuantizeParams& p, const QuantTile& t, const GroupMeta& meta,
                                           uint8_t* smem, float& amax_all, RawChunk<I, kSwiglu>* pre,
                                           int64_t next_tile, QuantTile& tn) {
  constexpr bool kPre = tiled_prefetch<I, kSwiglu>();
  using T = typename InTraits<I>::T;
  using Raw = RawChunk<I, kSwiglu>;
  T* s_in = reinterpret_cast<T*>(smem);                       // [128][128] input-dtype values
  uint8_t* s_out = smem + kT * kT * sizeof(T);                // [128][kQuantOutPitch] FP8 staging
  uint8_t* s_rs = s_out + kT * kQuantOutPitch;                // rowwise scale tile (local order)
  uint8_t* s_cs = s_rs + 512;                                 // columnwise scale tile
  uint8_t* s_e2d = s_cs + 512;                                // 4 x 4 exponents of 32x32 blocks
  float* s_rb_amax = reinterpret_cast<float*>(s_out);         // [128][4] 32x32 scratch, aliases s_out
  float* s_rb_pmax = s_rb_amax + kT * 4;
  const int tid = threadIdx.x;
  const bool row = (p.flags & kQuantRowwise) != 0;
  const bool col = (p.flags & kQuantColwise) != 0;
  const bool b2d = (p.flags & kQuantBlock2d) != 0;
  const bool row_direct = row && !b2d;
  const int chunk = tid & (kChunksPerRow - 1);
  const int cl = chunk * kChunk;
  const int nvalid = t.ncols - cl < 0 ? 0 : t.ncols - cl < kChunk ? t.ncols - cl : kChunk;
  uint8_t* ob = p.row_data ? p.row_data + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl : nullptr;
  T* ab = kSwiglu && p.act ? static_cast<T*>(p.act) + (t.b * p.rows + t.r0) * p.cols + t.c0 + cl : nullptr;

  // Phase A: global -> registers -> shared tile; rowwise output on the way when 1x32 blocks.
  // Pipelined kernels find this tile in `pre`, loaded while the previous tile was processed.
  constexpr int kBatch = kPre ? kPasses : kPasses / 2;
#pragma unroll
  for (int p0 = 0; p0 < kPasses; p0 += kBatch) {
    Raw own[kPre ? 1 : kBatch];
    Raw* rc = own;
    if constexpr (kPre) rc = pre;
    else load_rows<I, kSwiglu, kBatch>(p, t, p0, own);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int rl = (p0 + i) * kRowsPerPass + (tid >> 4);
      const bool live = rl < t.nrows && nvalid > 0;
      float v[kChunk];
      uint32_t bits[Raw::kWords];
      chunk_values<I, kSwiglu>(rc[i], v, bits);
      if (kSwiglu && ab && live) store_words<I>(ab + rl * p.cols, bits, nvalid);
      // Invalid rows and columns were loaded as zeros: the shared tile is fully defined.
      uint4* dst = reinterpret_cast<uint4*>(s_in + rl * kT + cl);
#pragma unroll
      for (int v4 = 0; v4 < InTraits<I>::kVecs; ++v4)
        dst[v4] = make_uint4(bits[4 * v4], bits[4 * v4 + 1], bits[4 * v4 + 2], bits[4 * v4 + 3]);
      float amax, pmax;
      chunk_max<kProp>(v, amax, pmax);
      amax_all = fmaxf(amax_all, amax);
      if (row_direct || b2d) quad_max<kProp>(amax, pmax);
      if (row_direct) {
        const uint32_t e = block_exponent<F, kProp>(amax, pmax, p.mode);
        uint32_t q0, q1;
        quantize8<F>(v, scale_inverse(e), q0, q1);
        if (live) store_fp8x8(ob + rl * p.cols, q0, q1, nvalid);
        if ((chunk & 3) == 0) s_rs[local_scale(rl, chunk >> 2)] = static_cast<uint8_t>(live ? e : 0u);
      } else if (b2d && (chunk & 3) == 0) {
        s_rb_amax[rl * 4 + (chunk >> 2)] = amax;
        s_rb_pmax[rl * 4 + (chunk >> 2)] = pmax;
      }
    }
  }
  __syncthreads();
  // The tile is in shared memory: its registers now receive the next tile, whose reads stay in
  // flight through the columnwise phase and the stores. (Refilling each chunk's registers right
  // after use, during phase A, measured slower: it spills under the 128-register budget.)
  if constexpr (kPre) {
    if (next_tile < p.tiles_c * p.tiles_r * p.batch) {
      tn = quant_tile(p, next_tile, smem + quantize_tiled_smem_bytes(sizeof(T)), meta);
      load_rows<I, kSwiglu, kPasses>(p, tn, 0, *reinterpret_cast<Raw(*)[kPasses]>(pre));
    }
  }

  if (b2d) {
    // 32x32 exponents: warp w reduces blocks 2w and 2w+1 (block = 4 * row block + column block).
    const int warp = tid >> 5, lane = tid & 31;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int blk = 2 * warp + k, rb = blk >> 2, cb = blk & 3;
      float amax = s_rb_amax[(32 * rb + lane) * 4 + cb];
      float pmax = kProp ? s_rb_pmax[(32 * rb + lane) * 4 + cb] : 0.0f;
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) {
        amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, d));
        if constexpr (kProp) pmax = fmax_nan(pmax, __shfl_xor_sync(0xFFFFFFFFu, pmax, d));
      }
      if (lane == 0) s_e2d[blk] = static_cast<uint8_t>(block_exponent<F, kProp>(amax, pmax, p.mode));
    }
    __syncthreads();
    if (row) {
      // Rowwise data with the tile's 2D exponents, read back from the shared tile.
#pragma unroll 2
      for (int i = 0; i < kPasses; ++i) {
        const int rl = i * kRowsPerPass + (tid >> 4);
        const bool live = rl < t.nrows && nvalid > 0;
        const uint4* src = reinterpret_cast<const uint4*>(s_in + rl * kT + cl);
        uint32_t w[4 * InTraits<I>::kVecs];
#pragma unroll
        for (int v4 = 0; v4 < InTraits<I>::kVecs; ++v4) {
          const uint4 q = src[v4];
          w[4 * v4] = q.x;
          w[4 * v4 + 1] = q.y;
          w[4 * v4 + 2] = q.z;
          w[4 * v4 + 3] = q.w;
        }
        float v[kChunk];
#pragma unroll
        for (int j = 0; j < kChunk; ++j) v[j] = bits_to_f32<I>(elem_bits<I>(w, j));
        const uint32_t e = s_e2d[(rl >> 5) * 4 + (chunk >> 2)];
        uint32_t q0, q1;
        quantize8<F>(v, scale_inverse(e), q0, q1);
        if (live) store_fp8x8(ob + rl * p.cols, q0, q1, nvalid);
        if ((chunk & 3) == 0) s_rs[local_scale(rl, chunk >> 2)] = static_cast<uint8_t>(live ? e : 0u);
      }
    }
  }

  // Phase B: columnwise. Unit u = (column c = u % 128, row block rb = u / 128): 32 values down a
  // column of the shared tile (a warp reads 32 consecutive columns of one row: conflict-free).
  const bool transposed = (p.flags & kQuantTransposed) != 0;
  if (col) {
#pragma unroll 1
    for (int u = tid; u < kT * 4; u += kQuantThreads) {
      const int c = u & (kT - 1), rb = u >> 7;
      // 16-bit inputs stay packed (two per register) and are widened where used: the prefetch
      // registers of the next tile are live here.
      constexpr int kWordsPerCol = sizeof(T) == 2 ? 16 : 32;
      uint32_t w[kWordsPerCol];
#pragma unroll
      for (int i = 0; i < kWordsPerCol; ++i) {
        if constexpr (sizeof(T) == 2) {
          w[i] = static_cast<uint32_t>(s_in[(32 * rb + 2 * i) * kT + c]) |
                 (static_cast<uint32_t>(s_in[(32 * rb + 2 * i + 1) * kT + c]) << 16);
        } else {
          w[i] = __float_as_uint(s_in[(32 * rb + i) * kT + c]);
        }
      }
      auto val = [&](int i) -> float {
        if constexpr (sizeof(T) == 2) return bits_to_f32<I>((w[i >> 1] >> ((i & 1) * 16)) & 0xFFFFu);
        else return __uint_as_float(w[i]);
      };
      uint32_t e;
      if (b2d) {
        e = s_e2d[rb * 4 + (c >> 5)];
      } else {
        float amax = 0.0f, pmax = 0.0f;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
          amax = fmaxf(amax, fabsf(val(i)));
          if constexpr (kProp) pmax = fmax_nan(pmax, fabsf(val(i)));
        }
        e = block_exponent<F, kProp>(amax, pmax, p.mode);
      }
      const float inv = scale_inverse(e);
      uint32_t q[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) q[k] = quantize4<F>(val(4 * k), val(4 * k + 1), val(4 * k + 2), val(4 * k + 3), inv);
      if (transposed) {
        // Row c of the [cols, rows] tile: bytes 32rb..32rb+31. Pitch 144 = 36 words puts the 8
        // lanes of a 16-byte store phase on 8 distinct 4-bank groups.
        uint4* dst = reinterpret_cast<uint4*>(s_out + c * kQuantOutPitch + 32 * rb);
        dst[0] = make_uint4(q[0], q[1], q[2], q[3]);
        dst[1] = make_uint4(q[4], q[5], q[6], q[7]);
      } else {
#pragma unroll
        for (int i = 0; i < 32; ++i)
          s_out[(32 * rb + i) * kQuantOutPitch + c] = static_cast<uint8_t>(q[i >> 2] >> ((i & 3) * 8));
      }
      const bool live = c < t.ncols && 32 * rb < t.nrows;
      s_cs[local_scale(c, rb)] = static_cast<uint8_t>(live ? e : 0u);
    }
  }
  __syncthreads();

  tiled_epilogue(p, t, meta, s_out, s_rs, s_cs);
  __syncthreads();  // the shared tiles are rewritten by the next tile
}

template <In I, Fp8 F, bool kProp, bool kSwiglu>
__device__ __forceinline__ void quantize_tiled(const QuantizeParams& p) {
  extern __shared__ __align__(16) uint8_t smem[];  // tiles (quantize_tiled_smem_bytes), then the group table
  __shared__ float s_warp[kWarps];
  __shared__ GroupMeta meta;
  __shared__ int64_t scan_tmp[kWarps];
  uint8_t* group_smem = smem + quantize_tiled_smem_bytes(sizeof(typename InTraits<I>::T));
  if (p.flags & kQuantGrouped) build_group_table(p, group_smem, &meta, scan_tmp);
  const int64_t ntiles = p.tiles_c * p.tiles_r * p.batch;
  constexpr bool kPre = tiled_prefetch<I, kSwiglu>();
  using Raw = RawChunk<I, kSwiglu>;
  Raw pre[kPre ? kPasses : 1];
  float amax_all = 0.0f;
  if (blockIdx.x >= ntiles) return;  // the launcher never starts more blocks than tiles
  QuantTile t = quant_tile(p, blockIdx.x, group_smem, meta);
  if constexpr (kPre) load_rows<I, kSwiglu, kPasses>(p, t, 0, pre);
  for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    QuantTile tn = t;
    tiled_tile<I, F, kProp, kSwiglu>(p, kPre ? t : quant_tile(p, tile, group_smem, meta), meta, smem, amax_all, pre,
                                     tile + gridDim.x, tn);
    t = tn;
  }
  if (p.amax) commit_amax(p.amax, amax_all, s_warp);
}

// Blocks per SM each kernel is compiled for (the register budget). The rowwise kernel at 4 blocks
// (<= 64 registers) keeps 32 x 16-byte loads in flight per SM partition and turns 5.2 waves of
// 8192x4096 into 3.9; the pipelined tiled kernel needs its prefetch registers and runs 2 per SM.
template <In I, bool kSwiglu>
constexpr int min_blocks_rowwise() {
  return RawChunk<I, kSwiglu>::kWords * (kSwiglu ? 2 : 1) <= 4 ? 4 : 2;
}
template <In I, bool kSwiglu>
constexpr int min_blocks_tiled() {
  return 2;
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

// ---- exported entry points: mxq_quantize_<kernel>_<input>_<fp8>[_prop][_swiglu] -------------------
// MXQ_QUANT_ENTRIES_IN(kind, input) defines the 8 kernels of one kind and input type (both FP8 types,
// both policies, with and without SwiGLU); each kernels/generic/quantize_<kind>_<input>.cu holds one
// such line, so the 48 kernels compile in parallel.
#define MXQ_QUANT_ENTRY(KIND, IN, IN_NAME, F, F_NAME, PROP, PROP_NAME, SWIGLU, SWIGLU_NAME)              \
  extern "C" __global__ void __launch_bounds__(                                                          \
      mxq::kQuantThreads, mxq::dev::quant::min_blocks_##KIND<mxq::dev::In::IN, SWIGLU>())                \
      mxq_quantize_##KIND##_##IN_NAME##_##F_NAME##PROP_NAME##SWIGLU_NAME(const mxq::QuantizeParams p) { \
    mxq::dev::quant::quantize_##KIND<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, SWIGLU>(p);              \
  }
#define MXQ_QUANT_ENTRIES_4(KIND, IN, IN_NAME, F, F_NAME)                       \
  MXQ_QUANT_ENTRY(KIND, IN, IN_NAME, F, F_NAME, false, , false, )               \
  MXQ_QUANT_ENTRY(KIND, IN, IN_NAME, F, F_NAME, true, _prop, false, )           \
  MXQ_QUANT_ENTRY(KIND, IN, IN_NAME, F, F_NAME, false, , true, _swiglu)         \
  MXQ_QUANT_ENTRY(KIND, IN, IN_NAME, F, F_NAME, true, _prop, true, _swiglu)
#define MXQ_QUANT_ENTRIES_IN(KIND, IN, IN_NAME)           \
  MXQ_QUANT_ENTRIES_4(KIND, IN, IN_NAME, E4M3, e4m3)     \
  MXQ_QUANT_ENTRIES_4(KIND, IN, IN_NAME, E5M2, e5m2)
