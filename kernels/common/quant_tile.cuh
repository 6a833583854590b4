// Where a quantize tile lies: batch entry, data rows and columns, and the scale tile it owns.
// Ungrouped tiles are a plain grid. Row-grouped (MoE) tensors have two cuts:
//   - the tiled kernel (columnwise K-grouped, both) works in *padded* row space: group g owns
//     ceil(M_g/128) consecutive tiles whose data rows restart at the group's first row, so tile t is
//     at once the swizzled rowwise scale tile t (per-group rows padded to 128) and the columnwise
//     scale columns 4t..4t+3 (32-blocks restarting at each group, padded to 4 columns). Tiles past
//     the groups' tiles cover the rows after the last group (which the contract leaves as zeros)
//     and then pure padding (zero scales only);
//   - the rowwise kernel (M-grouped) cuts the data like an ungrouped tensor and moves only the scale
//     rows (quant_tile_mgrouped), so small groups cost no partial tiles.
//
// Grouped kernels never synchronize with the host and never pay a lookup per tile in global memory:
// their blocks are persistent (a grid-stride loop over tiles), and each block first builds a group
// table in shared memory from the caller's offsets (running max to clamp them, sums of tile and
// 32-block counts); a tile then finds its group with a binary search in shared memory. Plans with
// more than kQuantInlineGroups groups binary-search the device-built group table
// (common/group_table.h) in global memory instead (cached, but slower per tile).
#pragma once

#include <cstdint>

#include "common/quant_params.cuh"
#include "core/layout.h"

namespace mxq {
namespace dev {

// Rows of a tile part (QuantTile::sub): its first row inside the 128-row tile, and at most how many.
__device__ __forceinline__ int sub_row0(int sub) { return sub == 2 ? kQuantTile / 2 : 0; }
__device__ __forceinline__ int sub_rows(int sub) { return sub ? kQuantTile / 2 : kQuantTile; }

struct QuantTile {
  int64_t b;           // batch entry
  int64_t r0;          // first data row
  int64_t c0;          // first column
  int64_t tile_r;      // row index of the tile's swizzled scale tile (padded space when grouped)
  int64_t tc;          // column tile index
  int64_t col_c0;      // first columnwise scale column (LINEAR grouped: the group's base + 4j)
  int nrows;           // valid data rows, 0 for a padding tile
  int ncols;           // valid columns
  int nload;           // rows read from the input; rows nload..nrows-1 are past the last group and
                       // quantized as zeros (the contract's outputs read 0 there)
  int sub = 0;         // rowwise ring, counter order: 0 a whole tile, 1 / 2 the first / second 64-row
                       // half of row tile tile_r (quant_tick: the last tickets of a launch are halves)
};

// Facts about the whole grouping, shared by every tile of a block.
struct GroupMeta {
  int64_t used_tiles;  // padded tiles owned by groups
  int64_t covered;     // rows [0, covered) belong to groups (the clamped last end)
  int64_t total_cols;  // columnwise scale columns in use (LINEAR: the rest of each row is zeroed)
};

// The shared-memory group table of an inline plan (G <= kQuantInlineGroups), carved from the
// kernel's dynamic shared memory at `base`: start row and LINEAR columnwise scale base per group,
// first padded tile per group (tile0[G] = used tiles).
struct GroupTableSmem {
  int64_t* start;
  int64_t* col0;
  int32_t* tile0;
  __device__ __forceinline__ GroupTableSmem(uint8_t* base, int64_t groups)
      : start(reinterpret_cast<int64_t*>(base)),
        col0(reinterpret_cast<int64_t*>(base + 8 * groups)),
        tile0(reinterpret_cast<int32_t*>(base + 16 * groups)) {}
};

namespace detail {

// Exclusive block scan of one int64 per thread (kQuantThreads threads) with identity `id`;
// `tmp` holds one entry per warp. Also returns the block total in *total. kWarpOnly: the scan of
// one warp alone (only that warp calls it; tmp unused).
template <bool kWarpOnly = false, typename Op>
__device__ __forceinline__ int64_t block_exclusive_scan(int64_t v, int64_t id, int64_t* tmp, int64_t* total, Op op) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int64_t incl = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int64_t o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl = op(incl, o);
  }
  int64_t excl = __shfl_up_sync(0xFFFFFFFFu, incl, 1);
  if (lane == 0) excl = id;
  if constexpr (kWarpOnly) {  // one warp holds all the values: no barriers
    *total = __shfl_sync(0xFFFFFFFFu, incl, 31);
    return excl;
  }
  if (lane == 31) tmp[warp] = incl;
  __syncthreads();
  int64_t prefix = id, all = id;
#pragma unroll
  for (int w = 0; w < kQuantThreads / 32; ++w) {
    if (w < warp) prefix = op(prefix, tmp[w]);
    all = op(all, tmp[w]);
  }
  __syncthreads();
  *total = all;
  return op(prefix, excl);
}

struct Max64 {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};
struct Sum64 {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a + b; }
};

