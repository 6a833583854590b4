// Tile scheduling shared by the sm_90a grouped-GEMM kernels (gemm_mxfp8.cu, gemm_mxfp8_bf16.cu):
// the per-CTA shared-memory group table built from the device-side group ends, and the decoding of
// a linear tile index into (group, rows, columns, K range). One place, so both kernels agree on
// which rows and tokens a tile owns and on where its scales live.
//
// M-grouped: group g's rows are [ends[g], ends[g+1]); prefix[g] counts the 128-row m-tiles of the
// groups before g, so m-tile mt belongs to the last g with prefix[g] <= mt (binary search). Because
// m-tiles are numbered across groups, tile mt is also the 128-row tile of the M-grouped swizzled
// scale layout (group bases padded to 128 rows): 128*mt is the scale row of the tile's first row.
// K-grouped: G dense problems; the table holds the clamped token ends and, in place of the tile
// prefix, each group's first scale column (the exclusive scan of layout::kgroup_col_pad).
// Ends are clamped to [previous end, rows] so malformed offsets can never index outside A or D.
#pragma once

#include <cstdint>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "sm90/gemm_params.cuh"

namespace mxq {
namespace sm90gemm {

constexpr int kTileM = 128;  // both kernels: 128-row m-tiles (the swizzled scale layout's tile)

// Exclusive scan of one int per thread over the block with an associative op; also returns the total.
template <int kThreads, typename Op>
__device__ int block_exclusive_scan(int v, Op op, int identity, int* warp_buf, int& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int incl = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl = op(incl, o);
  }
  if (lane == 31) warp_buf[warp] = incl;
  __syncthreads();
  int before = identity, all = identity;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    const int x = warp_buf[w];
    if (w < warp) before = op(before, x);
    all = op(all, x);
  }
  __syncthreads();  // warp_buf may be reused by the caller's next scan
  int excl = __shfl_up_sync(0xFFFFFFFFu, incl, 1);
  if (lane == 0) excl = identity;
  total = all;
  return op(before, excl);
}

// What every tile of a launch shares: the problem kind and the table in shared memory.
struct TileSpace {
  bool grouped, kgrouped;
  int n_tiles;       // tiles along N
  int mt_per_group;  // dense: m-tiles per batch entry; K-grouped: m-tiles of each [M, N] output
  const int* ends;   // [G+1]
  const int* prefix; // [G+1]
  int64_t total_tiles;
};

// Builds the group table in `table` (2*(G+1) ints of shared memory) and returns the tile space.
// Every thread of the block must call it (it synchronizes the block).
// This thread's share of a block's group table: groups [g0, g1) of G split evenly over kThreads.
// Every thread of the block calls it (one block scan). Fills ends[g + 1] for the share with the
// caller's end offsets clamped to [0, rows] and made non-decreasing across the whole table (a running
// max within the share, the earlier shares' max carried in by a block max-scan), and ends[0] = 0;
// `before` is the end of the group before the share. Callers scan their per-group counts after it
// (the scan's barrier publishes ends[]).
struct GroupEndsShare {
  int g0, g1, before;
};
template <int kThreads>
__device__ __forceinline__ GroupEndsShare load_group_ends(const GemmSm90Params& p, int rows, int* ends, int* warp_buf) {
  const int G = p.groups, chunk = (G + kThreads - 1) / kThreads;
  GroupEndsShare sh;
  sh.g0 = min(G, static_cast<int>(threadIdx.x) * chunk);
  sh.g1 = min(G, sh.g0 + chunk);
  int run = 0;
  for (int g = sh.g0; g < sh.g1; ++g) {
    int64_t e = p.offsets_i64 ? static_cast<const int64_t*>(p.group_ends)[g]
                              : static_cast<int64_t>(static_cast<const int32_t*>(p.group_ends)[g]);
    e = e < 0 ? 0 : (e > rows ? rows : e);
    run = max(run, static_cast<int>(e));
    ends[g + 1] = run;
  }
  int dummy;
  sh.before = block_exclusive_scan<kThreads>(run, [](int a, int b) { return max(a, b); }, 0, warp_buf, dummy);
  for (int g = sh.g0; g < sh.g1; ++g) ends[g + 1] = max(ends[g + 1], sh.before);
  if (threadIdx.x == 0) ends[0] = 0;
  return sh;
}

