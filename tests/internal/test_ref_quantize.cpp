// The CPU reference quantizer, dequantizer and scale swizzle (src/cpu/quantize.cpp) against:
//  - a second, deliberately naive oracle in this file: per-block loops over the input, scale
//    positions from the layout formulas written out again here, every output byte predicted
//    (padding and untouched rows included) and compared after the outputs were poisoned;
//  - independent identities: columnwise == rowwise of the transpose, BOTH == the two single runs,
//    batched == per-batch runs, grouped == ungrouped re-addressed, fused SwiGLU == quantizing the
//    activation it outputs, dequantize(quantize(x)) within the format's error bound;
//  - hand-computed vectors for the DESIGN 1.1 edge cases and hand-computed swizzle offsets.
// Inputs are random with a fresh seed per run (printed on failure), salted with NaN/Inf/denormals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/sizes.h"
#include "cpu/reference.h"

using namespace mxq;

namespace {

using Bytes = std::vector<uint8_t>;

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t rup(int64_t a, int64_t b) { return cdiv(a, b) * b; }

// The 128x4 swizzle written out from its description: 512-byte tiles of 128 rows x 4 columns in
// row-major tile order; inside a tile, row r sits in 32-row quarter (r % 128) / 32 of the 16-byte
// line r % 32, column c at byte c % 4 of its quarter.
int64_t swz_off(int64_t r, int64_t c, int64_t cpad) {
  const int64_t tile = (r / 128) * (cpad / 4) + c / 4;
  return tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

size_t hp_bytes(mxqDataType_t t) { return t == MXQ_DTYPE_FP32 ? 4 : 2; }

float hp_get(const Bytes& b, mxqDataType_t t, int64_t idx) {
  if (t == MXQ_DTYPE_FP32) {
    float f;
    std::memcpy(&f, b.data() + 4 * idx, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, b.data() + 2 * idx, 2);
  return t == MXQ_DTYPE_BF16 ? cpu::bf16_to_f32(h) : cpu::f16_to_f32(h);
}

void hp_set(Bytes& b, mxqDataType_t t, int64_t idx, float v) {
  if (t == MXQ_DTYPE_FP32) {
    uint32_t u = 0x7FFFFFFFu;
    if (!std::isnan(v)) std::memcpy(&u, &v, 4);
    std::memcpy(b.data() + 4 * idx, &u, 4);
    return;
  }
  const uint16_t h = t == MXQ_DTYPE_BF16 ? cpu::f32_to_bf16_rne(v) : cpu::f32_to_f16_rne(v);
  std::memcpy(b.data() + 2 * idx, &h, 2);
}

// ---- random problems ---------------------------------------------------------------------------

struct Problem {
  QuantizeDesc d;
  Bytes x;                      // input, strided, gaps filled with NaN so a stray read shows
  std::vector<int64_t> ends;    // group end offsets (GROUPING_ROWS)
  Bytes offsets;                // the same, as the int32/int64 argument
  int64_t covered() const { return d.grouping == MXQ_GROUPING_ROWS ? ends.back() : d.rows; }
  float in(int64_t l, int64_t r, int64_t c) const {
    return hp_get(x, d.in_dtype, l * d.in_batch_stride + r * d.in_ld + c);
  }
};

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  double unit() { return std::uniform_real_distribution<double>(0, 1)(rng); }
  bool coin(double p) { return unit() < p; }
  template <typename T>
  T pick(std::initializer_list<T> v) {
    return *(v.begin() + uniform(0, int64_t(v.size()) - 1));
  }

  // Magnitudes spread over 2^[-span, span] per row so blocks get different scales; a few exact
  // zeros, denormals of the input type, and (when salted) NaN / +-Inf.
  void fill(Problem& p, bool salt, int span = 12) {
    const QuantizeDesc& d = p.d;
    const int64_t n = (d.batch - 1) * d.in_batch_stride + (d.rows - 1) * d.in_ld + d.in_cols();
    p.x.assign(size_t(n) * hp_bytes(d.in_dtype), 0);
    for (int64_t i = 0; i < n; ++i) hp_set(p.x, d.in_dtype, i, std::numeric_limits<float>::quiet_NaN());
    std::normal_distribution<float> normal;
    const float denorm = d.in_dtype == MXQ_DTYPE_FP16 ? 0x1p-20f : d.in_dtype == MXQ_DTYPE_BF16 ? 0x1p-130f : 0x1p-140f;
    for (int64_t l = 0; l < d.batch; ++l)
      for (int64_t r = 0; r < d.rows; ++r) {
        const int e = int(uniform(-span, span));
        for (int64_t c = 0; c < d.in_cols(); ++c) {
          float v = std::ldexp(normal(rng), e + int(uniform(-2, 2)));
          const double u = unit();
          if (u < 0.02) v = 0.0f;
          else if (u < 0.03) v = denorm * float(uniform(-7, 7));
          else if (salt && u < 0.036) v = std::numeric_limits<float>::quiet_NaN();
          else if (salt && u < 0.040) v = coin(0.5) ? INFINITY : -INFINITY;
          hp_set(p.x, d.in_dtype, l * d.in_batch_stride + r * d.in_ld + c, v);
        }
      }
  }

  // Group sizes with empty groups, exact multiples of 128 and 32, and a tail of uncovered rows.
  void groups(Problem& p) {
    QuantizeDesc& d = p.d;
    d.grouping = MXQ_GROUPING_ROWS;
    d.batch = 1;
    d.num_groups = uniform(1, 7);
    d.offsets_dtype = pick({MXQ_DTYPE_INT32, MXQ_DTYPE_INT64});
    const int64_t target = coin(0.5) ? d.rows : uniform(0, d.rows);
    std::vector<int64_t> sizes(size_t(d.num_groups));
    int64_t left = target;
    for (int64_t g = 0; g < d.num_groups; ++g) {
      int64_t s = pick<int64_t>({0, 1, 31, 32, 33, 128, 129, 200});
      if (g == d.num_groups - 1 || s > left) s = std::min(left, s);
      sizes[size_t(g)] = s;
      left -= s;
    }
    sizes.back() += left;  // the last group takes what is left of the target
    p.ends.clear();
    int64_t acc = 0;
    for (int64_t s : sizes) p.ends.push_back(acc += s);
    const size_t w = d.offsets_dtype == MXQ_DTYPE_INT32 ? 4 : 8;
    p.offsets.assign(p.ends.size() * w, 0);
    for (size_t g = 0; g < p.ends.size(); ++g) {
      if (w == 4) {
        const int32_t v = int32_t(p.ends[g]);
        std::memcpy(p.offsets.data() + 4 * g, &v, 4);
      } else {
        std::memcpy(p.offsets.data() + 8 * g, &p.ends[g], 8);
      }
    }
  }
};

QuantizeDesc base_desc(int64_t rows, int64_t cols, mxqDataType_t in, mxqDataType_t out) {
  QuantizeDesc d;
  d.in_dtype = in;
  d.out_dtype = out;
  d.rows = rows;
  d.cols = cols;
  d.in_ld = d.in_cols();
  d.in_batch_stride = rows * d.in_ld;
  return d;
}

// ---- running the reference ---------------------------------------------------------------------

struct Outputs {
  Bytes rd, rs, cd, cs, act;
  float amax = -1.0f;
};

Outputs run(const Problem& p, uint8_t poison, bool with_activation = true) {
  const QuantizeDesc& d = p.d;
  Outputs o;
  o.rd.assign(quantize_output_bytes(d, MXQ_ARG_ROWWISE_DATA), poison);
  o.rs.assign(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES), poison);
  o.cd.assign(quantize_output_bytes(d, MXQ_ARG_COLWISE_DATA), poison);
  o.cs.assign(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES), poison);
  o.act.assign(with_activation ? quantize_output_bytes(d, MXQ_ARG_ACTIVATION) : 0, poison);
  std::memset(&o.amax, poison, sizeof o.amax);
  ExecArgs a;
  a.ptr[MXQ_ARG_X] = const_cast<uint8_t*>(p.x.data());
  if (d.rowwise()) {
    a.ptr[MXQ_ARG_ROWWISE_DATA] = o.rd.data();
    a.ptr[MXQ_ARG_ROWWISE_SCALES] = o.rs.data();
  }
  if (d.colwise()) {
    a.ptr[MXQ_ARG_COLWISE_DATA] = o.cd.data();
    a.ptr[MXQ_ARG_COLWISE_SCALES] = o.cs.data();
  }
  if (d.grouping == MXQ_GROUPING_ROWS) a.ptr[MXQ_ARG_GROUP_OFFSETS] = const_cast<uint8_t*>(p.offsets.data());
  if (!o.act.empty()) a.ptr[MXQ_ARG_ACTIVATION] = o.act.data();
  a.ptr[MXQ_ARG_AMAX] = &o.amax;
  cpu::quantize(d, a);
  return o;
}

