// Parameters of the dequantize kernels (kernels/generic/dequantize.cu), a plain struct that crosses
// from the host launcher (src/cuda/op_dequantize.cpp) to the device by value. Every geometric
// quantity is resolved on the host from the plan (scale extents, strides, padding) so the kernels
// only index; the scale-offset formula itself comes from core/layout.h on both sides.
#pragma once

#include <cstdint>

namespace mxq {

struct DequantizeParams {
  const uint8_t* data;        // FP8 [batch, rows, cols], or [batch, cols, rows] when transposed
  const uint8_t* scales;      // UE8M0, per batch entry scale_batch_stride bytes apart
  void* out;                  // X [batch, rows, cols], row stride out_ld elements, batch stride rows*out_ld
  const int64_t* group_ends;  // group table (common/group_table.h) or null when not grouped
  const int64_t* group_base;  // row_base (rowwise) or col_base (columnwise) of the table
  int64_t num_groups;
  int64_t rows, cols, batch;
  int64_t out_ld;
  // Scale tensor geometry: "scale rows" are rows (rowwise) or cols (columnwise); "scale columns"
  // are the 32-blocks. Swizzled: padded column count (the layout's Cpad). LINEAR: row stride.
  int64_t scale_cols_extent;
  int64_t scale_batch_stride;
  int32_t swizzled;
  int32_t columnwise;   // direct kernel: 0 rowwise (1x32 blocks), 1 columnwise not transposed (32x1)
  int32_t vec_in;       // every data row starts 16-byte aligned (base aligned, row bytes % 16 == 0)
  int32_t vec_out;      // every output row starts 16-byte aligned
};

// Tile of the transposed kernel: 64 data columns (R, contiguous in the FP8 input) by 128 data
// rows (K), 256 threads. Launchers need these to size the grid.
constexpr int kDequantThreads = 256;
constexpr int kDequantTileR = 64;
constexpr int kDequantTileK = 128;

}  // namespace mxq
