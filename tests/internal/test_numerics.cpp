// Scalar numerics of the CPU reference (src/cpu/numerics.cpp) against independent slow
// formulations: value tables built by enumeration instead of bit-field decoding, nearest-value
// searches instead of bit tricks, frexp/ldexp in double instead of exponent-field arithmetic.
// Exhaustive where the domain is small (all FP8 codes, all 16-bit patterns), random elsewhere with
// a fresh seed each run (printed on failure), plus the hand-computed edge cases of DESIGN 1.1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/reference.h"

using namespace mxq;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

struct Fmt {
  mxqDataType_t t;
  int mbits, min_exp, emax_binade;  // largest binade exponent that holds finite values
  int last_binade_mantissas;        // finite mantissas in the largest binade
  double maxn;
  uint8_t maxn_code;
  int emax;  // floor(log2 maxn)
};
const Fmt kE4M3{MXQ_DTYPE_E4M3, 3, -6, 8, 7, 448.0, 0x7E, 8};
const Fmt kE5M2{MXQ_DTYPE_E5M2, 2, -14, 15, 4, 57344.0, 0x7B, 15};

// Non-negative finite values in code order, built by walking the number line: the denormals
// k * 2^(min_exp - mbits), then each binade's (2^mbits + m) * 2^(e - mbits).
std::vector<double> fp8_values(const Fmt& f) {
  std::vector<double> v;
  for (int k = 0; k < (1 << f.mbits); ++k) v.push_back(std::ldexp(double(k), f.min_exp - f.mbits));
  for (int e = f.min_exp; e <= f.emax_binade; ++e) {
    const int count = e == f.emax_binade ? f.last_binade_mantissas : (1 << f.mbits);
    for (int m = 0; m < count; ++m) v.push_back(std::ldexp(double((1 << f.mbits) + m), e - f.mbits));
  }
  return v;
}

// Round to nearest, ties to the even index, in a sorted table whose last entry is an overflow
// sentinel (the value one binade past the largest finite one). Returns the index.
size_t nearest_index(double a, const std::vector<double>& table) {
  if (a >= table.back()) return table.size() - 1;
  const size_t hi = static_cast<size_t>(std::upper_bound(table.begin(), table.end(), a) - table.begin());
  const size_t lo = hi - 1;
  if (table[lo] == a) return lo;
  const double dl = a - table[lo], dh = table[hi] - a;
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo % 2 == 0) ? lo : hi;
}

uint8_t slow_fp8(float x, const Fmt& f, const std::vector<double>& values) {
  if (std::isnan(x)) return 0x7F;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(double(x));
  if (a >= f.maxn) return sign | f.maxn_code;  // satfinite; below MAXN a has two neighbours in values
  return sign | static_cast<uint8_t>(nearest_index(a, values));
}

// 16-bit float tables: every finite non-negative value in code order plus the Inf sentinel.
std::vector<double> half_like_values(int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  std::vector<double> v;
  for (int k = 0; k < (1 << mbits); ++k) v.push_back(std::ldexp(double(k), 1 - bias - mbits));
  for (int e = 1 - bias; e <= bias; ++e)
    for (int m = 0; m < (1 << mbits); ++m) v.push_back(std::ldexp(double((1 << mbits) + m), e - mbits));
  v.push_back(std::ldexp(1.0, bias + 1));  // Inf: IEEE rounds as if the exponent were unbounded
  return v;
}