// ---- the naive oracle --------------------------------------------------------------------------

uint8_t oracle_exponent(const std::vector<float>& block, const QuantizeDesc& d) {
  float amax = 0;
  bool nonfinite = false;
  for (float v : block) {
    nonfinite |= !std::isfinite(v);
    if (!std::isnan(v)) amax = std::max(amax, std::fabs(v));
  }
  if (nonfinite && d.nonfinite == MXQ_NONFINITE_PROPAGATE) return 0xFF;
  return cpu::scale_exponent(amax, d.out_dtype, d.scale_mode);
}

uint8_t oracle_code(float v, uint8_t e, mxqDataType_t fp8) {
  if (e == 0xFF || std::isnan(v)) return 0x7F;
  // The element product is exact in double; one rounding to fp32 equals the RN fp32 multiply.
  return cpu::f32_to_fp8_satfinite(static_cast<float>(double(v) * std::ldexp(1.0, 127 - e)), fp8);
}

// The value that gets quantized: the input, or the fused SwiGLU rounded to the input type.
float oracle_y(const Problem& p, int64_t l, int64_t r, int64_t k) {
  const QuantizeDesc& d = p.d;
  if (d.fusion != MXQ_FUSION_SWIGLU) return p.in(l, r, k);
  const float y = cpu::silu(p.in(l, r, k)) * p.in(l, r, d.cols + k);
  if (std::isnan(y)) return y;
  if (d.in_dtype == MXQ_DTYPE_BF16) return cpu::bf16_to_f32(cpu::f32_to_bf16_rne(y));
  if (d.in_dtype == MXQ_DTYPE_FP16) return cpu::f16_to_f32(cpu::f32_to_f16_rne(y));
  return y;
}

struct Expected {
  Bytes rd, rs, cd, cs, act;
  float amax = 0;
};

// Rebuilds every output byte from the description alone.
Expected oracle(const Problem& p) {
  const QuantizeDesc& d = p.d;
  const int64_t R = d.rows, K = d.cols, L = d.batch, C = cdiv(K, 32), CR = cdiv(R, 32);
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const bool grouped = d.grouping == MXQ_GROUPING_ROWS;
  const int64_t G = grouped ? d.num_groups : 1;

  // Segments where 32-row blocks start, and their scale bases.
  std::vector<int64_t> seg_begin, seg_end, mbase, kbase;
  if (grouped) {
    int64_t b = 0, mb = 0, kb = 0;
    for (int64_t e : p.ends) {
      seg_begin.push_back(b);
      seg_end.push_back(e);
      mbase.push_back(mb);
      kbase.push_back(kb);
      mb += rup(e - b, 128);
      kb += swz ? rup(cdiv(e - b, 32), 4) : cdiv(e - b, 32);
      b = e;
    }
  } else {
    seg_begin = {0};
    seg_end = {R};
    mbase = {0};
    kbase = {0};
  }

  // Scale tensor extents (rows x bytes per row) per batch entry.
  const int64_t rs_rows = swz ? (grouped ? rup(R + 127 * G, 128) : rup(R, 128)) : R;
  const int64_t rs_cols = swz ? rup(C, 4) : C;
  const int64_t cs_rows = swz ? rup(K, 128) : K;
  const int64_t cs_cols = grouped ? (swz ? rup(CR + 4 * G - 1, 4) : CR + G - 1) : (swz ? rup(CR, 4) : CR);
  auto rs_at = [&](int64_t l, int64_t srow, int64_t c) {
    return l * rs_rows * rs_cols + (swz ? swz_off(srow, c, rs_cols) : srow * rs_cols + c);
  };
  auto cs_at = [&](int64_t l, int64_t k, int64_t scol) {
    return l * cs_rows * cs_cols + (swz ? swz_off(k, scol, cs_cols) : k * cs_cols + scol);
  };

  Expected x;
  if (d.rowwise()) {
    x.rd.assign(size_t(L * R * K), 0);
    x.rs.assign(size_t(L * rs_rows * rs_cols), 0);
  }
  if (d.colwise()) {
    x.cd.assign(size_t(L * R * K), 0);
    x.cs.assign(size_t(L * cs_rows * cs_cols), 0);
  }
  if (d.fusion == MXQ_FUSION_SWIGLU) x.act.assign(size_t(L * R * K) * hp_bytes(d.in_dtype), 0);

  for (int64_t l = 0; l < L; ++l)
    for (size_t s = 0; s < seg_begin.size(); ++s) {
      const int64_t b = seg_begin[s], e = seg_end[s];
      for (int64_t r = b; r < e; ++r)
        for (int64_t k = 0; k < K; ++k) {
          const float y = oracle_y(p, l, r, k);
          if (!std::isnan(y)) x.amax = std::max(x.amax, std::fabs(y));
          if (!x.act.empty()) hp_set(x.act, d.in_dtype, (l * R + r) * K + k, y);
        }
      // Exponent of the block holding (r, k) for a given orientation.
      auto tile_e = [&](int64_t r, int64_t k) {
        const int64_t r0 = b + (r - b) / 32 * 32, k0 = k / 32 * 32;
        std::vector<float> v;
        for (int64_t i = r0; i < std::min(e, r0 + 32); ++i)
          for (int64_t j = k0; j < std::min(K, k0 + 32); ++j) v.push_back(oracle_y(p, l, i, j));
        return oracle_exponent(v, d);
      };
      if (d.rowwise())
        for (int64_t r = b; r < e; ++r)
          for (int64_t c = 0; c < C; ++c) {
            std::vector<float> v;
            for (int64_t k = 32 * c; k < std::min(K, 32 * c + 32); ++k) v.push_back(oracle_y(p, l, r, k));
            const uint8_t ex = d.block_2d ? tile_e(r, 32 * c) : oracle_exponent(v, d);
            x.rs[size_t(rs_at(l, (grouped && swz) ? mbase[s] + r - b : r, c))] = ex;
            for (int64_t k = 32 * c; k < std::min(K, 32 * c + 32); ++k)
              x.rd[size_t((l * R + r) * K + k)] = oracle_code(oracle_y(p, l, r, k), ex, d.out_dtype);
          }
      if (d.colwise())
        for (int64_t k = 0; k < K; ++k)
          for (int64_t r0 = b, rb = 0; r0 < e; r0 += 32, ++rb) {
            std::vector<float> v;
            for (int64_t r = r0; r < std::min(e, r0 + 32); ++r) v.push_back(oracle_y(p, l, r, k));
            const uint8_t ex = d.block_2d ? tile_e(r0, k) : oracle_exponent(v, d);
            x.cs[size_t(cs_at(l, k, kbase[s] + rb))] = ex;
            for (int64_t r = r0; r < std::min(e, r0 + 32); ++r) {
              const int64_t idx = d.colwise_transposed ? (l * K + k) * R + r : (l * R + r) * K + k;
              x.cd[size_t(idx)] = oracle_code(oracle_y(p, l, r, k), ex, d.out_dtype);
            }
          }
    }
  return x;
}