// Scale columns group g occupies in the columnwise (K-grouped) layout.
__device__ __forceinline__ int64_t group_scale_cols(bool swizzled, int64_t size) {
  return swizzled ? layout::kgroup_col_pad(true, size) : layout::scale_cols(size);
}

}  // namespace detail

// The caller's offsets of this thread's groups (thread i owns groups 4i..4i+3) for an inline
// table, loaded apart from build_group_table so that a kernel can put them on the wire before its
// first tile's loads (queued behind the tile's 32 KB they arrive last and the table build waits);
// 0 past the groups and for plans with the device-built table.
constexpr int kQuantGroupsPerThread = 4;
struct GroupOffsets {
  int64_t o[kQuantGroupsPerThread];
};
__device__ __forceinline__ GroupOffsets load_group_offsets(const QuantizeParams& p) {
  GroupOffsets r;
  const int64_t g0 = static_cast<int64_t>(threadIdx.x) * kQuantGroupsPerThread;
  const bool inline_table = (p.flags & kQuantGrouped) && !(p.flags & kQuantGroupTable);
#pragma unroll
  for (int j = 0; j < kQuantGroupsPerThread; ++j) {
    r.o[j] = 0;
    if (inline_table && g0 + j < p.num_groups)
      r.o[j] = (p.flags & kQuantOffsetsI64) ? static_cast<const int64_t*>(p.offsets)[g0 + j]
                                            : static_cast<int64_t>(static_cast<const int32_t*>(p.offsets)[g0 + j]);
  }
  return r;
}

// The inline table from the offsets (build_group_table). kWarp: warp 0 alone (at most
// 32 * kQuantGroupsPerThread groups), the other warps skip it; else every thread.
template <bool kWarp>
__device__ __forceinline__ void fill_inline_group_table(const QuantizeParams& p, uint8_t* table_base,
                                                        GroupMeta* meta, int64_t* tmp, const GroupOffsets& off) {
  using namespace detail;
  const bool swz = (p.flags & kQuantSwizzled) != 0;
  const int64_t G = p.num_groups;
  constexpr int kPer = kQuantGroupsPerThread;
  static_assert(kPer * kQuantThreads >= kQuantInlineGroups, "inline table covers every group");
  GroupTableSmem tab(table_base, G);
  const int64_t g0 = static_cast<int64_t>(threadIdx.x) * kPer;
  int64_t end[kPer];
  int64_t run = 0;  // running max of the offsets from 0: also the clamp below at 0
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (g0 + j < G) run = off.o[j] > run ? off.o[j] : run;
    end[j] = run;
  }
  int64_t all_max;
  const int64_t carry = block_exclusive_scan<kWarp>(run, 0, tmp, &all_max, Max64{});
  // ends[g] = min(rows, max(0, o_0..o_g)): a non-decreasing partition of [0, rows].
  const int64_t first = carry < p.rows ? carry : p.rows;
  int64_t prev = first, ntiles = 0, ncols = 0;
  int64_t size[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    int64_t e = end[j] > carry ? end[j] : carry;
    e = e < p.rows ? e : p.rows;
    end[j] = e;
    size[j] = e - prev;  // 0 past G: the running max stopped growing
    prev = e;
    ntiles += layout::ceil_div(size[j], kQuantTile);
    ncols += group_scale_cols(swz, size[j]);
  }
  int64_t used_tiles, total_cols;
  int64_t tile_base = block_exclusive_scan<kWarp>(ntiles, 0, tmp, &used_tiles, Sum64{});
  // Columnwise scale columns: only columnwise plans read them (a rowwise plan skips one block scan).
  int64_t col_base = 0;
  total_cols = 0;
  if (p.flags & kQuantColwise) col_base = block_exclusive_scan<kWarp>(ncols, 0, tmp, &total_cols, Sum64{});
  int64_t start = first;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    if (g0 + j < G) {
      tab.start[g0 + j] = start;
      tab.col0[g0 + j] = col_base;
      tab.tile0[g0 + j] = static_cast<int32_t>(tile_base);
    }
    tile_base += layout::ceil_div(size[j], kQuantTile);
    col_base += group_scale_cols(swz, size[j]);
    start = end[j];
  }
  if (threadIdx.x == 0) {
    tab.tile0[G] = static_cast<int32_t>(used_tiles);
    meta->used_tiles = used_tiles;
    meta->covered = all_max < p.rows ? all_max : p.rows;
    meta->total_cols = total_cols;
  }
}

