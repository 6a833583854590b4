// Quantize on the GPU: registry entries and the launcher of kernels/generic/quantize_*.cu.
// Finalize resolves the geometry once (tile grid, scale extents from core/sizes.h, the kernel for the
// dtypes / policy / fusion); Execute fills pointers, decides the 16-byte input path from the actual
// pointers, and enqueues at most four things on the caller's stream: a 4-byte memset of the amax
// output, an 8-byte memset of the tile counter (M-grouped rowwise plans with many tiles per block),
// the group table (only for more than kQuantInlineGroups groups) and the kernel. Nothing
// synchronizes the host, so a plan can be captured into a CUDA graph.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "common/quant_params.cuh"
#include "core/error.h"
#include "core/layout.h"
#include "core/sizes.h"
#include "cuda/group_table.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"

namespace mxq {
namespace cuda {
namespace {

size_t in_size(mxqDataType_t t) { return t == MXQ_DTYPE_FP32 ? 4 : 2; }

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Which kernel runs a plan: the register-only rowwise kernel, or a shared-memory tile kernel (ring or
// tiled) for anything that needs the other axis (columnwise, both, 32x32 blocks).
bool needs_tiled(const QuantizeDesc& d) { return d.colwise() || d.block_2d; }

bool grouped(const QuantizeDesc& d) { return d.grouping == MXQ_GROUPING_ROWS; }

// Rowwise 1x32 plans that the rowwise-only ring kernel can take: 16-bit inputs, no fusion.
bool ringrow_capable(const QuantizeDesc& d) {
  return !needs_tiled(d) && d.in_dtype != MXQ_DTYPE_FP32 && d.fusion != MXQ_FUSION_SWIGLU;
}

// The pipelined ring kernel (common/quant_ring.cuh) covers 16-bit inputs without fusion, 1x32 / 32x1.
bool uses_ring(const QuantizeDesc& d) {
  return needs_tiled(d) && !d.block_2d && d.in_dtype != MXQ_DTYPE_FP32 && d.fusion != MXQ_FUSION_SWIGLU;
}

// Row tiles per batch entry. The rowwise kernel cuts grouped data like ungrouped data (its data tiles
// also zero the padding of the per-group scale layout). The tile kernels' grouped tiles live in
// padded row space: enough for every group's 128-row tiles, the rows past the last group, and
// (swizzled columnwise) every padded scale column.
int64_t row_tiles(const QuantizeDesc& d) {
  if (!grouped(d)) return layout::ceil_div(d.rows, kQuantTile);
  if (!needs_tiled(d)) return layout::ceil_div(d.rows, kQuantTile);
  int64_t t = layout::mgroup_scale_rows_bound(d.rows, d.num_groups) / kQuantTile;
  if (d.colwise() && d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4)
    t = std::max(t, colwise_scale_extent(true, d.rows, d.cols, d.grouping, d.num_groups).cols / 4);
  return t;
}

// Tiles of the launch (the grid of a non-persistent launch); -1 when they do not fit a grid.
int64_t grid_blocks(const QuantizeDesc& d) {
  const int64_t tc = layout::ceil_div(d.cols, kQuantTile);
  const int64_t tr = row_tiles(d);
  if (tr > INT_MAX / tc) return -1;
  const int64_t per_batch = tc * tr;
  if (per_batch > INT_MAX / d.batch) return -1;
  return per_batch * d.batch;
}

// Ungrouped rowwise plans with 16-bit inputs and no fusion run the rowwise-only ring kernel
// (persistent blocks, the next tile's loads in flight during this one) in the counter order: since
// the sixth session it is ahead of the register kernel at every measured shape, from 1.3 tiles per
// block (2048x4096) to 16384^2 (docs/PERFORMANCE.md, "Sixth session").
// MXQ_QUANT_RINGROW=0/1 overrides the rule (docs/ENVIRONMENT.md).

// M-grouped rowwise plans with 16-bit inputs and no fusion run on the rowwise-only ring kernel: its
// persistent blocks build the group table once, keep the next tile's loads in flight and, from 16
// tiles per block, take tiles in order from a counter (ring_counter_order). Since the counter order it
// is ahead of the persistent register blocks on every measured shape, tall groups included
// (docs/PERFORMANCE.md, "M-grouped plans, fifth session"); the register blocks remain for scale
// tensors of 2^31 bytes or more and for MXQ_QUANT_MGROUPED=persistent (docs/ENVIRONMENT.md).
bool mgrouped_ring(const QuantizeDesc& d) {
  if (!grouped(d) || !ringrow_capable(d)) return false;
  // The ring keeps each scale row's offset in 31 bits (MgScaleDst in common/quant_kernels.cuh).
  const ScaleExtent rs = rowwise_scale_extent(d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4, d.rows, d.cols,
                                              d.grouping, d.num_groups);
  if (rs.rows * rs.cols >= (int64_t(1) << 31)) return false;
  if (const char* env = std::getenv("MXQ_QUANT_MGROUPED"); env && *env) {
    if (std::string(env) == "persistent") return false;
  }
  return true;
}

bool uses_ringrow(const QuantizeDesc& d) {
  if (mgrouped_ring(d)) return true;
  if (grouped(d) || !ringrow_capable(d)) return false;
  if (const char* env = std::getenv("MXQ_QUANT_RINGROW"); env && *env) return std::string(env) != "0";
  return true;
}

// Ungrouped rowwise plans with 16-bit inputs, no fusion and K a multiple of 128 skip the persistent
// ring (whose ~400 blocks each fill 64 KB of shared memory before their first tile and whose launch
// ends with the last tiles' round trips) for one of two streaming launches without a loop
// (common/quant_flat.cuh), every load of a thread in flight at once:
//   flat  the tensor as one array of 16-byte chunks (batch 1, contiguous rows, below 2^24 chunks),
//         each 128-element run's 4 scale bytes one 4-byte store: LINEAR scales at every size it
//         takes, SWIZZLED ones up to 16 MiB of input (there each word lands in its own 512-byte tile,
//         which costs more than the data as the tensor grows);
//   band  64 rows x 128 columns per block, the band's scale words staged in shared memory and
//         written as 8-byte halves of the swizzled tile's lines: SWIZZLED scales above 16 MiB and up
//         to 64 MiB of input (batched and strided inputs too).
// Measured on an H100 (docs/PERFORMANCE.md, "Thirteenth round"). Execute falls back to the ring when
// the pointers are not aligned for the chosen kernel (x and its rows 16 bytes, FP8 data 8 bytes,
// scales 8 bytes (band, swizzled) or 4). MXQ_QUANT_FLAT / MXQ_QUANT_BAND = 0 never take the kernel,
// = 1 take it for every plan it can run regardless of the size rules (docs/ENVIRONMENT.md).
//   bandmg the band kernel for M-grouped plans with swizzled scales and at most 128 groups: a ninth
//         warp of each block builds the group table in shared memory while the others quantize,
//         then the block moves its scale rows to their groups' padded positions.
enum class FastRow { kNone, kFlat, kBand, kBandMg };
constexpr int64_t kBandMgMaxGroups = 128;  // quant_flat.cuh, kBandMgGroups: one warp builds the table
constexpr int kBandMgThreads = kQuantThreads + 32;
constexpr int64_t kFlatSwizzledMaxBytes = int64_t(16) << 20;
// Above 64 MiB of input the persistent ring is ahead again (16384^2: 276 against 285 us; 131072x7168:
// 946 against 981): its counter order keeps the DRAM traffic one window of the tensor.
constexpr int64_t kBandMaxBytes = int64_t(64) << 20;
constexpr int64_t kFlatMaxChunks = int64_t(1) << 24;

int env_switch(const char* name) {  // -1 unset, 0, 1
  const char* env = std::getenv(name);
  if (!env || !*env) return -1;
  if (std::string(env) == "0") return 0;
  if (std::string(env) == "1") return 1;
  return -1;
}

FastRow fast_rowwise(const QuantizeDesc& d) {
  if (!ringrow_capable(d) || d.cols % 128 != 0 || d.rows < 1) return FastRow::kNone;
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const int64_t bytes = d.batch * d.rows * d.cols * static_cast<int64_t>(in_size(d.in_dtype));
  if (grouped(d)) {
    // The kernel keeps scale offsets in 32 bits.
    const ScaleExtent rs = rowwise_scale_extent(true, d.rows, d.cols, d.grouping, d.num_groups);
    if (!swz || d.num_groups > kBandMgMaxGroups || rs.rows * rs.cols >= (int64_t(1) << 32)) return FastRow::kNone;
    const int band_env = env_switch("MXQ_QUANT_BAND");
    return band_env == 1 || (band_env != 0 && bytes <= kBandMaxBytes) ? FastRow::kBandMg : FastRow::kNone;
  }
  const bool flat_ok = d.batch == 1 && d.in_ld == d.cols && d.rows * d.cols / 8 < kFlatMaxChunks;
  const int flat_env = env_switch("MXQ_QUANT_FLAT"), band_env = env_switch("MXQ_QUANT_BAND");
  if (flat_env == 1 && flat_ok) return FastRow::kFlat;
  if (band_env == 1) return FastRow::kBand;
  if (flat_ok && flat_env != 0 && (!swz || bytes <= kFlatSwizzledMaxBytes)) return FastRow::kFlat;
  if (swz && band_env != 0 && bytes <= kBandMaxBytes) return FastRow::kBand;
  return FastRow::kNone;
}

// "_<in>_<fp8>[_prop][_swiglu]": the part of every quantize entry point's name after its kind.
std::string kernel_suffix(const QuantizeDesc& d) {
  const char* in = d.in_dtype == MXQ_DTYPE_FP32 ? "f32" : d.in_dtype == MXQ_DTYPE_FP16 ? "f16" : "bf16";
  const char* out = d.out_dtype == MXQ_DTYPE_E5M2 ? "e5m2" : "e4m3";
  return std::string("_") + in + "_" + out + (d.nonfinite == MXQ_NONFINITE_PROPAGATE ? "_prop" : "") +
         (d.fusion == MXQ_FUSION_SWIGLU ? "_swiglu" : "");
}

std::string kernel_name(const QuantizeDesc& d) {
  const char* kind = uses_ring(d)      ? "ring"
                     : needs_tiled(d)   ? "tiled"
                     : uses_ringrow(d)  ? "ringrow"
                                        : "rowwise";
  return std::string("mxq_quantize_") + kind + kernel_suffix(d);
}

// Dynamic shared memory of the chosen kernel before the inline group table.
int tile_smem(const QuantizeDesc& d) {
  if (uses_ring(d)) return quantize_ring_smem_bytes();
  if (uses_ringrow(d)) return quantize_ringrow_smem_bytes();
  return needs_tiled(d) ? quantize_tiled_smem_bytes(static_cast<int>(in_size(d.in_dtype))) : 0;
}

// Grid-stride (persistent) launches: grouped plans, and the pipelined tile kernels (the ring kernel,
// and the tiled kernel's tiled_prefetch(): 16-bit inputs without SwiGLU).
bool persistent(const QuantizeDesc& d) {
  return grouped(d) || uses_ring(d) || uses_ringrow(d) ||
         (needs_tiled(d) && d.in_dtype != MXQ_DTYPE_FP32 && d.fusion != MXQ_FUSION_SWIGLU);
}

// M-grouped rowwise plans on the persistent register blocks take their tiles from a counter in the
// workspace (in order, fast blocks take more) once the blocks have at least this many tiles each;
// below that, the counter's reset and first round trip cost more than the order gains
// (docs/PERFORMANCE.md).
constexpr int64_t kDynamicTilesPerBlock = 16;

bool uses_table(const QuantizeDesc& d) { return grouped(d) && d.num_groups > kQuantInlineGroups; }

// M-grouped ring plans with the inline group table keep each row tile's first and last group in
// shared memory (kQuantRowTileGroups) when there are at most kQuantRowTileGroupsMax row tiles: the
// binary searches they replace were half of the kernel's instructions at 8192x4096 with 128 groups
// (docs/PERFORMANCE.md, "Sixth session").
bool row_tile_groups(const QuantizeDesc& d) {
  return mgrouped_ring(d) && !uses_table(d) && row_tiles(d) <= kQuantRowTileGroupsMax;
}

// Ungrouped plans of the ring kernel take their tiles in order from the same counter
// (mxq_quantize_ringdyn_*) from 6 tiles per block: in the static order the persistent blocks drift
// apart and the DRAM traffic of the scattered tiles cost 3-7 points of the copy at the large shapes
// (docs/PERFORMANCE.md, "Sixth round"); at 8192x4096 (7.8 tiles per block) the counter order was
// still ahead for every layout, at 2048x4096 (1.9) behind. The rowwise-only ring
// (mxq_quantize_ringrowdyn_*) takes it always for ungrouped plans (sixth session: ahead at every
// shape) and from 4 tiles per block for M-grouped ones (8192x4096 with 128 groups, 5.2 tiles per
// block: +1.3 points; 2048x4096, 1.3: 2 points behind). MXQ_QUANT_RING_ORDER=static|counter
// overrides the rule (docs/ENVIRONMENT.md).
constexpr int64_t kRingCounterTilesPerBlock = 6;
// M-grouped ring plans with fewer tiles per block than this at full residency run 2 blocks per SM
// (resident_blocks).
constexpr int64_t kMgFewTilesPerBlock = 2;
constexpr int64_t kMGroupedRingCounterTilesPerBlock = 4;

bool ring_counter_order(const QuantizeDesc& d, int64_t tiles, int64_t blocks) {
  const bool ring = uses_ring(d) && !grouped(d);
  if (!ring && !uses_ringrow(d)) return false;
  if (const char* env = std::getenv("MXQ_QUANT_RING_ORDER"); env && *env) {
    const std::string v(env);
    if (v == "counter") return true;
    if (v == "static") return false;
  }
  if (!grouped(d) && !ring) return true;  // the ungrouped rowwise ring: ahead from 1.3 tiles per block
  return tiles >= (ring ? kRingCounterTilesPerBlock : kMGroupedRingCounterTilesPerBlock) * blocks;
}

// Rowwise ring plans in the counter order hand their last tiles out as 64-row halves
// (common/quant_tile.cuh, quant_tick): the launch ends when the last ticket's tile is done, so halving
// the last round's tiles halves the time that blocks without a ticket wait for the others.
// MXQ_QUANT_SPLIT=<f> splits f x blocks tiles (docs/ENVIRONMENT.md).
int64_t split_tiles(int64_t tiles, int64_t blocks) {
  double f = 1.0;
  if (const char* env = std::getenv("MXQ_QUANT_SPLIT"); env && *env) f = std::atof(env);
  const int64_t s = static_cast<int64_t>(f * static_cast<double>(blocks) + 0.5);
  return std::max<int64_t>(0, std::min(tiles, s));
}

// The rowwise ring in the counter order takes its tickets just in time (quant_ring.cuh, p.jit_from):
// a block draws its next ticket when it can issue that tile's loads, not one tile earlier, so no block
// holds a ticket while others have none at the launch's end, and none holds a third tile anywhere.
// Measured against tickets one tile ahead (docs/PERFORMANCE.md, "Eleventh round"): 8192x4096 -1.6%,
// 16384x16384 -0.9%, 131072x7168 -0.8% time. Returns how many of the last tickets are taken so, of
// nticks: all by default; MXQ_QUANT_JIT=<f> takes only the last f x blocks (0: none), for measurements.
int64_t jit_tickets(int64_t nticks, int64_t blocks) {
  const char* env = std::getenv("MXQ_QUANT_JIT");
  if (!env || !*env || std::string(env) == "all") return nticks;
  const double f = std::atof(env);
  return std::clamp<int64_t>(static_cast<int64_t>(f * static_cast<double>(blocks) + 0.5), 0, nticks);
}

class QuantizeOp final : public OpImpl {
 public:
  QuantizeOp(const QuantizeDesc& d, Device& dev)
      : d_(d), dev_(&dev), kernel_(kernel_name(d)), fn_(dev.kernel(kernel_.c_str())), smem_(dynamic_smem(d)) {
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    QuantizeParams& p = base_;
    p = QuantizeParams{};
    p.rows = d.rows;
    p.cols = d.cols;
    p.batch = d.batch;
    p.in_ld = d.in_ld;
    p.in_bstride = d.in_batch_stride;
    p.tiles_c = layout::ceil_div(d.cols, kQuantTile);
    p.tiles_r = row_tiles(d);
    p.num_groups = grouped(d) ? d.num_groups : 0;
    const ScaleExtent rs = rowwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups);
    const ScaleExtent cs = colwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups);
    p.row_scale_ld = rs.cols;
    p.row_scale_bstride = rs.rows * rs.cols;
    p.row_scale_tiles = rs.rows / kQuantTile;
    p.col_scale_ld = cs.cols;
    p.col_scale_bstride = cs.rows * cs.cols;
    p.col_scale_tiles = cs.cols / 4;
    p.mode = d.scale_mode;
    int32_t f = 0;
    if (d.rowwise()) f |= kQuantRowwise;
    if (d.colwise()) f |= kQuantColwise;
    if (d.colwise_transposed) f |= kQuantTransposed;
    if (swz) f |= kQuantSwizzled;
    if (d.block_2d) f |= kQuantBlock2d;
    if (grouped(d)) f |= kQuantGrouped;
    if (uses_table(d)) f |= kQuantGroupTable;
    if (row_tile_groups(d)) f |= kQuantRowTileGroups;
    if (grouped(d) && d.offsets_dtype == MXQ_DTYPE_INT64) f |= kQuantOffsetsI64;
    p.flags = f;
    tiles_ = grid_blocks(d);
    MXQ_REQUIRE(tiles_ > 0, MXQ_STATUS_INTERNAL_ERROR, "quantize grid does not fit (supports() should have said)");
    // Persistent blocks, exactly as many as are resident at once, for grouped tiled plans (each block
    // builds the group table once, then loops over tiles) and for the pipelined tile kernels (each
    // block loads its next tile during this one). Otherwise one block per tile.
    const int64_t resident = persistent(d) ? resident_blocks(dev, mgrouped_ring(d) ? tiles_ : 0) : 0;
    blocks_ = persistent(d) ? std::min<int64_t>(tiles_, resident) : tiles_;
    per_sm_ = resident / std::max(1, dev.sm_count());
    dynamic_ = grouped(d) && !needs_tiled(d) && !uses_ringrow(d) && tiles_ >= kDynamicTilesPerBlock * blocks_;
    if (ring_counter_order(d, tiles_, blocks_)) {
      // The counter-order instantiation has the static one's registers and shared memory: blocks_ stands.
      const std::string stem = uses_ringrow(d) ? "mxq_quantize_ringrow" : "mxq_quantize_ring";
      kernel_ = stem + "dyn" + kernel_.substr(stem.size());
      fn_ = dev.kernel(kernel_.c_str());
      dynamic_ = true;
    }
    if (dynamic_) p.flags |= kQuantDynamicTiles;
    p.split_from = tiles_;
    p.jit_from = INT64_MAX;  // no ticket just in time (every plan but the rowwise ring in the counter order)
    if (dynamic_ && uses_ringrow(d)) {
      split_ = split_tiles(tiles_, blocks_);
      p.split_from = tiles_ - split_;
      const int64_t nticks = 2 * tiles_ - p.split_from;
      jit_ = jit_tickets(nticks, blocks_);
      jit_all_ = jit_ == nticks;
      if (jit_ > 0) p.jit_from = nticks - jit_;
    }
    if (uses_table(d)) groups_ = std::make_unique<GroupTableBuilder>(dev);
    fast_ = fast_rowwise(d);
    if (fast_ == FastRow::kFlat) {
      // Chunks per thread: 4 when that still gives 4 blocks per SM, else 2 (more, smaller blocks).
      const int64_t chunks = d.rows * d.cols / 8;
      const int64_t sms = std::max(1, dev.sm_count());
      fast_cpt_ = layout::ceil_div(chunks, 4 * kQuantThreads) >= 4 * sms ? 4 : 2;
      fast_data_blocks_ = layout::ceil_div(chunks, fast_cpt_ * kQuantThreads);
      const int64_t pad_words = swz ? (layout::round_up(d.rows, kQuantTile) - d.rows) * (d.cols / 128) : 0;
      fast_grid_x_ = fast_data_blocks_ + layout::ceil_div(pad_words, kQuantThreads);
      fast_kernel_ = "mxq_quantize_flat" + std::to_string(fast_cpt_) + kernel_suffix(d);
    } else if (fast_ == FastRow::kBand) {
      // Bands of 64 rows over the padded rows (swizzled) or the rows (LINEAR), one block per 128 columns.
      const int64_t bands = swz ? layout::ceil_div(d.rows, kQuantTile) * 2 : layout::ceil_div(d.rows, 64);
      fast_data_blocks_ = bands * (d.cols / 128);
      fast_grid_x_ = fast_data_blocks_;
      fast_kernel_ = "mxq_quantize_band" + kernel_suffix(d);
    } else if (fast_ == FastRow::kBandMg) {
      // Bands of 64 data rows; the padding and the tail of the scale tensor are written by the blocks.
      fast_data_blocks_ = layout::ceil_div(d.rows, 64) * (d.cols / 128);
      fast_grid_x_ = fast_data_blocks_;
      fast_smem_ = quantize_group_table_smem_bytes(d.num_groups);
      fast_threads_ = kBandMgThreads;
      p.tail_lines_per_block = layout::ceil_div(p.row_scale_tiles * (d.cols / 128) * 32, fast_grid_x_);
      fast_kernel_ = "mxq_quantize_bandmg" + kernel_suffix(d);
    }
    if (fast_ != FastRow::kNone) {
      MXQ_REQUIRE(fast_grid_x_ <= INT_MAX && d.batch <= 65535, MXQ_STATUS_INTERNAL_ERROR,
                  "quantize: the streaming kernel's grid does not fit");
      fast_fn_ = dev.kernel(fast_kernel_.c_str());
      if (fast_smem_ > 48 * 1024)
        check(driver().cuFuncSetAttribute(fast_fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fast_smem_),
              "quantize: dynamic shared memory of the band kernel");
    }
  }

