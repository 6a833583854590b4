// Scalar numerics of the CPU reference backend: the bit-level contract of docs/NUMERICS.md written
// as plainly as possible. Everything works on bit patterns or on exact double arithmetic, so the
// results do not depend on the host's libm, on x87 vs SSE, or on the compiler contracting a*b+c
// into an FMA. GPU kernels are tested against these functions bit for bit.
//
// Two rules keep the CPU and the GPU identical:
//  - every NaN a conversion *produces* is the canonical NaN of the target type (fp32 0x7FFFFFFF,
//    bf16/fp16 0x7FFF, fp8 0x7F), which is what the CUDA conversion instructions produce;
//  - denormals are never flushed (the library is built without -ffast-math; kernels avoid .ftz).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "cpu/reference.h"

namespace mxq {
namespace cpu {

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Element-format parameters. MAXN is the largest finite magnitude, EMAX its exponent
// (floor(log2 MAXN)); RCP = fl32(1 / MAXN) as the RCEIL contract fixes it.
struct Fp8Format {
  int mbits;          // explicit mantissa bits
  int bias;           // exponent bias
  int min_exp;        // exponent of the smallest normal (1 - bias)
  float maxn;         // largest finite value
  int emax;           // floor(log2 maxn)
  uint8_t maxn_code;  // code of +maxn
  uint32_t rcp_bits;  // fl32(1 / maxn)
};

const Fp8Format& format_of(mxqDataType_t t) {
  static const Fp8Format e4m3{3, 7, -6, 448.0f, 8, 0x7E, 0x3B12'4925u};      // 0x1.24924ap-9
  static const Fp8Format e5m2{2, 15, -14, 57344.0f, 15, 0x7B, 0x3792'4925u}; // 0x1.24924ap-16
  if (t == MXQ_DTYPE_E4M3) return e4m3;
  if (t == MXQ_DTYPE_E5M2) return e5m2;
  fail(MXQ_STATUS_INTERNAL_ERROR, "data type {} is not an FP8 element type", static_cast<int>(t));
}

}  // namespace

// ---- 16-bit floats -----------------------------------------------------------------------------

float bf16_to_f32(uint16_t h) { return float_of(uint32_t(h) << 16); }

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return float_of(sign | 0x7F80'0000u | (man << 13));  // Inf, NaN (payload kept)
  if (exp != 0) return float_of(sign | ((exp - 15 + 127) << 23) | (man << 13));
  // Zero or denormal: man * 2^-24 is exact in fp32.
  const float mag = std::ldexp(static_cast<float>(man), -24);
  return sign ? -mag : mag;
}

uint16_t f32_to_bf16_rne(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7FFF'FFFFu) > 0x7F80'0000u) return 0x7FFF;  // canonical NaN
  // Round to nearest even on the 16 dropped bits; a carry into the exponent is the right answer
  // (including rounding the largest values to Inf).
  const uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

uint16_t f32_to_f16_rne(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFF'FFFFu;
  if (a > 0x7F80'0000u) return 0x7FFF;  // canonical NaN
  // 65520 = 65504 + half an ulp: the tie rounds to the odd-mantissa 65504's even neighbour, Inf.
  if (a >= 0x477F'F000u) return sign | 0x7C00u;
  if (a >= 0x3880'0000u) {  // normal in fp16 (>= 2^-14)
    const uint32_t exp = (a >> 23) - 127 + 15;
    const uint32_t man = a & 0x7F'FFFFu;
    uint32_t h = (exp << 10) | (man >> 13);
    const uint32_t rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry into the exponent is correct
    return sign | static_cast<uint16_t>(h);
  }
  // fp16 denormal range: the result is a multiple of 2^-24; scaling by 2^24 is exact in double and
  // nearbyint rounds to nearest even (the default rounding mode, which the library never changes).
  const double n = std::nearbyint(static_cast<double>(float_of(a)) * 16777216.0);
  return sign | static_cast<uint16_t>(n);  // n == 1024 is the smallest normal, encoded continuously
}

// ---- FP8 ---------------------------------------------------------------------------------------

float fp8_to_f32(uint8_t q, mxqDataType_t fp8) {
  const Fp8Format& f = format_of(fp8);
  const bool neg = (q & 0x80u) != 0;
  const int ebits = 7 - f.mbits;
  const int exp = (q >> f.mbits) & ((1 << ebits) - 1);
  const int man = q & ((1 << f.mbits) - 1);
  float mag;
  if (fp8 == MXQ_DTYPE_E4M3 && exp == 15 && man == 7) {
    mag = std::numeric_limits<float>::quiet_NaN();
  } else if (fp8 == MXQ_DTYPE_E5M2 && exp == 31) {
    mag = man == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    mag = std::ldexp(static_cast<float>(man), f.min_exp - f.mbits);
  } else {
    mag = std::ldexp(static_cast<float>((1 << f.mbits) | man), exp - f.bias - f.mbits);
  }
  return neg ? -mag : mag;
}

uint8_t f32_to_fp8_satfinite(float x, mxqDataType_t fp8) {
  const Fp8Format& f = format_of(fp8);
  if (std::isnan(x)) return 0x7F;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(static_cast<double>(x));
  if (a > f.maxn) return sign | f.maxn_code;  // satfinite: Inf included
  // Quantum of the binade of a (denormals share the smallest normal binade's quantum).
  int e = f.min_exp;
  if (a >= std::ldexp(1.0, f.min_exp)) e = std::ilogb(a);
  const double quantum = std::ldexp(1.0, e - f.mbits);
  const double n = std::nearbyint(a / quantum);  // exact division by a power of two; RNE
  // Codes are monotone in the value and continuous across binades, so the code is the binade's base
  // code plus the number of quanta above the binade start (a carry moves to the next binade).
  int code;
  if (e == f.min_exp) {
    code = static_cast<int>(n);  // denormals and the first normal binade: value = code * quantum
  } else {
    code = ((e + f.bias) << f.mbits) + static_cast<int>(n) - (1 << f.mbits);
  }
  return sign | static_cast<uint8_t>(code);
}

// ---- UE8M0 scales ------------------------------------------------------------------------------

uint8_t scale_exponent(float amax, mxqDataType_t fp8, mxqScaleMode_t mode) {
  const Fp8Format& f = format_of(fp8);
  const uint32_t a = bits_of(amax) & 0x7FFF'FFFFu;
  if (a > 0x7F80'0000u) return 0xFF;   // NaN
  if (a == 0x7F80'0000u) return 0xFE;  // Inf: largest scale, elements saturate to +-MAXN

  if (mode == MXQ_SCALE_MODE_RCEIL) {
    // DESIGN 1.1 verbatim: one RN fp32 multiply, then round the quotient up to a power of two.
    const float s = std::fabs(amax) * float_of(f.rcp_bits);
    const uint32_t b = bits_of(s);
    if (std::isinf(s)) return 0xFE;
    if (s == 0.0f) return 0;
    uint32_t e = (b >> 23) & 0xFFu;
    const uint32_t m = b & 0x7F'FFFFu;
    if ((m != 0 && e != 0xFE) && !(e == 0 && m <= 0x40'0000u)) e += 1;
    return static_cast<uint8_t>(e);
  }

  // FLOOR / CEIL / EVEN (torchao's definitions): unbiased exponent of amax, minus EMAX, clamped to
  // the UE8M0 range [-127, 127]. The exponent field of an fp32 denormal (or zero) is 0, i.e. -127,
  // which always clamps to E = 0 after subtracting EMAX >= 8.
  int32_t biased = static_cast<int32_t>(a >> 23);
  const uint32_t man = a & 0x7F'FFFFu;
  if (mode == MXQ_SCALE_MODE_CEIL) {
    if (man != 0) biased += 1;
  } else if (mode == MXQ_SCALE_MODE_EVEN) {
    // Round amax to the element's mantissa width first: add half a unit in the last kept place and
    // truncate. Only the exponent is used, and a carry into it happens for the same inputs under
    // round-half-up and round-half-even (the tie below a carry has an odd last kept bit), so this is
    // "RNE to mbits, then floor". A carry out of the largest binade gives 2^128 (biased 255), which
    // stays finite here, unlike torchao's bit trick that turns it into Inf and a NaN scale.
    const uint32_t half = 1u << (23 - f.mbits - 1);
    biased = static_cast<int32_t>((a + half) >> 23);
  } else if (mode != MXQ_SCALE_MODE_FLOOR) {
    fail(MXQ_STATUS_INTERNAL_ERROR, "unknown scale mode {}", static_cast<int>(mode));
  }
  int32_t unbiased = biased - 127 - f.emax;
  if (unbiased < -127) unbiased = -127;
  if (unbiased > 127) unbiased = 127;
  return static_cast<uint8_t>(unbiased + 127);
}

float scale_inverse(uint8_t e) {
  if (e == 0xFF) return float_of(0x7FFF'FFFFu);
  if (e == 0xFE) return float_of(0x0040'0000u);  // 2^-127, an fp32 denormal
  return float_of(uint32_t(254 - e) << 23);        // 2^(127 - E); E == 0 gives 2^127
}

// ---- SwiGLU ------------------------------------------------------------------------------------
//
// silu(g) = g * sigmoid(g), evaluated with a fixed sequence of correctly rounded fp32 operations
// (add, multiply, divide, fma, rint) so that a GPU kernel can reproduce it bit for bit
// (docs/NUMERICS.md "SwiGLU"): libm's and CUDA's expf are not bit-identical, so neither is used.

namespace {

// exp(t) for t <= 0: Cody-Waite reduction t = n ln2 + r, |r| <= ln2/2, a degree-7 Taylor polynomial
// in Horner form with fma, then one correctly rounded scaling by 2^n (the result may be denormal).
float exp_nonpositive(float t) {
  if (t < -104.0f) return 0.0f;  // below half the smallest denormal: rounds to 0
  const float kLog2e = 0x1.715476p+0f;
  const float kLn2Hi = 0x1.62e430p-1f;
  const float kLn2Lo = -0x1.05c610p-29f;
  const float n = std::nearbyint(t * kLog2e);  // in [-150, 0]
  float r = std::fma(n, -kLn2Hi, t);
  r = std::fma(n, -kLn2Lo, r);
  float p = 0x1.a01a02p-13f;        // 1/7!
  p = std::fma(p, r, 0x1.6c16c2p-10f);  // 1/6!
  p = std::fma(p, r, 0x1.111112p-7f);   // 1/5!
  p = std::fma(p, r, 0x1.555556p-5f);   // 1/4!
  p = std::fma(p, r, 0x1.555556p-3f);   // 1/3!
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  // p * 2^n rounded once: multiplying by a power of two is exact while the product stays normal, so
  // the split below rounds only in its last multiplication.
  const int ni = static_cast<int>(n);
  if (ni >= -126) return p * float_of(uint32_t(ni + 127) << 23);
  return (p * float_of(uint32_t(ni + 64 + 127) << 23)) * float_of(uint32_t(-64 + 127) << 23);
}

}  // namespace

float silu(float g) {
  if (std::isnan(g)) return float_of(0x7FFF'FFFFu);
  if (g == -std::numeric_limits<float>::infinity()) return -0.0f;  // the limit, not -inf * 0
  const float e = exp_nonpositive(-std::fabs(g));                   // e^-|g|, never overflows
  const float d = 1.0f + e;
  // g >= 0: g / (1 + e^-g).  g < 0: g e^g / (1 + e^g), the same function without overflow.
  if (!std::signbit(g)) return g / d;
  return (g * e) / d;
}

}  // namespace cpu
}  // namespace mxq
