// CPU reference grouped GEMM: D = alpha * A * B^T (+ D), the oracle the GPU kernels are tested
// against. Both operands are dequantized exactly into fp64 (fp8 value * 2^(E-127): the product of
// a <=4-bit significand and a power of two is exact in a double, even where fp32 would underflow),
// dot products accumulate in fp64, and the result is rounded once to fp32 or, through fp32, to
// bf16 (RNE) — the path a GPU epilogue takes from its fp32 accumulator.
//
// Every grouping is the same computation on different slices: "rows of A x one slice of B over a
// range of K, written to some rows of D". product() does that once — B's slice dequantized to fp64
// once, A row by row, plain dot products — so the grouping code is only bookkeeping: which rows,
// which B, which K range, and where each scale byte lives. Scale offsets come from
// src/core/layout.h (batched padding, per-group padded rows for M-grouping, restarted and padded
// scale columns for K-grouping). Host memory beyond the inputs is one B slice in fp64 (one expert,
// one batch entry, or one token group) plus a row of A per thread.
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "core/parallel.h"
#include "cpu/reference.h"

namespace mxq {
namespace cpu {
namespace {

// UE8M0 scale byte -> 2^(E-127) in fp64 (exact for every E); 0xFF is NaN.
double ue8m0_value(uint8_t e) {
  return e == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(e) - 127);
}

// All 256 fp8 codes of one element type decoded once, so the hot loops are table lookups.
std::array<double, 256> fp8_table(mxqDataType_t dt) {
  std::array<double, 256> t{};
  for (int q = 0; q < 256; ++q) t[q] = fp8_to_f32(static_cast<uint8_t>(q), dt);
  return t;
}

void check_fp8(mxqDataType_t dt, const char* which) {
  MXQ_REQUIRE(dt == MXQ_DTYPE_E4M3 || dt == MXQ_DTYPE_E5M2, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "grouped GEMM: {} must be E4M3 or E5M2 (is {})", which, int(dt));
}

// One MXFP8 operand as passed: row-major fp8 data with row length k, and its scale bytes.
struct Operand {
  const uint8_t* data;
  const uint8_t* scales;
  int64_t k;
  std::array<double, 256> lut;  // fp8 code -> value
};

// fp64 values of row r, columns [c0, c1), of an operand; scale_off(r, c) is the byte offset of the
// scale covering element (r, c).
template <typename ScaleOffset>
void dequantize_row(const Operand& op, int64_t r, int64_t c0, int64_t c1, const ScaleOffset& scale_off,
                    double* out) {
  for (int64_t c = c0; c < c1; ++c)
    out[c - c0] = op.lut[op.data[r * op.k + c]] * ue8m0_value(op.scales[scale_off(r, c)]);
}

// Writes alpha * acc (+ the old value when accumulating) to element idx of D, rounding once.
void store(void* d, mxqDataType_t dt, int64_t idx, double acc, double alpha, bool accumulate) {
  double v = alpha * acc;
  if (dt == MXQ_DTYPE_FP32) {
    float* p = static_cast<float*>(d) + idx;
    if (accumulate) v += static_cast<double>(*p);
    *p = static_cast<float>(v);
  } else {
    uint16_t* p = static_cast<uint16_t*>(d) + idx;
    if (accumulate) v += static_cast<double>(bf16_to_f32(*p));
    *p = f32_to_bf16_rne(static_cast<float>(v));
  }
}

double dot(const double* a, const double* b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// D rows [d0, d0 + rows) = alpha * A rows [a0, a0 + rows) . (B rows [b0, b0 + N))^T over the columns
// [k0, k1) (+ D when accumulating). An empty K range writes alpha * 0 (or leaves D as it was).
template <typename AOffset, typename BOffset>
void product(const GemmDesc& d, void* out, const Operand& a, const AOffset& a_off, int64_t a0, int64_t rows,
             const Operand& b, const BOffset& b_off, int64_t b0, int64_t k0, int64_t k1, int64_t d0) {
  if (rows == 0) return;
  const int64_t n = d.n, len = k1 - k0;
  std::vector<double> bv(static_cast<size_t>(n * len));
  parallel_for(n, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) dequantize_row(b, b0 + r, k0, k1, b_off, &bv[r * len]);
  });
  parallel_for(rows, 4, [&](int64_t i0, int64_t i1) {
    std::vector<double> av(static_cast<size_t>(len));
    for (int64_t i = i0; i < i1; ++i) {
      dequantize_row(a, a0 + i, k0, k1, a_off, av.data());
      for (int64_t j = 0; j < n; ++j)
        store(out, d.d_dtype, (d0 + i) * n + j, dot(av.data(), &bv[j * len], len), d.alpha, d.accumulate);
    }
  });
}

}  // namespace

