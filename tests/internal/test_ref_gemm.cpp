// Tests of the CPU reference grouped GEMM (src/cpu/gemm.cpp), the oracle the GPU GEMMs are held to.
// Two kinds of evidence: small cases whose answer (and, for the swizzled layout, whose scale byte
// positions) are worked out by hand in the comments, and random cases — fresh inputs every run, seed
// printed on failure — checked element by element against a plain fp64 triple loop over a logical
// copy of the operands (fp8 code + block exponent per element), which never looks at a layout.
// Outputs are poisoned (NaN bytes) before a run and scale padding is filled with 0xFF (a NaN scale),
// so an element that is not written, or a read of padding, shows up as a NaN.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/desc.h"
#include "core/error.h"
#include "core/layout.h"
#include "cpu/reference.h"

namespace {

using namespace mxq;
using Rng = std::mt19937_64;

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

// Finite codes of an fp8 type (the random data never holds NaN/Inf; NaN is tested on its own).
const std::vector<uint8_t>& finite_codes(mxqDataType_t dt) {
  static const auto make = [](mxqDataType_t t) {
    std::vector<uint8_t> v;
    for (int c = 0; c < 256; ++c)
      if (std::isfinite(cpu::fp8_to_f32(uint8_t(c), t))) v.push_back(uint8_t(c));
    return v;
  };
  static const std::vector<uint8_t> e4m3 = make(MXQ_DTYPE_E4M3), e5m2 = make(MXQ_DTYPE_E5M2);
  return dt == MXQ_DTYPE_E4M3 ? e4m3 : e5m2;
}

// A K-major MXFP8 operand [rows, k] held logically: each element's fp8 code and the exponent of the
// 32-block it belongs to.
struct Operand {
  int64_t rows = 0, k = 0;
  mxqDataType_t dt = MXQ_DTYPE_E4M3;
  std::vector<uint8_t> q, e;
  double value(int64_t r, int64_t c) const {
    const size_t i = size_t(r * k + c);
    return double(cpu::fp8_to_f32(q[i], dt)) * std::ldexp(1.0, int(e[i]) - 127);
  }
};

// Random codes; one random exponent in [120, 134] per block, where block_of(r, c) names the block
// of element (r, c) (blocks are contiguous runs along a row).
Operand random_operand(Rng& rng, int64_t rows, int64_t k, mxqDataType_t dt,
                       const std::function<int64_t(int64_t, int64_t)>& block_of) {
  Operand op;
  op.rows = rows;
  op.k = k;
  op.dt = dt;
  op.q.resize(size_t(rows * k));
  op.e.resize(op.q.size());
  const auto& codes = finite_codes(dt);
  std::uniform_int_distribution<size_t> pick(0, codes.size() - 1);
  std::uniform_int_distribution<int> exps(120, 134);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t prev = -1;
    int e = 127;
    for (int64_t c = 0; c < k; ++c) {
      const int64_t blk = block_of(r, c);
      if (blk != prev) e = exps(rng);
      prev = blk;
      op.q[size_t(r * k + c)] = codes[pick(rng)];
      op.e[size_t(r * k + c)] = uint8_t(e);
    }
  }
  return op;
}

int64_t plain_block(int64_t, int64_t c) { return c / 32; }

// Scale buffer of `bytes`, padding 0xFF; element (r, c)'s exponent goes to offset_of(r, c) (< 0: the
// element is in no group and has no scale).
std::vector<uint8_t> pack_scales(const Operand& op, int64_t bytes,
                                 const std::function<int64_t(int64_t, int64_t)>& offset_of) {
  std::vector<uint8_t> s(size_t(bytes), 0xFF);
  int64_t outside = 0;
  for (int64_t r = 0; r < op.rows; ++r)
    for (int64_t c = 0; c < op.k; ++c) {
      const int64_t off = offset_of(r, c);
      if (off < 0) continue;
      if (off >= bytes) {
        ++outside;
        continue;
      }
      s[size_t(off)] = op.e[size_t(r * op.k + c)];
    }
  REQUIRE(outside == 0);
  return s;
}

