// The flat rowwise kernel of the MXFP8 quantizer (instantiated by kernels/generic/quantize_flat_<in>.cu):
// small and medium ungrouped rowwise plans with 16-bit inputs, no fusion, contiguous rows and K a
// multiple of 128 (src/cuda/op_quantize.cpp, uses_flat).
//
// Why it exists. The persistent ring (common/quant_ring.cuh) wins on large tensors, where its blocks
// loop over many 128x128 tiles, but each of its ~400 blocks first fills 64 KB of shared memory and
// the launch ends with its last tiles' round trips: a fixed cost of a few microseconds that a tensor
// of a few MB cannot hide. Here a row-contiguous tensor is one flat array of 16-byte chunks (8
// elements), and the kernel is shaped like a streaming copy: block b, thread t loads chunks
// b * 256 * CPT + t + 256 i (i < CPT; a warp reads 512 contiguous bytes per load), all CPT loads in
// flight at once, one block per 256 * CPT chunks, no shared memory and no loop, so the hardware's
// block scheduler balances the end of the launch. Measured on an H100 against the ring
// (docs/PERFORMANCE.md, "Thirteenth round"): 128x7168 -31%, 512x4096 -24%, 2048x4096 -12%,
// 4096x4096 -3% time; behind from about 56 MB of input on, hence the launcher's size bound.
//
// Per chunk: the 4 lanes of a 32-block reduce its amax by two shuffles and compute its scale (the
// same branch-free math as the ring, quant_math.cuh), each lane converts its 8 elements and stores 8
// FP8 bytes; a half-warp covers 128 elements of one row (K % 128 == 0), whose 4 scale bytes are
// contiguous in both layouts and leave as one 4-byte store from lane 0 of the half-warp. With the
// swizzled layout, blocks past the data blocks zero the padding rows (rows .. round_up(rows, 128)).
#pragma once

#include <cstdint>

#include "common/quant_kernels.cuh"