// Builds the block's view of the grouping (all threads call it; contains barriers). Inline plans
// fill the shared table from `off` (load_group_offsets); table plans only read the totals from the
// device-built table.
__device__ __forceinline__ void build_group_table(const QuantizeParams& p, uint8_t* table_base, GroupMeta* meta,
                                                  int64_t* tmp, const GroupOffsets& off) {
  using namespace detail;
  const bool swz = (p.flags & kQuantSwizzled) != 0;
  const int64_t G = p.num_groups;
  if (p.flags & kQuantGroupTable) {
    if (threadIdx.x == 0) {
      const int64_t last_start = G > 1 ? __ldg(p.ends + G - 2) : 0;
      const int64_t last_size = __ldg(p.ends + G - 1) - last_start;
      meta->used_tiles = (__ldg(p.row_base + G - 1) + layout::mgroup_row_pad(last_size)) / kQuantTile;
      meta->covered = __ldg(p.ends + G - 1);
      meta->total_cols = __ldg(p.col_base + G - 1) + group_scale_cols(swz, last_size);
    }
    __syncthreads();
    return;
  }
  // Up to 128 groups (the common MoE case) all sit in warp 0: its scans need no block barriers, so
  // the table is ready after one barrier instead of five (the build is on every block's path to its
  // first tile's scale rows).
  if (G <= 32 * kQuantGroupsPerThread) {
    if (threadIdx.x < 32) fill_inline_group_table<true>(p, table_base, meta, tmp, off);
  } else {
    fill_inline_group_table<false>(p, table_base, meta, tmp, off);
  }
  __syncthreads();
}

__device__ __forceinline__ void build_group_table(const QuantizeParams& p, uint8_t* table_base, GroupMeta* meta,
                                                  int64_t* tmp) {
  build_group_table(p, table_base, meta, tmp, load_group_offsets(p));
}

// Tile indices fit 32 bits (the launcher checks tiles_c * tiles_r * batch <= INT_MAX), so the
// divisions below are 32-bit ones (a 64-bit division is a long software sequence, paid per tile).
__device__ __forceinline__ void div_mod32(int64_t a, int64_t b, int64_t& q, int64_t& r) {
  const uint32_t ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
  q = ua / ub;
  r = ua - static_cast<uint32_t>(q) * ub;
}