// Batched [L, R, K] operand (rows = L*R) in LINEAR or SWIZZLED_128x4, each batch entry on its own.
std::vector<uint8_t> pack_batched(const Operand& op, int64_t entry_rows, bool swz) {
  using namespace layout;
  const int64_t kc = scale_cols(op.k), entry = scale_bytes(swz, entry_rows, kc);
  const int64_t batches = op.rows / entry_rows;
  return pack_scales(op, batches * entry, [&](int64_t r, int64_t c) {
    const int64_t l = r / entry_rows, rr = r % entry_rows;
    return l * entry + (swz ? swizzled_offset(rr, c / 32, swz_cols(kc)) : rr * kc + c / 32);
  });
}


// D buffer helpers: bytes of M*N elements of dtype, NaN-poisoned or with random finite values.
size_t dsize(mxqDataType_t dt) { return dt == MXQ_DTYPE_FP32 ? 4 : 2; }
double d_get(const std::vector<uint8_t>& d, mxqDataType_t dt, int64_t i) {
  if (dt == MXQ_DTYPE_FP32) {
    float f;
    std::memcpy(&f, &d[size_t(i) * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &d[size_t(i) * 2], 2);
  return cpu::bf16_to_f32(h);
}
bool d_is_poison(const std::vector<uint8_t>& d, mxqDataType_t dt, int64_t i) {
  for (size_t b = 0; b < dsize(dt); ++b)
    if (d[size_t(i) * dsize(dt) + b] != 0xFF) return false;
  return true;
}
void d_set(std::vector<uint8_t>& d, mxqDataType_t dt, int64_t i, double v) {
  if (dt == MXQ_DTYPE_FP32) {
    float f = float(v);
    std::memcpy(&d[size_t(i) * 4], &f, 4);
  } else {
    uint16_t h = cpu::f32_to_bf16_rne(float(v));
    std::memcpy(&d[size_t(i) * 2], &h, 2);
  }
}
std::vector<uint8_t> poisoned_d(mxqDataType_t dt, int64_t n) {
  return std::vector<uint8_t>(size_t(n) * dsize(dt), 0xFF);
}
std::vector<uint8_t> random_d(Rng& rng, mxqDataType_t dt, int64_t n) {
  std::vector<uint8_t> d(size_t(n) * dsize(dt));
  std::uniform_real_distribution<double> u(-1e4, 1e4);
  for (int64_t i = 0; i < n; ++i) d_set(d, dt, i, u(rng));
  return d;
}

struct Buffers {
  std::vector<uint8_t> a_data, a_scales, b_data, b_scales;
  std::vector<int32_t> ends32;
  std::vector<int64_t> ends64;
};

void run_gemm(const GemmDesc& desc, Buffers& buf, std::vector<uint8_t>& d) {
  ExecArgs args;
  args.ptr[MXQ_ARG_A_DATA] = buf.a_data.data();
  args.ptr[MXQ_ARG_A_SCALES] = buf.a_scales.data();
  args.ptr[MXQ_ARG_B_DATA] = buf.b_data.data();
  args.ptr[MXQ_ARG_B_SCALES] = buf.b_scales.data();
  args.ptr[MXQ_ARG_D] = d.data();
  if (desc.grouping != MXQ_GEMM_GROUPING_NONE)
    args.ptr[MXQ_ARG_GROUP_OFFSETS] =
        desc.offsets_dtype == MXQ_DTYPE_INT64 ? static_cast<void*>(buf.ends64.data()) : buf.ends32.data();
  cpu::grouped_gemm(desc, args);
}

void set_ends(Buffers& buf, const std::vector<int64_t>& ends) {
  buf.ends64 = ends;
  buf.ends32.assign(ends.begin(), ends.end());
}

// Sum over k in [k0, k1) of a(ra, k) * b(rb, k) in fp64, and the sum of magnitudes (for the bound).
struct Dot {
  double sum = 0.0, mag = 0.0;
};
Dot dense_dot(const Operand& a, int64_t ra, const Operand& b, int64_t rb, int64_t k0, int64_t k1) {
  Dot r;
  for (int64_t c = k0; c < k1; ++c) {
    const double t = a.value(ra, c) * b.value(rb, c);
    r.sum += t;
    r.mag += std::fabs(t);
  }
  return r;
}

// Collects mismatches over every element; reports the count and the first few.
struct Mismatches {
  int64_t count = 0, checked = 0;
  std::ostringstream first;
  // `what` is a message, or a callable building it only for a mismatch (there are millions of checks).
  template <typename What>
  void add(bool ok, What&& what) {
    ++checked;
    if (ok) return;
    if (count < 8) {
      if constexpr (std::is_invocable_v<What>)
        first << what() << "\n";
      else
        first << what << "\n";
    }
    ++count;
  }
};

// Expected D element: alpha * dot (+ old) in fp64. The oracle rounds its fp64 result once to fp32,
// and bf16 is taken from that fp32, so it is within 2^-24 (fp32) or 2^-8 + 2^-23 (bf16: 8
// significant bits, after fp32) relative of the exact value, plus the fp64 summation error of
// either side: at most K * 2^-53 of the sum of magnitudes (K <= 2^9 here), bounded by 2^-40 of it.
template <typename Where>
void expect_element(Mismatches& mm, const std::vector<uint8_t>& d, mxqDataType_t dt, int64_t idx, const Dot& dot,
                    double alpha, double old, Where&& where) {
  const double ref = alpha * dot.sum + old;
  const double rel = dt == MXQ_DTYPE_FP32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -8) + std::ldexp(1.0, -23);
  const double tol = rel * std::fabs(ref) + std::ldexp(std::fabs(alpha) * dot.mag + std::fabs(old), -40);
  const double got = d_get(d, dt, idx);
  mm.add(std::fabs(got - ref) <= tol, [&] {
    std::ostringstream os;
    os << where() << " [" << idx << "]: got " << got << " expected " << ref << " tol " << tol;
    return os.str();
  });
}

const char* dt_name(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_E4M3: return "E4M3";
    case MXQ_DTYPE_E5M2: return "E5M2";
    case MXQ_DTYPE_BF16: return "BF16";
    case MXQ_DTYPE_FP32: return "FP32";
    default: return "?";
  }
}

