// Quantize and Dequantize plans: attribute tables, finalize-time validation, argument rules.
#include "core/plan_ops.h"

namespace mxq {

// ---- Quantize ----------------------------------------------------------------------------------
const std::vector<AttrDef<QuantizeDesc>>& PlanOps<QuantizeDesc>::attrs() {
  using D = QuantizeDesc;
  static const std::vector<AttrDef<D>> t = {
      MXQ_ATTR_DTYPE(D, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, in_dtype, MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32),
      MXQ_ATTR_DTYPE(D, MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE, out_dtype, MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_SCALE_MODE, scale_mode, mxqScaleMode_t, MXQ_SCALE_MODE_RCEIL,
                    MXQ_SCALE_MODE_FLOOR, MXQ_SCALE_MODE_CEIL, MXQ_SCALE_MODE_EVEN),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_NONFINITE_POLICY, nonfinite, mxqNonfinitePolicy_t,
                    MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_DIRECTION, direction, int32_t, MXQ_QUANTIZE_ROWWISE, MXQ_QUANTIZE_COLUMNWISE,
                    MXQ_QUANTIZE_BOTH),
      MXQ_ATTR_BOOL(D, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, colwise_transposed),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, scale_layout, mxqScaleLayout_t,
                    MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR),
      MXQ_ATTR_BOOL(D, MXQ_QUANTIZE_ATTR_BLOCK_2D, block_2d),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_ROWS, rows, 1),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_COLS, cols, 1),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_BATCH, batch, 1),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_INPUT_LD, in_ld, 1),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE, in_batch_stride, 1),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_GROUPING, grouping, mxqGrouping_t, MXQ_GROUPING_NONE, MXQ_GROUPING_ROWS),
      MXQ_ATTR_DIM(D, MXQ_QUANTIZE_ATTR_NUM_GROUPS, num_groups, 1),
      MXQ_ATTR_DTYPE(D, MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, offsets_dtype, MXQ_DTYPE_INT32, MXQ_DTYPE_INT64),
      MXQ_ATTR_ENUM(D, MXQ_QUANTIZE_ATTR_FUSION, fusion, mxqFusion_t, MXQ_FUSION_NONE, MXQ_FUSION_SWIGLU),
  };
  return t;
}

void PlanOps<QuantizeDesc>::finalize(QuantizeDesc& d, const PlanT<QuantizeDesc>& p) {
  MXQ_REQUIRE(p.was_set(MXQ_QUANTIZE_ATTR_ROWS) && p.was_set(MXQ_QUANTIZE_ATTR_COLS), MXQ_STATUS_BAD_PARAM_SHAPE,
              "MXQ_QUANTIZE_ATTR_ROWS and MXQ_QUANTIZE_ATTR_COLS are required");
  const int64_t in_cols = checked_mul(d.cols, d.fusion == MXQ_FUSION_SWIGLU ? 2 : 1, "input columns");
  if (!p.was_set(MXQ_QUANTIZE_ATTR_INPUT_LD)) d.in_ld = in_cols;
  MXQ_REQUIRE(d.in_ld >= in_cols, MXQ_STATUS_BAD_PARAM_SHAPE, "input row stride {} is smaller than the {} input columns",
              d.in_ld, in_cols);
  const int64_t batch_span = checked_mul(d.rows, d.in_ld, "rows x input row stride");
  if (!p.was_set(MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE)) d.in_batch_stride = batch_span;
  MXQ_REQUIRE(d.batch == 1 || d.in_batch_stride >= (d.rows - 1) * d.in_ld + in_cols, MXQ_STATUS_BAD_PARAM_SHAPE,
              "input batch stride {} overlaps the previous batch ({} rows of stride {})", d.in_batch_stride, d.rows,
              d.in_ld);
  // Every byte count of every slot must fit: input extent and outputs (scales padded).
  checked_mul(checked_mul(d.batch, d.in_batch_stride, "input extent"), 4, "input bytes");
  checked_mul(checked_mul(d.batch, layout::swz_rows(d.rows) + 128, "rows"), layout::swz_cols(d.cols) + 128, "output bytes");
  if (d.grouping == MXQ_GROUPING_ROWS) {
    MXQ_REQUIRE(p.was_set(MXQ_QUANTIZE_ATTR_NUM_GROUPS), MXQ_STATUS_BAD_PARAM_SHAPE,
                "MXQ_QUANTIZE_ATTR_NUM_GROUPS is required with MXQ_GROUPING_ROWS");
    MXQ_REQUIRE(d.batch == 1, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
                "row grouping needs batch 1 (is {}); groups already split the rows", d.batch);
    MXQ_REQUIRE(!d.block_2d, MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
                "32x32 blocks are for weights; they cannot be combined with row grouping");
    MXQ_REQUIRE(d.num_groups <= (int64_t(1) << 24), MXQ_STATUS_BAD_PARAM_SHAPE, "{} groups exceed the limit of 2^24",
                d.num_groups);
  } else {
    d.num_groups = 0;
  }
}