// Byte-for-byte comparison that names the first differing byte.
void require_same(const Bytes& got, const Bytes& expect, const char* what) {
  REQUIRE(got.size() == expect.size());
  size_t first = got.size(), count = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expect[i]) {
      if (count++ == 0) first = i;
    }
  if (count) {
    FAIL(what << ": " << count << " of " << got.size() << " bytes differ; first at byte " << first << ": got 0x"
              << std::hex << int(got[first]) << ", expected 0x" << int(expect[first]));
  }
}

void require_matches_oracle(const Problem& p, const Outputs& o) {
  const Expected x = oracle(p);
  if (p.d.rowwise()) {
    require_same(o.rd, x.rd, "rowwise data");
    require_same(o.rs, x.rs, "rowwise scales");
  }
  if (p.d.colwise()) {
    require_same(o.cd, x.cd, "columnwise data");
    require_same(o.cs, x.cs, "columnwise scales");
  }
  if (p.d.fusion == MXQ_FUSION_SWIGLU) require_same(o.act, x.act, "activation");
  REQUIRE(std::memcmp(&o.amax, &x.amax, 4) == 0);
}

std::string describe(const QuantizeDesc& d) {
  return "in " + std::to_string(d.in_dtype) + " out " + std::to_string(d.out_dtype) + " mode " +
         std::to_string(d.scale_mode) + " policy " + std::to_string(d.nonfinite) + " dir " + std::to_string(d.direction) +
         " T " + std::to_string(d.colwise_transposed) + " layout " + std::to_string(d.scale_layout) + " 2d " +
         std::to_string(d.block_2d) + " [" + std::to_string(d.batch) + "," + std::to_string(d.rows) + "," +
         std::to_string(d.cols) + "] ld " + std::to_string(d.in_ld) + " bstride " + std::to_string(d.in_batch_stride) +
         " groups " + std::to_string(d.grouping == MXQ_GROUPING_ROWS ? d.num_groups : 0) + " fusion " +
         std::to_string(d.fusion);
}

Problem random_problem(Gen& g, bool allow_groups = true) {
  Problem p;
  const mxqDataType_t in = g.pick({MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32});
  const mxqDataType_t out = g.pick({MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2});
  p.d = base_desc(g.uniform(1, 300), g.pick<int64_t>({1, 7, 32, 33, 64, 100, 131, g.uniform(1, 200)}), in, out);
  QuantizeDesc& d = p.d;
  d.scale_mode = g.pick({MXQ_SCALE_MODE_RCEIL, MXQ_SCALE_MODE_FLOOR, MXQ_SCALE_MODE_CEIL, MXQ_SCALE_MODE_EVEN});
  d.nonfinite = g.pick({MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE});
  d.direction = int32_t(g.uniform(1, 3));
  d.colwise_transposed = g.coin(0.7);
  d.scale_layout = g.pick({MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR});
  if (g.coin(0.25)) d.fusion = MXQ_FUSION_SWIGLU;
  d.in_ld = d.in_cols() + (g.coin(0.4) ? g.uniform(1, 9) : 0);
  if (allow_groups && g.coin(0.4)) {
    g.groups(p);
  } else {
    d.batch = g.coin(0.4) ? g.uniform(2, 3) : 1;
    d.block_2d = g.coin(0.3);
  }
  d.in_batch_stride = d.rows * d.in_ld + (g.coin(0.3) ? g.uniform(1, 50) : 0);
  g.fill(p, g.coin(0.7));
  return p;
}

// Column-major copy of one batch entry's rows [r0, r1) as a new compact [cols, r1 - r0] problem.
Problem transposed(const Problem& p, int64_t l, int64_t r0, int64_t r1) {
  Problem t;
  t.d = p.d;
  t.d.rows = p.d.cols;
  t.d.cols = r1 - r0;
  t.d.batch = 1;
  t.d.grouping = MXQ_GROUPING_NONE;
  t.d.num_groups = 0;
  t.d.fusion = MXQ_FUSION_NONE;
  t.d.direction = MXQ_QUANTIZE_ROWWISE;
  t.d.in_ld = t.d.cols;
  t.d.in_batch_stride = t.d.rows * t.d.cols;
  t.x.assign(size_t(t.d.rows * t.d.cols) * hp_bytes(p.d.in_dtype), 0);
  for (int64_t k = 0; k < p.d.cols; ++k)
    for (int64_t r = r0; r < r1; ++r) hp_set(t.x, p.d.in_dtype, k * t.d.cols + (r - r0), oracle_y(p, l, r, k));
  return t;
}

// Exponent of the block each element of the (covered rows of the) input falls in, for one
// orientation: 1x32 along K rowwise, 32x1 along the rows (restarting per group) columnwise, the
// 32x32 tile with BLOCK_2D. Indexed [batch, row, col].
std::vector<uint8_t> expected_exponents(const Problem& p, int dir) {
  const QuantizeDesc& d = p.d;
  std::vector<uint8_t> out(size_t(d.batch * d.rows * d.cols), 0);
  std::vector<std::pair<int64_t, int64_t>> segs;
  if (d.grouping == MXQ_GROUPING_ROWS) {
    int64_t b = 0;
    for (int64_t e : p.ends) segs.emplace_back(b, e), b = e;
  } else {
    segs.emplace_back(0, d.rows);
  }
  const int64_t rstep = (dir == MXQ_QUANTIZE_ROWWISE && !d.block_2d) ? 1 : 32;
  const int64_t kstep = (dir == MXQ_QUANTIZE_ROWWISE || d.block_2d) ? 32 : 1;
  for (int64_t l = 0; l < d.batch; ++l)
    for (auto [b, e] : segs)
      for (int64_t r0 = b; r0 < e; r0 += rstep)
        for (int64_t k0 = 0; k0 < d.cols; k0 += kstep) {
          const int64_t r1 = std::min(e, r0 + rstep), k1 = std::min(d.cols, k0 + kstep);
          std::vector<float> blk;
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t k = k0; k < k1; ++k) blk.push_back(p.in(l, r, k));
          const uint8_t ex = oracle_exponent(blk, d);
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t k = k0; k < k1; ++k) out[size_t((l * d.rows + r) * d.cols + k)] = ex;
        }
  return out;
}