template <typename F>
mxqStatus_t status_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.status();
  }
  return MXQ_STATUS_SUCCESS;
}

// e4m3 codes used by the hand-checked cases.
constexpr uint8_t kOne = 0x38, kTwo = 0x40, kThree = 0x44, kHalf = 0x30, kMinusHalf = 0xB0, kMinusOne = 0xB8;

}  // namespace

// A [2, 32], B [3, 32], one block each. Effective values (code * scale):
//   A0 = 1 * 2^1 everywhere = 2            A1 = (2, -0.5, 2, -0.5, ...) * 2^-2 = (0.5, -0.125, ...)
//   B0 = 1 * 2^0 = 1                        B1 = (3, 0, ..., 0) * 2^3 = (24, 0, ...)
//   B2 = (1, -1, ...) * 2^-1 = (0.5, -0.5, ...)
//   D = [[32*2, 2*24, 16*1 - 16*1], [16*0.5 - 16*0.125, 0.5*24, 16*0.25 + 16*0.0625]]
//     = [[64, 48, 0], [6, 12, 5]]
// Swizzled scales, written by hand: off(r, 0) = (r & 31) * 16 for r < 32, so rows 0, 1, 2 sit at bytes
// 0, 16, 32 of one 512-byte tile.
TEST_CASE("ref gemm: hand-checked 2x3x32, both layouts, fp32/bf16, alpha and accumulate", "[ref][gemm]") {
  Buffers buf;
  buf.a_data.assign(64, 0);
  buf.b_data.assign(96, 0);
  for (int c = 0; c < 32; ++c) {
    buf.a_data[c] = kOne;
    buf.a_data[32 + c] = c % 2 == 0 ? kTwo : kMinusHalf;
    buf.b_data[c] = kOne;
    buf.b_data[64 + c] = c % 2 == 0 ? kOne : kMinusOne;
  }
  buf.b_data[32] = kThree;
  const uint8_t ea[2] = {128, 125}, eb[3] = {127, 130, 126};

  for (bool swz : {false, true}) {
    for (mxqDataType_t dt : {MXQ_DTYPE_FP32, MXQ_DTYPE_BF16}) {
      CAPTURE(swz, dt_name(dt));
      if (swz) {
        buf.a_scales.assign(512, 0xFF);
        buf.b_scales.assign(512, 0xFF);
        for (int r = 0; r < 2; ++r) buf.a_scales[r * 16] = ea[r];
        for (int r = 0; r < 3; ++r) buf.b_scales[r * 16] = eb[r];
      } else {
        buf.a_scales.assign(ea, ea + 2);
        buf.b_scales.assign(eb, eb + 3);
      }
      GemmDesc desc;
      desc.m = 2;
      desc.n = 3;
      desc.k = 32;
      desc.d_dtype = dt;
      desc.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;

      auto d = poisoned_d(dt, 6);
      run_gemm(desc, buf, d);
      const double expect[6] = {64, 48, 0, 6, 12, 5};
      for (int i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(d_get(d, dt, i) == expect[i]);
      }

      // alpha = -0.5 accumulated onto [[1, 2, 3], [4, 5, 6]]: [[-31, -22, 3], [1, -1, 3.5]].
      desc.alpha = -0.5f;
      desc.accumulate = true;
      for (int i = 0; i < 6; ++i) d_set(d, dt, i, i + 1);
      run_gemm(desc, buf, d);
      const double expect_acc[6] = {-31, -22, 3, 1, -1, 3.5};
      for (int i = 0; i < 6; ++i) {
        CAPTURE(i);
        CHECK(d_get(d, dt, i) == expect_acc[i]);
      }
    }
  }
}