  std::string name() const override { return fast_fn_ ? fast_kernel_ : kernel_; }
  std::string reason() const override {
    if (fast_ == FastRow::kFlat)
      return fmt::format(
          "kernel {}, {} data blocks ({} chunks of 8 elements per thread) and {} scale-padding blocks of {} threads, "
          "no shared memory; rowwise 1x32 blocks of a row-contiguous tensor (K % 128 == 0, {} scales): one "
          "streaming launch, every load of a thread in flight at once; at Execute, pointers not aligned for it "
          "(x 16 bytes, FP8 data 8, scales 4) fall back to {}",
          fast_kernel_, fast_data_blocks_, fast_cpt_, fast_grid_x_ - fast_data_blocks_, kQuantThreads,
          d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4 ? "swizzled, at most 16 MiB of input" : "LINEAR",
          kernel_);
    if (fast_ == FastRow::kBandMg)
      return fmt::format(
          "kernel {}, {} blocks of {} threads (64 data rows x 128 columns each), {} B of dynamic shared memory; "
          "rowwise 1x32 blocks, M-grouped (K % 128 == 0, <= {} groups): one streaming launch, a ninth warp of each "
          "block builds the group table in shared memory while the others quantize, then the block moves its scale "
          "rows to their groups' padded positions and zeroes the padding of the groups ending in it and its share "
          "of the tail; at Execute, pointers not aligned for it (x and its rows 16 bytes, FP8 data 8, scales 4) "
          "fall back to {}",
          fast_kernel_, fast_grid_x_, fast_threads_, fast_smem_, kBandMgMaxGroups, kernel_);
    if (fast_ == FastRow::kBand)
      return fmt::format(
          "kernel {}, {} x {} blocks of {} threads (64 rows x 128 columns each), {} B of static shared memory; "
          "rowwise 1x32 blocks (K % 128 == 0): one streaming launch, every load of a thread in flight at once, the "
          "band's scales written as 8-byte halves of the swizzled tile's lines; at Execute, pointers not aligned "
          "for it (x and its rows 16 bytes, FP8 data 8, scales 8) fall back to {}",
          fast_kernel_, fast_grid_x_, d_.batch, kQuantThreads, 64 * 4, kernel_);
    std::string why = needs_tiled(d_) ? "needs both axes of a tile (columnwise, both or 32x32 blocks): 128x128 tiles "
                                        "through shared memory"
                      : uses_ringrow(d_) ? "rowwise 1x32 blocks: 128x128 tiles through a shared-memory ring"
                                         : "rowwise 1x32 blocks: register-only 128x128 tiles";
    if (uses_ring(d_)) {
      why += ", persistent blocks, a two-stage cp.async ring loads the next tile during this one";
      if (dynamic_) why += ", tiles taken in order from a counter in the workspace (>= 6 tiles per block)";
    } else if (uses_ringrow(d_)) {
      why += fmt::format(", persistent blocks ({} per SM), a two-stage cp.async ring loads the next tile during this one",
                         per_sm_);
      if (dynamic_)
        why += grouped(d_) ? ", tiles taken in order from a counter in the workspace (>= 4 tiles per block)"
                           : ", tiles taken in order from a counter in the workspace";
      if (split_ > 0) why += fmt::format(", the last {} tiles as 64-row halves", split_);
      if (jit_all_) why += ", each ticket taken when its loads can be issued";
      else if (jit_ > 0) why += fmt::format(", the last {} tickets taken when their loads can be issued", jit_);
      if (row_tile_groups(d_)) why += ", each row tile's first and last group kept in shared memory";
    } else if (needs_tiled(d_) && persistent(d_)) why += ", persistent blocks prefetching their next tile";
    if (grouped(d_) && !needs_tiled(d_)) {
      why += ", data tiles only (group padding zeroed as whole 16-byte lines)";
      if (!uses_ringrow(d_))
        why += dynamic_ ? ", tiles taken in order from a counter in the workspace (>= 16 tiles per block)"
                      : ", static tile order (< 16 tiles per block)";
    }
    if (grouped(d_))
      why += uses_table(d_) ? ", persistent blocks, groups looked up in a device-built table (> 1024 groups)"
                            : ", persistent blocks, each builds the group table in shared memory (<= 1024 groups)";
    return fmt::format("kernel {}, {} tiles on {} blocks of {} threads, {} B dynamic shared memory; {}", kernel_,
                       tiles_, blocks_, kQuantThreads, smem_, why);
  }
  // [group table (more than kQuantInlineGroups groups)][tile counter (dynamic schedule)], 256-byte aligned.
  size_t table_bytes() const {
    return groups_ ? (GroupTableBuilder::workspace_bytes(d_.num_groups) + 255) / 256 * 256 : 0;
  }
  size_t workspace_bytes() const override { return table_bytes() + (dynamic_ ? kCounterBytes : 0); }
  size_t required_alignment(mxqArgSlot_t slot) const override {
    if (slot == MXQ_ARG_X || slot == MXQ_ARG_ACTIVATION) return in_size(d_.in_dtype);
    if (slot == MXQ_ARG_AMAX) return 4;
    if (slot == MXQ_ARG_GROUP_OFFSETS) return d_.offsets_dtype == MXQ_DTYPE_INT64 ? 8 : 4;
    return 1;
  }

