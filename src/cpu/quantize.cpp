// CPU reference for quantize, dequantize, standalone scale swizzle and group-offset validation: the
// oracle the GPU kernels must match byte for byte (docs/NUMERICS.md, docs/LAYOUTS.md).
//
// Shape of the code: every quantize variant is one loop over "slabs" — runs of at most 32 rows that
// share their 32-row blocks (one batch entry, one row group, one block of rows inside the group).
// A slab is read once into fp32 (after the fused SwiGLU, if any); its rowwise scales, columnwise
// scales and 32x32 tiles are all computed from that buffer, so the orientations, the grouping and
// the 2D blocks cannot disagree about which rows form a block. Scale positions come from one small
// addressing type built on core/layout.h and core/sizes.h, shared with dequantize.
//
// Output buffers are cleared first, so every byte the public size query promises is defined:
// swizzle and group padding, and the data of rows past the last group offset, read as 0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "core/sizes.h"
#include "cpu/reference.h"

namespace mxq {
namespace cpu {

namespace {

// ---- high-precision element access -------------------------------------------------------------

float load_hp(const void* base, mxqDataType_t t, int64_t idx) {
  switch (t) {
    case MXQ_DTYPE_FP32:
      return static_cast<const float*>(base)[idx];
    case MXQ_DTYPE_BF16:
      return bf16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    case MXQ_DTYPE_FP16:
      return f16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    default:
      fail(MXQ_STATUS_NOT_SUPPORTED_DTYPE, "data type {} is not bf16, fp16 or fp32", static_cast<int>(t));
  }
}

// RNE to the type; any NaN is stored as the type's canonical NaN (what CUDA's cvt produces).
void store_hp(void* base, mxqDataType_t t, int64_t idx, float v) {
  switch (t) {
    case MXQ_DTYPE_FP32: {
      uint32_t u = 0x7FFF'FFFFu;
      if (!std::isnan(v)) std::memcpy(&u, &v, 4);
      std::memcpy(static_cast<uint8_t*>(base) + 4 * idx, &u, 4);
      return;
    }
    case MXQ_DTYPE_BF16:
      static_cast<uint16_t*>(base)[idx] = f32_to_bf16_rne(v);
      return;
    case MXQ_DTYPE_FP16:
      static_cast<uint16_t*>(base)[idx] = f32_to_f16_rne(v);
      return;
    default:
      fail(MXQ_STATUS_NOT_SUPPORTED_DTYPE, "data type {} is not bf16, fp16 or fp32", static_cast<int>(t));
  }
}

// The value a store_hp / load_hp round trip gives: what the SwiGLU fusion quantizes.
float round_to_hp(mxqDataType_t t, float v) {
  if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN();
  if (t == MXQ_DTYPE_BF16) return bf16_to_f32(f32_to_bf16_rne(v));
  if (t == MXQ_DTYPE_FP16) return f16_to_f32(f32_to_f16_rne(v));
  return v;
}

// Scale value 2^(E-127) that dequantize multiplies by; E = 0xFF is NaN.
float scale_value(uint8_t e) {
  uint32_t u = e == 0xFF ? 0x7FFF'FFFFu : e == 0 ? 0x0040'0000u : uint32_t(e) << 23;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- block maximum under a non-finite policy ---------------------------------------------------

struct BlockMax {
  float amax = 0.0f;       // max |x| over the non-NaN elements (Inf included)
  bool nonfinite = false;  // any NaN or Inf

  void add(float v) {
    if (!std::isfinite(v)) nonfinite = true;
    const float a = std::fabs(v);
    if (a > amax) amax = a;  // false for NaN: TE_COMPATIBLE ignores NaN in the max
  }
  uint8_t exponent(const QuantizeDesc& d) const {
    if (d.nonfinite == MXQ_NONFINITE_PROPAGATE && nonfinite) return 0xFF;
    return scale_exponent(amax, d.out_dtype, d.scale_mode);
  }
};

uint8_t encode(float y, uint8_t e, mxqDataType_t fp8) {
  return f32_to_fp8_satfinite(y * scale_inverse(e), fp8);  // one RN fp32 multiply, then the cast
}

// ---- row segments: where 32-row blocks start ---------------------------------------------------
//
// Without grouping there is one segment [0, rows). With GROUPING_ROWS, group g is the segment
// [o_{g-1}, o_g); rows at or past the last offset belong to no segment and are not quantized.
struct Segment {
  int64_t begin = 0, end = 0;
  int64_t mgroup_base = 0;  // first scale row of the group (rowwise, swizzled)
  int64_t kgroup_base = 0;  // first scale column of the group (columnwise)
};

struct RowSegments {
  std::vector<Segment> segs;
  int64_t covered = 0;  // rows [0, covered) are quantized

  // Index of the segment holding row r (r < covered). Empty segments are never returned.
  int64_t find(int64_t r) const {
    auto it = std::upper_bound(segs.begin(), segs.end(), r, [](int64_t v, const Segment& s) { return v < s.end; });
    return it - segs.begin();
  }
};

RowSegments make_segments(int64_t rows, mxqGrouping_t grouping, int64_t groups, mxqDataType_t offsets_dtype,
                          const void* offsets, bool swizzled) {
  RowSegments rs;
  if (grouping != MXQ_GROUPING_ROWS) {
    rs.segs.push_back(Segment{0, rows, 0, 0});
    rs.covered = rows;
    return rs;
  }
  const std::vector<int64_t> ends = read_group_offsets(offsets, offsets_dtype, groups, rows);
  int64_t begin = 0, mbase = 0, kbase = 0;
  for (int64_t end : ends) {
    rs.segs.push_back(Segment{begin, end, mbase, kbase});
    mbase += layout::mgroup_row_pad(end - begin);
    kbase += layout::kgroup_col_pad(swizzled, end - begin);
    begin = end;
  }
  rs.covered = begin;
  return rs;
}

// ---- scale addressing (the one place a scale's byte offset is formed) ----------------------------
struct ScaleAddress {
  bool swizzled = false;
  bool grouped = false;
  ScaleExtent ext;

  int64_t at(int64_t l, int64_t srow, int64_t scol) const {
    const int64_t base = l * ext.rows * ext.cols;
    return base + (swizzled ? layout::swizzled_offset(srow, scol, ext.cols) : srow * ext.cols + scol);
  }
  // Rowwise: data row r of segment s, scale column c = k / 32. LINEAR keeps row r even when grouped.
  int64_t rowwise(int64_t l, const Segment& s, int64_t r, int64_t c) const {
    const int64_t srow = (grouped && swizzled) ? s.mgroup_base + (r - s.begin) : r;
    return at(l, srow, c);
  }
  // Columnwise: column k of X, row block rb counted from the segment start.
  int64_t colwise(int64_t l, const Segment& s, int64_t k, int64_t rb) const {
    return at(l, k, s.kgroup_base + rb);
  }
};

ScaleAddress rowwise_address(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t g, int64_t groups) {
  return ScaleAddress{swizzled, g == MXQ_GROUPING_ROWS, rowwise_scale_extent(swizzled, rows, cols, g, groups)};
}
ScaleAddress colwise_address(bool swizzled, int64_t rows, int64_t cols, mxqGrouping_t g, int64_t groups) {
  return ScaleAddress{swizzled, g == MXQ_GROUPING_ROWS, colwise_scale_extent(swizzled, rows, cols, g, groups)};
}

template <typename T>
T* required(const ExecArgs& a, mxqArgSlot_t slot, const char* what) {
  T* p = a.as<T>(slot);
  MXQ_REQUIRE(p != nullptr, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "{} (slot {}) is NULL", what, static_cast<int>(slot));
  return p;
}

void check_fp8(mxqDataType_t t) {
  MXQ_REQUIRE(t == MXQ_DTYPE_E4M3 || t == MXQ_DTYPE_E5M2, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "FP8 type must be E4M3 or E5M2 (is {})", static_cast<int>(t));
}
void check_hp(mxqDataType_t t) {
  MXQ_REQUIRE(t == MXQ_DTYPE_BF16 || t == MXQ_DTYPE_FP16 || t == MXQ_DTYPE_FP32, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "high-precision type must be BF16, FP16 or FP32 (is {})", static_cast<int>(t));
}
void check_shape(int64_t batch, int64_t rows, int64_t cols, mxqGrouping_t grouping, int64_t groups) {
  MXQ_REQUIRE(batch >= 1 && rows >= 1 && cols >= 1, MXQ_STATUS_BAD_PARAM_SHAPE,
              "shape [{}, {}, {}] has a dimension < 1", batch, rows, cols);
  if (grouping == MXQ_GROUPING_ROWS) {
    MXQ_REQUIRE(batch == 1, MXQ_STATUS_NOT_SUPPORTED_COMBINATION, "row grouping needs batch 1 (is {})", batch);
    MXQ_REQUIRE(groups >= 1, MXQ_STATUS_BAD_PARAM_SHAPE, "row grouping needs at least one group (is {})", groups);
  }
}

}  // namespace

// ---- group offsets -----------------------------------------------------------------------------

std::vector<int64_t> read_group_offsets(const void* p, mxqDataType_t dtype, int64_t groups, int64_t total) {
  MXQ_REQUIRE(p != nullptr, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "group offsets pointer is NULL");
  MXQ_REQUIRE(dtype == MXQ_DTYPE_INT32 || dtype == MXQ_DTYPE_INT64, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
              "group offsets must be INT32 or INT64 (data type {})", static_cast<int>(dtype));
  MXQ_REQUIRE(groups >= 1, MXQ_STATUS_BAD_PARAM_SHAPE, "number of groups must be >= 1 (is {})", groups);
  std::vector<int64_t> out(static_cast<size_t>(groups));
  int64_t prev = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t v = dtype == MXQ_DTYPE_INT32 ? static_cast<const int32_t*>(p)[g] : static_cast<const int64_t*>(p)[g];
    MXQ_REQUIRE(v >= 0, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "group end offset [{}] = {} is negative", g, v);
    MXQ_REQUIRE(v >= prev, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS,
                "group end offsets decrease: offset [{}] = {} < offset [{}] = {}", g, v, g - 1, prev);
    MXQ_REQUIRE(v <= total, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS,
                "group end offset [{}] = {} exceeds the {} rows of the tensor", g, v, total);
    out[static_cast<size_t>(g)] = v;
    prev = v;
  }
  return out;
}

// ---- quantize ----------------------------------------------------------------------------------

void quantize(const QuantizeDesc& d, const ExecArgs& a) {
  check_hp(d.in_dtype);
  check_fp8(d.out_dtype);
  check_shape(d.batch, d.rows, d.cols, d.grouping, d.num_groups);
  MXQ_REQUIRE(d.rowwise() || d.colwise(), MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "direction {} selects no output",
              d.direction);
  MXQ_REQUIRE(d.in_ld >= d.in_cols(), MXQ_STATUS_BAD_PARAM_SHAPE, "input row stride {} < {} input columns", d.in_ld,
              d.in_cols());
  MXQ_REQUIRE(!(d.block_2d && d.grouping == MXQ_GROUPING_ROWS), MXQ_STATUS_NOT_SUPPORTED_COMBINATION,
              "32x32 blocks cannot be combined with row grouping");

  const int64_t R = d.rows, K = d.cols, L = d.batch;
  const int64_t C = layout::scale_cols(K);
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const bool swiglu = d.fusion == MXQ_FUSION_SWIGLU;

  const void* x = required<const void>(a, MXQ_ARG_X, "input X");
  uint8_t* row_data = nullptr;
  uint8_t* row_scales = nullptr;
  uint8_t* col_data = nullptr;
  uint8_t* col_scales = nullptr;
  if (d.rowwise()) {
    row_data = required<uint8_t>(a, MXQ_ARG_ROWWISE_DATA, "rowwise data");
    row_scales = required<uint8_t>(a, MXQ_ARG_ROWWISE_SCALES, "rowwise scales");
  }
  if (d.colwise()) {
    col_data = required<uint8_t>(a, MXQ_ARG_COLWISE_DATA, "columnwise data");
    col_scales = required<uint8_t>(a, MXQ_ARG_COLWISE_SCALES, "columnwise scales");
  }
  float* amax_out = a.as<float>(MXQ_ARG_AMAX);
  void* activation = swiglu ? a.get(MXQ_ARG_ACTIVATION) : nullptr;

  // Validate data-dependent input before writing anything.
  const RowSegments rs = make_segments(R, d.grouping, d.num_groups, d.offsets_dtype,
                                       d.grouping == MXQ_GROUPING_ROWS ? a.get(MXQ_ARG_GROUP_OFFSETS) : nullptr, swz);
  const ScaleAddress row_addr = rowwise_address(swz, R, K, d.grouping, d.num_groups);
  const ScaleAddress col_addr = colwise_address(swz, R, K, d.grouping, d.num_groups);

  for (mxqArgSlot_t s : {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA, MXQ_ARG_COLWISE_SCALES,
                         MXQ_ARG_ACTIVATION}) {
    void* p = a.get(s);
    if (p != nullptr && (s != MXQ_ARG_ACTIVATION || swiglu)) std::memset(p, 0, quantize_output_bytes(d, s));
  }

  struct Slab {
    int64_t l, seg, rb, r0, r1;
  };
  std::vector<Slab> slabs;
  for (int64_t l = 0; l < L; ++l)
    for (int64_t s = 0; s < static_cast<int64_t>(rs.segs.size()); ++s) {
      const Segment& sg = rs.segs[static_cast<size_t>(s)];
      for (int64_t r0 = sg.begin, rb = 0; r0 < sg.end; r0 += layout::kBlock, ++rb)
        slabs.push_back(Slab{l, s, rb, r0, std::min(sg.end, r0 + layout::kBlock)});
    }

  std::vector<float> slab_amax(slabs.size(), 0.0f);
  const int64_t per_thread = std::max<int64_t>(1, (int64_t(1) << 16) / (layout::kBlock * d.in_cols()));

  parallel_for(static_cast<int64_t>(slabs.size()), per_thread, [&](int64_t begin, int64_t end) {
    std::vector<float> y(static_cast<size_t>(layout::kBlock * K));
    std::vector<uint8_t> tile_e(static_cast<size_t>(C));
    for (int64_t si = begin; si < end; ++si) {
      const Slab& sb = slabs[static_cast<size_t>(si)];
      const Segment& sg = rs.segs[static_cast<size_t>(sb.seg)];
      const int64_t n = sb.r1 - sb.r0;
      auto Y = [&](int64_t i, int64_t k) -> float& { return y[static_cast<size_t>(i * K + k)]; };

      // 1. The values to quantize (after the fused prologue), and the global amax.
      float amax = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t in_row = sb.l * d.in_batch_stride + (sb.r0 + i) * d.in_ld;
        for (int64_t k = 0; k < K; ++k) {
          float v;
          if (swiglu) {
            const float g = load_hp(x, d.in_dtype, in_row + k);
            const float u = load_hp(x, d.in_dtype, in_row + K + k);
            v = round_to_hp(d.in_dtype, silu(g) * u);
            if (activation) store_hp(activation, d.in_dtype, (sb.l * R + sb.r0 + i) * K + k, v);
          } else {
            v = load_hp(x, d.in_dtype, in_row + k);
          }
          Y(i, k) = v;
          if (std::fabs(v) > amax) amax = std::fabs(v);  // NaN-ignoring
        }
      }
      slab_amax[static_cast<size_t>(si)] = amax;

      // 2. 32x32 tiles: one exponent per tile, used by both orientations.
      if (d.block_2d) {
        for (int64_t c = 0; c < C; ++c) {
          BlockMax bm;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t k = c * layout::kBlock; k < std::min(K, (c + 1) * layout::kBlock); ++k) bm.add(Y(i, k));
          tile_e[static_cast<size_t>(c)] = bm.exponent(d);
        }
      }

      // 3. Rowwise: 1x32 blocks along K (a partial last block just has fewer elements).
      if (row_data) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t r = sb.r0 + i;
          for (int64_t c = 0; c < C; ++c) {
            const int64_t k0 = c * layout::kBlock, k1 = std::min(K, k0 + layout::kBlock);
            uint8_t e;
            if (d.block_2d) {
              e = tile_e[static_cast<size_t>(c)];
            } else {
              BlockMax bm;
              for (int64_t k = k0; k < k1; ++k) bm.add(Y(i, k));
              e = bm.exponent(d);
            }
            row_scales[row_addr.rowwise(sb.l, sg, r, c)] = e;
            for (int64_t k = k0; k < k1; ++k) row_data[(sb.l * R + r) * K + k] = encode(Y(i, k), e, d.out_dtype);
          }
        }
      }