mxqStatus_t status_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return MXQ_STATUS_SUCCESS;
}

}  // namespace

// ================================================================================================

TEST_CASE("quantize: hand-computed blocks (DESIGN 1.1 edge cases)", "[ref][quantize]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  auto f = [](uint32_t u) {
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  };
  struct Case {
    const char* name;
    mxqDataType_t fmt;
    mxqScaleMode_t mode;
    mxqNonfinitePolicy_t policy;
    std::vector<float> x;
    std::vector<int> scales;  // one per 32 elements
    std::vector<int> codes;   // leading codes checked (the rest: as the oracle says)
  };
  const auto TE = MXQ_NONFINITE_TE_COMPATIBLE, PR = MXQ_NONFINITE_PROPAGATE;
  const auto E4 = MXQ_DTYPE_E4M3, E5 = MXQ_DTYPE_E5M2;
  const auto RC = MXQ_SCALE_MODE_RCEIL;
  std::vector<float> partial(40, 0.0f);
  partial[3] = 448.0f;
  partial[35] = -1.0f;
  partial[36] = 0.5f;
  const Case cases[] = {
      {"all zero", E4, RC, TE, std::vector<float>(32, 0.0f), {0}, {0, 0, 0}},
      {"448 and 1", E4, RC, TE, {448.0f, -448.0f, 1.0f}, {127}, {0x7E, 0xFE, 0x38}},
      {"one bf16 ulp above 448", E4, RC, TE, {450.0f, 224.0f}, {128}, {0x76, 0x6E}},
      {"fp32 0x04600001 saturates", E4, RC, TE, {f(0x04600001u), f(0x04600000u)}, {0}, {0x7E, 0x7E}},
      {"bf16 denormal-only block", E4, RC, TE, {0x1p-133f, -0x1p-135f}, {0}, {0x08, 0x82}},
      {"NaN ignored (TE)", E4, RC, TE, {nan, 1.0f, -nan, 0.5f}, {119}, {0x7F, 0x78, 0x7F, 0x70}},
      {"Inf saturates (TE)", E4, RC, TE, {inf, -inf, 1.0f, 1e38f}, {0xFE}, {0x7E, 0xFE, 0x00, 0x31}},
      {"NaN propagates", E4, RC, PR, {nan, 1.0f, 2.0f}, {0xFF}, {0x7F, 0x7F, 0x7F}},
      {"Inf propagates", E4, RC, PR, {1.0f, -inf}, {0xFF}, {0x7F, 0x7F}},
      {"finite under PROPAGATE", E4, RC, PR, {448.0f, 1.0f}, {127}, {0x7E, 0x38}},
      {"FLT_MAX", E4, RC, TE, {FLT_MAX, -1.0f}, {247}, {0x78, 0x80}},
      {"ties at the fp8 grid", E4, RC, TE, {448.0f, 17.0f, 19.0f, 0x1p-10f, 3 * 0x1p-10f, -17.0f}, {127},
       {0x7E, 0x58, 0x5A, 0x00, 0x02, 0xD8}},
      {"partial last block", E4, RC, TE, partial, {127, 119}, {}},
      {"E5M2 57344", E5, RC, TE, {57344.0f, 1.0f}, {127}, {0x7B, 0x3C}},
      {"E5M2 one ulp above", E5, RC, TE, {f(0x47600001u)}, {128}, {0x77}},
      {"E5M2 Inf (TE)", E5, RC, TE, {inf, -inf}, {0xFE}, {0x7B, 0xFB}},
      {"E5M2 ties", E5, RC, TE, {57344.0f, 4.5f, 5.5f}, {127}, {0x7B, 0x44, 0x46}},
      {"FLOOR saturates", E4, MXQ_SCALE_MODE_FLOOR, TE, {500.0f, 1.0f}, {127}, {0x7E, 0x38}},
      {"CEIL", E4, MXQ_SCALE_MODE_CEIL, TE, {448.0f}, {128}, {0x76}},
      {"EVEN", E4, MXQ_SCALE_MODE_EVEN, TE, {496.0f}, {128}, {0x78}},
      {"FLOOR NaN propagates", E4, MXQ_SCALE_MODE_FLOOR, PR, {nan}, {0xFF}, {0x7F}},
      {"EVEN Inf (TE)", E5, MXQ_SCALE_MODE_EVEN, TE, {-inf, 3.0f}, {0xFE}, {0xFB, 0x00}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Problem p;
    p.d = base_desc(1, int64_t(c.x.size()), MXQ_DTYPE_FP32, c.fmt);
    p.d.scale_mode = c.mode;
    p.d.nonfinite = c.policy;
    p.d.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
    p.x.resize(c.x.size() * 4);
    std::memcpy(p.x.data(), c.x.data(), p.x.size());
    const Outputs o = run(p, 0xA5);
    REQUIRE(o.rs.size() == c.scales.size());
    for (size_t i = 0; i < c.scales.size(); ++i) CHECK(int(o.rs[i]) == c.scales[i]);
    for (size_t i = 0; i < c.codes.size(); ++i) {
      CAPTURE(i);
      CHECK(int(o.rd[i]) == c.codes[i]);
    }
    require_matches_oracle(p, o);
  }
}

TEST_CASE("quantize: every output byte equals the naive oracle (random problems)", "[ref][quantize]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 120; ++iter) {
    const Problem p = random_problem(g);
    INFO("iteration " << iter << ": " << describe(p.d));
    require_matches_oracle(p, run(p, uint8_t(g.uniform(0, 255))));
  }
}

TEST_CASE("quantize: columnwise equals rowwise quantization of the transpose", "[ref][quantize]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 40; ++iter) {
    Problem p = random_problem(g);
    p.d.direction = MXQ_QUANTIZE_BOTH;
    p.d.block_2d = false;
    INFO("iteration " << iter << ": " << describe(p.d));
    const Outputs o = run(p, 0x5A);
    const QuantizeDesc& d = p.d;
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    const ScaleExtent ce = colwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups);
    Bytes cs_expect(o.cs.size(), 0), cd_expect(o.cd.size(), 0);
    for (int64_t l = 0; l < d.batch; ++l) {
      // Each segment (the whole tensor, or one group) is an independent transposed problem.
      std::vector<std::pair<int64_t, int64_t>> segs;
      if (d.grouping == MXQ_GROUPING_ROWS) {
        int64_t b = 0;
        for (int64_t e : p.ends) segs.emplace_back(b, e), b = e;
      } else {
        segs.emplace_back(0, d.rows);
      }
      int64_t col_base = 0;
      for (auto [b, e] : segs) {
        if (e == b) continue;
        Problem t = transposed(p, l, b, e);
        const Outputs ot = run(t, 0xC3);
        const ScaleExtent te = rowwise_scale_extent(swz, t.d.rows, t.d.cols, MXQ_GROUPING_NONE, 0);
        for (int64_t k = 0; k < d.cols; ++k) {
          for (int64_t r = b; r < e; ++r) {
            const uint8_t q = ot.rd[size_t(k * (e - b) + (r - b))];
            cd_expect[size_t(d.colwise_transposed ? (l * d.cols + k) * d.rows + r : (l * d.rows + r) * d.cols + k)] = q;
          }
          for (int64_t c = 0; c < cdiv(e - b, 32); ++c) {
            const uint8_t s = ot.rs[size_t(swz ? swz_off(k, c, te.cols) : k * te.cols + c)];
            const int64_t at = swz ? swz_off(k, col_base + c, ce.cols) : k * ce.cols + col_base + c;
            cs_expect[size_t(l * ce.rows * ce.cols + at)] = s;
          }
        }
        // Ungrouped, the whole scale tensor (padding included) is the transpose's.
        if (d.grouping != MXQ_GROUPING_ROWS) {
          REQUIRE(ot.rs.size() * size_t(d.batch) == o.cs.size());
          REQUIRE(std::equal(ot.rs.begin(), ot.rs.end(), o.cs.begin() + long(l * ot.rs.size())));
        }
        col_base += swz ? rup(cdiv(e - b, 32), 4) : cdiv(e - b, 32);
      }
    }
    require_same(o.cd, cd_expect, "columnwise data vs transposed rowwise");
    require_same(o.cs, cs_expect, "columnwise scales vs transposed rowwise");
  }
}