// Independent scale exponent: the mathematical definition of each mode via frexp in double.
int slow_floor_log2(double a) {  // a > 0
  int ex;
  std::frexp(a, &ex);
  return ex - 1;
}
int slow_ceil_log2(double a) {
  int ex;
  const double m = std::frexp(a, &ex);
  return m == 0.5 ? ex - 1 : ex;
}
uint8_t slow_scale(float amax, const Fmt& f, mxqScaleMode_t mode) {
  if (std::isnan(amax)) return 0xFF;
  if (std::isinf(amax)) return 0xFE;
  const double a = std::fabs(double(amax));
  auto clamp_biased = [](int unbiased) { return static_cast<uint8_t>(std::min(127, std::max(-127, unbiased)) + 127); };
  switch (mode) {
    case MXQ_SCALE_MODE_RCEIL: {
      // s = fl32(a * RCP): the double product is exact (24 x 24 bits), so the float conversion is
      // the correctly rounded fp32 multiply. Then the smallest power of two >= s, clamped to UE8M0.
      const float rcp = static_cast<float>(1.0 / f.maxn);
      const float s = static_cast<float>(a * double(rcp));
      if (std::isinf(s)) return 0xFE;
      if (s == 0.0f) return 0;
      return static_cast<uint8_t>(std::min(254, std::max(0, slow_ceil_log2(s) + 127)));
    }
    case MXQ_SCALE_MODE_FLOOR:
      return a == 0 ? 0 : clamp_biased(slow_floor_log2(a) - f.emax);
    case MXQ_SCALE_MODE_CEIL:
      return a == 0 ? 0 : clamp_biased(slow_ceil_log2(a) - f.emax);
    case MXQ_SCALE_MODE_EVEN: {
      if (a == 0) return 0;
      int ex;
      const double m = std::frexp(a, &ex);  // a = m 2^ex, m in [0.5, 1)
      const double r = std::ldexp(std::nearbyint(std::ldexp(m, f.mbits + 1)), ex - f.mbits - 1);
      return clamp_biased(slow_floor_log2(r) - f.emax);
    }
  }
  return 0;
}

const mxqScaleMode_t kModes[] = {MXQ_SCALE_MODE_RCEIL, MXQ_SCALE_MODE_FLOOR, MXQ_SCALE_MODE_CEIL,
                                 MXQ_SCALE_MODE_EVEN};

}  // namespace

TEST_CASE("fp8 decode: all 256 codes match the enumerated number line", "[numerics][fp8]") {
  for (const Fmt& f : {kE4M3, kE5M2}) {
    const std::vector<double> values = fp8_values(f);
    REQUIRE(values.size() == size_t(f.maxn_code) + 1);
    for (int c = 0; c < 256; ++c) {
      CAPTURE(f.t, c);
      const float v = cpu::fp8_to_f32(static_cast<uint8_t>(c), f.t);
      const int mag = c & 0x7F;
      if (mag <= f.maxn_code) {
        const double expect = (c & 0x80) ? -values[size_t(mag)] : values[size_t(mag)];
        REQUIRE(double(v) == expect);
        REQUIRE(std::signbit(v) == ((c & 0x80) != 0));  // -0 for 0x80
      } else if (f.t == MXQ_DTYPE_E5M2 && mag == 0x7C) {
        REQUIRE(std::isinf(v));
        REQUIRE(std::signbit(v) == ((c & 0x80) != 0));
      } else {
        REQUIRE(std::isnan(v));  // E4M3: 0x7F, 0xFF; E5M2: 0x7D..0x7F and negatives
      }
    }
  }
  // Hand-checked anchors.
  CHECK(cpu::fp8_to_f32(0x7E, MXQ_DTYPE_E4M3) == 448.0f);
  CHECK(cpu::fp8_to_f32(0x38, MXQ_DTYPE_E4M3) == 1.0f);
  CHECK(cpu::fp8_to_f32(0x01, MXQ_DTYPE_E4M3) == std::ldexp(1.0f, -9));
  CHECK(cpu::fp8_to_f32(0x08, MXQ_DTYPE_E4M3) == std::ldexp(1.0f, -6));
  CHECK(cpu::fp8_to_f32(0x7B, MXQ_DTYPE_E5M2) == 57344.0f);
  CHECK(cpu::fp8_to_f32(0x3C, MXQ_DTYPE_E5M2) == 1.0f);
  CHECK(cpu::fp8_to_f32(0x01, MXQ_DTYPE_E5M2) == std::ldexp(1.0f, -16));
}