      // 4. Columnwise: 32x1 blocks along R, this slab's rows, one block per column.
      if (col_data) {
        for (int64_t k = 0; k < K; ++k) {
          uint8_t e;
          if (d.block_2d) {
            e = tile_e[static_cast<size_t>(k / layout::kBlock)];
          } else {
            BlockMax bm;
            for (int64_t i = 0; i < n; ++i) bm.add(Y(i, k));
            e = bm.exponent(d);
          }
          col_scales[col_addr.colwise(sb.l, sg, k, sb.rb)] = e;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t r = sb.r0 + i;
            const int64_t idx = d.colwise_transposed ? (sb.l * K + k) * R + r : (sb.l * R + r) * K + k;
            col_data[idx] = encode(Y(i, k), e, d.out_dtype);
          }
        }
      }
    }
  });

  if (amax_out) {
    float m = 0.0f;
    for (float v : slab_amax) m = std::max(m, v);
    *amax_out = m;
  }
}

// ---- dequantize --------------------------------------------------------------------------------

void dequantize(const DequantizeDesc& d, const ExecArgs& a) {
  check_fp8(d.in_dtype);
  check_hp(d.out_dtype);
  check_shape(d.batch, d.rows, d.cols, d.grouping, d.num_groups);
  MXQ_REQUIRE(d.direction == MXQ_QUANTIZE_ROWWISE || d.direction == MXQ_QUANTIZE_COLUMNWISE,
              MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "dequantize reads one orientation (direction {})", d.direction);
  MXQ_REQUIRE(d.out_ld >= d.cols, MXQ_STATUS_BAD_PARAM_SHAPE, "output row stride {} < {} columns", d.out_ld, d.cols);

  const int64_t R = d.rows, K = d.cols;
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const bool rowwise = d.direction == MXQ_QUANTIZE_ROWWISE;
  const uint8_t* data = required<const uint8_t>(a, rowwise ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA, "FP8 data");
  const uint8_t* scales = required<const uint8_t>(a, rowwise ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES, "scales");
  void* x = required<void>(a, MXQ_ARG_X, "output X");

  const RowSegments rs = make_segments(R, d.grouping, d.num_groups, d.offsets_dtype,
                                       d.grouping == MXQ_GROUPING_ROWS ? a.get(MXQ_ARG_GROUP_OFFSETS) : nullptr, swz);
  const ScaleAddress addr = rowwise ? rowwise_address(swz, R, K, d.grouping, d.num_groups)
                                    : colwise_address(swz, R, K, d.grouping, d.num_groups);

  const int64_t per_thread = std::max<int64_t>(1, (int64_t(1) << 16) / K);
  parallel_for(d.batch * R, per_thread, [&](int64_t begin, int64_t end) {
    for (int64_t lr = begin; lr < end; ++lr) {
      const int64_t l = lr / R, r = lr % R;
      const int64_t out_row = lr * d.out_ld;
      if (r >= rs.covered) {  // past the last group: not part of any group, written as +0
        for (int64_t k = 0; k < K; ++k) store_hp(x, d.out_dtype, out_row + k, 0.0f);
        continue;
      }
      const Segment& sg = rs.segs[static_cast<size_t>(rs.find(r))];
      for (int64_t k = 0; k < K; ++k) {
        uint8_t q, e;
        if (rowwise) {
          q = data[lr * K + k];
          e = scales[addr.rowwise(l, sg, r, k / layout::kBlock)];
        } else {
          q = data[d.colwise_transposed ? (l * K + k) * R + r : lr * K + k];
          e = scales[addr.colwise(l, sg, k, (r - sg.begin) / layout::kBlock)];
        }
        store_hp(x, d.out_dtype, out_row + k, fp8_to_f32(q, d.in_dtype) * scale_value(e));
      }
    }
  });
}