TEST_CASE("quantize: BOTH equals the two single-direction runs; batched equals per-batch runs",
          "[ref][quantize]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 30; ++iter) {
    Problem p = random_problem(g, /*allow_groups=*/iter % 2 == 0);
    p.d.direction = MXQ_QUANTIZE_BOTH;
    INFO("iteration " << iter << ": " << describe(p.d));
    const Outputs both = run(p, 0x11);
    Problem pr = p, pc = p;
    pr.d.direction = MXQ_QUANTIZE_ROWWISE;
    pc.d.direction = MXQ_QUANTIZE_COLUMNWISE;
    const Outputs r = run(pr, 0x22), c = run(pc, 0x33);
    require_same(both.rd, r.rd, "BOTH rowwise data");
    require_same(both.rs, r.rs, "BOTH rowwise scales");
    require_same(both.cd, c.cd, "BOTH columnwise data");
    require_same(both.cs, c.cs, "BOTH columnwise scales");
    REQUIRE(std::memcmp(&both.amax, &r.amax, 4) == 0);

    if (p.d.batch > 1) {
      float amax = 0;
      for (int64_t l = 0; l < p.d.batch; ++l) {
        Problem one = p;
        one.d.batch = 1;
        const size_t hb = hp_bytes(p.d.in_dtype);
        one.x.assign(p.x.begin() + long(size_t(l * p.d.in_batch_stride) * hb), p.x.end());
        const Outputs o1 = run(one, 0x44);
        amax = std::max(amax, o1.amax);
        auto slice_equal = [&](const Bytes& all, const Bytes& part, const char* what) {
          INFO(what << " batch " << l);
          REQUIRE(all.size() == part.size() * size_t(p.d.batch));
          REQUIRE(std::equal(part.begin(), part.end(), all.begin() + long(size_t(l) * part.size())));
        };
        slice_equal(both.rd, o1.rd, "rowwise data");
        slice_equal(both.rs, o1.rs, "rowwise scales");
        slice_equal(both.cd, o1.cd, "columnwise data");
        slice_equal(both.cs, o1.cs, "columnwise scales");
        slice_equal(both.act, o1.act, "activation");
      }
      REQUIRE(amax == both.amax);
    }
  }
}

TEST_CASE("quantize: M-grouped rowwise output is the ungrouped output re-addressed per group",
          "[ref][quantize][groups]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 40; ++iter) {
    Problem p = random_problem(g);
    if (p.d.grouping != MXQ_GROUPING_ROWS) g.groups(p);
    p.d.block_2d = false;
    p.d.direction = MXQ_QUANTIZE_ROWWISE;
    INFO("iteration " << iter << ": " << describe(p.d));
    const Outputs grouped = run(p, 0x77);
    Problem flat = p;
    flat.d.grouping = MXQ_GROUPING_NONE;
    flat.d.num_groups = 0;
    const Outputs ref = run(flat, 0x88);
    const QuantizeDesc& d = p.d;
    const int64_t K = d.cols, C = cdiv(K, 32), covered = p.covered();
    Bytes rd(ref.rd.size(), 0), rs(grouped.rs.size(), 0);
    std::copy(ref.rd.begin(), ref.rd.begin() + long(covered * K), rd.begin());  // uncovered rows: 0
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    int64_t b = 0, base = 0;
    for (int64_t e : p.ends) {
      for (int64_t r = b; r < e; ++r)
        for (int64_t c = 0; c < C; ++c) {
          const uint8_t s = ref.rs[size_t(swz ? swz_off(r, c, rup(C, 4)) : r * C + c)];
          rs[size_t(swz ? swz_off(base + r - b, c, rup(C, 4)) : r * C + c)] = s;
        }
      base += rup(e - b, 128);
      b = e;
    }
    require_same(grouped.rd, rd, "grouped rowwise data");
    require_same(grouped.rs, rs, "grouped rowwise scales");
  }
}

TEST_CASE("quantize: 32x32 blocks repeat one exponent per tile in both orientations", "[ref][quantize][2d]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 20; ++iter) {
    Problem p;
    p.d = base_desc(g.uniform(1, 150), g.uniform(1, 150), g.pick({MXQ_DTYPE_BF16, MXQ_DTYPE_FP32}), MXQ_DTYPE_E4M3);
    QuantizeDesc& d = p.d;
    d.block_2d = true;
    d.direction = MXQ_QUANTIZE_BOTH;
    d.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
    d.batch = g.uniform(1, 2);
    d.nonfinite = g.pick({MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE});
    g.fill(p, g.coin(0.5));
    INFO("iteration " << iter << ": " << describe(d));
    const Outputs o = run(p, 0x99);
    const int64_t R = d.rows, K = d.cols, C = cdiv(K, 32), CR = cdiv(R, 32);
    for (int64_t l = 0; l < d.batch; ++l)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t k = 0; k < K; ++k) {
          const uint8_t tile = o.rs[size_t(l * R * C + (r / 32 * 32) * C + k / 32)];  // the tile's first row
          REQUIRE(o.rs[size_t(l * R * C + r * C + k / 32)] == tile);
          REQUIRE(o.cs[size_t(l * K * CR + k * CR + r / 32)] == tile);
          REQUIRE(o.cd[size_t((l * K + k) * R + r)] == o.rd[size_t((l * R + r) * K + k)]);
        }
    require_matches_oracle(p, o);
  }
}

TEST_CASE("quantize: fused SwiGLU equals quantizing the activation it writes", "[ref][quantize][swiglu]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  for (int iter = 0; iter < 25; ++iter) {
    Problem p = random_problem(g);
    p.d.fusion = MXQ_FUSION_SWIGLU;
    p.d.in_ld = std::max(p.d.in_ld, p.d.in_cols());
    p.d.in_batch_stride = p.d.rows * p.d.in_ld;
    g.fill(p, g.coin(0.5), 6);
    INFO("iteration " << iter << ": " << describe(p.d));
    const Outputs fused = run(p, 0xE1);
    // The activation as a plain input (compact [batch, rows, cols]).
    Problem plain = p;
    plain.d.fusion = MXQ_FUSION_NONE;
    plain.d.in_ld = p.d.cols;
    plain.d.in_batch_stride = p.d.rows * p.d.cols;
    plain.x = fused.act;
    const Outputs o = run(plain, 0xE2);
    require_same(fused.rd, o.rd, "rowwise data");
    require_same(fused.rs, o.rs, "rowwise scales");
    require_same(fused.cd, o.cd, "columnwise data");
    require_same(fused.cs, o.cs, "columnwise scales");
    REQUIRE(fused.amax == o.amax);
    require_matches_oracle(p, fused);  // pins the activation itself (silu of the oracle)
  }
}