  void run(const ExecArgs& args, void* workspace, size_t, mxqStream_t stream) const override {
    QuantizeParams p = base_;
    p.x = args.get(MXQ_ARG_X);
    p.row_data = args.as<uint8_t>(MXQ_ARG_ROWWISE_DATA);
    p.row_scales = args.as<uint8_t>(MXQ_ARG_ROWWISE_SCALES);
    p.col_data = args.as<uint8_t>(MXQ_ARG_COLWISE_DATA);
    p.col_scales = args.as<uint8_t>(MXQ_ARG_COLWISE_SCALES);
    p.act = d_.fusion == MXQ_FUSION_SWIGLU ? args.get(MXQ_ARG_ACTIVATION) : nullptr;
    p.amax = args.as<float>(MXQ_ARG_AMAX);
    MXQ_REQUIRE(p.x, MXQ_STATUS_BAD_PARAM_ARGUMENT, "quantize: X is required");
    MXQ_REQUIRE(!d_.rowwise() || (p.row_data && p.row_scales), MXQ_STATUS_BAD_PARAM_ARGUMENT,
                "quantize: rowwise data and scales are required");
    MXQ_REQUIRE(!d_.colwise() || (p.col_data && p.col_scales), MXQ_STATUS_BAD_PARAM_ARGUMENT,
                "quantize: columnwise data and scales are required");

    // 16-byte input path: every 8-element chunk starts 16-byte aligned (rows, batches and the SwiGLU
    // up half included). Otherwise the kernels read element by element.
    const int64_t es = static_cast<int64_t>(in_size(d_.in_dtype));
    bool vec = aligned16(p.x) && (d_.in_ld * es) % 16 == 0 && (d_.batch == 1 || (d_.in_batch_stride * es) % 16 == 0);
    if (d_.fusion == MXQ_FUSION_SWIGLU) vec = vec && (d_.cols * es) % 16 == 0;
    if (vec) p.flags |= kQuantVecIn;

    if (grouped(d_)) {
      const void* offsets = args.get(MXQ_ARG_GROUP_OFFSETS);
      MXQ_REQUIRE(offsets, MXQ_STATUS_BAD_PARAM_ARGUMENT, "quantize: group offsets are required with GROUPING_ROWS");
      if (groups_) {
        const GroupTableView t = groups_->enqueue(offsets, d_.offsets_dtype, d_.num_groups, d_.rows,
                                                  d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4, workspace, stream);
        p.ends = t.ends;
        p.row_base = t.row_base;
        p.col_base = t.col_base;
      } else {
        p.offsets = offsets;
      }
    }
    const uintptr_t scale_align = fast_ == FastRow::kBand && (p.flags & kQuantSwizzled) ? 7u : 3u;
    if (fast_fn_ && vec && (reinterpret_cast<uintptr_t>(p.row_data) & 7u) == 0 &&
        (reinterpret_cast<uintptr_t>(p.row_scales) & scale_align) == 0) {
      if (p.amax)
        check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p.amax), 0, sizeof(float),
                                       reinterpret_cast<CUstream>(stream)),
              "quantize: clearing amax");
      void* params[] = {&p};
      dev_->launch(fast_fn_, Dim3{static_cast<unsigned>(fast_grid_x_), static_cast<unsigned>(d_.batch), 1},
                   Dim3{static_cast<unsigned>(fast_threads_), 1, 1}, static_cast<size_t>(fast_smem_), stream, params,
                   fast_kernel_.c_str());
      return;
    }