TEST_CASE("fp8 encode: round trip of every code, NaN and saturation", "[numerics][fp8]") {
  for (const Fmt& f : {kE4M3, kE5M2}) {
    for (int c = 0; c < 256; ++c) {
      CAPTURE(f.t, c);
      const float v = cpu::fp8_to_f32(static_cast<uint8_t>(c), f.t);
      const uint8_t back = cpu::f32_to_fp8_satfinite(v, f.t);
      if (std::isnan(v))
        REQUIRE(back == 0x7F);
      else if (std::isinf(v))
        REQUIRE(back == ((c & 0x80) | f.maxn_code));
      else
        REQUIRE(back == c);
    }
    CHECK(cpu::f32_to_fp8_satfinite(std::numeric_limits<float>::infinity(), f.t) == f.maxn_code);
    CHECK(cpu::f32_to_fp8_satfinite(-std::numeric_limits<float>::infinity(), f.t) == (0x80 | f.maxn_code));
    CHECK(cpu::f32_to_fp8_satfinite(-std::numeric_limits<float>::quiet_NaN(), f.t) == 0x7F);
    CHECK(cpu::f32_to_fp8_satfinite(FLT_MAX, f.t) == f.maxn_code);
    CHECK(cpu::f32_to_fp8_satfinite(-0.0f, f.t) == 0x80);
    CHECK(cpu::f32_to_fp8_satfinite(FLT_TRUE_MIN, f.t) == 0x00);
  }
}

TEST_CASE("fp8 encode: all 65536 bf16 patterns equal the nearest-value search", "[numerics][fp8]") {
  for (const Fmt& f : {kE4M3, kE5M2}) {
    const std::vector<double> values = fp8_values(f);
    for (uint32_t h = 0; h < 65536; ++h) {
      const float x = from_bits(h << 16);
      CAPTURE(f.t, h, x);
      REQUIRE(cpu::f32_to_fp8_satfinite(x, f.t) == slow_fp8(x, f, values));
    }
  }
}

TEST_CASE("fp8 encode: ties and their neighbours, random fp32", "[numerics][fp8]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (const Fmt& f : {kE4M3, kE5M2}) {
    const std::vector<double> values = fp8_values(f);
    // Every midpoint between neighbouring codes (exact in fp32) goes to the even code; one fp32 ulp
    // either side goes to the nearer one. The midpoint above MAXN saturates.
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);
      REQUIRE(double(mid) == (values[i] + values[i + 1]) / 2);
      CAPTURE(f.t, i, mid);
      const uint8_t even = (i % 2 == 0) ? uint8_t(i) : uint8_t(i + 1);
      REQUIRE(cpu::f32_to_fp8_satfinite(mid, f.t) == even);
      REQUIRE(cpu::f32_to_fp8_satfinite(-mid, f.t) == (0x80 | even));
      REQUIRE(cpu::f32_to_fp8_satfinite(std::nextafter(mid, 0.0f), f.t) == i);
      REQUIRE(cpu::f32_to_fp8_satfinite(std::nextafter(mid, INFINITY), f.t) == i + 1);
    }
    const float above = static_cast<float>(f.maxn * (1.0 + std::ldexp(1.0, -f.mbits - 1)));  // would round up
    CHECK(cpu::f32_to_fp8_satfinite(above, f.t) == f.maxn_code);
    CHECK(cpu::f32_to_fp8_satfinite(std::nextafter(float(f.maxn), INFINITY), f.t) == f.maxn_code);
    // Random fp32 over the whole relevant exponent range (and beyond, both ways).
    std::uniform_int_distribution<uint32_t> man(0, 0x7FFFFF), exp(127 - 30, 127 + 20), sign(0, 1);
    for (int i = 0; i < 200000; ++i) {
      const float x = from_bits((sign(rng) << 31) | (exp(rng) << 23) | man(rng));
      CAPTURE(f.t, x);
      REQUIRE(cpu::f32_to_fp8_satfinite(x, f.t) == slow_fp8(x, f, values));
    }
  }
}