// ---- standalone swizzle ------------------------------------------------------------------------

void swizzle_scales(bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols, int64_t linear_ld,
                    const uint8_t* src, uint8_t* dst) {
  MXQ_REQUIRE(src != nullptr && dst != nullptr, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "swizzle: src or dst is NULL");
  MXQ_REQUIRE(batch >= 1 && rows >= 1 && scale_cols >= 1, MXQ_STATUS_BAD_PARAM_SHAPE,
              "swizzle: shape [{}, {}, {}] has a dimension < 1", batch, rows, scale_cols);
  MXQ_REQUIRE(linear_ld >= scale_cols, MXQ_STATUS_BAD_PARAM_SHAPE, "swizzle: linear row stride {} < {} scale columns",
              linear_ld, scale_cols);
  const int64_t rpad = layout::swz_rows(rows), cpad = layout::swz_cols(scale_cols);
  if (to_swizzled) std::memset(dst, 0, static_cast<size_t>(batch * rpad * cpad));
  parallel_for(batch * rows, std::max<int64_t>(1, 4096 / scale_cols), [&](int64_t begin, int64_t end) {
    for (int64_t lr = begin; lr < end; ++lr) {
      const int64_t l = lr / rows, r = lr % rows;
      for (int64_t c = 0; c < scale_cols; ++c) {
        const int64_t lin = lr * linear_ld + c;
        const int64_t sw = l * rpad * cpad + layout::swizzled_offset(r, c, cpad);
        if (to_swizzled)
          dst[sw] = src[lin];
        else
          dst[lin] = src[sw];
      }
    }
  });
}

}  // namespace cpu
}  // namespace mxq