    if (dynamic_) {
      // The tile counter starts from 0 on this stream for every launch.
      p.tile_counter = reinterpret_cast<unsigned long long*>(static_cast<uint8_t*>(workspace) + table_bytes());
      check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p.tile_counter), 0, sizeof(unsigned long long),
                                     reinterpret_cast<CUstream>(stream)),
            "quantize: clearing the tile counter");
    }
    // The kernels max-accumulate into amax; "overwritten" means it starts from +0 on this stream.
    if (p.amax)
      check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p.amax), 0, sizeof(float),
                                     reinterpret_cast<CUstream>(stream)),
            "quantize: clearing amax");
    void* params[] = {&p};
    dev_->launch(fn_, Dim3{static_cast<unsigned>(blocks_), 1, 1}, Dim3{static_cast<unsigned>(kQuantThreads), 1, 1},
                 static_cast<size_t>(smem_), stream, params, kernel_.c_str());
  }

 private:
  static int dynamic_smem(const QuantizeDesc& d) {
    const int table = grouped(d) ? quantize_group_table_smem_bytes(d.num_groups) : 0;
    const int rtg = row_tile_groups(d) ? quantize_row_tile_groups_smem_bytes(row_tiles(d)) : 0;
    return tile_smem(d) + table + rtg;
  }

  // Blocks of this kernel resident on the whole device (registers, shared memory, threads per SM).
  // mg_tiles > 0 (M-grouped ring plans): with fewer than kMgFewTilesPerBlock tiles per block at full
  // residency, 2 blocks per SM (docs/PERFORMANCE.md, "Twelfth round": 2048x4096 +7-8% with 8 and 128
  // groups; equal at 1.9 tiles per block, mixed at 2.6, -1 to -5% from 3.9 on).
  int64_t resident_blocks(Device& dev, int64_t mg_tiles = 0) const {
    const DriverApi& api = driver();
    int regs = 0, static_smem = 0;
    check(api.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn_), "quantize: kernel registers");
    check(api.cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn_), "quantize: static smem");
    CUdevice cud = 0;
    int sm_regs = 65536, sm_smem = 0, sm_threads = 2048;
    check(api.cuDeviceGet(&cud, dev.ordinal()), "quantize: cuDeviceGet");
    check(api.cuDeviceGetAttribute(&sm_regs, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, cud),
          "quantize: registers per SM");
    check(api.cuDeviceGetAttribute(&sm_smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, cud),
          "quantize: shared memory per SM");
    check(api.cuDeviceGetAttribute(&sm_threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, cud),
          "quantize: threads per SM");
    // Registers are allocated per warp in units of 256; each block also reserves 1 KiB of shared memory.
    const int64_t warp_regs = (static_cast<int64_t>(std::max(regs, 1)) * 32 + 255) / 256 * 256;
    const int64_t by_regs = sm_regs / (warp_regs * (kQuantThreads / 32));
    const int64_t by_smem = sm_smem / (static_smem + smem_ + 1024);
    const int64_t by_threads = sm_threads / kQuantThreads;
    int64_t per_sm = std::max<int64_t>(1, std::min({by_regs, by_smem, by_threads}));
    const int64_t sms = std::max(1, dev.sm_count());
    if (mg_tiles > 0 && per_sm > 2 && mg_tiles < kMgFewTilesPerBlock * per_sm * sms) per_sm = 2;
    return per_sm * sms;
  }

  QuantizeDesc d_;
  Device* dev_;
  std::string kernel_;
  CUfunction fn_;
  int smem_;
  int64_t tiles_ = 0;
  int64_t blocks_ = 0;
  int64_t per_sm_ = 0;  // persistent plans: blocks per SM at the grid's residency
  bool dynamic_ = false;
  int64_t split_ = 0;  // tiles handed out as 64-row halves (rowwise ring, counter order)
  int64_t jit_ = 0;       // last tickets taken just in time (rowwise ring, counter order; MXQ_QUANT_JIT)
  bool jit_all_ = false;  // ... and that is every ticket (the default)
  // The streaming kernel that takes the plan instead of the ring (fast_rowwise): its entry point, chunks
  // per thread (flat) and grid (x; y = batch); fast_fn_ is null when the plan does not take one.
  FastRow fast_ = FastRow::kNone;
  std::string fast_kernel_;
  CUfunction fast_fn_ = nullptr;
  int64_t fast_cpt_ = 0, fast_data_blocks_ = 0, fast_grid_x_ = 0;
  int fast_smem_ = 0;  // dynamic shared memory (bandmg: the inline group table)
  int fast_threads_ = kQuantThreads;
  static constexpr size_t kCounterBytes = 256;
  QuantizeParams base_;
  std::unique_ptr<GroupTableBuilder> groups_;
};