namespace mxq {
namespace dev {
namespace quant {

// One 16-byte chunk quantized rowwise (quantize_chunk16_e, quant_kernels.cuh, the same operations as
// the ring's pass A), the returned word holding the 4 scale bytes of the chunk's half-warp (128
// consecutive elements of a row) in lanes 0 and 16. Every lane of the warp must call it (shuffles).
template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ uint32_t quantize_chunk16(const uint4& v, const ExpRule& er, uint2& q, float& amax) {
  const uint32_t e = quantize_chunk16_e<I, F, kProp>(v, er, q, amax);
  uint32_t s = e;
  s |= __shfl_down_sync(0xFFFFFFFFu, e, 4) << 8;
  s |= __shfl_down_sync(0xFFFFFFFFu, e, 8) << 16;
  s |= __shfl_down_sync(0xFFFFFFFFu, e, 12) << 24;
  return s;
}

// Warp-wide NaN-ignoring max folded into the amax output (zeroed by the launcher), one atomic per warp:
// non-negative floats order like their bit patterns. Every lane of the warp must call it.
__device__ __forceinline__ void commit_amax_warp(float* out, float v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, d));
  if ((threadIdx.x & 31u) == 0 && v > 0.0f) atomicMax(reinterpret_cast<unsigned int*>(out), __float_as_uint(v));
}

// Row and 128-column group of 128-element group g (g < 2^24, kg = cols / 128): a float division
// corrected by one step either way (the rounded quotient is off by at most one below 2^24).
__device__ __forceinline__ void flat_row_group(uint32_t g, uint32_t kg, float inv_kg, uint32_t& row, uint32_t& cg) {
  uint32_t q = __float2uint_rz(__fmul_rn(static_cast<float>(g), inv_kg));
  int32_t r = static_cast<int32_t>(g - q * kg);
  if (r < 0) {
    --q;
    r += static_cast<int32_t>(kg);
  } else if (r >= static_cast<int32_t>(kg)) {
    ++q;
    r -= static_cast<int32_t>(kg);
  }
  row = q;
  cg = static_cast<uint32_t>(r);
}

// Byte offset of the 4 scales of (row, column group cg) in the rowwise scale tensor: swizzled, the
// 32-bit form of layout::swizzled_offset(row, 4 * cg, 4 * kg) (core/layout.h), which this kernel's
// launcher bounds below 2^32 bytes (fewer than 2^24 chunks); else the LINEAR row-major offset.
__device__ __forceinline__ uint32_t flat_scale_offset(uint32_t row, uint32_t cg, uint32_t kg, bool swz,
                                                      uint32_t linear_ld) {
  if (swz) return ((row >> 7) * kg + cg) * 512u + (row & 31u) * 16u + ((row >> 5) & 3u) * 4u;
  return row * linear_ld + cg * 4u;
}

// Launcher contract (op_quantize.cpp): batch 1, ungrouped, in_ld == cols, cols % 128 == 0, x 16-byte,
// row_data 8-byte and row_scales 4-byte aligned, rows * cols / 8 < 2^24 chunks, scale tensor below
// 2^32 bytes; grid = data blocks + (swizzled) padding blocks.
template <In I, Fp8 F, bool kProp, int kCpt>
__device__ __forceinline__ void quantize_flat(const QuantizeParams& p) {
  static_assert(sizeof(typename InTraits<I>::T) == 2, "the flat kernel is for 16-bit inputs");
  constexpr uint32_t kPerBlock = kQuantThreads * kCpt;
  const uint32_t n = static_cast<uint32_t>(p.rows * p.cols / kChunk);  // chunks, a multiple of 16
  const uint32_t kg = static_cast<uint32_t>(p.cols / 128);
  const uint32_t rows = static_cast<uint32_t>(p.rows);
  const bool swz = (p.flags & kQuantSwizzled) != 0;
  const uint32_t data_blocks = (n + kPerBlock - 1) / kPerBlock;
  const uint32_t tid = threadIdx.x;

  if (blockIdx.x >= data_blocks) {
    // Padding rows of the last 128-row scale tile (swizzled only): one 4-byte word per (row, group).
    const uint32_t words = ((rows + 127u) / 128u * 128u - rows) * kg;
    const uint32_t w = (blockIdx.x - data_blocks) * kQuantThreads + tid;
    if (w < words) {
      const uint32_t row = rows + w / kg, cg = w % kg;
      *reinterpret_cast<uint32_t*>(p.row_scales + flat_scale_offset(row, cg, kg, true, 0)) = 0u;
    }
    return;
  }

  const uint32_t base = blockIdx.x * kPerBlock + tid;
  const uint4* in = static_cast<const uint4*>(p.x);
  uint4 v[kCpt];
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const uint32_t c = base + kQuantThreads * i;
    v[i] = c < n ? load16_stream(in + c) : make_uint4(0u, 0u, 0u, 0u);
  }
  const ExpRule er = exp_rule<F>(p.mode);
  const float inv_kg = __frcp_rn(static_cast<float>(kg));
  const uint32_t lane = tid & 31u;
  const uint32_t linear_ld = static_cast<uint32_t>(p.row_scale_ld);
  float amax_all = 0.0f;
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const uint32_t c = base + kQuantThreads * i;
    uint2 q;
    float amax;
    const uint32_t s = quantize_chunk16<I, F, kProp>(v[i], er, q, amax);
    amax_all = fmaxf(amax_all, amax);
    if (c < n) {
      *reinterpret_cast<uint2*>(p.row_data + static_cast<size_t>(c) * kChunk) = q;
      if ((lane & 15u) == 0) {
        uint32_t row, cg;
        flat_row_group(c >> 4, kg, inv_kg, row, cg);
        *reinterpret_cast<uint32_t*>(p.row_scales + flat_scale_offset(row, cg, kg, swz, linear_ld)) = s;
      }
    }
  }
  if (p.amax) commit_amax_warp(p.amax, amax_all);
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