// K = 33: a full block and a 1-element partial block (missing elements count as zero).
//   A = (1 x32 at scale 2^3, then 1 at scale 2^0); B0 = (1 x32, 1), B1 = (1 x32, 3), scales 2^0.
//   D = [256 + 1, 256 + 3] = [257, 259]. fp32 keeps both; bf16 (8 significant bits: a step of 2 at
//   256) gets the ties 257 -> 256 and 259 -> 260, both to the even significand.
TEST_CASE("ref gemm: partial K block and bf16 round-to-nearest-even", "[ref][gemm]") {
  Buffers buf;
  buf.a_data.assign(33, kOne);
  buf.b_data.assign(66, kOne);
  buf.b_data[65] = kThree;
  buf.a_scales = {130, 127};
  buf.b_scales = {127, 127, 127, 127};
  GemmDesc desc;
  desc.m = 1;
  desc.n = 2;
  desc.k = 33;
  desc.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
  desc.d_dtype = MXQ_DTYPE_FP32;
  auto d = poisoned_d(desc.d_dtype, 2);
  run_gemm(desc, buf, d);
  CHECK(d_get(d, desc.d_dtype, 0) == 257.0);
  CHECK(d_get(d, desc.d_dtype, 1) == 259.0);
  desc.d_dtype = MXQ_DTYPE_BF16;
  d = poisoned_d(desc.d_dtype, 2);
  run_gemm(desc, buf, d);
  CHECK(d_get(d, desc.d_dtype, 0) == 256.0);
  CHECK(d_get(d, desc.d_dtype, 1) == 260.0);
}

