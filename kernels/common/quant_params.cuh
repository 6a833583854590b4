// Parameters of the MXFP8 quantize kernels (kernels/generic/quantize_*.cu): one plain struct that the
// host launcher (src/cuda/op_quantize.cpp, compiled by the host compiler) fills and passes by value.
// It holds no device code so both sides include it. Every geometric quantity (tile counts, scale
// extents, strides) is resolved on the host from the plan and core/layout.h; the kernels only index.
//
// Work is cut into 128 x 128 tiles of the [rows, cols] input (a block handles one, or loops over
// several when persistent). A tile maps to exactly one 512-byte SWIZZLED_128x4 scale tile per
// orientation (128 scale rows x 4 scale columns), which is why 128 is fixed: the swizzled layout's
// padding is covered by the tile grid.
#pragma once

#include <cstdint>

namespace mxq {

struct QuantizeParams {
  const void* x;             // input [batch, rows, in_cols], row stride in_ld, batch stride in_bstride
  uint8_t* row_data;         // rowwise FP8 [batch, rows, cols]
  uint8_t* row_scales;
  uint8_t* col_data;         // columnwise FP8 [batch, cols, rows] (transposed) or [batch, rows, cols]
  uint8_t* col_scales;
  void* act;                 // SwiGLU activation output [batch, rows, cols] (input dtype) or null
  float* amax;               // global max |x| (zeroed by the launcher before the kernel) or null
  const void* offsets;       // grouped, inline lookup: the caller's end offsets [G] (int32/int64)
  const int64_t* ends;       // grouped, table lookup: clamped ends (common/group_table.h)
  const int64_t* row_base;   //   per-group first padded scale row (multiple of 128)
  const int64_t* col_base;   //   per-group first columnwise scale column
  unsigned long long* tile_counter;  // kQuantDynamicTiles: zeroed by the launcher (workspace)
  int64_t rows, cols, batch;
  int64_t in_ld, in_bstride;          // elements
  int64_t tiles_c;                    // ceil(cols / 128)
  int64_t tiles_r;                    // row tiles per batch entry; grouped: the padded-space bound
                                      // (rowwise LINEAR grouped: ceil(rows / 128))
  int64_t row_scale_tiles;            // swizzled rowwise scale tiles per column (scale rows / 128)
  int64_t col_scale_tiles;            // swizzled columnwise scale tiles per scale row (Cpad / 4)
  int64_t num_groups;
  // Rowwise ring in the counter order: tickets from split_from on are 64-row half tiles (quant_tick in
  // common/quant_tile.cuh); tiles_c * tiles_r * batch when none are.
  int64_t split_from;
  // Rowwise ring in the counter order: once a block's next ticket is at or past jit_from, it takes
  // each further ticket only when it can issue its loads (one barrier more per tile) instead of one
  // tile ahead, so the last tickets go to whichever block is free (quantize_ring). 0 (the default):
  // every ticket; INT64_MAX: none.
  int64_t jit_from;
  // Scale tensors. Swizzled: *_scale_ld is the padded column count (Cpad). LINEAR: the row stride.
  int64_t row_scale_ld, row_scale_bstride;
  int64_t col_scale_ld, col_scale_bstride;
  // M-grouped band kernel (quant_flat.cuh): 16-byte lines of the scale tensor's bound per block for
  // zeroing the tail past the groups' tiles (block b takes lines [b * n, (b + 1) * n) of the tail).
  int64_t tail_lines_per_block;
  int32_t mode;              // mxqScaleMode_t
  int32_t flags;             // QuantizeFlags
};

enum QuantizeFlags : int32_t {
  kQuantRowwise = 1 << 0,
  kQuantColwise = 1 << 1,
  kQuantTransposed = 1 << 2,   // columnwise data is [cols, rows]
  kQuantSwizzled = 1 << 3,     // both scale tensors SWIZZLED_128x4 (else LINEAR)
  kQuantBlock2d = 1 << 4,      // one scale per 32x32 block
  kQuantGrouped = 1 << 5,      // GROUPING_ROWS, batch 1
  kQuantGroupTable = 1 << 6,   // grouped with the device-built table (ends/row_base/col_base)
  kQuantOffsetsI64 = 1 << 7,   // inline lookup: offsets are int64
  kQuantVecIn = 1 << 8,        // every input chunk of 8 elements is 16-byte aligned
  kQuantDynamicTiles = 1 << 9,  // persistent rowwise blocks take tiles from *tile_counter, in order
  kQuantRowTileGroups = 1 << 10,  // M-grouped ring: first/last group of each row tile in shared memory
};

constexpr int kQuantTile = 128;     // tile rows = tile columns
constexpr int kQuantThreads = 256;  // threads per block (both kernels)
// Grouped plans run persistent blocks (a grid-stride loop over tiles). With at most this many groups
// each block builds its group table in shared memory from the caller's offsets (no extra launch);
// more groups use the device-built group table in global memory.
constexpr int64_t kQuantInlineGroups = 1024;

// Dynamic shared memory of an inline group table (common/quant_tile.cuh): per group a start row and
// a columnwise scale base (int64) and a first tile (int32, plus one entry for the total).
constexpr int quantize_group_table_smem_bytes(int64_t groups) {
  return groups > kQuantInlineGroups ? 0 : static_cast<int>((16 * groups + 4 * (groups + 1) + 15) / 16 * 16);
}

// M-grouped rowwise ring plans with the inline group table and at most kQuantRowTileGroupsMax row
// tiles also keep, after the group table, one 32-bit word per 128-row data tile: the first group of
// its rows (bits 0-15) and the last (bits 16-31). Each block fills it once; a tile then knows its
// groups without a search (measured: docs/PERFORMANCE.md, "Sixth session").
constexpr int64_t kQuantRowTileGroupsMax = 1024;
constexpr int quantize_row_tile_groups_smem_bytes(int64_t row_tiles) {
  return static_cast<int>((4 * row_tiles + 15) / 16 * 16);
}

// Dynamic shared memory of the tiled kernel for an input element size: the input tile, the FP8
// output tile (row pitch 144 keeps 16-byte transposed stores conflict-free) and two scale tiles.
constexpr int kQuantOutPitch = 144;
constexpr int quantize_tiled_smem_bytes(int in_elem_bytes) {
  return kQuantTile * kQuantTile * in_elem_bytes + kQuantTile * kQuantOutPitch + 2 * 512 + 32;
}

// Dynamic shared memory of the ring kernel (16-bit inputs, common/quant_ring.cuh): a two-stage ring of
// input tiles, two alternating rowwise scale tiles and a columnwise one, and the FP8 output tile.
constexpr int kQuantRingStages = 2;
constexpr int quantize_ring_smem_bytes() {
  return kQuantRingStages * kQuantTile * kQuantTile * 2 + 3 * 512 + kQuantTile * kQuantOutPitch;
}

// The rowwise-only ring kernel (mxq_quantize_ringrow_*): the two input stages and two alternating
// rowwise scale tiles.
constexpr int quantize_ringrow_smem_bytes() { return kQuantRingStages * kQuantTile * kQuantTile * 2 + 2 * 512; }

}  // namespace mxq