namespace mxq {
namespace dev {
namespace quant {

// ---- the band kernel -----------------------------------------------------------------------------
//
// Ungrouped rowwise plans with SWIZZLED_128x4 scales, 16-bit inputs, no fusion and K a multiple of
// 128 (op_quantize.cpp, uses_band). The flat order above writes each 4-byte scale word to its own
// 512-byte scale tile, and that scatter, not the data, is what separates it from a copy (measured on
// an H100 at 8192x4096: the flat kernel 42.0 us with swizzled scales, 39.4 us with linear ones, 38.5
// us with none; the copy 38.9). Here block (band, cg) takes 64 rows x 128 columns (16-byte chunks:
// half-warp h reads rows h, h + 16, h + 32, h + 48 of the band, 256 contiguous bytes each), keeps
// the band's 64 scale words in shared memory and writes them as 32 8-byte halves of the scale tile's
// 16-byte lines (rows j and j + 32 of the band share line j): one warp store of 512 contiguous bytes
// per block instead of 64 scattered words. Consecutive blocks take consecutive column groups of the
// same band, so the reads of neighbouring blocks stay in the same rows. Still no loop and no
// persistent state: every load of a thread is in flight at once and the block scheduler balances the
// end of the launch. Bands cover the padded rows (round_up(rows, 128)); a band past the data writes
// only zeros, and rows past the data inside a band get zero scales, which zeroes the layout's padding.
constexpr int kBandRows = 64;

// The band's input chunks of this thread: rows r0 + hw + 16 i (i < kCpt) of `xb` (this thread's
// column position already applied), rows at or past `rows` as zeros. All loads are issued at once.
template <typename T, int kCpt>
__device__ __forceinline__ void load_band(const T* xb, int64_t ld, int64_t rows, int64_t r0, uint32_t hw, uint4 (&v)[kCpt]) {
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const int64_t row = r0 + hw + 16 * i;
    v[i] = row < rows ? load16_stream(xb + row * ld) : make_uint4(0u, 0u, 0u, 0u);
  }
}

template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void quantize_band(const QuantizeParams& p) {
  static_assert(sizeof(typename InTraits<I>::T) == 2, "the band kernel is for 16-bit inputs");
  __shared__ uint32_t s_sc[kBandRows];
  const uint32_t kg = static_cast<uint32_t>(p.cols / 128);
  const uint32_t band = blockIdx.x / kg, cg = blockIdx.x - band * kg;
  const int64_t b = blockIdx.y;
  const int64_t r0 = static_cast<int64_t>(band) * kBandRows;
  const uint32_t tid = threadIdx.x, hw = tid >> 4, l16 = tid & 15u;
  using T = typename InTraits<I>::T;
  const T* xb = static_cast<const T*>(p.x) + b * p.in_bstride + cg * 128 + l16 * kChunk;
  constexpr int kCpt = kBandRows / 16;
  uint4 v[kCpt];
  load_band(xb, p.in_ld, p.rows, r0, hw, v);
  const ExpRule er = exp_rule<F>(p.mode);
  float amax_all = 0.0f;
  uint8_t* ob = p.row_data + (b * p.rows) * p.cols + cg * 128 + l16 * kChunk;
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const int64_t row = r0 + hw + 16 * i;
    uint2 q;
    float amax;
    const uint32_t s = quantize_chunk16<I, F, kProp>(v[i], er, q, amax);
    amax_all = fmaxf(amax_all, amax);
    const bool live = row < p.rows;
    if (live) *reinterpret_cast<uint2*>(ob + row * p.cols) = q;
    if (l16 == 0) s_sc[hw + 16 * i] = live ? s : 0u;
  }
  __syncthreads();
  uint8_t* sb = p.row_scales + b * p.row_scale_bstride;
  if (p.flags & kQuantSwizzled) {
    if (tid < 32) {
      // Line tid of the scale tile holds rows tid, tid + 32, tid + 64, tid + 96; this band's two.
      const int64_t tile = (r0 >> 7) * kg + cg;
      const uint32_t half = static_cast<uint32_t>((r0 >> 6) & 1);
      *reinterpret_cast<uint2*>(sb + tile * 512 + tid * 16 + half * 8) = make_uint2(s_sc[tid], s_sc[32 + tid]);
    }
  } else if (tid < kBandRows && r0 + tid < p.rows) {
    *reinterpret_cast<uint32_t*>(sb + (r0 + tid) * p.row_scale_ld + cg * 4) = s_sc[tid];
  }
  if (p.amax) commit_amax_warp(p.amax, amax_all);
}


// ---- the M-grouped band kernel ---------------------------------------------------------------------
//
// M-grouped rowwise plans with swizzled scales (the same inputs as quantize_band, batch 1, at most
// kBandMgGroups groups): the data is cut into bands exactly like an ungrouped tensor (grouping does
// not change which elements form a 1x32 block) and only the scale rows move, data row r of group g
// to scale row 128 * tile0(g) + (r - start(g)) (core/layout.h). A ninth warp builds the group table
// in shared memory (clamped ends, each group's first padded scale tile), then finds each band row's
// scale destination and the padding rows of every group whose last row lies in the band, while the
// eight data warps load, quantize and store the band as quantize_band does. After one barrier 64
// threads write the band's scale words one per thread (consecutive rows of a group are consecutive
// 16-byte lines), and the block zeroes those padding rows (inside each such group's last scale tile,
// this column group only) and its share of the tail past the groups' tiles (lines assigned by the
// host, tail_lines_per_block). Measured at 8192x4096 (docs/PERFORMANCE.md, "Thirteenth round"): the
// group lookups after the barrier cost 2-3.5 us of the launch, the tail's division by the grid ~1 us.
// Scale offsets fit 32 bits (the launcher's rule). Rows past the groups' clamped end are zeros in the output (the contract):
// the data warps store them quantized and, in the rare band that holds that end, store zeros over
// them after the barrier and leave them out of amax.
constexpr int kBandMgGroups = 32 * kQuantGroupsPerThread;  // one warp's table: 4 groups per lane
constexpr int kBandMgThreads = kQuantThreads + 32;
constexpr uint32_t kBandNoRow = 0xFFFFFFFFu;

// The table warp: ends[g] = min(rows, max(0, o_0..o_g)), start(g) = ends[g - 1] (0 for g = 0),
// tile0(g) = sum over h < g of ceil(size_h / 128); meta.covered = the last end, used_tiles = the sum.
__device__ __forceinline__ void band_group_table(const QuantizeParams& p, uint8_t* table_base, GroupMeta* meta) {
  const int lane = threadIdx.x & 31;
  const int64_t G = p.num_groups;
  GroupTableSmem tab(table_base, G);
  constexpr int kPer = kQuantGroupsPerThread;
  const int64_t g0 = static_cast<int64_t>(lane) * kPer;
  int64_t end[kPer];
  int64_t run = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (g0 + j < G) {
      const int64_t o = (p.flags & kQuantOffsetsI64) ? static_cast<const int64_t*>(p.offsets)[g0 + j]
                                                     : static_cast<int64_t>(static_cast<const int32_t*>(p.offsets)[g0 + j]);
      run = o > run ? o : run;
    }
    end[j] = run;
  }
  // Exclusive max-scan of the lanes' running maxima (from 0), then the clamp to [.., rows].
  int64_t incl = run;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int64_t o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl = o > incl ? o : incl;
  }
  int64_t carry = __shfl_up_sync(0xFFFFFFFFu, incl, 1);
  if (lane == 0) carry = 0;
  const int64_t all_max = __shfl_sync(0xFFFFFFFFu, incl, 31);
  const int64_t first = carry < p.rows ? carry : p.rows;
  int64_t prev = first, ntiles = 0;
  int64_t size[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    int64_t e = end[j] > carry ? end[j] : carry;
    e = e < p.rows ? e : p.rows;
    end[j] = e;
    size[j] = e - prev;
    prev = e;
    ntiles += layout::ceil_div(size[j], kQuantTile);
  }
  int64_t tiles_incl = ntiles;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int64_t o = __shfl_up_sync(0xFFFFFFFFu, tiles_incl, d);
    if (lane >= d) tiles_incl += o;
  }
  int64_t tile = tiles_incl - ntiles;
  const int64_t used = __shfl_sync(0xFFFFFFFFu, tiles_incl, 31);
  int64_t start = first;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (g0 + j < G) {
      tab.start[g0 + j] = start;
      tab.tile0[g0 + j] = static_cast<int32_t>(tile);
    }
    tile += layout::ceil_div(size[j], kQuantTile);
    start = end[j];
  }
  if (lane == 0) {
    tab.tile0[G] = static_cast<int32_t>(used);
    meta->used_tiles = used;
    meta->covered = all_max < p.rows ? all_max : p.rows;
    meta->total_cols = 0;
  }
}