// M-grouped, two groups of one row: group 1's scale rows start at round_up(1, 128) = 128, which in
// the swizzled layout (K = 32: Cpad = 4, one tile per 128 rows) is byte ((128 >> 7) * 1 + 0) * 512 =
// 512. LINEAR keeps row 1 at byte 1. A = (1 x32) in both rows with scales 2^0 and 2^2; B [2, 1, 32] =
// 1 at scales 2^0 (expert 0) and 2^1 (expert 1, byte 512 of B's swizzled scales: entries are padded
// to 128 x 4). D = [32, 32 * 4 * 2] = [32, 256].
// K-grouped, two groups of one token: group 1's scale column starts at round_up(ceil(1/32), 4) = 4
// (swizzled: the bound Cpad = round_up(1 + 4*2 - 1, 4) = 8, so byte (4 >> 2) * 512 = 512) or at 1
// (LINEAR: row stride 1 + 2 - 1 = 2). A [1, 2] = (1, 1) at 2^0, 2^3; B [1, 2] = (2, 2) at 2^0, 2^0.
// D [2, 1, 1] = [2, 16].
TEST_CASE("ref gemm: grouped scale bases at hand-computed byte offsets", "[ref][gemm]") {
  for (bool swz : {false, true}) {
    CAPTURE(swz);
    const mxqScaleLayout_t sl = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
    {
      Buffers buf;
      buf.a_data.assign(64, kOne);
      buf.b_data.assign(64, kOne);
      buf.a_scales.assign(swz ? 1024 : 2, 0xFF);
      buf.a_scales[0] = 127;
      buf.a_scales[swz ? 512 : 1] = 129;
      buf.b_scales.assign(swz ? 1024 : 2, 0xFF);
      buf.b_scales[0] = 127;
      buf.b_scales[swz ? 512 : 1] = 128;
      set_ends(buf, {1, 2});
      GemmDesc desc;
      desc.grouping = MXQ_GEMM_GROUPING_M;
      desc.m = 2;
      desc.n = 1;
      desc.k = 32;
      desc.num_groups = 2;
      desc.d_dtype = MXQ_DTYPE_FP32;
      desc.scale_layout = sl;
      auto d = poisoned_d(desc.d_dtype, 2);
      run_gemm(desc, buf, d);
      CHECK(d_get(d, desc.d_dtype, 0) == 32.0);
      CHECK(d_get(d, desc.d_dtype, 1) == 256.0);
    }
    {
      Buffers buf;
      buf.a_data = {kOne, kOne};
      buf.b_data = {kTwo, kTwo};
      buf.a_scales.assign(swz ? 1024 : 2, 0xFF);
      buf.a_scales[0] = 127;
      buf.a_scales[swz ? 512 : 1] = 130;
      buf.b_scales.assign(swz ? 1024 : 2, 0xFF);
      buf.b_scales[0] = 127;
      buf.b_scales[swz ? 512 : 1] = 127;
      set_ends(buf, {1, 2});
      GemmDesc desc;
      desc.grouping = MXQ_GEMM_GROUPING_K;
      desc.m = 1;
      desc.n = 1;
      desc.k = 2;
      desc.num_groups = 2;
      desc.d_dtype = MXQ_DTYPE_FP32;
      desc.scale_layout = sl;
      auto d = poisoned_d(desc.d_dtype, 2);
      run_gemm(desc, buf, d);
      CHECK(d_get(d, desc.d_dtype, 0) == 2.0);
      CHECK(d_get(d, desc.d_dtype, 1) == 16.0);
    }
  }
}

TEST_CASE("ref gemm: random batched dense GEMM against an fp64 triple loop", "[ref][gemm]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  const int64_t batch = 3, m = 45, n = 37, k = 100;  // K: three full blocks and a partial one
  const std::pair<mxqDataType_t, mxqDataType_t> types[] = {
      {MXQ_DTYPE_E4M3, MXQ_DTYPE_E4M3}, {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2}, {MXQ_DTYPE_E5M2, MXQ_DTYPE_E4M3}};
  for (const auto& ab : types) {
    const Operand a = random_operand(rng, batch * m, k, ab.first, plain_block);
    const Operand b = random_operand(rng, batch * n, k, ab.second, plain_block);
    for (mxqDataType_t dt : {MXQ_DTYPE_FP32, MXQ_DTYPE_BF16}) {
      for (bool accumulate : {false, true}) {
        std::vector<uint8_t> results[2];
        const auto init = accumulate ? random_d(rng, dt, batch * m * n) : poisoned_d(dt, batch * m * n);
        const double alpha = std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
        for (bool swz : {false, true}) {
          CAPTURE(dt_name(ab.first), dt_name(ab.second), dt_name(dt), accumulate, swz, alpha);
          GemmDesc desc;
          desc.m = m;
          desc.n = n;
          desc.k = k;
          desc.batch = batch;
          desc.a_dtype = ab.first;
          desc.b_dtype = ab.second;
          desc.d_dtype = dt;
          desc.alpha = float(alpha);
          desc.accumulate = accumulate;
          desc.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
          Buffers buf;
          buf.a_data = a.q;
          buf.b_data = b.q;
          buf.a_scales = pack_batched(a, m, swz);
          buf.b_scales = pack_batched(b, n, swz);
          auto d = init;
          run_gemm(desc, buf, d);
          Mismatches mm;
          for (int64_t l = 0; l < batch; ++l)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                const int64_t idx = (l * m + i) * n + j;
                expect_element(mm, d, dt, idx, dense_dot(a, l * m + i, b, l * n + j, 0, k), double(desc.alpha),
                               accumulate ? d_get(init, dt, idx) : 0.0, [] { return std::string("D"); });
              }
          INFO(mm.first.str());
          REQUIRE(mm.checked == batch * m * n);
          REQUIRE(mm.count == 0);
          results[swz] = d;
        }
        CHECK(results[0] == results[1]);  // the layout changes where scales are, not the answer
      }
    }
  }
}