TEST_CASE("quantize: amax is the NaN-ignoring max over the quantized rows only", "[ref][quantize]") {
  Problem p;
  p.d = base_desc(70, 5, MXQ_DTYPE_FP32, MXQ_DTYPE_E4M3);
  std::vector<float> x(350, 1.0f);
  x[7] = -3.0f;
  x[11] = std::numeric_limits<float>::quiet_NaN();
  x[69 * 5] = 1000.0f;  // row 69: outside the groups below
  p.x.resize(x.size() * 4);
  std::memcpy(p.x.data(), x.data(), p.x.size());
  Outputs o = run(p, 0);
  CHECK(o.amax == 1000.0f);
  p.d.grouping = MXQ_GROUPING_ROWS;
  p.d.num_groups = 2;
  p.d.offsets_dtype = MXQ_DTYPE_INT64;
  p.ends = {10, 60};
  p.offsets.resize(16);
  std::memcpy(p.offsets.data(), p.ends.data(), 16);
  o = run(p, 0xA5);
  CHECK(o.amax == 3.0f);
  // Rows past the last offset: data 0.
  for (int64_t i = 60 * 5; i < 70 * 5; ++i) REQUIRE(o.rd[size_t(i)] == 0);
  x.assign(350, std::numeric_limits<float>::quiet_NaN());
  std::memcpy(p.x.data(), x.data(), p.x.size());
  CHECK(run(p, 0).amax == 0.0f);
  x[3] = -INFINITY;
  std::memcpy(p.x.data(), x.data(), p.x.size());
  CHECK(run(p, 0).amax == INFINITY);
}

TEST_CASE("dequantize(quantize(x)) is within the format's error bound, every layout", "[ref][dequantize]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  int runs = 0;
  for (mxqDataType_t in : {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32})
    for (mxqDataType_t fmt : {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2})
      for (int variant = 0; variant < 5; ++variant)  // plain, batched, grouped, 2D, batched 2D
        for (mxqScaleLayout_t layout : {MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR}) {
          Problem p;
          p.d = base_desc(g.uniform(1, 260), g.uniform(1, 140), in, fmt);
          QuantizeDesc& d = p.d;
          d.direction = MXQ_QUANTIZE_BOTH;
          d.colwise_transposed = g.coin(0.5);
          d.scale_layout = layout;
          d.block_2d = variant >= 3;
          if (variant == 1 || variant == 4) d.batch = 3;
          if (variant == 2) g.groups(p);
          d.in_batch_stride = d.rows * d.in_ld;
          g.fill(p, false, 8);  // keeps every value finite in an fp16 output
          INFO(describe(d));
          const Outputs o = run(p, 0x3C);
          ++runs;
          for (int dir : {MXQ_QUANTIZE_ROWWISE, MXQ_QUANTIZE_COLUMNWISE})
            for (mxqDataType_t out : {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32}) {
              DequantizeDesc dd;
              dd.in_dtype = fmt;
              dd.out_dtype = out;
              dd.direction = dir;
              dd.colwise_transposed = d.colwise_transposed;
              dd.scale_layout = layout;
              dd.rows = d.rows;
              dd.cols = d.cols;
              dd.batch = d.batch;
              dd.out_ld = d.cols + 3;
              dd.grouping = d.grouping;
              dd.num_groups = d.num_groups;
              dd.offsets_dtype = d.offsets_dtype;
              REQUIRE(dequantize_input_bytes(dd, dir == MXQ_QUANTIZE_ROWWISE ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA) ==
                      o.rd.size());
              Bytes xo(dequantize_input_bytes(dd, MXQ_ARG_X), 0xEE);
              ExecArgs a;
              a.ptr[MXQ_ARG_X] = xo.data();
              if (dir == MXQ_QUANTIZE_ROWWISE) {
                a.ptr[MXQ_ARG_ROWWISE_DATA] = const_cast<uint8_t*>(o.rd.data());
                a.ptr[MXQ_ARG_ROWWISE_SCALES] = const_cast<uint8_t*>(o.rs.data());
              } else {
                a.ptr[MXQ_ARG_COLWISE_DATA] = const_cast<uint8_t*>(o.cd.data());
                a.ptr[MXQ_ARG_COLWISE_SCALES] = const_cast<uint8_t*>(o.cs.data());
              }
              if (d.grouping == MXQ_GROUPING_ROWS) a.ptr[MXQ_ARG_GROUP_OFFSETS] = p.offsets.data();
              cpu::dequantize(dd, a);
              // Bound per element: half an fp8 quantum at the element's binade (the scale never
              // lets RCEIL saturate on finite data), plus half an output ulp, plus the output's
              // denormal spacing.
              const int mbits = fmt == MXQ_DTYPE_E4M3 ? 3 : 2;
              const int out_mbits = out == MXQ_DTYPE_FP32 ? 23 : out == MXQ_DTYPE_FP16 ? 10 : 7;
              const double out_tiny = out == MXQ_DTYPE_FP16 ? 0x1p-24 : out == MXQ_DTYPE_BF16 ? 0x1p-133 : 0x1p-149;
              const int min_exp = fmt == MXQ_DTYPE_E4M3 ? -6 : -14;
              const std::vector<uint8_t> block_e = expected_exponents(p, dir);
              double worst = 0;
              int64_t failures = 0;
              std::string first;
              for (int64_t l = 0; l < d.batch; ++l)
                for (int64_t r = 0; r < d.rows; ++r)
                  for (int64_t k = 0; k < dd.out_ld; ++k) {
                    const int64_t idx = (l * d.rows + r) * dd.out_ld + k;
                    if (idx * int64_t(hp_bytes(out)) >= int64_t(xo.size())) break;
                    bool ok;
                    double x = 0, got = 0;
                    if (k >= d.cols) {  // the stride gap is not part of X: untouched
                      ok = std::all_of(xo.begin() + long(idx * hp_bytes(out)), xo.begin() + long((idx + 1) * hp_bytes(out)),
                                       [](uint8_t b) { return b == 0xEE; });
                    } else if (r >= p.covered()) {  // past the last group: +0
                      got = hp_get(xo, out, idx);
                      ok = got == 0.0 && !std::signbit(got);
                    } else {
                      x = p.in(l, r, k);
                      got = hp_get(xo, out, idx);
                      const uint8_t e = block_e[size_t((l * d.rows + r) * d.cols + k)];
                      const double scale = std::ldexp(1.0, int(e) - 127);
                      const double v = std::fabs(x) / scale;
                      const int binade = v > 0 ? std::max(std::ilogb(v), min_exp) : min_exp;
                      const double bound = scale * std::ldexp(1.0, binade - mbits - 1) +
                                           std::fabs(x) * std::ldexp(1.0, -out_mbits - 1) * 1.001 + out_tiny;
                      ok = std::fabs(got - x) <= bound;
                      if (v >= std::ldexp(1.0, min_exp) && std::fabs(x) >= 0x1p-14)  // normal in fp8 and fp16
                        worst = std::max(worst, std::fabs(got - x) / std::fabs(x));
                    }
                    if (!ok && failures++ == 0)
                      first = "batch " + std::to_string(l) + " row " + std::to_string(r) + " col " + std::to_string(k) +
                              ": x " + std::to_string(x) + " dequantized " + std::to_string(got);
                  }
              CAPTURE(dir, out, first);
              REQUIRE(failures == 0);
              // Away from denormals the bound is the familiar relative one.
              CHECK(worst <= std::ldexp(1.0, -mbits - 1) + std::ldexp(1.0, -out_mbits - 1) * 1.001);
            }
        }
  CHECK(runs == 60);
}