std::string common_limits(const QuantizeDesc& d, const DeviceInfo& dev) {
  if (grid_blocks(d) < 0)
    return fmt::format("{} tiles of 128x128 exceed the grid limit", layout::ceil_div(d.cols, kQuantTile) * row_tiles(d));
  const int table = grouped(d) ? quantize_group_table_smem_bytes(d.num_groups) : 0;
  const int smem = tile_smem(d) + table;
  if (smem > dev.smem_optin)
    return fmt::format("needs {} B of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

}  // namespace

void register_quantize_kernels(Registry& r) {
  const std::vector<mxqDataType_t> hp = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32};
  const std::vector<mxqDataType_t> fp8 = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};

  KernelEntry<QuantizeDesc> rowwise;
  rowwise.name = "generic.quantize.rowwise";
  rowwise.arch = ArchRange{90, kAnyNewer};
  rowwise.in_dtypes = hp;
  rowwise.out_dtypes = fp8;
  rowwise.variant = "rowwise 1x32 blocks: streaming launches without a loop up to 64 MiB (flat, 64-row bands), "
                    "a persistent cp.async ring above and for the other 16-bit plans, register tiles for fp32 and "
                    "SwiGLU";
  rowwise.priority = 10;
  rowwise.supports = [](const QuantizeDesc& d, const DeviceInfo& dev) -> std::string {
    if (needs_tiled(d)) return "handles rowwise 1x32 blocks only";
    return common_limits(d, dev);
  };
  rowwise.make = [](const QuantizeDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<QuantizeOp>(d, dev);
  };
  r.add(std::move(rowwise));

  KernelEntry<QuantizeDesc> tiled;
  tiled.name = "generic.quantize.tiled";
  tiled.arch = ArchRange{90, kAnyNewer};
  tiled.in_dtypes = hp;
  tiled.out_dtypes = fp8;
  tiled.variant = "128x128 tiles through shared memory (16-bit inputs without fusion: a two-stage cp.async "
                  "ring): columnwise (transposed or not), both from one read, 32x32 blocks";
  tiled.priority = 0;
  tiled.supports = [](const QuantizeDesc& d, const DeviceInfo& dev) -> std::string {
    if (!needs_tiled(d)) return "the rowwise kernel is preferred";
    return common_limits(d, dev);
  };
  tiled.make = [](const QuantizeDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<QuantizeOp>(d, dev);
  };
  r.add(std::move(tiled));
}

}  // namespace cuda
}  // namespace mxq