void grouped_gemm(const GemmDesc& d, const ExecArgs& args) {
  using namespace layout;
  const auto* a_data = args.as<const uint8_t>(MXQ_ARG_A_DATA);
  const auto* a_scales = args.as<const uint8_t>(MXQ_ARG_A_SCALES);
  const auto* b_data = args.as<const uint8_t>(MXQ_ARG_B_DATA);
  const auto* b_scales = args.as<const uint8_t>(MXQ_ARG_B_SCALES);
  void* out = args.get(MXQ_ARG_D);
  MXQ_REQUIRE(a_data && a_scales && b_data && b_scales && out, MXQ_STATUS_BAD_PARAM_NULL_POINTER,
              "grouped GEMM: A_DATA, A_SCALES, B_DATA, B_SCALES and D are required");
  MXQ_REQUIRE(d.m > 0 && d.n > 0 && d.k > 0 && d.batch > 0, MXQ_STATUS_BAD_PARAM_SHAPE,
              "grouped GEMM: M, N, K and batch must be > 0 (are {}, {}, {}, {})", d.m, d.n, d.k, d.batch);
  check_fp8(d.a_dtype, "A");
  check_fp8(d.b_dtype, "B");
  MXQ_REQUIRE(d.d_dtype == MXQ_DTYPE_BF16 || d.d_dtype == MXQ_DTYPE_FP32, MXQ_STATUS_NOT_SUPPORTED_DTYPE,
              "grouped GEMM: D must be BF16 or FP32 (is {})", int(d.d_dtype));

  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const int64_t m = d.m, n = d.n, k = d.k;
  const Operand a{a_data, a_scales, k, fp8_table(d.a_dtype)};
  const Operand b{b_data, b_scales, k, fp8_table(d.b_dtype)};
  const int64_t kc = scale_cols(k);  // scale columns of an ungrouped K axis
  const int64_t kcpad = swz_cols(kc);
  // Offset of scale (r, c) inside one [rows, kc] batch entry, in either layout.
  auto plain_off = [&](int64_t r, int64_t c) { return swz ? swizzled_offset(r, c, kcpad) : r * kc + c; };

  if (d.grouping == MXQ_GEMM_GROUPING_NONE) {
    // A [batch, M, K], B [batch, N, K], D [batch, M, N]; each batch entry of a scale tensor is
    // padded on its own.
    const int64_t a_entry = scale_bytes(swz, m, kc), b_entry = scale_bytes(swz, n, kc);
    auto a_off = [&](int64_t r, int64_t c) { return (r / m) * a_entry + plain_off(r % m, c / kBlock); };
    auto b_off = [&](int64_t r, int64_t c) { return (r / n) * b_entry + plain_off(r % n, c / kBlock); };
    for (int64_t l = 0; l < d.batch; ++l) product(d, out, a, a_off, l * m, m, b, b_off, l * n, 0, k, l * m);
    return;
  }

  MXQ_REQUIRE(d.num_groups > 0, MXQ_STATUS_BAD_PARAM_SHAPE, "grouped GEMM: num_groups must be > 0 (is {})",
              d.num_groups);
  MXQ_REQUIRE(args.get(MXQ_ARG_GROUP_OFFSETS), MXQ_STATUS_BAD_PARAM_NULL_POINTER,
              "grouped GEMM: GROUP_OFFSETS is required when grouped");
  const int64_t groups = d.num_groups;

  if (d.grouping == MXQ_GEMM_GROUPING_M) {
    // A [M, K] with the rows of group g in [o_{g-1}, o_g); B [G, N, K]; D [M, N]. A's scale rows
    // restart at a 128-row boundary per group when swizzled (LINEAR keeps row r at row r); B is a
    // batched tensor, one entry per expert. Rows after the last offset are not written.
    const std::vector<int64_t> ends =
        read_group_offsets(args.get(MXQ_ARG_GROUP_OFFSETS), d.offsets_dtype, groups, m);
    const int64_t b_entry = scale_bytes(swz, n, kc);
    auto b_off = [&](int64_t r, int64_t c) { return (r / n) * b_entry + plain_off(r % n, c / kBlock); };
    int64_t begin = 0, base = 0;  // first row of group g, and its first scale row when swizzled
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t rows = ends[g] - begin, row0 = begin, scale_row0 = swz ? base : begin;
      auto a_off = [&](int64_t r, int64_t c) { return plain_off(scale_row0 + (r - row0), c / kBlock); };
      product(d, out, a, a_off, row0, rows, b, b_off, g * n, 0, k, row0);
      base += mgroup_row_pad(rows);
      begin = ends[g];
    }
    return;
  }

  MXQ_REQUIRE(d.grouping == MXQ_GEMM_GROUPING_K, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
              "grouped GEMM: unknown grouping {}", int(d.grouping));
  // K-grouped (wgrad): A [M, K], B [N, K], D [G, M, N]; the token axis K is split into groups and
  // D[g] contracts over group g's tokens only (tokens after the last offset are in no group). The
  // 32-blocks restart at each group start; group g's scale columns start after the previous groups'
  // ceil(T_h/32) columns, each rounded up to 4 when swizzled, and the column extent of both scale
  // tensors (Cpad, or the LINEAR row stride) is the layout's bound for any split.
  const std::vector<int64_t> ends = read_group_offsets(args.get(MXQ_ARG_GROUP_OFFSETS), d.offsets_dtype, groups, k);
  const int64_t cols = kgroup_scale_cols_bound(swz, k, groups);
  int64_t begin = 0, col_base = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t t0 = begin, c0 = col_base;
    auto off = [&](int64_t r, int64_t t) {
      const int64_t c = c0 + (t - t0) / kBlock;
      return swz ? swizzled_offset(r, c, cols) : r * cols + c;
    };
    product(d, out, a, off, 0, m, b, off, 0, t0, ends[g], g * m);
    col_base += kgroup_col_pad(swz, ends[g] - begin);
    begin = ends[g];
  }
}

}  // namespace cpu
}  // namespace mxq