TEST_CASE("dequantize: hand-computed special values and canonical NaNs", "[ref][dequantize]") {
  // One row of 64: block 0 scale E = 0xFF (NaN), block 1 scale as given per case.
  struct Case {
    uint8_t q, e;
    mxqDataType_t fmt, out;
    uint32_t expect_bits;
  };
  const Case cases[] = {
      {0x38, 0x7F, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP32, 0x3F800000u},   // 1.0 * 2^0
      {0x7E, 0x84, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP32, 0x46600000u},   // 448 * 2^5 = 14336
      {0x7F, 0x7F, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP32, 0x7FFFFFFFu},   // NaN code -> canonical NaN
      {0xFF, 0x7F, MXQ_DTYPE_E4M3, MXQ_DTYPE_BF16, 0x7FFFu},
      {0x7E, 0x01, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP16, 0x0000u},       // 448 * 2^-126 underflows fp16
      {0x01, 0x00, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP32, 0x00002000u},   // 2^-9 * 2^-127 = 2^-136, fp32 denormal
      {0x7E, 0xFE, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP32, 0x7F800000u},   // 448 * 2^127 overflows to Inf
      {0xFE, 0x87, MXQ_DTYPE_E4M3, MXQ_DTYPE_FP16, 0xFC00u},       // -448 * 2^8 > 65504 -> -Inf
      {0x7C, 0x7F, MXQ_DTYPE_E5M2, MXQ_DTYPE_BF16, 0x7F80u},       // E5M2 Inf stays Inf
      {0x7D, 0x7F, MXQ_DTYPE_E5M2, MXQ_DTYPE_FP16, 0x7FFFu},       // E5M2 NaN
      {0x80, 0x7F, MXQ_DTYPE_E5M2, MXQ_DTYPE_BF16, 0x8000u},       // -0 stays -0
      {0x39, 0x7E, MXQ_DTYPE_E4M3, MXQ_DTYPE_BF16, 0x3F10u},       // 1.125 * 0.5 = 0.5625
  };
  for (const Case& c : cases) {
    CAPTURE(int(c.q), int(c.e), c.fmt, c.out);
    DequantizeDesc dd;
    dd.in_dtype = c.fmt;
    dd.out_dtype = c.out;
    dd.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
    dd.rows = 1;
    dd.cols = 64;
    dd.out_ld = 64;
    Bytes data(64, c.q), scales = {0xFF, c.e}, xo(64 * hp_bytes(c.out), 0xEE);
    ExecArgs a;
    a.ptr[MXQ_ARG_X] = xo.data();
    a.ptr[MXQ_ARG_ROWWISE_DATA] = data.data();
    a.ptr[MXQ_ARG_ROWWISE_SCALES] = scales.data();
    cpu::dequantize(dd, a);
    for (int k = 0; k < 64; ++k) {
      uint32_t bits = 0;
      std::memcpy(&bits, xo.data() + size_t(k) * hp_bytes(c.out), hp_bytes(c.out));
      CAPTURE(k);
      REQUIRE(bits == (k < 32 ? (c.out == MXQ_DTYPE_FP32 ? 0x7FFFFFFFu : 0x7FFFu) : c.expect_bits));
    }
  }
}