// unit_m: the rows of an M-grouped / dense m-tile (kTileM; the swapped-operand instance of the TMA
// kernel takes 256-token tiles, gemm_mxfp8_tma.cu).
template <int kThreads>
__device__ TileSpace build_tile_space(const GemmSm90Params& p, int tile_n, int* table, int* warp_buf,
                                      int unit_m = kTileM) {
  TileSpace ts;
  const int tid = threadIdx.x;
  ts.grouped = p.group_ends != nullptr;
  ts.kgrouped = ts.grouped && p.kgrouped != 0;
  const bool swz = p.swizzled != 0;
  const int G = p.groups;
  ts.n_tiles = static_cast<int>(layout::ceil_div(p.n, static_cast<int64_t>(tile_n)));
  ts.mt_per_group = !ts.grouped  ? static_cast<int>(layout::ceil_div(p.rows_per_group, static_cast<int64_t>(unit_m)))
                    : ts.kgrouped ? static_cast<int>(layout::ceil_div(p.rows_total, kTileM))
                                  : 0;
  const bool kg = ts.kgrouped;
  // What a group of `len` rows (M-grouped: m-tiles) or tokens (K-grouped: scale columns) occupies.
  auto group_units = [&](int len) {
    return kg ? static_cast<int>(layout::kgroup_col_pad(swz, len)) : (len + unit_m - 1) / unit_m;
  };
  int* ends = table;
  int* prefix = table + (G + 1);
  ts.ends = ends;
  ts.prefix = prefix;
  int64_t total_m_tiles;
  if (ts.grouped) {
    const GroupEndsShare sh = load_group_ends<kThreads>(p, static_cast<int>(kg ? p.k : p.rows_total), ends, warp_buf);
    const int g0 = sh.g0, g1 = sh.g1, before = sh.before;
    int tiles = 0;
    for (int g = g0; g < g1; ++g) tiles += group_units(ends[g + 1] - (g == g0 ? before : ends[g]));
    int total;
    int run_tiles = block_exclusive_scan<kThreads>(tiles, [](int a, int b) { return a + b; }, 0, warp_buf, total);
    for (int g = g0; g < g1; ++g) {
      prefix[g] = run_tiles;
      const int prev = g == g0 ? before : ends[g];
      run_tiles += group_units(ends[g + 1] - prev);
    }
    if (tid == 0) prefix[G] = total;
    __syncthreads();
    total_m_tiles = kg ? static_cast<int64_t>(ts.mt_per_group) * G : total;
  } else {
    total_m_tiles = static_cast<int64_t>(ts.mt_per_group) * G;
  }
  ts.total_tiles = total_m_tiles * ts.n_tiles;
  return ts;
}

struct TileInfo {
  int64_t row_begin;  // first row of A (and of D, but for K-grouped's g*M offset)
  int rows_valid;     // rows of the tile inside its group (1..unit_m)
  int n0, n_valid;
  int64_t mt;         // m-tile index across groups
  int group;
  int64_t t0, len;    // K range of the tile: [t0, t0 + len) (K-grouped: the group's tokens)
  int col_base;       // first scale column of the K range
};

// Tile t of the space: consecutive t share an m-tile (its A rows stay in L2 across the n-tiles).
__device__ __forceinline__ TileInfo decode_tile(const GemmSm90Params& p, const TileSpace& ts, int64_t t, int tile_n,
                                                int unit_m = kTileM) {
  TileInfo ti;
  int nt;
  if (ts.kgrouped && p.m_inner) {  // within a group: m-tiles fastest
    const int64_t per_group = static_cast<int64_t>(ts.mt_per_group) * ts.n_tiles;
    const int64_t g = t / per_group, r = t - g * per_group;
    nt = static_cast<int>(r / ts.mt_per_group);
    ti.mt = g * ts.mt_per_group + (r - static_cast<int64_t>(nt) * ts.mt_per_group);
  } else {
    ti.mt = t / ts.n_tiles;
    nt = static_cast<int>(t % ts.n_tiles);
  }
  ti.n0 = nt * tile_n;
  ti.n_valid = static_cast<int>(p.n - ti.n0 < tile_n ? p.n - ti.n0 : tile_n);
  ti.t0 = 0;
  ti.len = p.k;
  ti.col_base = 0;
  if (ts.kgrouped) {
    ti.group = static_cast<int>(ti.mt / ts.mt_per_group);
    ti.row_begin = (ti.mt - static_cast<int64_t>(ti.group) * ts.mt_per_group) * kTileM;
    ti.rows_valid = static_cast<int>(p.rows_total - ti.row_begin < kTileM ? p.rows_total - ti.row_begin : kTileM);
    ti.t0 = ts.ends[ti.group];
    ti.len = ts.ends[ti.group + 1] - ts.ends[ti.group];
    ti.col_base = ts.prefix[ti.group];
  } else if (ts.grouped) {
    int lo = 0, hi = p.groups - 1;  // last g with prefix[g] <= mt
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (ts.prefix[mid] <= ti.mt) lo = mid; else hi = mid - 1;
    }
    ti.group = lo;
    ti.row_begin = ts.ends[lo] + (ti.mt - ts.prefix[lo]) * unit_m;
    ti.rows_valid = static_cast<int>(ts.ends[lo + 1] - ti.row_begin < unit_m ? ts.ends[lo + 1] - ti.row_begin : unit_m);
  } else {
    ti.group = static_cast<int>(ti.mt / ts.mt_per_group);
    const int64_t local = (ti.mt - static_cast<int64_t>(ti.group) * ts.mt_per_group) * unit_m;
    ti.row_begin = static_cast<int64_t>(ti.group) * p.rows_per_group + local;
    ti.rows_valid = static_cast<int>(p.rows_per_group - local < unit_m ? p.rows_per_group - local : unit_m);
  }
  return ti;
}