// Tile number `tile` of the launch. No barriers: every thread computes the same answer.
__device__ __forceinline__ QuantTile quant_tile(const QuantizeParams& p, int64_t tile, const uint8_t* table_base,
                                                const GroupMeta& meta) {
  QuantTile q;
  int64_t rest;
  div_mod32(tile, p.tiles_c, rest, q.tc);
  q.c0 = q.tc * kQuantTile;
  const int64_t cleft = p.cols - q.c0;
  q.ncols = static_cast<int>(cleft < kQuantTile ? cleft : kQuantTile);
  if (!(p.flags & kQuantGrouped)) {
    div_mod32(rest, p.tiles_r, q.b, q.tile_r);
    q.r0 = q.tile_r * kQuantTile;
    const int64_t rleft = p.rows - q.r0;
    q.nrows = static_cast<int>(rleft < kQuantTile ? rleft : kQuantTile);
    q.nload = q.nrows;
    q.col_c0 = q.tile_r * (kQuantTile / layout::kBlock);
    return q;
  }
  q.b = 0;
  q.tile_r = rest;
  const int64_t t = rest, G = p.num_groups;
  if (t < meta.used_tiles) {
    // The last group whose first tile is at or before t owns it (empty groups own no tile).
    int64_t lo = 0, hi = G, start, end, col0, tile0;
    if (p.flags & kQuantGroupTable) {
      while (hi - lo > 1) {
        const int64_t mid = (lo + hi) >> 1;
        if (__ldg(p.row_base + mid) <= t * kQuantTile) lo = mid;
        else hi = mid;
      }
      start = lo == 0 ? 0 : __ldg(p.ends + lo - 1);
      end = __ldg(p.ends + lo);
      col0 = __ldg(p.col_base + lo);
      tile0 = __ldg(p.row_base + lo) / kQuantTile;
    } else {
      const GroupTableSmem tab(const_cast<uint8_t*>(table_base), G);
      while (hi - lo > 1) {
        const int64_t mid = (lo + hi) >> 1;
        if (tab.tile0[mid] <= t) lo = mid;
        else hi = mid;
      }
      start = tab.start[lo];
      end = lo + 1 < G ? tab.start[lo + 1] : meta.covered;
      col0 = tab.col0[lo];
      tile0 = tab.tile0[lo];
    }
    const int64_t jt = t - tile0;
    q.r0 = start + jt * kQuantTile;
    const int64_t rleft = end - q.r0;
    q.nrows = static_cast<int>(rleft < kQuantTile ? rleft : kQuantTile);
    q.nload = q.nrows;
    q.col_c0 = col0 + jt * (kQuantTile / layout::kBlock);
    return q;
  }
  // Past the groups' tiles: the rows after the last group, if any, 128 per tile. They belong to no
  // group, so they are "quantized" as zeros: data 0, LINEAR rowwise scales 0, and the swizzled scale
  // tiles they touch are padding anyway. The tile bound always leaves room:
  // sum ceil(M_g/128) + ceil(U/128) <= (R + 127 G + 127) / 128 < bound + 1.
  const int64_t r0 = meta.covered + (t - meta.used_tiles) * kQuantTile;
  const bool tail = r0 < p.rows;
  q.r0 = tail ? r0 : 0;
  const int64_t rleft = p.rows - r0;
  q.nrows = tail ? static_cast<int>(rleft < kQuantTile ? rleft : kQuantTile) : 0;
  q.nload = 0;
  q.col_c0 = 0;
  return q;
}

// Read access to the grouping for the rowwise M-grouped path, from either table.
struct GroupView {
  const QuantizeParams& p;
  const GroupTableSmem tab;
  const GroupMeta& meta;
  uint32_t* const rtg;  // kQuantRowTileGroups: per row tile, first group | last group << 16
  __device__ __forceinline__ GroupView(const QuantizeParams& params, uint8_t* table_base, const GroupMeta& m)
      : p(params),
        tab(table_base, params.num_groups),
        meta(m),
        rtg((params.flags & kQuantRowTileGroups)
                ? reinterpret_cast<uint32_t*>(table_base + quantize_group_table_smem_bytes(params.num_groups))
                : nullptr) {}
  __device__ __forceinline__ bool global() const { return (p.flags & kQuantGroupTable) != 0; }
  __device__ __forceinline__ int64_t start(int64_t g) const {
    return global() ? (g == 0 ? 0 : __ldg(p.ends + g - 1)) : tab.start[g];
  }
  __device__ __forceinline__ int64_t end(int64_t g) const {
    return global() ? __ldg(p.ends + g) : (g + 1 < p.num_groups ? tab.start[g + 1] : meta.covered);
  }
  __device__ __forceinline__ int64_t tile0(int64_t g) const {
    return global() ? __ldg(p.row_base + g) / kQuantTile : tab.tile0[g];
  }
  // The group holding row r < covered: the last group starting at or before r (empty groups before
  // it start at the same row, and an empty last group starts at `covered`).
  // lo / hi narrow the search when the caller knows the group lies in [lo, hi).
  __device__ __forceinline__ int64_t group_of_row(int64_t r, int64_t lo = 0, int64_t hi = -1) const {
    if (hi < 0) hi = p.num_groups;
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) >> 1;
      if (start(mid) <= r) lo = mid;
      else hi = mid;
    }
    return lo;
  }
  // The groups of the first and the last loaded row of an M-grouped data tile (t.nload > 0).
  __device__ __forceinline__ void tile_groups(const QuantTile& t, int64_t& g0, int64_t& g1) const {
    if (rtg) {
      const uint32_t w = rtg[t.tile_r];
      g0 = w & 0xFFFFu;
      g1 = w >> 16;
    } else {
      g0 = group_of_row(t.r0);
      g1 = group_of_row(t.r0 + t.nload - 1, g0);
    }
  }
};

