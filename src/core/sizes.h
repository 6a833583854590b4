// Byte sizes of every execution-argument slot of the quantize and dequantize plans. The C API
// (mxqQuantizePlanGetOutputSize), the CPU reference and the CUDA kernels all size their buffers
// from these two functions, which in turn take every extent from core/layout.h, so an allocation
// and the bytes a backend writes cannot disagree. docs/LAYOUTS.md explains each formula.
#pragma once

#include <cstddef>

#include "core/desc.h"

namespace mxq {

// Bytes of slot `slot` of a finalized quantize plan that Execute writes (or may write):
//   ROWWISE_DATA / COLWISE_DATA   batch * rows * cols (one byte per FP8 element)
//   ROWWISE_SCALES / COLWISE_SCALES  the whole scale tensor including swizzle padding and, with
//                                 GROUPING_ROWS, the per-group padding upper bound
//   AMAX 4 (fp32), ACTIVATION batch * rows * cols * sizeof(input dtype) with FUSION_SWIGLU.
// 0 for a slot the plan does not write (inputs included). Throws Error(BAD_PARAM_SHAPE) on
// overflow of size_t / int64_t.
size_t quantize_output_bytes(const QuantizeDesc& d, mxqArgSlot_t slot);

// Bytes of slot `slot` of a finalized dequantize plan:
//   ROWWISE_* / COLWISE_* (the orientation it reads)  as quantize_output_bytes for the same shape
//   GROUP_OFFSETS  num_groups * 4 (INT32) or * 8 (INT64)
//   X              the extent written: ((batch * rows - 1) * out_ld + cols) * sizeof(output dtype)
// 0 for a slot the plan does not use. Throws Error(BAD_PARAM_SHAPE) on overflow.
size_t dequantize_input_bytes(const DequantizeDesc& d, mxqArgSlot_t slot);

// Allocated extent of one batch entry of a scale tensor: `rows` scale rows of `cols` bytes each.
// Swizzled: rows is the padded row count (round_up(R, 128), or the per-group padding bound) and cols
// the Cpad of layout::swizzled_offset. LINEAR: cols is the row stride (the scale-column count, or
// the K-grouped bound). Batch entry l starts at byte l * rows * cols.
struct ScaleExtent {
  int64_t rows = 0;
  int64_t cols = 0;
};
// Rowwise scales of X [rows, cols]: scale row r, scale column c = k / 32.
ScaleExtent rowwise_scale_extent(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t grouping,
                                 int64_t num_groups);
// Columnwise scales of X [rows, cols]: scale row k (a column of X), scale column = row block.
ScaleExtent colwise_scale_extent(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t grouping,
                                 int64_t num_groups);

}  // namespace mxq