TEST_CASE("ref gemm: M-grouped with group sizes 0, 1, 31, 33, 127, 129 against per-group dense", "[ref][gemm]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  const std::vector<int64_t> sizes = {0, 1, 31, 0, 33, 127, 129, 0};
  const int64_t groups = int64_t(sizes.size()), tail = 7, n = 24, k = 70;
  std::vector<int64_t> ends;
  int64_t total = 0;
  for (int64_t s : sizes) ends.push_back(total += s);
  const int64_t m = total + tail;  // rows after the last offset belong to no group

  const Operand a = random_operand(rng, m, k, MXQ_DTYPE_E4M3, plain_block);
  const Operand b = random_operand(rng, groups * n, k, MXQ_DTYPE_E4M3, plain_block);
  for (bool swz : {false, true}) {
    for (mxqDataType_t odt : {MXQ_DTYPE_INT32, MXQ_DTYPE_INT64}) {
      for (bool accumulate : {false, true}) {
        CAPTURE(swz, dt_name(odt), accumulate);
        using namespace layout;
        const int64_t kc = scale_cols(k);
        Buffers buf;
        buf.a_data = a.q;
        buf.b_data = b.q;
        set_ends(buf, ends);
        // A's scale rows: per-group bases padded to 128 (swizzled), the row itself (LINEAR).
        std::vector<int64_t> scale_row(size_t(m), -1);
        int64_t base = 0, begin = 0;
        for (int64_t g = 0; g < groups; ++g) {
          for (int64_t r = begin; r < ends[g]; ++r) scale_row[r] = swz ? base + r - begin : r;
          base += round_up(ends[g] - begin, 128);
          begin = ends[g];
        }
        const int64_t a_bytes = swz ? mgroup_scale_rows_bound(m, groups) * swz_cols(kc) : m * kc;
        REQUIRE(base <= mgroup_scale_rows_bound(m, groups));
        buf.a_scales = pack_scales(a, a_bytes, [&](int64_t r, int64_t c) {
          const int64_t sr = scale_row[r];
          if (sr < 0) return int64_t(-1);
          return swz ? swizzled_offset(sr, c / 32, swz_cols(kc)) : sr * kc + c / 32;
        });
        buf.b_scales = pack_batched(b, n, swz);

        GemmDesc desc;
        desc.grouping = MXQ_GEMM_GROUPING_M;
        desc.m = m;
        desc.n = n;
        desc.k = k;
        desc.num_groups = groups;
        desc.offsets_dtype = odt;
        desc.d_dtype = MXQ_DTYPE_FP32;
        desc.alpha = 0.75f;
        desc.accumulate = accumulate;
        desc.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
        const auto init = accumulate ? random_d(rng, desc.d_dtype, m * n) : poisoned_d(desc.d_dtype, m * n);
        auto d = init;
        run_gemm(desc, buf, d);

        Mismatches mm;
        begin = 0;
        for (int64_t g = 0; g < groups; ++g) {
          for (int64_t r = begin; r < ends[g]; ++r)
            for (int64_t j = 0; j < n; ++j)
              expect_element(mm, d, desc.d_dtype, r * n + j, dense_dot(a, r, b, g * n + j, 0, k), 0.75,
                             accumulate ? d_get(init, desc.d_dtype, r * n + j) : 0.0,
                             [&] { return "group " + std::to_string(g) + " row " + std::to_string(r); });
          begin = ends[g];
        }
        // Rows after the last offset are not written.
        for (int64_t r = total; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) {
            const int64_t idx = r * n + j;
            const bool untouched = accumulate ? d_get(d, desc.d_dtype, idx) == d_get(init, desc.d_dtype, idx)
                                              : d_is_poison(d, desc.d_dtype, idx);
            mm.add(untouched, "tail row " + std::to_string(r) + " was written");
          }
        INFO(mm.first.str());
        REQUIRE(mm.checked == m * n);
        REQUIRE(mm.count == 0);
      }
    }
  }
}