std::vector<SlotRule> PlanOps<QuantizeDesc>::slots(const QuantizeDesc& d) {
  const size_t in = dtype_size(d.in_dtype);
  std::vector<SlotRule> r = {{MXQ_ARG_X, true, in, "X (input)"}, {MXQ_ARG_AMAX, false, 4, "AMAX (fp32 output)"}};
  if (d.rowwise()) {
    r.push_back({MXQ_ARG_ROWWISE_DATA, true, 1, "rowwise FP8 data"});
    r.push_back({MXQ_ARG_ROWWISE_SCALES, true, 1, "rowwise scales"});
  }
  if (d.colwise()) {
    r.push_back({MXQ_ARG_COLWISE_DATA, true, 1, "columnwise FP8 data"});
    r.push_back({MXQ_ARG_COLWISE_SCALES, true, 1, "columnwise scales"});
  }
  if (d.grouping == MXQ_GROUPING_ROWS)
    r.push_back({MXQ_ARG_GROUP_OFFSETS, true, dtype_size(d.offsets_dtype), "group end offsets"});
  if (d.fusion == MXQ_FUSION_SWIGLU) r.push_back({MXQ_ARG_ACTIVATION, false, in, "SwiGLU activation output"});
  return r;
}

// ---- Dequantize --------------------------------------------------------------------------------
const std::vector<AttrDef<DequantizeDesc>>& PlanOps<DequantizeDesc>::attrs() {
  using D = DequantizeDesc;
  static const std::vector<AttrDef<D>> t = {
      MXQ_ATTR_DTYPE(D, MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE, in_dtype, MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2),
      MXQ_ATTR_DTYPE(D, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, out_dtype, MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32),
      MXQ_ATTR_ENUM(D, MXQ_DEQUANTIZE_ATTR_DIRECTION, direction, int32_t, MXQ_QUANTIZE_ROWWISE, MXQ_QUANTIZE_COLUMNWISE),
      MXQ_ATTR_BOOL(D, MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, colwise_transposed),
      MXQ_ATTR_ENUM(D, MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT, scale_layout, mxqScaleLayout_t,
                    MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR),
      MXQ_ATTR_DIM(D, MXQ_DEQUANTIZE_ATTR_ROWS, rows, 1),
      MXQ_ATTR_DIM(D, MXQ_DEQUANTIZE_ATTR_COLS, cols, 1),
      MXQ_ATTR_DIM(D, MXQ_DEQUANTIZE_ATTR_BATCH, batch, 1),
      MXQ_ATTR_DIM(D, MXQ_DEQUANTIZE_ATTR_OUTPUT_LD, out_ld, 1),
      MXQ_ATTR_ENUM(D, MXQ_DEQUANTIZE_ATTR_GROUPING, grouping, mxqGrouping_t, MXQ_GROUPING_NONE, MXQ_GROUPING_ROWS),
      MXQ_ATTR_DIM(D, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, num_groups, 1),
      MXQ_ATTR_DTYPE(D, MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, offsets_dtype, MXQ_DTYPE_INT32, MXQ_DTYPE_INT64),
  };
  return t;
}

void PlanOps<DequantizeDesc>::finalize(DequantizeDesc& d, const PlanT<DequantizeDesc>& p) {
  MXQ_REQUIRE(p.was_set(MXQ_DEQUANTIZE_ATTR_ROWS) && p.was_set(MXQ_DEQUANTIZE_ATTR_COLS), MXQ_STATUS_BAD_PARAM_SHAPE,
              "MXQ_DEQUANTIZE_ATTR_ROWS and MXQ_DEQUANTIZE_ATTR_COLS are required");
  if (!p.was_set(MXQ_DEQUANTIZE_ATTR_OUTPUT_LD)) d.out_ld = d.cols;
  MXQ_REQUIRE(d.out_ld >= d.cols, MXQ_STATUS_BAD_PARAM_SHAPE, "output row stride {} is smaller than {} columns", d.out_ld,
              d.cols);
  checked_mul(checked_mul(checked_mul(d.batch, d.rows, "batch x rows"), d.out_ld, "output extent"), 4, "output bytes");
  checked_mul(checked_mul(d.batch, layout::swz_rows(d.rows) + 128, "rows"), layout::swz_cols(d.cols) + 128, "input bytes");
  if (d.grouping == MXQ_GROUPING_ROWS) {
    MXQ_REQUIRE(p.was_set(MXQ_DEQUANTIZE_ATTR_NUM_GROUPS), MXQ_STATUS_BAD_PARAM_SHAPE,
                "MXQ_DEQUANTIZE_ATTR_NUM_GROUPS is required with MXQ_GROUPING_ROWS");
    MXQ_REQUIRE(d.batch == 1, MXQ_STATUS_NOT_SUPPORTED_COMBINATION, "row grouping needs batch 1 (is {})", d.batch);
    MXQ_REQUIRE(d.num_groups <= (int64_t(1) << 24), MXQ_STATUS_BAD_PARAM_SHAPE, "{} groups exceed the limit of 2^24",
                d.num_groups);
  } else {
    d.num_groups = 0;
  }
}

std::vector<SlotRule> PlanOps<DequantizeDesc>::slots(const DequantizeDesc& d) {
  std::vector<SlotRule> r = {{MXQ_ARG_X, true, dtype_size(d.out_dtype), "X (output)"}};
  if (d.direction == MXQ_QUANTIZE_ROWWISE) {
    r.push_back({MXQ_ARG_ROWWISE_DATA, true, 1, "rowwise FP8 data"});
    r.push_back({MXQ_ARG_ROWWISE_SCALES, true, 1, "rowwise scales"});
  } else {
    r.push_back({MXQ_ARG_COLWISE_DATA, true, 1, "columnwise FP8 data"});
    r.push_back({MXQ_ARG_COLWISE_SCALES, true, 1, "columnwise scales"});
  }
  if (d.grouping == MXQ_GROUPING_ROWS)
    r.push_back({MXQ_ARG_GROUP_OFFSETS, true, dtype_size(d.offsets_dtype), "group end offsets"});
  return r;
}

}  // namespace mxq