template <In I, Fp8 F, bool kProp>
__device__ __forceinline__ void quantize_band_mgrouped(const QuantizeParams& p) {
  static_assert(sizeof(typename InTraits<I>::T) == 2, "the band kernel is for 16-bit inputs");
  extern __shared__ __align__(16) uint8_t smem_table[];
  __shared__ uint32_t s_sc[kBandRows];
  __shared__ GroupMeta s_meta;
  __shared__ int64_t s_pad_row[kBandRows];  // first padding scale row of each group ending in the band
  __shared__ int32_t s_pad_n[kBandRows];    // ... and how many padding rows it has
  __shared__ int32_t s_npad;
  __shared__ uint32_t s_off[kBandRows];  // byte offset of each band row's scale word, kBandNoRow past the groups
  const uint32_t kg = static_cast<uint32_t>(p.cols / 128);
  const uint32_t band = blockIdx.x / kg, cg = blockIdx.x - band * kg;
  const int64_t r0 = static_cast<int64_t>(band) * kBandRows;
  const uint32_t tid = threadIdx.x, hw = tid >> 4, l16 = tid & 15u;
  constexpr int kCpt = kBandRows / 16;
  float amax_i[kCpt];
  if (tid >= kQuantThreads) {
    // The table warp: the group table, then each band row's scale destination and the padding of
    // the groups that end in the band, all before the barrier (the data warps quantize meanwhile).
    const uint32_t lane = tid - kQuantThreads;
    if (lane == 0) s_npad = 0;
    band_group_table(p, smem_table, &s_meta);
    __syncwarp();
    const GroupView gv(p, smem_table, s_meta);
    const int64_t covered = s_meta.covered;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int j = static_cast<int>(lane) + 32 * h;
      const int64_t r = r0 + j;
      uint32_t off = kBandNoRow;
      if (r < covered) {
        const int64_t g = gv.group_of_row(r);
        const int64_t st = gv.start(g), en = gv.end(g);
        const int64_t srow = kQuantTile * gv.tile0(g) + (r - st);
        off = static_cast<uint32_t>(layout::swizzled_offset(srow, 4 * cg, p.row_scale_ld));
        if (r == en - 1) {
          const int64_t size = en - st;
          const int32_t npad = static_cast<int32_t>(layout::mgroup_row_pad(size) - size);
          if (npad > 0) {
            const int k = atomicAdd(&s_npad, 1);
            s_pad_row[k] = srow + 1;
            s_pad_n[k] = npad;
          }
        }
      }
      s_off[j] = off;
    }
  } else {
    using T = typename InTraits<I>::T;
    const T* xb = static_cast<const T*>(p.x) + cg * 128 + l16 * kChunk;
    uint4 v[kCpt];
    load_band(xb, p.in_ld, p.rows, r0, hw, v);
    const ExpRule er = exp_rule<F>(p.mode);
    uint8_t* ob = p.row_data + cg * 128 + l16 * kChunk;
#pragma unroll
    for (int i = 0; i < kCpt; ++i) {
      const int64_t row = r0 + hw + 16 * i;
      uint2 q;
      const uint32_t s = quantize_chunk16<I, F, kProp>(v[i], er, q, amax_i[i]);
      if (row < p.rows) *reinterpret_cast<uint2*>(ob + row * p.cols) = q;
      if (l16 == 0) s_sc[hw + 16 * i] = s;
    }
  }
  __syncthreads();
  const int64_t covered = s_meta.covered;
  float amax_all = 0.0f;
  if (tid < kQuantThreads) {
    uint8_t* ob = p.row_data + cg * 128 + l16 * kChunk;
#pragma unroll
    for (int i = 0; i < kCpt; ++i) {
      const int64_t row = r0 + hw + 16 * i;
      if (row < covered) amax_all = fmaxf(amax_all, amax_i[i]);
      else if (row < p.rows) *reinterpret_cast<uint2*>(ob + row * p.cols) = make_uint2(0u, 0u);
    }
  }
  if (tid < kBandRows && s_off[tid] != kBandNoRow)
    *reinterpret_cast<uint32_t*>(p.row_scales + s_off[tid]) = s_sc[tid];
  for (int k = 0; k < s_npad; ++k) {
    if (static_cast<int32_t>(tid) < s_pad_n[k])
      *reinterpret_cast<uint32_t*>(p.row_scales + layout::swizzled_offset(s_pad_row[k] + tid, 4 * cg, p.row_scale_ld)) =
          0u;
  }
  {
    // The tail past the groups' tiles: lines [used, bound) of the scale tensor, block b those of
    // [b * n, (b + 1) * n) (n from the host, so no division here).
    const int64_t lines_per_tile_row = static_cast<int64_t>(kg) * 32;  // 512-byte tiles of 16-byte lines
    const int64_t first = s_meta.used_tiles * lines_per_tile_row, end = p.row_scale_tiles * lines_per_tile_row;
    const int64_t n = p.tail_lines_per_block;
    int64_t lo = static_cast<int64_t>(blockIdx.x) * n;
    const int64_t hi = lo + n < end ? lo + n : end;
    lo = lo > first ? lo : first;
    for (int64_t l = lo + tid; l < hi; l += kBandMgThreads) store16(p.row_scales + 16 * l, make_uint4(0u, 0u, 0u, 0u));
  }
  if (p.amax && tid < kQuantThreads) commit_amax_warp(p.amax, amax_all);
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