// The `valid` (0..16) bytes at an arbitrarily aligned src, zero-extended to 16: the aligned 16-byte
// words covering them (only those, so nothing outside the operand is read), shifted into place.
__device__ __forceinline__ uint4 load_unaligned_16(const uint8_t* src, int valid) {
  if (valid <= 0) return make_uint4(0u, 0u, 0u, 0u);
  const int sh = static_cast<int>(reinterpret_cast<uintptr_t>(src) & 15);
  const uint4* base = reinterpret_cast<const uint4*>(src - sh);
  const uint4 lo = __ldg(base);
  const uint4 hi = sh + valid > 16 ? __ldg(base + 1) : make_uint4(0u, 0u, 0u, 0u);
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = sh >> 2;
  const uint32_t bits = static_cast<uint32_t>(sh & 3) * 8;
  uint32_t sel[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) sel[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  uint32_t o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int nb = valid - 4 * i;
    const uint32_t mask = nb >= 4 ? 0xFFFFFFFFu : nb <= 0 ? 0u : (1u << (8 * nb)) - 1u;
    o[i] = __funnelshift_r(sel[i], sel[i + 1], bits) & mask;
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}


// Epilogue of both GEMM kernels: stores alpha-scaled accumulator values v0, v1 at elements idx and
// idx + 1 of D (the second only when `two`), adding D's old values when accumulating. `pairs`: rows
// keep pair alignment, so two values go out as one 8-byte (fp32) or 4-byte (bf16) access.
template <bool kOutF32>
__device__ __forceinline__ void store_d_pair(const GemmSm90Params& p, int64_t idx, float v0, float v1, bool two,
                                             bool pairs) {
  if constexpr (kOutF32) {
    float* d = static_cast<float*>(p.d) + idx;
    if (two && pairs) {
      if (p.accumulate) {
        const float2 o = *reinterpret_cast<const float2*>(d);
        v0 += o.x;
        v1 += o.y;
      }
      *reinterpret_cast<float2*>(d) = make_float2(v0, v1);
    } else {
      if (p.accumulate) v0 += d[0];
      d[0] = v0;
      if (two) {
        if (p.accumulate) v1 += d[1];
        d[1] = v1;
      }
    }
  } else {
    uint16_t* d = static_cast<uint16_t*>(p.d) + idx;
    auto bf = [](uint16_t x) { return __uint_as_float(static_cast<uint32_t>(x) << 16); };
    if (two && pairs) {
      if (p.accumulate) {
        const uint32_t o = *reinterpret_cast<const uint32_t*>(d);
        v0 += bf(static_cast<uint16_t>(o & 0xFFFFu));
        v1 += bf(static_cast<uint16_t>(o >> 16));
      }
      *reinterpret_cast<uint32_t*>(d) = dev::f32x2_to_bf16x2(v0, v1);
    } else {
      if (p.accumulate) v0 += bf(d[0]);
      d[0] = static_cast<uint16_t>(dev::f32x2_to_bf16x2(v0, 0.0f) & 0xFFFFu);
      if (two) {
        if (p.accumulate) v1 += bf(d[1]);
        d[1] = static_cast<uint16_t>(dev::f32x2_to_bf16x2(v1, 0.0f) & 0xFFFFu);
      }
    }
  }
}

// Epilogue of one math warpgroup's accumulators: NH m64n128 fp32 accumulators side by side
// (columns nh * 128 + ...), this thread's rows r0 and r0 + 8 of the tile and columns 8c + c0, + 1
// of each (the wgmma fragment layout); rows and columns outside the tile's group or N are skipped.
template <bool kOutF32, int NH>
__device__ __forceinline__ void store_acc_tile(const GemmSm90Params& p, const TileInfo& ti, bool kgrouped, int r0,
                                               int c0, const float (&acc)[NH][64]) {
  const bool pairs = (p.n & 1) == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int rl = r0 + h * 8;
    if (rl >= ti.rows_valid) continue;
    const int64_t row = (kgrouped ? static_cast<int64_t>(ti.group) * p.rows_total : 0) + ti.row_begin + rl;
#pragma unroll
    for (int nh = 0; nh < NH; ++nh) {
#pragma unroll
      for (int c = 0; c < 16; ++c) {
        const int cl = nh * 128 + c * 8 + c0;
        if (cl >= ti.n_valid) continue;
        const int64_t idx = row * p.n + ti.n0 + cl;
        const float v0 = p.alpha * acc[nh][c * 4 + h * 2], v1 = p.alpha * acc[nh][c * 4 + h * 2 + 1];
        store_d_pair<kOutF32>(p, idx, v0, v1, cl + 1 < ti.n_valid, pairs);
      }
    }
  }
}

}  // namespace sm90gemm
}  // namespace mxq