TEST_CASE("ref gemm: K-grouped (wgrad) with group sizes 0, 1, 31, 33, 127, 129 against per-group dense",
          "[ref][gemm]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  const std::vector<int64_t> sizes = {0, 1, 31, 33, 0, 127, 129, 0};
  const int64_t groups = int64_t(sizes.size()), tail = 5, m = 19, n = 13;
  std::vector<int64_t> ends, starts;
  int64_t total = 0;
  for (int64_t s : sizes) {
    starts.push_back(total);
    ends.push_back(total += s);
  }
  const int64_t k = total + tail;  // tokens after the last offset belong to no group
  // Blocks restart at each group start: block id = (group, position in group / 32).
  std::vector<int64_t> group_of(size_t(k), -1);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t t = starts[g]; t < ends[g]; ++t) group_of[t] = g;
  auto block_of = [&](int64_t, int64_t t) {
    const int64_t g = group_of[t];
    return g < 0 ? int64_t(-1) : g * 1000 + (t - starts[g]) / 32;
  };
  const Operand a = random_operand(rng, m, k, MXQ_DTYPE_E5M2, block_of);
  const Operand b = random_operand(rng, n, k, MXQ_DTYPE_E4M3, block_of);

  for (bool swz : {false, true}) {
    for (mxqDataType_t dt : {MXQ_DTYPE_FP32, MXQ_DTYPE_BF16}) {
      for (bool accumulate : {false, true}) {
        CAPTURE(swz, dt_name(dt), accumulate);
        using namespace layout;
        // Group g's scale columns start after the previous groups' ceil(T/32) columns, each rounded
        // up to 4 when swizzled; the column extent is the layout's bound for G groups of K tokens.
        std::vector<int64_t> col_base(static_cast<size_t>(groups));
        int64_t base = 0;
        for (int64_t g = 0; g < groups; ++g) {
          col_base[g] = base;
          const int64_t c = (sizes[g] + 31) / 32;
          base += swz ? (c + 3) / 4 * 4 : c;
        }
        const int64_t cols = kgroup_scale_cols_bound(swz, k, groups);
        REQUIRE(base <= cols);
        auto offset_of = [&](int64_t r, int64_t t) {
          const int64_t g = group_of[t];
          if (g < 0) return int64_t(-1);
          const int64_t c = col_base[g] + (t - starts[g]) / 32;
          return swz ? swizzled_offset(r, c, cols) : r * cols + c;
        };
        Buffers buf;
        buf.a_data = a.q;
        buf.b_data = b.q;
        buf.a_scales = pack_scales(a, swz ? swz_rows(m) * cols : m * cols, offset_of);
        buf.b_scales = pack_scales(b, swz ? swz_rows(n) * cols : n * cols, offset_of);
        set_ends(buf, ends);

        GemmDesc desc;
        desc.grouping = MXQ_GEMM_GROUPING_K;
        desc.m = m;
        desc.n = n;
        desc.k = k;
        desc.num_groups = groups;
        desc.a_dtype = MXQ_DTYPE_E5M2;
        desc.d_dtype = dt;
        desc.alpha = -1.25f;
        desc.accumulate = accumulate;
        desc.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
        const auto init = accumulate ? random_d(rng, dt, groups * m * n) : poisoned_d(dt, groups * m * n);
        auto d = init;
        run_gemm(desc, buf, d);

        Mismatches mm;
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              const int64_t idx = (g * m + i) * n + j;
              const double old = accumulate ? d_get(init, dt, idx) : 0.0;
              if (sizes[g] == 0) {
                // An empty group writes alpha * 0, or leaves D unchanged when accumulating.
                const double got = d_get(d, dt, idx);
                mm.add(got == old && !d_is_poison(d, dt, idx),
                       "empty group " + std::to_string(g) + ": " + std::to_string(got));
                continue;
              }
              expect_element(mm, d, dt, idx, dense_dot(a, i, b, j, starts[g], ends[g]), -1.25, old,
                             [&] { return "group " + std::to_string(g); });
            }
        INFO(mm.first.str());
        REQUIRE(mm.checked == groups * m * n);
        REQUIRE(mm.count == 0);
      }
    }
  }
}