// One entry point per (input, FP8 format, policy, chunks per thread).
#define MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME, CPT)                                  \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 8)                                        \
      mxq_quantize_flat##CPT##_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                \
    mxq::dev::quant::quantize_flat<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, CPT>(p);                        \
  }
#define MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, CPT)                 \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E4M3, e4m3, false, , CPT)        \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop, CPT)    \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E5M2, e5m2, false, , CPT)        \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop, CPT)
#define MXQ_QUANT_FLAT_ENTRIES_IN(IN, IN_NAME) \
  MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, 2)   \
  MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, 4)
#define MXQ_QUANT_BAND_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                       \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 6)                                        \
      mxq_quantize_band_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                       \
    mxq::dev::quant::quantize_band<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP>(p);                             \
  }
#define MXQ_QUANT_BANDMG_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME)                                     \
  extern "C" __global__ void __launch_bounds__(mxq::dev::quant::kBandMgThreads, 5)                                        \
      mxq_quantize_bandmg_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                     \
    mxq::dev::quant::quantize_band_mgrouped<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP>(p);                    \
  }
#define MXQ_QUANT_BAND_ENTRIES_IN(IN, IN_NAME)                 \
  MXQ_QUANT_BANDMG_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )     \
  MXQ_QUANT_BANDMG_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop) \
  MXQ_QUANT_BANDMG_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )     \
  MXQ_QUANT_BANDMG_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop) \
  MXQ_QUANT_BAND_ENTRY(IN, IN_NAME, E4M3, e4m3, false, )       \
  MXQ_QUANT_BAND_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop)   \
  MXQ_QUANT_BAND_ENTRY(IN, IN_NAME, E5M2, e5m2, false, )       \
  MXQ_QUANT_BAND_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop)