TEST_CASE("swizzle: hand-computed offsets, padding zero, round trip, errors", "[ref][swizzle]") {
  // rows 300, scale columns 6 -> Rpad 384, Cpad 8.
  CHECK(swz_off(0, 0, 8) == 0);
  CHECK(swz_off(0, 3, 8) == 3);
  CHECK(swz_off(1, 0, 8) == 16);
  CHECK(swz_off(32, 0, 8) == 4);
  CHECK(swz_off(127, 5, 8) == 1021);
  CHECK(swz_off(128, 0, 8) == 1024);
  CHECK(swz_off(299, 5, 8) == 2741);

  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  Gen g(seed);
  const int64_t batch = 2, rows = 300, cols = 6, ld = 9;
  Bytes lin(size_t(batch * rows * ld));
  for (auto& b : lin) b = uint8_t(g.uniform(1, 255));  // never 0: padding must be told apart
  Bytes swz(size_t(batch * 384 * 8), 0xA5);
  cpu::swizzle_scales(true, batch, rows, cols, ld, lin.data(), swz.data());
  // Hand-computed positions inside batch 1 (which starts at 384 * 8 = 3072).
  CHECK(swz[3072 + 2741] == lin[size_t((rows + 299) * ld + 5)]);
  CHECK(swz[3072 + 4] == lin[size_t((rows + 32) * ld + 0)]);
  CHECK(swz[1021] == lin[size_t(127 * ld + 5)]);
  size_t written = 0;
  for (int64_t l = 0; l < batch; ++l)
    for (int64_t r = 0; r < 384; ++r)
      for (int64_t c = 0; c < 8; ++c) {
        const uint8_t v = swz[size_t(l * 3072 + swz_off(r, c, 8))];
        if (r < rows && c < cols) {
          REQUIRE(v == lin[size_t((l * rows + r) * ld + c)]);
          ++written;
        } else {
          REQUIRE(v == 0);
        }
      }
  CHECK(written == size_t(batch * rows * cols));
  Bytes back(lin.size(), 0x5A);
  cpu::swizzle_scales(false, batch, rows, cols, ld, swz.data(), back.data());
  for (int64_t i = 0; i < int64_t(lin.size()); ++i) {
    CAPTURE(i);
    REQUIRE(back[size_t(i)] == (i % ld < cols ? lin[size_t(i)] : 0x5A));  // the ld gap is left alone
  }
  CHECK(status_of([&] { cpu::swizzle_scales(true, 1, 4, 5, 4, lin.data(), swz.data()); }) == MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK(status_of([&] { cpu::swizzle_scales(true, 0, 4, 5, 5, lin.data(), swz.data()); }) == MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK(status_of([&] { cpu::swizzle_scales(true, 1, 4, 5, 5, nullptr, swz.data()); }) ==
        MXQ_STATUS_BAD_PARAM_NULL_POINTER);
}

TEST_CASE("group offsets: validation errors name the offending index and values", "[ref][groups]") {
  auto check = [](std::vector<int64_t> v, int64_t total, mxqStatus_t expect, const char* needle) {
    for (mxqDataType_t t : {MXQ_DTYPE_INT32, MXQ_DTYPE_INT64}) {
      Bytes buf(v.size() * 8);
      for (size_t i = 0; i < v.size(); ++i) {
        if (t == MXQ_DTYPE_INT32) {
          const int32_t x = int32_t(v[i]);
          std::memcpy(buf.data() + 4 * i, &x, 4);
        } else {
          std::memcpy(buf.data() + 8 * i, &v[i], 8);
        }
      }
      std::string msg;
      std::vector<int64_t> got;
      CAPTURE(t, needle);
      REQUIRE(status_of([&] { got = cpu::read_group_offsets(buf.data(), t, int64_t(v.size()), total); }, &msg) ==
              expect);
      if (expect == MXQ_STATUS_SUCCESS)
        REQUIRE(got == v);
      else
        REQUIRE_THAT(msg, Catch::Contains(needle));
    }
  };
  check({0, 5, 5, 9}, 9, MXQ_STATUS_SUCCESS, "");
  check({0, 0, 0}, 0, MXQ_STATUS_SUCCESS, "");
  check({3, 8, 7}, 10, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "offset [2] = 7 < offset [1] = 8");
  check({-1, 4}, 10, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "offset [0] = -1 is negative");
  check({4, 11}, 10, MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "offset [1] = 11 exceeds the 10 rows");
  CHECK(status_of([] { cpu::read_group_offsets(nullptr, MXQ_DTYPE_INT32, 1, 1); }) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  int32_t one = 1;
  CHECK(status_of([&] { cpu::read_group_offsets(&one, MXQ_DTYPE_FP32, 1, 1); }) == MXQ_STATUS_BAD_PARAM_INVALID_VALUE);

  // Quantize and dequantize reject bad offsets before writing anything.
  Problem p;
  p.d = base_desc(50, 40, MXQ_DTYPE_BF16, MXQ_DTYPE_E4M3);
  Gen g(fresh_seed());
  g.fill(p, false);
  p.d.grouping = MXQ_GROUPING_ROWS;
  p.d.num_groups = 3;
  p.d.direction = MXQ_QUANTIZE_BOTH;
  p.d.offsets_dtype = MXQ_DTYPE_INT32;
  const int32_t bad[3] = {10, 60, 60};
  p.offsets.resize(12);
  std::memcpy(p.offsets.data(), bad, 12);
  std::string msg;
  Outputs o;
  CHECK(status_of([&] { o = run(p, 0xA5); }, &msg) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  CHECK_THAT(msg, Catch::Contains("offset [1] = 60 exceeds the 50 rows"));
  // run() assigned and poisoned the buffers before the call that threw: still poison.
  Outputs poisoned;
  poisoned.rd.assign(quantize_output_bytes(p.d, MXQ_ARG_ROWWISE_DATA), 0xA5);
  {
    ExecArgs a;
    a.ptr[MXQ_ARG_X] = p.x.data();
    a.ptr[MXQ_ARG_ROWWISE_DATA] = poisoned.rd.data();
    Bytes rs(quantize_output_bytes(p.d, MXQ_ARG_ROWWISE_SCALES), 0xA5), cd(poisoned.rd.size(), 0xA5),
        cs(quantize_output_bytes(p.d, MXQ_ARG_COLWISE_SCALES), 0xA5);
    a.ptr[MXQ_ARG_ROWWISE_SCALES] = rs.data();
    a.ptr[MXQ_ARG_COLWISE_DATA] = cd.data();
    a.ptr[MXQ_ARG_COLWISE_SCALES] = cs.data();
    a.ptr[MXQ_ARG_GROUP_OFFSETS] = p.offsets.data();
    CHECK(status_of([&] { cpu::quantize(p.d, a); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
    for (const Bytes* b : {&poisoned.rd, &rs, &cd, &cs})
      REQUIRE(std::all_of(b->begin(), b->end(), [](uint8_t v) { return v == 0xA5; }));
    DequantizeDesc dd;
    dd.rows = 50;
    dd.cols = 40;
    dd.out_ld = 40;
    dd.grouping = MXQ_GROUPING_ROWS;
    dd.num_groups = 3;
    Bytes xo(50 * 40 * 2, 0xA5);
    ExecArgs b;
    b.ptr[MXQ_ARG_X] = xo.data();
    b.ptr[MXQ_ARG_ROWWISE_DATA] = poisoned.rd.data();
    b.ptr[MXQ_ARG_ROWWISE_SCALES] = rs.data();
    b.ptr[MXQ_ARG_GROUP_OFFSETS] = p.offsets.data();
    CHECK(status_of([&] { cpu::dequantize(dd, b); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
    REQUIRE(std::all_of(xo.begin(), xo.end(), [](uint8_t v) { return v == 0xA5; }));
  }
}

TEST_CASE("slot sizes: hand-computed byte counts", "[ref][sizes]") {
  QuantizeDesc d = base_desc(300, 70, MXQ_DTYPE_BF16, MXQ_DTYPE_E4M3);
  d.direction = MXQ_QUANTIZE_BOTH;
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_DATA) == 21000);
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_DATA) == 21000);
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES) == 384 * 4);  // C = 3 -> 4
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES) == 128 * 12);  // [70 -> 128, 10 -> 12]
  CHECK(quantize_output_bytes(d, MXQ_ARG_AMAX) == 4);
  CHECK(quantize_output_bytes(d, MXQ_ARG_ACTIVATION) == 0);
  CHECK(quantize_output_bytes(d, MXQ_ARG_X) == 0);
  d.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES) == 900);
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES) == 700);
  d.grouping = MXQ_GROUPING_ROWS;
  d.num_groups = 5;
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES) == 900);      // LINEAR: row r keeps row r
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES) == 70 * 14);  // 10 + 5 - 1 block columns
  d.scale_layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES) == 1024 * 4);  // round_up(300 + 127*5, 128)
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES) == 128 * 32);  // round_up(10 + 4*5 - 1, 4)
  d.grouping = MXQ_GROUPING_NONE;
  d.batch = 3;
  d.fusion = MXQ_FUSION_SWIGLU;
  d.direction = MXQ_QUANTIZE_ROWWISE;
  CHECK(quantize_output_bytes(d, MXQ_ARG_ROWWISE_SCALES) == 3 * 384 * 4);
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_SCALES) == 0);
  CHECK(quantize_output_bytes(d, MXQ_ARG_COLWISE_DATA) == 0);
  CHECK(quantize_output_bytes(d, MXQ_ARG_ACTIVATION) == 3 * 21000 * 2);

  DequantizeDesc dd;
  dd.rows = 300;
  dd.cols = 70;
  dd.batch = 3;
  dd.out_ld = 80;
  dd.out_dtype = MXQ_DTYPE_FP32;
  dd.direction = MXQ_QUANTIZE_COLUMNWISE;
  CHECK(dequantize_input_bytes(dd, MXQ_ARG_X) == size_t((899 * 80 + 70) * 4));
  CHECK(dequantize_input_bytes(dd, MXQ_ARG_COLWISE_SCALES) == 3 * 128 * 12);
  CHECK(dequantize_input_bytes(dd, MXQ_ARG_ROWWISE_SCALES) == 0);
  dd.batch = 1;
  dd.grouping = MXQ_GROUPING_ROWS;
  dd.num_groups = 6;
  dd.offsets_dtype = MXQ_DTYPE_INT64;
  CHECK(dequantize_input_bytes(dd, MXQ_ARG_GROUP_OFFSETS) == 48);

  d.rows = int64_t(1) << 40;
  d.cols = int64_t(1) << 30;
  CHECK(status_of([&] { quantize_output_bytes(d, MXQ_ARG_ROWWISE_DATA); }) == MXQ_STATUS_BAD_PARAM_SHAPE);
}