TEST_CASE("ref gemm: a NaN scale (0xFF) makes its block's outputs NaN", "[ref][gemm]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  const int64_t m = 9, n = 7, k = 64;
  Operand a = random_operand(rng, m, k, MXQ_DTYPE_E4M3, plain_block);
  Operand b = random_operand(rng, n, k, MXQ_DTYPE_E4M3, plain_block);
  const int64_t bad_row = 4, bad_col = 2;
  for (int64_t c = 32; c < 64; ++c) a.e[size_t(bad_row * k + c)] = 0xFF;  // A row 4, second block
  for (int64_t c = 0; c < 32; ++c) b.e[size_t(bad_col * k + c)] = 0xFF;   // B row 2, first block
  for (bool swz : {false, true}) {
    for (mxqDataType_t dt : {MXQ_DTYPE_FP32, MXQ_DTYPE_BF16}) {
      CAPTURE(swz, dt_name(dt));
      Buffers buf;
      buf.a_data = a.q;
      buf.b_data = b.q;
      buf.a_scales = pack_batched(a, m, swz);
      buf.b_scales = pack_batched(b, n, swz);
      GemmDesc desc;
      desc.m = m;
      desc.n = n;
      desc.k = k;
      desc.d_dtype = dt;
      desc.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
      auto d = poisoned_d(dt, m * n);
      run_gemm(desc, buf, d);
      Mismatches mm;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double got = d_get(d, dt, i * n + j);
          const bool want_nan = i == bad_row || j == bad_col;
          mm.add(!d_is_poison(d, dt, i * n + j) && std::isnan(got) == want_nan,
                 "(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(got));
        }
      INFO(mm.first.str());
      REQUIRE(mm.count == 0);
    }
  }
}

TEST_CASE("ref gemm: bad group offsets and missing arguments are errors, not crashes", "[ref][gemm]") {
  Buffers buf;
  buf.a_data.assign(4 * 32, kOne);
  buf.b_data.assign(2 * 3 * 32, kOne);
  buf.a_scales.assign(4, 127);
  buf.b_scales.assign(6, 127);
  GemmDesc desc;
  desc.grouping = MXQ_GEMM_GROUPING_M;
  desc.m = 4;
  desc.n = 3;
  desc.k = 32;
  desc.num_groups = 2;
  desc.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
  auto d = poisoned_d(desc.d_dtype, 12);

  set_ends(buf, {3, 2});  // decreasing
  CHECK(status_of([&] { run_gemm(desc, buf, d); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  set_ends(buf, {2, 5});  // past M
  CHECK(status_of([&] { run_gemm(desc, buf, d); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  set_ends(buf, {-1, 2});  // negative
  CHECK(status_of([&] { run_gemm(desc, buf, d); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  desc.grouping = MXQ_GEMM_GROUPING_K;
  desc.k = 32;
  set_ends(buf, {16, 40});  // past K
  CHECK(status_of([&] { run_gemm(desc, buf, d); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  CHECK(std::all_of(d.begin(), d.end(), [](uint8_t v) { return v == 0xFF; }));  // nothing written on failure

  ExecArgs args;  // no pointers at all
  CHECK(status_of([&] { cpu::grouped_gemm(desc, args); }) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  set_ends(buf, {1, 2});
  args.ptr[MXQ_ARG_A_DATA] = buf.a_data.data();
  args.ptr[MXQ_ARG_A_SCALES] = buf.a_scales.data();
  args.ptr[MXQ_ARG_B_DATA] = buf.b_data.data();
  args.ptr[MXQ_ARG_B_SCALES] = buf.b_scales.data();
  args.ptr[MXQ_ARG_D] = d.data();
  CHECK(status_of([&] { cpu::grouped_gemm(desc, args); }) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);  // no offsets
}