TEST_CASE("bf16 conversions: exhaustive decode, RNE encode, canonical NaN", "[numerics][bf16]") {
  const std::vector<double> table = half_like_values(8, 7);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float v = cpu::bf16_to_f32(static_cast<uint16_t>(h));
    const int e = (h >> 7) & 0xFF, m = h & 0x7F;
    CAPTURE(h);
    if (e == 0xFF) {
      REQUIRE((m == 0 ? std::isinf(v) : std::isnan(v)));
      REQUIRE(cpu::f32_to_bf16_rne(v) == (m == 0 ? h : 0x7FFFu));
      continue;
    }
    const double expect = table[h & 0x7FFF] * ((h & 0x8000) ? -1 : 1);
    REQUIRE(double(v) == expect);
    REQUIRE(cpu::f32_to_bf16_rne(v) == h);
  }
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> any(0, 0xFFFFFFFFu);
  for (int i = 0; i < 300000; ++i) {
    uint32_t u = any(rng);
    if (i % 4 == 0) u = (u & 0xFFFF0000u) | 0x8000u;  // exact ties
    const float x = from_bits(u);
    CAPTURE(u);
    const uint16_t got = cpu::f32_to_bf16_rne(x);
    if (std::isnan(x)) {
      REQUIRE(got == 0x7FFF);
      continue;
    }
    const uint16_t expect = static_cast<uint16_t>(nearest_index(std::fabs(double(x)), table) | ((u >> 16) & 0x8000u));
    REQUIRE(got == expect);
  }
}

TEST_CASE("fp16 conversions: exhaustive decode, RNE encode incl. denormals and overflow", "[numerics][fp16]") {
  const std::vector<double> table = half_like_values(5, 10);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float v = cpu::f16_to_f32(static_cast<uint16_t>(h));
    const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    CAPTURE(h);
    if (e == 0x1F) {
      REQUIRE((m == 0 ? std::isinf(v) : std::isnan(v)));
      REQUIRE(cpu::f32_to_f16_rne(v) == (m == 0 ? h : 0x7FFFu));
      continue;
    }
    REQUIRE(double(v) == table[h & 0x7FFF] * ((h & 0x8000) ? -1 : 1));
    REQUIRE(cpu::f32_to_f16_rne(v) == h);
  }
  // Every midpoint between neighbouring fp16 values, and one fp32 ulp either side.
  for (size_t i = 0; i + 1 < table.size(); ++i) {
    const float mid = static_cast<float>((table[i] + table[i + 1]) / 2);
    CAPTURE(i, mid);
    REQUIRE(cpu::f32_to_f16_rne(mid) == ((i % 2 == 0) ? i : i + 1));
    REQUIRE(cpu::f32_to_f16_rne(std::nextafter(mid, 0.0f)) == i);
    REQUIRE(cpu::f32_to_f16_rne(std::nextafter(mid, INFINITY)) == i + 1);
  }
  CHECK(cpu::f32_to_f16_rne(65520.0f) == 0x7C00);
  CHECK(cpu::f32_to_f16_rne(std::nextafter(65520.0f, 0.0f)) == 0x7BFF);
  CHECK(cpu::f32_to_f16_rne(-1e30f) == 0xFC00);
  CHECK(cpu::f32_to_f16_rne(std::ldexp(1.0f, -25)) == 0x0000);                            // tie to even 0
  CHECK(cpu::f32_to_f16_rne(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(cpu::f32_to_f16_rne(-std::ldexp(3.0f, -25)) == 0x8002);                           // tie to even 2
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> man(0, 0x7FFFFF), exp(127 - 30, 127 + 17), sign(0, 1);
  for (int i = 0; i < 300000; ++i) {
    const uint32_t u = (sign(rng) << 31) | (exp(rng) << 23) | man(rng);
    const float x = from_bits(u);
    CAPTURE(u);
    const uint16_t expect = static_cast<uint16_t>(nearest_index(std::fabs(double(x)), table) | ((u >> 16) & 0x8000u));
    REQUIRE(cpu::f32_to_f16_rne(x) == expect);
  }
}

TEST_CASE("scale_exponent: all bf16 magnitudes and random fp32 match the frexp formulation", "[numerics][scale]") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> any(0, 0x7FFFFFFFu);
  std::vector<float> amaxes;
  for (uint32_t h = 0; h < 0x8000; ++h) amaxes.push_back(from_bits(h << 16));
  for (int i = 0; i < 100000; ++i) amaxes.push_back(from_bits(any(rng)));
  for (int i = 0; i < 20000; ++i) amaxes.push_back(from_bits(any(rng) & 0x007FFFFFu));  // fp32 denormals
  // Mantissas at the rounding decisions (0, 1 ulp, the EVEN carry points, all ones) in every binade.
  for (uint32_t e = 0; e < 255; ++e)
    for (uint32_t m : {0x0u, 0x1u, 0x2u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x6FFFFFu, 0x700000u, 0x77FFFFu, 0x780000u,
                       0x7FFFFFu})
      amaxes.push_back(from_bits((e << 23) | m));
  for (const Fmt& f : {kE4M3, kE5M2})
    for (mxqScaleMode_t mode : kModes)
      for (float a : amaxes) {
        CAPTURE(f.t, mode, bits(a), a);
        REQUIRE(cpu::scale_exponent(a, f.t, mode) == slow_scale(a, f, mode));
      }
}

