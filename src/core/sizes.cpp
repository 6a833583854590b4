// Slot byte sizes of quantize / dequantize plans (see sizes.h). Every extent comes from layout.h;
// this file only decides which extent a slot uses and guards the products against overflow.
#include "core/sizes.h"


#include "core/error.h"
#include "core/layout.h"

namespace mxq {

namespace {

int64_t mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  MXQ_REQUIRE(a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, &r), MXQ_STATUS_BAD_PARAM_SHAPE,
              "{} overflows: {} x {}", what, a, b);
  return r;
}

size_t to_size(int64_t v) {
  static_assert(sizeof(size_t) >= sizeof(int64_t), "size_t narrower than int64_t");
  return static_cast<size_t>(v);
}

size_t elem_bytes(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_FP32:
    case MXQ_DTYPE_INT32:
      return 4;
    case MXQ_DTYPE_FP16:
    case MXQ_DTYPE_BF16:
      return 2;
    case MXQ_DTYPE_INT64:
      return 8;
    default:
      return 1;
  }
}

int64_t scale_tensor_bytes(const ScaleExtent& e, int64_t batch) {
  return mul(batch, mul(e.rows, e.cols, "scale tensor bytes"), "batched scale tensor bytes");
}

}  // namespace

ScaleExtent rowwise_scale_extent(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t grouping,
                                 int64_t num_groups) {
  const int64_t scols = layout::scale_cols(cols);
  if (!swizzled) return {rows, scols};  // LINEAR keeps scale row r for data row r, grouped or not
  if (grouping == MXQ_GROUPING_ROWS) return {layout::mgroup_scale_rows_bound(rows, num_groups), layout::swz_cols(scols)};
  return {layout::swz_rows(rows), layout::swz_cols(scols)};
}

ScaleExtent colwise_scale_extent(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t grouping,
                                 int64_t num_groups) {
  // The scale tensor is [cols, row blocks]: scale row = a column of X, scale column = a 32-row block.
  const int64_t srows = swizzled ? layout::swz_rows(cols) : cols;
  if (grouping == MXQ_GROUPING_ROWS) return {srows, layout::kgroup_scale_cols_bound(swizzled, rows, num_groups)};
  const int64_t scols = layout::scale_cols(rows);
  return {srows, swizzled ? layout::swz_cols(scols) : scols};
}

size_t quantize_output_bytes(const QuantizeDesc& d, mxqArgSlot_t slot) {
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const int64_t elems = mul(d.batch, mul(d.rows, d.cols, "rows x cols"), "batch x rows x cols");
  switch (slot) {
    case MXQ_ARG_ROWWISE_DATA:
      return d.rowwise() ? to_size(elems) : 0;
    case MXQ_ARG_COLWISE_DATA:
      return d.colwise() ? to_size(elems) : 0;
    case MXQ_ARG_ROWWISE_SCALES:
      if (!d.rowwise()) return 0;
      return to_size(scale_tensor_bytes(rowwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups), d.batch));
    case MXQ_ARG_COLWISE_SCALES:
      if (!d.colwise()) return 0;
      return to_size(scale_tensor_bytes(colwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups), d.batch));
    case MXQ_ARG_AMAX:
      return sizeof(float);
    case MXQ_ARG_ACTIVATION:
      if (d.fusion != MXQ_FUSION_SWIGLU) return 0;
      return to_size(mul(elems, static_cast<int64_t>(elem_bytes(d.in_dtype)), "activation bytes"));
    default:
      return 0;
  }
}

size_t dequantize_input_bytes(const DequantizeDesc& d, mxqArgSlot_t slot) {
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const bool row = d.direction == MXQ_QUANTIZE_ROWWISE;
  const int64_t elems = mul(d.batch, mul(d.rows, d.cols, "rows x cols"), "batch x rows x cols");
  switch (slot) {
    case MXQ_ARG_ROWWISE_DATA:
      return row ? to_size(elems) : 0;
    case MXQ_ARG_COLWISE_DATA:
      return row ? 0 : to_size(elems);
    case MXQ_ARG_ROWWISE_SCALES:
      if (!row) return 0;
      return to_size(scale_tensor_bytes(rowwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups), d.batch));
    case MXQ_ARG_COLWISE_SCALES:
      if (row) return 0;
      return to_size(scale_tensor_bytes(colwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups), d.batch));
    case MXQ_ARG_GROUP_OFFSETS:
      if (d.grouping != MXQ_GROUPING_ROWS) return 0;
      return to_size(mul(d.num_groups, static_cast<int64_t>(elem_bytes(d.offsets_dtype)), "group offsets bytes"));
    case MXQ_ARG_X: {
      const int64_t last_row = mul(d.batch, d.rows, "batch x rows") - 1;
      const int64_t extent = mul(last_row, d.out_ld, "output extent") + d.cols;
      return to_size(mul(extent, static_cast<int64_t>(elem_bytes(d.out_dtype)), "output bytes"));
    }
    default:
      return 0;
  }
}

}  // namespace mxq