// Fills the kQuantRowTileGroups table (after build_group_table; ends with a barrier). Row tile i
// holds rows [128 i, 128 i + 128) of the data; only its rows below `covered` count (quant_tile_mgrouped
// loads no others).
__device__ __forceinline__ void build_row_tile_groups(const QuantizeParams& p, const GroupView& gv) {
  if (!gv.rtg) return;
  const int64_t lim = gv.meta.covered < p.rows ? gv.meta.covered : p.rows;
  for (int64_t i = threadIdx.x; i < p.tiles_r; i += kQuantThreads) {
    const int64_t r0 = i * kQuantTile;
    const int64_t last = r0 + kQuantTile < lim ? r0 + kQuantTile : lim;
    uint32_t w = 0;
    if (last > r0) {
      const int64_t g0 = gv.group_of_row(r0), g1 = gv.group_of_row(last - 1, g0);
      w = static_cast<uint32_t>(g0) | (static_cast<uint32_t>(g1) << 16);
    }
    gv.rtg[i] = w;
  }
  __syncthreads();
}

// Rowwise M-grouped tiles: the data is cut exactly like an ungrouped tensor (grouping does not change
// which elements form a 1x32 block), and only the scale *rows* move: data row r of group g goes to
// scale row 128 * tile0(g) + (r - start(g)). The layout's padding rows are zeroed by the data tile
// holding each group's last row, and the tail past the groups' tiles by all blocks
// (write_mgrouped_scales, zero_mgrouped_tail in common/quant_kernels.cuh).
__device__ __forceinline__ QuantTile quant_tile_mgrouped(const QuantizeParams& p, int64_t tile, const GroupMeta& meta,
                                                        int sub = 0) {
  QuantTile q;
  q.sub = sub;
  div_mod32(tile, p.tiles_c, q.tile_r, q.tc);
  q.c0 = q.tc * kQuantTile;
  const int64_t cleft = p.cols - q.c0;
  q.ncols = static_cast<int>(cleft < kQuantTile ? cleft : kQuantTile);
  q.b = 0;
  q.col_c0 = 0;
  q.r0 = q.tile_r * kQuantTile + sub_row0(sub);
  if (q.r0 >= p.rows) {
    q.r0 = 0;
    q.nrows = q.nload = 0;
    return q;
  }
  const int64_t rleft = p.rows - q.r0, rmax = sub_rows(sub);
  q.nrows = static_cast<int>(rleft < rmax ? rleft : rmax);
  const int64_t lleft = meta.covered - q.r0;
  q.nload = lleft <= 0 ? 0 : static_cast<int>(lleft < q.nrows ? lleft : q.nrows);
  return q;
}

// Ticket k of a rowwise ring launch in the counter order (kQuantDynamicTiles): tickets below
// p.split_from are whole tiles k; from there on each remaining tile is two tickets, its 64-row
// halves, so the launch's last round is half as long (the blocks that run out of tickets first
// idle for less). Returns the tile number and sets sub (0 whole, 1 / 2 first / second half).
__device__ __forceinline__ int64_t quant_tick(const QuantizeParams& p, int64_t k, int& sub) {
  if (k < p.split_from) {
    sub = 0;
    return k;
  }
  const int64_t j = k - p.split_from;
  sub = 1 + static_cast<int>(j & 1);
  return p.split_from + (j >> 1);
}

}  // namespace dev
}  // namespace mxq