TEST_CASE("scale_exponent: hand-computed edge cases of DESIGN 1.1", "[numerics][scale]") {
  struct Case {
    mxqDataType_t t;
    mxqScaleMode_t mode;
    float amax;
    int e;
  };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Case cases[] = {
      // all-zero block
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, 0.0f, 0},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_RCEIL, 0.0f, 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, 0.0f, 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, 0.0f, 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 0.0f, 0},
      // 448 * 2^k: 448 * fl32(1/448) = 1 + 1.5 * 2^-25 rounds to 1, so the scale is exactly 2^k
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, 448.0f, 127},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, 448.0f * 8, 130},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, 448.0f / 1024, 117},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_RCEIL, 57344.0f, 127},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_RCEIL, 57344.0f * 4, 129},
      // one fp32 ulp above: the quotient is 1 + 2^-23 after rounding, so one binade up
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, from_bits(0x43E00001u), 128},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_RCEIL, from_bits(0x47600001u), 128},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, 450.0f, 128},  // one bf16 ulp above 448
      // 0x04600000 = 448 * 2^-127: the quotient is the denormal 2^-127 exactly -> E = 0.
      // 0x04600001: quotient 2^-127 + 0.95 * 2^-150 rounds back to 2^-127 -> still E = 0
      // (that element then saturates to 448: the documented RCEIL corner).
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, from_bits(0x04600000u), 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, from_bits(0x04600001u), 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, from_bits(0x04600000u) * 2, 1},
      // bf16 denormal amax: everything clamps to the smallest scale
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, from_bits(0x00010000u), 0},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, from_bits(0x007F0000u), 0},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_CEIL, from_bits(0x007F0000u), 0},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_EVEN, from_bits(0x007F0000u), 0},
      // non-finite (the policy filters before this call; these are the raw meanings)
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, inf, 0xFE},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, inf, 0xFE},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_EVEN, inf, 0xFE},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, nan, 0xFF},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_CEIL, -nan, 0xFF},
      // near FLT_MAX: FLT_MAX / 448 = 2^119.19 -> 2^120
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL, FLT_MAX, 247},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_RCEIL, FLT_MAX, 240},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, FLT_MAX, 246},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, FLT_MAX, 247},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, FLT_MAX, 247},  // rounds to 2^128, stays finite
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_EVEN, FLT_MAX, 240},
      // FLOOR lets elements saturate, CEIL rounds the binade up, EVEN rounds amax first
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, 500.0f, 127},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, 448.0f, 127},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, 512.0f, 128},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, 448.0f, 128},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, 256.0f, 127},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 480.0f, 127},  // 1.111b * 2^8 needs no rounding
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 488.0f, 127},  // 1.11101b rounds down
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 496.0f, 128},  // 1.1111b ties up to 2.0
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_EVEN, 61440.0f, 128},  // 1.111b * 2^15 -> 1.11 tie -> 2.0
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_EVEN, 57344.0f, 127},
      {MXQ_DTYPE_E5M2, MXQ_SCALE_MODE_FLOOR, 65535.0f, 127},
      // one mantissa bit decides CEIL and EVEN
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, from_bits(0x3F800001u), 120},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_CEIL, 1.0f, 119},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_FLOOR, from_bits(0x3FFFFFFFu), 119},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 1.875f, 119},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, from_bits(0x3FF7FFFFu), 119},
      {MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_EVEN, 1.9375f, 120},
  };
  for (const Case& c : cases) {
    CAPTURE(c.t, c.mode, bits(c.amax), c.amax);
    CHECK(int(cpu::scale_exponent(c.amax, c.t, c.mode)) == c.e);
  }
}

TEST_CASE("scale_inverse is 2^(127-E) for every E, NaN for 0xFF", "[numerics][scale]") {
  for (int e = 0; e < 255; ++e) {
    CAPTURE(e);
    const float inv = cpu::scale_inverse(static_cast<uint8_t>(e));
    REQUIRE(double(inv) == std::ldexp(1.0, 127 - e));
  }
  CHECK(std::isnan(cpu::scale_inverse(0xFF)));
  CHECK(bits(cpu::scale_inverse(0xFE)) == 0x00400000u);
  CHECK(bits(cpu::scale_inverse(0)) == 0x7F000000u);
}

TEST_CASE("silu: the fixed fp32 sequence is within 4 ulp of exact and pinned bit for bit", "[numerics][silu]") {
  // Pinned results: a GPU port of the sequence must produce exactly these bits.
  const std::pair<float, uint32_t> pins[] = {
      {1.0f, 0x3f3b26a8u},     {-1.0f, 0xbe89b2b1u},  {0.5f, 0x3e9f597fu}, {-3.75f, 0xbdb07759u},
      {10.0f, 0x411ffe24u},    {-20.0f, 0xb3310d40u}, {88.5f, 0x42b10000u}, {-90.0f, 0x81c8c184u},
      {-100.0f, 0x80000a8cu},  {2.5f, 0x4013dcd9u},   {-0.125f, 0xbd700554u},
  };
  for (const auto& p : pins) {
    CAPTURE(p.first);
    CHECK(bits(cpu::silu(p.first)) == p.second);
  }
  CHECK(bits(cpu::silu(0.0f)) == 0u);
  CHECK(bits(cpu::silu(-0.0f)) == 0x80000000u);
  CHECK(cpu::silu(INFINITY) == INFINITY);
  CHECK(bits(cpu::silu(-INFINITY)) == 0x80000000u);
  CHECK(bits(cpu::silu(NAN)) == 0x7FFFFFFFu);
  CHECK(cpu::silu(-200.0f) == 0.0f);
  CHECK(cpu::silu(200.0f) == 200.0f);

  // FNV-1a digest of silu over every bf16 pattern (NaN, Inf, denormals, both tails) and 65536
  // scattered fp32 values in (-128, 128): any change to the operation sequence moves some bit.
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](float s) {
    const uint32_t u = bits(s);
    for (int b = 0; b < 4; ++b) h = (h ^ ((u >> (8 * b)) & 0xFF)) * 0x100000001b3ull;
  };
  for (uint32_t i = 0; i < 65536; ++i) mix(cpu::silu(from_bits(i << 16)));
  for (uint32_t i = 0; i < 65536; ++i) mix(cpu::silu(std::ldexp(float(int32_t(i * 2654435761u)), -24)));
  CHECK(h == 0x2afb814f3cd57ffbull);

  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> wide(-87.0f, 87.0f), narrow(-8.0f, 8.0f);
  std::uniform_int_distribution<int> ex(-40, 0);
  for (int i = 0; i < 300000; ++i) {
    float g = i % 3 == 0 ? wide(rng) : i % 3 == 1 ? narrow(rng) : std::ldexp(narrow(rng), ex(rng));
    const double exact = double(g) / (1.0 + std::exp(-double(g)));
    const float s = cpu::silu(g);
    const double ulp = std::ldexp(1.0, std::ilogb(exact) - 23);
    CAPTURE(g, s, exact);
    REQUIRE(std::fabs(double(s) - exact) <= 4.0 * ulp);  // measured worst case ~3 ulp
  }
}

TEST_CASE("scale and cast path: every bf16 pattern as a block maximum, through cpu::quantize",
          "[numerics][quantize][exhaustive]") {
  // Row h of a [65536, 32] bf16 tensor holds bf16 pattern h and 31 random values no larger in
  // magnitude (any values when h is non-finite). The expected scale and codes come from the frexp
  // formulation and the nearest-value search, with the element product formed exactly in double.
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const int64_t rows = 65536, cols = 32;
  std::vector<uint16_t> x(static_cast<size_t>(rows * cols));
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t exp = (h >> 7) & 0xFF, man = h & 0x7F;
    for (int j = 0; j < cols; ++j) {
      uint32_t v;
      if (j == 0) {
        v = h;
      } else if (exp == 0xFF) {
        v = uint32_t(rng() & 0x7EFF);  // finite
      } else {
        const uint32_t e = uint32_t(rng() % (exp + 1));
        const uint32_t m = uint32_t(rng() % (e == exp ? man + 1 : 128));
        v = (e << 7) | m | uint32_t(rng() & 0x8000);
      }
      x[size_t(h) * cols + size_t(j)] = static_cast<uint16_t>(v);
    }
  }
  for (const Fmt& f : {kE4M3, kE5M2}) {
    std::vector<double> table = fp8_values(f);
    for (mxqScaleMode_t mode : kModes)
      for (mxqNonfinitePolicy_t policy : {MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE}) {
        QuantizeDesc d;
        d.in_dtype = MXQ_DTYPE_BF16;
        d.out_dtype = f.t;
        d.scale_mode = mode;
        d.nonfinite = policy;
        d.scale_layout = MXQ_SCALE_LAYOUT_LINEAR;
        d.rows = rows;
        d.cols = cols;
        d.in_ld = cols;
        d.in_batch_stride = rows * cols;
        std::vector<uint8_t> q(size_t(rows * cols), 0xA5), s(size_t(rows), 0xA5);
        ExecArgs a;
        a.ptr[MXQ_ARG_X] = x.data();
        a.ptr[MXQ_ARG_ROWWISE_DATA] = q.data();
        a.ptr[MXQ_ARG_ROWWISE_SCALES] = s.data();
        cpu::quantize(d, a);
        // Plain comparisons (a Catch assertion per element would dominate the run time); the
        // first mismatch is reported with everything needed to reproduce it.
        std::string first_mismatch;
        int64_t mismatches = 0;
        for (int64_t r = 0; r < rows; ++r) {
          double amax = 0;
          bool nonfinite = false;
          for (int j = 0; j < cols; ++j) {
            const float v = cpu::bf16_to_f32(x[size_t(r * cols + j)]);
            nonfinite |= !std::isfinite(v);
            if (!std::isnan(v)) amax = std::max(amax, std::fabs(double(v)));
          }
          const uint8_t e = (policy == MXQ_NONFINITE_PROPAGATE && nonfinite) ? 0xFF
                                                                              : slow_scale(float(amax), f, mode);
          for (int j = -1; j < cols; ++j) {
            uint8_t got, expect;
            if (j < 0) {
              got = s[size_t(r)];
              expect = e;
            } else {
              const float v = cpu::bf16_to_f32(x[size_t(r * cols + j)]);
              got = q[size_t(r * cols + j)];
              expect = e == 0xFF ? 0x7F : slow_fp8(static_cast<float>(double(v) * std::ldexp(1.0, 127 - e)), f, table);
            }
            if (got != expect && mismatches++ == 0)
              first_mismatch = "row " + std::to_string(r) + (j < 0 ? " scale" : " element " + std::to_string(j)) +
                               ": got " + std::to_string(got) + ", expected " + std::to_string(expect) +
                               " (block amax " + std::to_string(amax) + ")";
          }
        }
        CAPTURE(f.t, mode, policy, first_mismatch);
        REQUIRE(mismatches == 0);
      }
  }
}
