// Tests of the CPU reference MXFP8 attention (src/cpu/attention.cpp), the oracle for the GPU kernels.
//
// Operands are held logically — [B, H, S, D] with one fp8 code and one block exponent per element —
// and packed by the test into every memory layout (BHSD, BSHD, varlen) and scale layout (LINEAR,
// SWIZZLED_128x4) the oracle reads. Evidence, from the most direct to the most structural:
//   - a 2x2 case worked out by hand (including one visible P quantization: e^-1 * 256 -> 96);
//   - the forward against a plain fp64 softmax attention on the dequantized values, per element,
//     within a bound derived from the P quantization (written next to the check);
//   - the backward against central finite differences of an fp64 (unquantized-P) attention loss,
//     per element, within a bound derived from the dS and P quantizations; dV against Pq^T dO
//     recomputed from the recipe; operand routing (which input feeds which gradient);
//   - structural identities, bit for bit: GQA == MHA with repeated heads, BSHD == BHSD, varlen ==
//     one run per sequence.
// Inputs are fresh random values each run (seed printed on failure); outputs are poisoned before a
// run, every element is checked, and scale padding is 0xFF (NaN), so a read of padding shows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint16_t kPoison16 = 0xFFFF;
constexpr uint32_t kPoison32 = 0xFFFFFFFFu;

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

double p2(int e) { return std::ldexp(1.0, e); }

float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- logical operands -----------------------------------------------------------------------------

// Which elements share a scale: 1x32 along D, 32x1 along S, or 32x32 tiles. A tile-blocked tensor
// is a legal MXFP8 tensor in both orientations with the same codes, so its along-D and along-S forms
// dequantize to the same values — what the finite-difference test needs.
enum class Blocks { AlongD, AlongS, Tile };

struct Tensor4 {
  int64_t B = 0, H = 0, S = 0, D = 0;
  std::vector<uint8_t> q, e;
  size_t idx(int64_t b, int64_t h, int64_t s, int64_t d) const { return size_t(((b * H + h) * S + s) * D + d); }
  double value(int64_t b, int64_t h, int64_t s, int64_t d) const {
    const size_t i = idx(b, h, s, d);
    return double(cpu::fp8_to_f32(q[i], MXQ_DTYPE_E4M3)) * p2(int(e[i]) - 127);
  }
  std::vector<double> values() const {
    std::vector<double> v(q.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t d = 0; d < D; ++d) v[idx(b, h, s, d)] = value(b, h, s, d);
    return v;
  }
};

// E4M3 codes with |value| <= vmax (zero and denormals included), so logits stay moderate.
std::vector<uint8_t> codes_up_to(double vmax) {
  std::vector<uint8_t> v;
  for (int c = 0; c < 256; ++c) {
    const float x = cpu::fp8_to_f32(uint8_t(c), MXQ_DTYPE_E4M3);
    if (std::isfinite(x) && std::fabs(x) <= vmax) v.push_back(uint8_t(c));
  }
  return v;
}

Tensor4 random_tensor(Rng& rng, int64_t B, int64_t H, int64_t S, int64_t D, Blocks blocks, double vmax = 2.0,
                      int elo = 124, int ehi = 128) {
  Tensor4 t;
  t.B = B, t.H = H, t.S = S, t.D = D;
  t.q.resize(size_t(B * H * S * D));
  t.e.resize(t.q.size());
  const auto codes = codes_up_to(vmax);
  std::uniform_int_distribution<size_t> pick(0, codes.size() - 1);
  std::uniform_int_distribution<int> exps(elo, ehi);
  const int64_t cd = (D + 31) / 32, cs = (S + 31) / 32;
  std::vector<uint8_t> table(size_t(B * H * std::max(S * cd, D * cs)));
  for (auto& x : table) x = uint8_t(exps(rng));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d) {
          const int64_t bh = b * H + h;
          int64_t key;
          switch (blocks) {
            case Blocks::AlongD: key = (bh * S + s) * cd + d / 32; break;
            case Blocks::AlongS: key = (bh * D + d) * cs + s / 32; break;
            default: key = (bh * cs + s / 32) * cd + d / 32; break;
          }
          t.q[t.idx(b, h, s, d)] = codes[pick(rng)];
          t.e[t.idx(b, h, s, d)] = table[size_t(key)];
        }
  return t;
}

// Head h' of the result is head h' / group of t (MHA equivalent of a GQA K/V).
Tensor4 repeat_heads(const Tensor4& t, int64_t group) {
  Tensor4 r = t;
  r.H = t.H * group;
  r.q.resize(size_t(r.B * r.H * r.S * r.D));
  r.e.resize(r.q.size());
  for (int64_t b = 0; b < t.B; ++b)
    for (int64_t h = 0; h < r.H; ++h)
      for (int64_t s = 0; s < t.S; ++s)
        for (int64_t d = 0; d < t.D; ++d) {
          r.q[r.idx(b, h, s, d)] = t.q[t.idx(b, h / group, s, d)];
          r.e[r.idx(b, h, s, d)] = t.e[t.idx(b, h / group, s, d)];
        }
  return r;
}

// Sequence b of t, first len positions, as a B = 1 tensor.
Tensor4 slice(const Tensor4& t, int64_t b, int64_t len) {
  Tensor4 r;
  r.B = 1, r.H = t.H, r.S = len, r.D = t.D;
  for (int64_t h = 0; h < t.H; ++h)
    for (int64_t s = 0; s < len; ++s)
      for (int64_t d = 0; d < t.D; ++d) {
        r.q.push_back(t.q[t.idx(b, h, s, d)]);
        r.e.push_back(t.e[t.idx(b, h, s, d)]);
      }
  return r;
}

// Same for a logical [B, H, S, D] (or, with D = 1, [B, H, S]) array.
template <typename T>
std::vector<T> slice_vals(const std::vector<T>& v, int64_t H, int64_t S, int64_t D, int64_t b, int64_t len) {
  std::vector<T> r;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t s = 0; s < len; ++s)
      for (int64_t d = 0; d < D; ++d) r.push_back(v[size_t(((b * H + h) * S + s) * D + d)]);
  return r;
}

// ---- problem description and memory geometry --------------------------------------------------------

struct Geo {
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  int64_t B = 0, H = 0, S = 0, D = 0;
  std::vector<int64_t> start, len;
  int64_t rows() const {
    return layout == MXQ_ATTN_LAYOUT_BHSD ? B * H * S : (start.back() + len.back()) * H;
  }
  int64_t row(int64_t b, int64_t h, int64_t s) const {
    return layout == MXQ_ATTN_LAYOUT_BHSD ? (b * H + h) * S + s : (start[b] + s) * H + h;
  }
};

struct Case {
  int64_t B = 1, Hq = 1, Hkv = 1, Sq = 1, Skv = 1, D = 32;
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  mxqAttentionMask_t mask = MXQ_ATTN_MASK_NONE;
  bool varlen = false;
  std::vector<int64_t> lq, lk;  // per-sequence lengths when varlen
  bool swz = false;
  float scale = 0.125f, p_scale = 256.0f;

  int64_t len_q(int64_t b) const { return varlen ? lq[b] : Sq; }
  int64_t len_kv(int64_t b) const { return varlen ? lk[b] : Skv; }
  Geo geo(bool q_side) const {
    Geo g;
    g.layout = layout;
    g.B = B, g.H = q_side ? Hq : Hkv, g.S = q_side ? Sq : Skv, g.D = D;
    int64_t t = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t l = q_side ? len_q(b) : len_kv(b);
      g.start.push_back(t);
      g.len.push_back(l);
      t += varlen ? l : g.S;
    }
    return g;
  }
  AttentionDesc desc(mxqAttentionDirection_t dir) const {
    AttentionDesc d;
    d.direction = dir;
    d.batch = B, d.heads_q = Hq, d.heads_kv = Hkv, d.seqlen_q = Sq, d.seqlen_kv = Skv, d.head_dim = D;
    d.layout = layout;
    d.mask = mask;
    d.softmax_scale = scale;
    d.softmax_scale_set = true;
    d.p_scale = p_scale;
    d.scale_layout = swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR;
    d.varlen = varlen;
    return d;
  }
  std::string str() const {
    std::ostringstream os;
    os << "B=" << B << " Hq=" << Hq << " Hkv=" << Hkv << " Sq=" << Sq << " Skv=" << Skv << " D=" << D
       << (layout == MXQ_ATTN_LAYOUT_BHSD ? " BHSD" : " BSHD") << " mask=" << int(mask) << (varlen ? " varlen" : "")
       << (swz ? " swizzled" : " linear") << " scale=" << scale << " p_scale=" << p_scale;
    return os.str();
  }
};

bool visible(mxqAttentionMask_t mask, int64_t i, int64_t j, int64_t lq, int64_t lk) {
  if (mask == MXQ_ATTN_MASK_CAUSAL_TOP_LEFT) return j <= i;
  if (mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT) return j <= i + lk - lq;
  return true;
}

// ---- packing -----------------------------------------------------------------------------------------

std::vector<uint8_t> pack_data(const Tensor4& t, const Geo& g) {
  std::vector<uint8_t> out(size_t(g.rows() * g.D), 0x7F);  // NaN code where no element lives
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t s = 0; s < g.len[b]; ++s)
        for (int64_t d = 0; d < g.D; ++d) out[size_t(g.row(b, h, s) * g.D + d)] = t.q[t.idx(b, h, s, d)];
  return out;
}

// Scales of t quantized along D (rowwise scales of the 2D [rows, D] view in memory order) or along S
// (batched [B*H] columnwise scales of each [S, D] matrix, r := d, c := s/32; per sequence with varlen).
std::vector<uint8_t> pack_scales(const Tensor4& t, const Geo& g, bool along_d, bool swz) {
  using namespace layout;
  const int64_t cd = scale_cols(g.D), cs = scale_cols(g.S);
  const int64_t entry = scale_bytes(swz, g.D, cs);
  const int64_t bytes = along_d ? scale_bytes(swz, g.rows(), cd) : g.B * g.H * entry;
  std::vector<uint8_t> out(size_t(bytes), 0xFF);
  std::vector<char> written(out.size(), 0);
  int64_t bad = 0;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t s = 0; s < g.len[b]; ++s)
        for (int64_t d = 0; d < g.D; ++d) {
          const int64_t r = g.row(b, h, s);
          const int64_t off = along_d ? (swz ? swizzled_offset(r, d / 32, swz_cols(cd)) : r * cd + d / 32)
                                      : (b * g.H + h) * entry +
                                            (swz ? swizzled_offset(d, s / 32, swz_cols(cs)) : d * cs + s / 32);
          const uint8_t e = t.e[t.idx(b, h, s, d)];
          // Every element of a block must carry the block's exponent (else the tensor was generated
          // for the other orientation).
          if (off >= bytes || (written[size_t(off)] && out[size_t(off)] != e)) {
            ++bad;
            continue;
          }
          out[size_t(off)] = e;
          written[size_t(off)] = 1;
        }
  REQUIRE(bad == 0);
  return out;
}

std::vector<uint16_t> pack_bf16(const std::vector<double>& v, const Geo& g) {
  std::vector<uint16_t> out(size_t(g.rows() * g.D), kPoison16);
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t s = 0; s < g.len[b]; ++s)
        for (int64_t d = 0; d < g.D; ++d)
          out[size_t(g.row(b, h, s) * g.D + d)] =
              cpu::f32_to_bf16_rne(float(v[size_t(((b * g.H + h) * g.S + s) * g.D + d)]));
  return out;
}

// Logical [B, H, S, D] view of a bf16 output; positions past a sequence are NaN. Requires that every
// element of every sequence was written (the poison pattern is gone).
std::vector<double> unpack_bf16(const std::vector<uint16_t>& p, const Geo& g, const char* what) {
  std::vector<double> out(size_t(g.B * g.H * g.S * g.D), std::nan(""));
  int64_t unwritten = 0;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t h = 0; h < g.H; ++h)
      for (int64_t s = 0; s < g.len[b]; ++s)
        for (int64_t d = 0; d < g.D; ++d) {
          const uint16_t x = p[size_t(g.row(b, h, s) * g.D + d)];
          unwritten += x == kPoison16;
          out[size_t(((b * g.H + h) * g.S + s) * g.D + d)] = cpu::bf16_to_f32(x);
        }
  INFO(what << ": " << unwritten << " elements not written");
  REQUIRE(unwritten == 0);
  return out;
}

struct Cu {
  std::vector<int32_t> q, kv;
};
Cu cu_seqlens(const Case& c) {
  Cu cu;
  const Geo gq = c.geo(true), gk = c.geo(false);
  for (int64_t b = 0; b < c.B; ++b) {
    cu.q.push_back(int32_t(gq.start[b]));
    cu.kv.push_back(int32_t(gk.start[b]));
  }
  cu.q.push_back(int32_t(gq.start.back() + gq.len.back()));
  cu.kv.push_back(int32_t(gk.start.back() + gk.len.back()));
  return cu;
}

// ---- running the oracle ------------------------------------------------------------------------------

struct FwdOut {
  std::vector<double> o;     // logical [B, Hq, Sq, D]
  std::vector<float> lse;    // [B, Hq, Sq]
};

FwdOut run_forward(const Case& c, const Tensor4& Q, const Tensor4& K, const Tensor4& V) {
  const Geo gq = c.geo(true), gk = c.geo(false);
  auto qd = pack_data(Q, gq), kd = pack_data(K, gk), vd = pack_data(V, gk);
  auto qs = pack_scales(Q, gq, true, c.swz), ks = pack_scales(K, gk, true, c.swz);
  auto vs = pack_scales(V, gk, false, c.swz);
  std::vector<uint16_t> o(size_t(gq.rows() * c.D), kPoison16);
  std::vector<float> lse(size_t(c.B * c.Hq * c.Sq), f32_from_bits(kPoison32));
  Cu cu = cu_seqlens(c);
  ExecArgs a;
  a.ptr[MXQ_ARG_Q_DATA] = qd.data(), a.ptr[MXQ_ARG_Q_SCALES] = qs.data();
  a.ptr[MXQ_ARG_K_DATA] = kd.data(), a.ptr[MXQ_ARG_K_SCALES] = ks.data();
  a.ptr[MXQ_ARG_V_DATA] = vd.data(), a.ptr[MXQ_ARG_V_SCALES] = vs.data();
  a.ptr[MXQ_ARG_O] = o.data(), a.ptr[MXQ_ARG_LSE] = lse.data();
  if (c.varlen) a.ptr[MXQ_ARG_CU_SEQLENS_Q] = cu.q.data(), a.ptr[MXQ_ARG_CU_SEQLENS_KV] = cu.kv.data();
  cpu::attention_forward(c.desc(MXQ_ATTN_FORWARD), a);

  FwdOut out;
  out.o = unpack_bf16(o, gq, "O");
  out.lse = lse;
  // LSE is written for every position of every sequence and nowhere else.
  int64_t bad = 0;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.Hq; ++h)
      for (int64_t s = 0; s < c.Sq; ++s)
        bad += (bits_of(lse[size_t((b * c.Hq + h) * c.Sq + s)]) == kPoison32) != (s >= c.len_q(b));
  INFO("LSE: " << bad << " entries written where they should not be, or not written");
  REQUIRE(bad == 0);
  return out;
}

struct BwdIn {
  const Tensor4 *q, *k, *v, *dO;     // along D
  const Tensor4 *qT, *kT, *dOT;      // along S
  std::vector<double> o16, do16;     // logical bf16 values of O and dO
  std::vector<float> lse;
};
struct BwdOut {
  std::vector<double> dq, dk, dv;  // logical
};

BwdOut run_backward(const Case& c, const BwdIn& in) {
  const Geo gq = c.geo(true), gk = c.geo(false);
  auto qd = pack_data(*in.q, gq), kd = pack_data(*in.k, gk), vd = pack_data(*in.v, gk), dod = pack_data(*in.dO, gq);
  auto qs = pack_scales(*in.q, gq, true, c.swz), ks = pack_scales(*in.k, gk, true, c.swz);
  auto vs = pack_scales(*in.v, gk, true, c.swz), dos = pack_scales(*in.dO, gq, true, c.swz);
  auto qtd = pack_data(*in.qT, gq), ktd = pack_data(*in.kT, gk), dotd = pack_data(*in.dOT, gq);
  auto qts = pack_scales(*in.qT, gq, false, c.swz), kts = pack_scales(*in.kT, gk, false, c.swz);
  auto dots = pack_scales(*in.dOT, gq, false, c.swz);
  auto o16 = pack_bf16(in.o16, gq), do16 = pack_bf16(in.do16, gq);
  std::vector<float> lse = in.lse;
  std::vector<uint16_t> dq(size_t(gq.rows() * c.D), kPoison16), dk(size_t(gk.rows() * c.D), kPoison16),
      dv(dk.size(), kPoison16);
  Cu cu = cu_seqlens(c);
  ExecArgs a;
  a.ptr[MXQ_ARG_Q_DATA] = qd.data(), a.ptr[MXQ_ARG_Q_SCALES] = qs.data();
  a.ptr[MXQ_ARG_K_DATA] = kd.data(), a.ptr[MXQ_ARG_K_SCALES] = ks.data();
  a.ptr[MXQ_ARG_V_DATA] = vd.data(), a.ptr[MXQ_ARG_V_SCALES] = vs.data();
  a.ptr[MXQ_ARG_DO_DATA] = dod.data(), a.ptr[MXQ_ARG_DO_SCALES] = dos.data();
  a.ptr[MXQ_ARG_Q_T_DATA] = qtd.data(), a.ptr[MXQ_ARG_Q_T_SCALES] = qts.data();
  a.ptr[MXQ_ARG_K_T_DATA] = ktd.data(), a.ptr[MXQ_ARG_K_T_SCALES] = kts.data();
  a.ptr[MXQ_ARG_DO_T_DATA] = dotd.data(), a.ptr[MXQ_ARG_DO_T_SCALES] = dots.data();
  a.ptr[MXQ_ARG_O] = o16.data(), a.ptr[MXQ_ARG_DO] = do16.data(), a.ptr[MXQ_ARG_LSE] = lse.data();
  a.ptr[MXQ_ARG_DQ] = dq.data(), a.ptr[MXQ_ARG_DK] = dk.data(), a.ptr[MXQ_ARG_DV] = dv.data();
  if (c.varlen) a.ptr[MXQ_ARG_CU_SEQLENS_Q] = cu.q.data(), a.ptr[MXQ_ARG_CU_SEQLENS_KV] = cu.kv.data();
  cpu::attention_backward(c.desc(MXQ_ATTN_BACKWARD), a);
  return {unpack_bf16(dq, gq, "dQ"), unpack_bf16(dk, gk, "dK"), unpack_bf16(dv, gk, "dV")};
}

// ---- checking ------------------------------------------------------------------------------------------

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

std::string at(const char* what, int64_t b, int64_t h, int64_t s, int64_t d = -1) {
  std::ostringstream os;
  os << what << "(b=" << b << ", h=" << h << ", s=" << s;
  if (d >= 0) os << ", d=" << d;
  os << ")";
  return os.str();
}

// Equality of two logical arrays, NaN == NaN (positions past a sequence are NaN in both).
bool same(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}
bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * 4) == 0;
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

// Bounds on rounding, used by several tests.
const double kBf16Round = p2(-8) + p2(-23);  // fp64 -> fp32 -> bf16 (8 significant bits), relative
const double kFp8Rel = p2(-4);               // E4M3 RNE, normal range, relative

}  // namespace

// ---------------------------------------------------------------------------------------------------------

// Sq = Skv = 2, D = 32, softmax_scale = 1, p_scale = 256, every scale 2^0. Codes: Q0 = 0, Q1 = e0;
// K0 = e0, K1 = 2 e0; V0 = (2, 0.5, 1, 1, ...), V1 = (-1, 4, -1, -1, ...).
// No mask:  row 0: S = [0, 0], p = [1, 1], Pq = p (256 is exact), l = 2: O0 = (V0 + V1)/2, LSE0 = ln 2.
//           row 1: S = [1, 2], m = 2, p = [e^-1, 1]; e^-1 * 256 = 94.18 rounds to 96 (E4M3 step 8 in
//           [64, 128)), so Pq = [0.375, 1] while l = 1 + e^-1 keeps the exact p:
//           O1 = (0.375 V0 + V1) / (1 + e^-1) = (-0.25, 4.1875, -0.625, ...) / (1 + e^-1),
//           LSE1 = 2 + ln(1 + e^-1).
// Causal (either corner, Sq = Skv): row 0 sees key 0 only: O0 = V0, LSE0 = 0; row 1 as above.
TEST_CASE("ref attention: hand-checked 2x2 forward", "[ref][attention]") {
  Tensor4 Q, K, V;
  for (Tensor4* t : {&Q, &K, &V}) {
    t->B = 1, t->H = 1, t->S = 2, t->D = 32;
    t->q.assign(64, 0x00);
    t->e.assign(64, 127);
  }
  Q.q[32] = 0x38;       // Q1 = (1, 0, ...)
  K.q[0] = 0x38;        // K0 = (1, 0, ...)
  K.q[32] = 0x40;       // K1 = (2, 0, ...)
  for (int d = 0; d < 32; ++d) {
    V.q[d] = d == 0 ? 0x40 : d == 1 ? 0x30 : 0x38;        // 2, 0.5, 1...
    V.q[32 + d] = d == 0 ? 0xB8 : d == 1 ? 0x48 : 0xB8;   // -1, 4, -1...
  }
  const double l1 = 1.0 + std::exp(-1.0);
  auto v0 = [](int d) { return d == 0 ? 2.0 : d == 1 ? 0.5 : 1.0; };
  auto v1 = [](int d) { return d == 0 ? -1.0 : d == 1 ? 4.0 : -1.0; };

  for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
    for (bool swz : {false, true}) {
      Case c;
      c.Sq = c.Skv = 2;
      c.mask = mask;
      c.swz = swz;
      c.scale = 1.0f;
      CAPTURE(c.str());
      const FwdOut out = run_forward(c, Q, K, V);
      const bool causal = mask != MXQ_ATTN_MASK_NONE;
      for (int d = 0; d < 32; ++d) {
        CAPTURE(d);
        const double o0 = causal ? v0(d) : (v0(d) + v1(d)) / 2.0;
        const double o1 = (0.375 * v0(d) + v1(d)) / l1;
        CHECK(out.o[size_t(d)] == double(cpu::bf16_to_f32(cpu::f32_to_bf16_rne(float(o0)))));
        CHECK(out.o[size_t(32 + d)] == double(cpu::bf16_to_f32(cpu::f32_to_bf16_rne(float(o1)))));
      }
      const double lse0 = causal ? 0.0 : std::log(2.0), lse1 = 2.0 + std::log(l1);
      CHECK(std::fabs(out.lse[0] - lse0) <= p2(-23) * std::fabs(lse0));
      CHECK(std::fabs(out.lse[1] - lse1) <= p2(-23) * std::fabs(lse1));
    }
  }
}

// The forward against softmax(scale Q K^T) V in fp64 on the dequantized inputs (unquantized P).
// Bound: with p the exact probabilities (max 1) and l >= 1 their sum, the oracle's numerator uses
// Pq = fp8(fl32(p) * ps) / ps. For p * ps >= 2^-6 (normal E4M3) RNE errs by at most 2^-4 relative;
// below, by half a denormal step, 2^-10 / ps; the fp32 rounding of p adds 2^-24 relative. So
//     |O_oracle - O_exact| <= E = sum_j ((2^-4 + 2^-23) p_j + 2^-10 / ps) |V_jd| / l,
// and the final rounding to bf16 (through fp32) adds (2^-8 + 2^-23)(|O_exact| + E).
// LSE = fl32(m + ln l) of the same fp64 quantities: within 2^-24 |LSE| plus fp64 noise.
TEST_CASE("ref attention: forward against an fp64 softmax attention, all masks and layouts", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  struct Shape {
    int64_t sq, skv, d;
  };
  // Sq != Skv both ways (bottom-right with Sq > Skv has fully masked rows), partial 32-blocks along S
  // and D, D = 1, a single key, and the usual head dims.
  const Shape shapes[] = {{45, 45, 64}, {37, 70, 40}, {70, 37, 33}, {5, 1, 1}, {20, 33, 128}};
  const float p_scales[] = {256.0f, 448.0f, 64.0f};
  int which = 0;
  for (const Shape& sh : shapes) {
    for (auto layout : {MXQ_ATTN_LAYOUT_BHSD, MXQ_ATTN_LAYOUT_BSHD}) {
      for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
        Case c;
        c.B = 2, c.Hq = 4, c.Hkv = 2, c.Sq = sh.sq, c.Skv = sh.skv, c.D = sh.d;
        c.layout = layout;
        c.mask = mask;
        c.swz = (which++ % 2) == 0;
        c.scale = float(std::uniform_real_distribution<double>(0.5, 2.0)(rng) / std::sqrt(double(sh.d)));
        c.p_scale = p_scales[which % 3];
        CAPTURE(c.str());
        const Tensor4 Q = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
        const Tensor4 K = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
        const Tensor4 V = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongS, 4.0);
        const FwdOut out = run_forward(c, Q, K, V);

        const auto qv = Q.values(), kv = K.values(), vv = V.values();
        Mismatches mm;
        int64_t fully_masked_rows = 0;
        const int64_t group = c.Hq / c.Hkv;
        std::vector<double> s(size_t(c.Skv)), p(size_t(c.Skv));
        for (int64_t b = 0; b < c.B; ++b)
          for (int64_t h = 0; h < c.Hq; ++h)
            for (int64_t i = 0; i < c.Sq; ++i) {
              const int64_t hk = h / group;
              double m = -kInf;
              for (int64_t j = 0; j < c.Skv; ++j) {
                if (!visible(mask, i, j, c.Sq, c.Skv)) continue;
                double acc = 0.0;
                for (int64_t d = 0; d < c.D; ++d) acc += qv[Q.idx(b, h, i, d)] * kv[K.idx(b, hk, j, d)];
                s[j] = double(c.scale) * acc;
                m = std::max(m, s[j]);
              }
              const size_t orow = size_t(((b * c.Hq + h) * c.Sq + i) * c.D);
              const float lse = out.lse[size_t((b * c.Hq + h) * c.Sq + i)];
              if (m == -kInf) {  // fully masked: O = 0 exactly, LSE = -inf
                ++fully_masked_rows;
                for (int64_t d = 0; d < c.D; ++d)
                  mm.add(out.o[orow + d] == 0.0, at("O of a fully masked row", b, h, i, d));
                mm.add(lse == -std::numeric_limits<float>::infinity(), at("LSE of a fully masked row", b, h, i));
                continue;
              }
              double l = 0.0;
              for (int64_t j = 0; j < c.Skv; ++j) {
                p[j] = visible(mask, i, j, c.Sq, c.Skv) ? std::exp(s[j] - m) : 0.0;
                l += p[j];
              }
              for (int64_t d = 0; d < c.D; ++d) {
                double o = 0.0, e = 0.0, mag = 0.0;
                for (int64_t j = 0; j < c.Skv; ++j) {
                  if (!visible(mask, i, j, c.Sq, c.Skv)) continue;
                  const double vjd = vv[V.idx(b, hk, j, d)];
                  o += p[j] * vjd;
                  e += ((kFp8Rel + p2(-23)) * p[j] + p2(-10) / c.p_scale) * std::fabs(vjd);
                  mag += p[j] * std::fabs(vjd);
                }
                o /= l, e /= l, mag /= l;
                const double tol = e + kBf16Round * (std::fabs(o) + e) + 1e-12 * mag;
                const double got = out.o[orow + d];
                mm.add(std::fabs(got - o) <= tol, [&] {
                  std::ostringstream os;
                  os << at("O", b, h, i, d) << ": got " << got << " exact " << o << " tol " << tol;
                  return os.str();
                });
              }
              const double lse_ref = m + std::log(l);
              mm.add(std::fabs(lse - lse_ref) <= p2(-24) * std::fabs(lse_ref) + 1e-12 * (std::fabs(m) + 1.0), [&] {
                std::ostringstream os;
                os << at("LSE", b, h, i) << ": got " << lse << " exact " << lse_ref;
                return os.str();
              });
            }
        INFO(mm.first.str());
        REQUIRE(mm.checked == c.B * c.Hq * c.Sq * (c.D + 1));
        REQUIRE(mm.count == 0);
        // Bottom-right with Sq > Skv masks rows i < Sq - Skv entirely; no other case masks a row.
        const bool br_masks_rows = mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT && c.Sq > c.Skv;
        const int64_t want = br_masks_rows ? c.B * c.Hq * (c.Sq - c.Skv) : 0;
        CHECK(fully_masked_rows == want);
      }
    }
  }
}

// dL/dQ, dL/dK, dL/dV of L = sum_{h,i,d} dO * O with O = softmax(scale Q K^T) V in fp64 (P not
// quantized), by central differences, against the oracle's backward. Q, K, V, dO are tile-blocked
// so their along-D and along-S forms are the same values, and dO is exact in bf16.
//
// Bound. The oracle's dS is P_o (dP - delta_o) scale with delta_o from the bf16 O of its own forward
// (O carries the P quantization) and P_o = exp(S - fl32(LSE)), within r_i = (|LSE_i| + 1) 2^-23
// relative of the exact P. The test recomputes dS_r = P (dP - delta_o) scale from the same bf16 O, so
// |dS_oracle - dS_exact| <= |dS_r - dS_exact| + r_i |dS_r| before quantization. MXFP8 (RCEIL puts the
// block max in (224, 448]) then errs by at most 2^-4 relative (fp32 rounding: + 2^-24) for normal
// elements and 2^-10 / 224 of the block max for denormals, bounded by 2^-16 max|dS_r|. Hence per
// entry err_ij = (2^-4 + 2^-24)(1 + r_i)|dS_r| + r_i |dS_r| + 2^-16 max|dS_r| + |dS_r - dS_exact|, and
//     |dQ_o - dQ| <= sum_j err_ij |K_jd|,   |dK_o - dK| <= sum_{h,i} err_ij |Q_id|,
//     |dV_o - dV| <= sum_{h,i} ((2^-4 + 3 r_i) P_ij + 2^-10 / ps) |dO_id|,
// plus the bf16 rounding (2^-8 + 2^-23)(|ref| + bound) and the finite-difference error (h = 2^-17:
// truncation ~ h^2 and cancellation ~ 2^-52 |L| / h, both far below 1e-7 (1 + max |grad|)).
TEST_CASE("ref attention: backward against finite differences of an fp64 attention loss", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  struct Variant {
    int64_t sq, skv, d;
    mxqAttentionMask_t mask;
    mxqAttentionLayout_t layout;
  };
  const Variant variants[] = {{37, 45, 40, MXQ_ATTN_MASK_NONE, MXQ_ATTN_LAYOUT_BHSD},
                              {37, 45, 40, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_LAYOUT_BSHD},
                              {45, 29, 24, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT, MXQ_ATTN_LAYOUT_BHSD}};
  int which = 0;
  for (const Variant& var : variants) {
    Case c;
    c.B = 1, c.Hq = 2, c.Hkv = 1, c.Sq = var.sq, c.Skv = var.skv, c.D = var.d;
    c.mask = var.mask;
    c.layout = var.layout;
    c.swz = (which++ % 2) == 1;
    c.scale = float(1.0 / std::sqrt(double(c.D)));
    CAPTURE(c.str());
    const Tensor4 Q = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::Tile, 2.0, 125, 128);
    const Tensor4 K = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::Tile, 2.0, 125, 128);
    const Tensor4 V = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::Tile, 2.0, 125, 128);
    const Tensor4 dO = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::Tile, 2.0, 125, 128);
    const FwdOut fwd = run_forward(c, Q, K, V);
    BwdIn in{&Q, &K, &V, &dO, &Q, &K, &dO, fwd.o, dO.values(), fwd.lse};
    const BwdOut got = run_backward(c, in);

    const auto qv = Q.values(), kv = K.values(), vv = V.values(), dov = dO.values();
    const int64_t sq = c.Sq, skv = c.Skv, dim = c.D, group = c.Hq / c.Hkv;
    const double scale = c.scale;
    auto vis = [&](int64_t i, int64_t j) { return visible(c.mask, i, j, sq, skv); };
    // Softmax-weighted row loss sum_j softmax(s)_j w_j over the visible keys.
    auto row_loss = [&](int64_t i, const double* s, const double* w) {
      double m = -kInf;
      for (int64_t j = 0; j < skv; ++j)
        if (vis(i, j)) m = std::max(m, s[j]);
      if (m == -kInf) return 0.0;
      double l = 0.0, acc = 0.0;
      for (int64_t j = 0; j < skv; ++j)
        if (vis(i, j)) {
          const double e = std::exp(s[j] - m);
          l += e;
          acc += e * w[j];
        }
      return acc / l;
    };

    const size_t qn = size_t(c.Hq * sq * dim), kn = size_t(c.Hkv * skv * dim);
    std::vector<double> fd_dq(qn), fd_dk(kn, 0.0), fd_dv(kn, 0.0);
    std::vector<double> ex_dq(qn, 0.0), ex_dk(kn, 0.0), ex_dv(kn, 0.0);
    std::vector<double> tol_dq(qn, 0.0), tol_dk(kn, 0.0), tol_dv(kn, 0.0);
    const double hstep = p2(-17);
    for (int64_t h = 0; h < c.Hq; ++h) {
      const int64_t hk = h / group;
      // S and W = dO V^T of this head.
      std::vector<double> S(size_t(sq * skv)), W(S.size());
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < skv; ++j) {
          double s = 0.0, w = 0.0;
          for (int64_t d = 0; d < dim; ++d) {
            s += qv[Q.idx(0, h, i, d)] * kv[K.idx(0, hk, j, d)];
            w += dov[dO.idx(0, h, i, d)] * vv[V.idx(0, hk, j, d)];
          }
          S[size_t(i * skv + j)] = scale * s;
          W[size_t(i * skv + j)] = w;
        }
      // Finite differences. dQ: only row i of S moves. dK: column j of S moves in every row.
      // dV: column j of W moves.
      std::vector<double> srow(static_cast<size_t>(skv)), wrow(static_cast<size_t>(skv));
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t d = 0; d < dim; ++d) {
          double lp, lm;
          for (int sign : {1, -1}) {
            for (int64_t j = 0; j < skv; ++j)
              srow[j] = S[size_t(i * skv + j)] + sign * hstep * scale * kv[K.idx(0, hk, j, d)];
            (sign > 0 ? lp : lm) = row_loss(i, srow.data(), &W[size_t(i * skv)]);
          }
          fd_dq[size_t((h * sq + i) * dim + d)] = (lp - lm) / (2 * hstep);
        }
      for (int64_t j = 0; j < skv; ++j)
        for (int64_t d = 0; d < dim; ++d) {
          double lk[2] = {0.0, 0.0}, lv[2] = {0.0, 0.0};
          for (int t = 0; t < 2; ++t) {
            const double sign = t == 0 ? 1.0 : -1.0;
            for (int64_t i = 0; i < sq; ++i) {
              std::copy(&S[size_t(i * skv)], &S[size_t(i * skv + skv)], srow.begin());
              srow[j] += sign * hstep * scale * qv[Q.idx(0, h, i, d)];
              lk[t] += row_loss(i, srow.data(), &W[size_t(i * skv)]);
              std::copy(&W[size_t(i * skv)], &W[size_t(i * skv + skv)], wrow.begin());
              wrow[j] += sign * hstep * dov[dO.idx(0, h, i, d)];
              lv[t] += row_loss(i, &S[size_t(i * skv)], wrow.data());
            }
          }
          fd_dk[size_t((hk * skv + j) * dim + d)] += (lk[0] - lk[1]) / (2 * hstep);
          fd_dv[size_t((hk * skv + j) * dim + d)] += (lv[0] - lv[1]) / (2 * hstep);
        }

      // Exact gradients and the bound's ingredients.
      std::vector<double> P(S.size(), 0.0), dS_ex(S.size(), 0.0), dS_r(S.size(), 0.0), r(size_t(sq), 0.0);
      double max_ds = 0.0;
      for (int64_t i = 0; i < sq; ++i) {
        double m = -kInf;
        for (int64_t j = 0; j < skv; ++j)
          if (vis(i, j)) m = std::max(m, S[size_t(i * skv + j)]);
        if (m == -kInf) continue;
        double l = 0.0;
        for (int64_t j = 0; j < skv; ++j)
          if (vis(i, j)) l += std::exp(S[size_t(i * skv + j)] - m);
        double delta_ex = 0.0, delta_o = 0.0;
        for (int64_t j = 0; j < skv; ++j)
          if (vis(i, j)) {
            P[size_t(i * skv + j)] = std::exp(S[size_t(i * skv + j)] - m) / l;
            delta_ex += P[size_t(i * skv + j)] * W[size_t(i * skv + j)];
          }
        for (int64_t d = 0; d < dim; ++d)
          delta_o += in.do16[size_t((h * sq + i) * dim + d)] * in.o16[size_t((h * sq + i) * dim + d)];
        r[size_t(i)] = (std::fabs(m + std::log(l)) + 1.0) * p2(-23);
        for (int64_t j = 0; j < skv; ++j) {
          const size_t ij = size_t(i * skv + j);
          dS_ex[ij] = P[ij] * (W[ij] - delta_ex) * scale;
          dS_r[ij] = P[ij] * (W[ij] - delta_o) * scale;
          max_ds = std::max(max_ds, std::fabs(dS_r[ij]));
        }
      }
      for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < skv; ++j) {
          const size_t ij = size_t(i * skv + j);
          if (!vis(i, j)) continue;  // the oracle's masked dS and Pq are exactly 0
          const double ri = r[size_t(i)];
          const double err = (kFp8Rel + p2(-24)) * (1 + ri) * std::fabs(dS_r[ij]) + ri * std::fabs(dS_r[ij]) +
                             p2(-16) * max_ds + std::fabs(dS_r[ij] - dS_ex[ij]);
          const double perr = (kFp8Rel + 3 * ri) * P[ij] + p2(-10) / c.p_scale;
          for (int64_t d = 0; d < dim; ++d) {
            const size_t qi = size_t((h * sq + i) * dim + d), kj = size_t((hk * skv + j) * dim + d);
            ex_dq[qi] += dS_ex[ij] * kv[K.idx(0, hk, j, d)];
            ex_dk[kj] += dS_ex[ij] * qv[Q.idx(0, h, i, d)];
            ex_dv[kj] += P[ij] * dov[dO.idx(0, h, i, d)];
            tol_dq[qi] += err * std::fabs(kv[K.idx(0, hk, j, d)]);
            tol_dk[kj] += err * std::fabs(qv[Q.idx(0, h, i, d)]);
            tol_dv[kj] += perr * std::fabs(dov[dO.idx(0, h, i, d)]);
          }
        }
    }

    auto check = [&](const char* name, const std::vector<double>& oracle, const std::vector<double>& fd,
                     const std::vector<double>& exact, const std::vector<double>& bound, int64_t heads, int64_t len) {
      double gmax = 0.0;
      for (double g : fd) gmax = std::max(gmax, std::fabs(g));
      const double fd_tol = 1e-7 * (1.0 + gmax);
      Mismatches mm, self;
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t s = 0; s < len; ++s)
          for (int64_t d = 0; d < dim; ++d) {
            const size_t k = size_t((h * len + s) * dim + d);
            // The test's own analytic gradient must agree with its finite differences.
            self.add(std::fabs(fd[k] - exact[k]) <= fd_tol, at(name, 0, h, s, d) + " (test self-check)");
            const double tol = bound[k] + kBf16Round * (std::fabs(fd[k]) + bound[k]) + fd_tol;
            mm.add(std::fabs(oracle[k] - fd[k]) <= tol, [&] {
              std::ostringstream os;
              os << at(name, 0, h, s, d) << ": oracle " << oracle[k] << " finite difference " << fd[k]
                 << " tol " << tol;
              return os.str();
            });
          }
      INFO(self.first.str() << mm.first.str());
      REQUIRE(self.count == 0);
      REQUIRE(mm.checked == heads * len * dim);
      REQUIRE(mm.count == 0);
    };
    check("dQ", got.dq, fd_dq, ex_dq, tol_dq, c.Hq, sq);
    check("dK", got.dk, fd_dk, ex_dk, tol_dk, c.Hkv, skv);
    check("dV", got.dv, fd_dv, ex_dv, tol_dv, c.Hkv, skv);
  }
}

// The backward is deterministic given the recipe, so it is recomputed here step by step, on the
// logical operands, with independent random values in every slot (so reading the wrong one shows):
//   S = scale * Q K^T (along-D operands), P = exp(S - LSE) with the LSE passed in,
//   Pq = fp8(fl32(P) * ps) / ps, dP = dO V^T (along D), delta = rowsum(dO_bf16 * O_bf16),
//   dS = P (dP - delta) scale; dS_kv / dS_q = dS MXFP8-quantized (E4M3, RCEIL, DESIGN 1.1) in
//   32-blocks along s_kv / along s_q, then dequantized;
//   dQ = dS_kv K_T, dK = sum over the group's heads of dS_q^T Q_T, dV = the same of Pq^T dO_T.
// The fp64 steps up to each quantization are evaluated in the oracle's order, so Pq and the
// quantized dS come out identical and the results differ only in the final rounding:
// |oracle - ref| <= (2^-8 + 2^-23)|ref| plus fp64 summation noise.
// (The finite-difference test cannot see these choices: they all approximate the same gradient.)
TEST_CASE("ref attention: dQ, dK, dV equal the recipe recomputed step by step", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
    Case c;
    c.B = 2, c.Hq = 4, c.Hkv = 2, c.Sq = 50, c.Skv = 67, c.D = 48;
    c.mask = mask;
    c.layout = mask == MXQ_ATTN_MASK_NONE ? MXQ_ATTN_LAYOUT_BSHD : MXQ_ATTN_LAYOUT_BHSD;
    c.swz = mask == MXQ_ATTN_MASK_NONE;
    c.scale = 0.15f;
    c.p_scale = 200.0f;
    CAPTURE(c.str());
    const Tensor4 Q = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
    const Tensor4 K = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
    const Tensor4 V = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
    const Tensor4 dO = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
    const Tensor4 QT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);
    const Tensor4 KT = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongS);
    const Tensor4 dOT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);
    const auto o16 = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD).values();
    const auto do16 = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD).values();
    const auto qv = Q.values(), kv = K.values(), vv = V.values(), dov = dO.values();
    const auto qtv = QT.values(), ktv = KT.values(), dotv = dOT.values();
    const int64_t group = c.Hq / c.Hkv, sq = c.Sq, skv = c.Skv, dim = c.D;
    const double scale = c.scale;

    // LSE of the exact softmax, as the fp32 input.
    std::vector<float> lse(size_t(c.B * c.Hq * sq));
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.Hq; ++h)
        for (int64_t i = 0; i < sq; ++i) {
          std::vector<double> s;
          for (int64_t j = 0; j < skv; ++j) {
            if (!visible(mask, i, j, sq, skv)) continue;
            double acc = 0.0;
            for (int64_t d = 0; d < dim; ++d) acc += qv[Q.idx(b, h, i, d)] * kv[K.idx(b, h / group, j, d)];
            s.push_back(scale * acc);
          }
          double m = -kInf, l = 0.0;
          for (double x : s) m = std::max(m, x);
          for (double x : s) l += std::exp(x - m);
          lse[size_t((b * c.Hq + h) * sq + i)] =
              s.empty() ? -std::numeric_limits<float>::infinity() : float(m + std::log(l));
        }
    const BwdOut got = run_backward(c, {&Q, &K, &V, &dO, &QT, &KT, &dOT, o16, do16, lse});

    // MXFP8 quantize-dequantize of one block (DESIGN 1.1: fp32 block max, RCEIL, fp32 multiply,
    // satfinite RNE), from the library's scalar numerics.
    auto mx_block = [](std::vector<double*> x) {
      float amax = 0.0f;
      for (double* v : x) amax = std::max(amax, std::fabs(float(*v)));
      const uint8_t e = cpu::scale_exponent(amax, MXQ_DTYPE_E4M3, MXQ_SCALE_MODE_RCEIL);
      const float inv = cpu::scale_inverse(e);
      for (double* v : x)
        *v = double(cpu::fp8_to_f32(cpu::f32_to_fp8_satfinite(float(*v) * inv, MXQ_DTYPE_E4M3), MXQ_DTYPE_E4M3)) *
             p2(int(e) - 127);
    };

    const size_t kn = size_t(c.B * c.Hkv * skv * dim);
    std::vector<double> ref_dq(size_t(c.B * c.Hq * sq * dim), 0.0), mag_dq(ref_dq.size(), 0.0);
    std::vector<double> ref_dk(kn, 0.0), mag_dk(kn, 0.0), ref_dv(kn, 0.0), mag_dv(kn, 0.0);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.Hq; ++h) {
        const int64_t hk = h / group;
        std::vector<double> pq(size_t(sq * skv), 0.0), ds(pq.size(), 0.0);
        for (int64_t i = 0; i < sq; ++i) {
          double delta = 0.0;
          for (int64_t d = 0; d < dim; ++d) delta += do16[Q.idx(b, h, i, d)] * o16[Q.idx(b, h, i, d)];
          for (int64_t j = 0; j < skv; ++j) {
            if (!visible(mask, i, j, sq, skv)) continue;
            double s = 0.0, dp = 0.0;
            for (int64_t d = 0; d < dim; ++d) {
              s += qv[Q.idx(b, h, i, d)] * kv[K.idx(b, hk, j, d)];
              dp += dov[dO.idx(b, h, i, d)] * vv[V.idx(b, hk, j, d)];
            }
            const double p = std::exp(scale * s - double(lse[size_t((b * c.Hq + h) * sq + i)]));
            const uint8_t code = cpu::f32_to_fp8_satfinite(float(p) * c.p_scale, MXQ_DTYPE_E4M3);
            pq[size_t(i * skv + j)] = double(cpu::fp8_to_f32(code, MXQ_DTYPE_E4M3)) / double(c.p_scale);
            ds[size_t(i * skv + j)] = p * (dp - delta) * scale;
          }
        }
        std::vector<double> ds_kv = ds, ds_q = ds;
        for (int64_t i = 0; i < sq; ++i)
          for (int64_t j0 = 0; j0 < skv; j0 += 32) {
            std::vector<double*> blk;
            for (int64_t j = j0; j < std::min(skv, j0 + 32); ++j) blk.push_back(&ds_kv[size_t(i * skv + j)]);
            mx_block(blk);
          }
        for (int64_t j = 0; j < skv; ++j)
          for (int64_t i0 = 0; i0 < sq; i0 += 32) {
            std::vector<double*> blk;
            for (int64_t i = i0; i < std::min(sq, i0 + 32); ++i) blk.push_back(&ds_q[size_t(i * skv + j)]);
            mx_block(blk);
          }
        for (int64_t i = 0; i < sq; ++i)
          for (int64_t j = 0; j < skv; ++j)
            for (int64_t d = 0; d < dim; ++d) {
              const size_t qi = Q.idx(b, h, i, d), kj = K.idx(b, hk, j, d);
              const double tq = ds_kv[size_t(i * skv + j)] * ktv[KT.idx(b, hk, j, d)];
              const double tk = ds_q[size_t(i * skv + j)] * qtv[QT.idx(b, h, i, d)];
              const double tv = pq[size_t(i * skv + j)] * dotv[dOT.idx(b, h, i, d)];
              ref_dq[qi] += tq, mag_dq[qi] += std::fabs(tq);
              ref_dk[kj] += tk, mag_dk[kj] += std::fabs(tk);
              ref_dv[kj] += tv, mag_dv[kj] += std::fabs(tv);
            }
      }

    auto check = [&](const char* name, const std::vector<double>& g, const std::vector<double>& ref,
                     const std::vector<double>& mag, int64_t heads, int64_t len) {
      Mismatches mm;
      int64_t nonzero = 0;
      for (int64_t b = 0; b < c.B; ++b)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t s = 0; s < len; ++s)
            for (int64_t d = 0; d < dim; ++d) {
              const size_t k = size_t(((b * heads + h) * len + s) * dim + d);
              nonzero += ref[k] != 0.0;
              mm.add(std::fabs(g[k] - ref[k]) <= kBf16Round * std::fabs(ref[k]) + 1e-12 * mag[k], [&] {
                std::ostringstream os;
                os << at(name, b, h, s, d) << ": got " << g[k] << " recomputed " << ref[k];
                return os.str();
              });
            }
      INFO(mm.first.str());
      REQUIRE(nonzero > 0);
      REQUIRE(mm.checked == c.B * heads * len * dim);
      REQUIRE(mm.count == 0);
    };
    check("dQ", got.dq, ref_dq, mag_dq, c.Hq, sq);
    check("dK", got.dk, ref_dk, mag_dk, c.Hkv, skv);
    check("dV", got.dv, ref_dv, mag_dv, c.Hkv, skv);
  }
}

// Each gradient reads its own column-quantized operand: zeroing Q_T zeroes dK only, K_T zeroes dQ
// only, dO_T zeroes dV only; V along D and the bf16 dO feed dS, never dV.
TEST_CASE("ref attention: backward operand routing", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  Case c;
  c.B = 2, c.Hq = 2, c.Hkv = 1, c.Sq = 33, c.Skv = 40, c.D = 36;
  c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  c.swz = true;
  c.scale = 0.2f;
  CAPTURE(c.str());
  const Tensor4 Q = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
  const Tensor4 K = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
  const Tensor4 V = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
  const Tensor4 dO = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
  const Tensor4 QT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);
  const Tensor4 KT = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongS);
  const Tensor4 dOT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);
  const Tensor4 V2 = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
  const Tensor4 dO2 = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
  const FwdOut fwd = run_forward(c, Q, K, KT);  // any along-S tensor will do as V here
  const BwdIn base{&Q, &K, &V, &dO, &QT, &KT, &dOT, fwd.o, dO.values(), fwd.lse};
  const BwdOut ref = run_backward(c, base);
  auto zeroed = [](Tensor4 t) {
    std::fill(t.q.begin(), t.q.end(), uint8_t(0));
    return t;
  };
  auto all_zero = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; });
  };
  auto any_nonzero = [&](const std::vector<double>& v) { return !all_zero(v); };
  REQUIRE((any_nonzero(ref.dq) && any_nonzero(ref.dk) && any_nonzero(ref.dv)));

  const Tensor4 QT0 = zeroed(QT), KT0 = zeroed(KT), dOT0 = zeroed(dOT);
  BwdIn in = base;
  in.qT = &QT0;
  BwdOut out = run_backward(c, in);
  CHECK(all_zero(out.dk));
  CHECK(same(out.dq, ref.dq));
  CHECK(same(out.dv, ref.dv));

  in = base;
  in.kT = &KT0;
  out = run_backward(c, in);
  CHECK(all_zero(out.dq));
  CHECK(same(out.dk, ref.dk));
  CHECK(same(out.dv, ref.dv));

  in = base;
  in.dOT = &dOT0;
  out = run_backward(c, in);
  CHECK(all_zero(out.dv));
  CHECK(same(out.dq, ref.dq));
  CHECK(same(out.dk, ref.dk));

  in = base;
  in.v = &V2;
  out = run_backward(c, in);
  CHECK(same(out.dv, ref.dv));
  CHECK(!same(out.dq, ref.dq));

  in = base;
  in.do16 = dO2.values();  // the bf16 dO only enters delta
  out = run_backward(c, in);
  CHECK(same(out.dv, ref.dv));
  CHECK(!same(out.dq, ref.dq));
}

// GQA / MQA: each query head reads K/V head h / (Hq/Hkv), so the run equals an MHA run whose K/V
// heads are repeated — bit for bit for O, LSE and dQ. dK and dV sum the group's query heads in fp64
// and round once, whereas the MHA run rounds each head: |dK_gqa - sum_h dK_mha,h| <= (2^-8 + 2^-23)
// (|X| + sum_h |x_h|) for the exact sums, bounded by 1.01 (2^-8 + 2^-23)(|dK_gqa| + sum_h |dK_mha,h|).
TEST_CASE("ref attention: GQA and MQA equal MHA with repeated K/V heads", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  for (int64_t hkv : {2, 1}) {
    Case g;
    g.B = 2, g.Hq = 6, g.Hkv = hkv, g.Sq = 40, g.Skv = 36, g.D = 64;
    g.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    g.layout = hkv == 2 ? MXQ_ATTN_LAYOUT_BSHD : MXQ_ATTN_LAYOUT_BHSD;
    g.swz = hkv == 2;
    Case m = g;
    m.Hkv = g.Hq;
    const int64_t group = g.Hq / hkv;
    CAPTURE(g.str());
    const Tensor4 Q = random_tensor(rng, g.B, g.Hq, g.Sq, g.D, Blocks::AlongD);
    const Tensor4 dO = random_tensor(rng, g.B, g.Hq, g.Sq, g.D, Blocks::AlongD);
    const Tensor4 QT = random_tensor(rng, g.B, g.Hq, g.Sq, g.D, Blocks::AlongS);
    const Tensor4 dOT = random_tensor(rng, g.B, g.Hq, g.Sq, g.D, Blocks::AlongS);
    const Tensor4 K = random_tensor(rng, g.B, hkv, g.Skv, g.D, Blocks::AlongD);
    const Tensor4 Vs = random_tensor(rng, g.B, hkv, g.Skv, g.D, Blocks::AlongS);
    const Tensor4 Vd = random_tensor(rng, g.B, hkv, g.Skv, g.D, Blocks::AlongD);
    const Tensor4 KT = random_tensor(rng, g.B, hkv, g.Skv, g.D, Blocks::AlongS);
    const Tensor4 Kr = repeat_heads(K, group), Vsr = repeat_heads(Vs, group), Vdr = repeat_heads(Vd, group),
                  KTr = repeat_heads(KT, group);

    const FwdOut fg = run_forward(g, Q, K, Vs), fm = run_forward(m, Q, Kr, Vsr);
    CHECK(same(fg.o, fm.o));
    CHECK(same_bits(fg.lse, fm.lse));

    const BwdOut bg = run_backward(g, {&Q, &K, &Vd, &dO, &QT, &KT, &dOT, fg.o, dO.values(), fg.lse});
    const BwdOut bm = run_backward(m, {&Q, &Kr, &Vdr, &dO, &QT, &KTr, &dOT, fm.o, dO.values(), fm.lse});
    CHECK(same(bg.dq, bm.dq));
    Mismatches mm;
    for (int which = 0; which < 2; ++which) {
      const std::vector<double>& gv = which == 0 ? bg.dk : bg.dv;
      const std::vector<double>& mv = which == 0 ? bm.dk : bm.dv;
      for (int64_t b = 0; b < g.B; ++b)
        for (int64_t hk = 0; hk < hkv; ++hk)
          for (int64_t j = 0; j < g.Skv; ++j)
            for (int64_t d = 0; d < g.D; ++d) {
              double sum = 0.0, mag = 0.0;
              for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
                const double x = mv[size_t(((b * g.Hq + h) * g.Skv + j) * g.D + d)];
                sum += x;
                mag += std::fabs(x);
              }
              const double x = gv[size_t(((b * hkv + hk) * g.Skv + j) * g.D + d)];
              mm.add(std::fabs(x - sum) <= 1.01 * kBf16Round * (std::fabs(x) + mag), [&] {
                std::ostringstream os;
                os << at(which == 0 ? "dK" : "dV", b, hk, j, d) << ": GQA " << x << " sum of MHA heads " << sum;
                return os.str();
              });
            }
    }
    INFO(mm.first.str());
    REQUIRE(mm.checked == 2 * g.B * hkv * g.Skv * g.D);
    REQUIRE(mm.count == 0);
  }
}

// The memory layout (BSHD vs BHSD) and the scale layout (LINEAR vs SWIZZLED_128x4) move bytes, not
// values: every output is bit-identical.
TEST_CASE("ref attention: BSHD == BHSD and LINEAR == SWIZZLED, forward and backward", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  Case c;
  c.B = 2, c.Hq = 4, c.Hkv = 2, c.Sq = 35, c.Skv = 50, c.D = 40;
  c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  c.scale = 0.17f;
  const Tensor4 Q = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
  const Tensor4 K = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
  const Tensor4 Vs = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongS);
  const Tensor4 Vd = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongD);
  const Tensor4 dO = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongD);
  const Tensor4 QT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);
  const Tensor4 KT = random_tensor(rng, c.B, c.Hkv, c.Skv, c.D, Blocks::AlongS);
  const Tensor4 dOT = random_tensor(rng, c.B, c.Hq, c.Sq, c.D, Blocks::AlongS);

  auto run = [&](mxqAttentionLayout_t layout, bool swz) {
    Case x = c;
    x.layout = layout;
    x.swz = swz;
    const FwdOut f = run_forward(x, Q, K, Vs);
    const BwdOut b = run_backward(x, {&Q, &K, &Vd, &dO, &QT, &KT, &dOT, f.o, dO.values(), f.lse});
    return std::make_pair(f, b);
  };
  const auto ref = run(MXQ_ATTN_LAYOUT_BHSD, false);
  for (auto layout : {MXQ_ATTN_LAYOUT_BHSD, MXQ_ATTN_LAYOUT_BSHD}) {
    for (bool swz : {false, true}) {
      if (layout == MXQ_ATTN_LAYOUT_BHSD && !swz) continue;
      CAPTURE(int(layout), swz);
      const auto got = run(layout, swz);
      CHECK(same(got.first.o, ref.first.o));
      CHECK(same_bits(got.first.lse, ref.first.lse));
      CHECK(same(got.second.dq, ref.second.dq));
      CHECK(same(got.second.dk, ref.second.dk));
      CHECK(same(got.second.dv, ref.second.dv));
    }
  }
}

// Varlen: sequences packed along S, per-sequence masks, along-S scale blocks restarting at each
// sequence start. Every sequence must equal a separate non-varlen run of it, bit for bit; a sequence
// without keys gives O = 0, LSE = -inf and dQ = 0; one without queries gives dK = dV = 0.
TEST_CASE("ref attention: varlen equals one run per sequence", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  Case v;
  v.B = 5, v.Hq = 4, v.Hkv = 2, v.D = 40;
  v.layout = MXQ_ATTN_LAYOUT_BSHD;
  v.varlen = true;
  v.lq = {17, 0, 40, 33, 6};
  v.lk = {25, 9, 0, 64, 1};
  v.Sq = 40, v.Skv = 64;  // the maxima
  v.scale = 0.16f;
  int which = 0;
  for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
    v.mask = mask;
    v.swz = (which++ % 2) == 0;
    CAPTURE(v.str());
    const Tensor4 Q = random_tensor(rng, v.B, v.Hq, v.Sq, v.D, Blocks::AlongD);
    const Tensor4 K = random_tensor(rng, v.B, v.Hkv, v.Skv, v.D, Blocks::AlongD);
    const Tensor4 Vs = random_tensor(rng, v.B, v.Hkv, v.Skv, v.D, Blocks::AlongS);
    const Tensor4 Vd = random_tensor(rng, v.B, v.Hkv, v.Skv, v.D, Blocks::AlongD);
    const Tensor4 dO = random_tensor(rng, v.B, v.Hq, v.Sq, v.D, Blocks::AlongD);
    const Tensor4 QT = random_tensor(rng, v.B, v.Hq, v.Sq, v.D, Blocks::AlongS);
    const Tensor4 KT = random_tensor(rng, v.B, v.Hkv, v.Skv, v.D, Blocks::AlongS);
    const Tensor4 dOT = random_tensor(rng, v.B, v.Hq, v.Sq, v.D, Blocks::AlongS);
    const auto dov = dO.values();
    const FwdOut f = run_forward(v, Q, K, Vs);
    const BwdOut g = run_backward(v, {&Q, &K, &Vd, &dO, &QT, &KT, &dOT, f.o, dov, f.lse});

    for (int64_t b = 0; b < v.B; ++b) {
      const int64_t lq = v.lq[b], lk = v.lk[b];
      CAPTURE(b, lq, lk);
      const auto o_b = slice_vals(f.o, v.Hq, v.Sq, v.D, b, lq);
      const auto lse_b = slice_vals(f.lse, v.Hq, v.Sq, 1, b, lq);
      const auto dq_b = slice_vals(g.dq, v.Hq, v.Sq, v.D, b, lq);
      const auto dk_b = slice_vals(g.dk, v.Hkv, v.Skv, v.D, b, lk);
      const auto dv_b = slice_vals(g.dv, v.Hkv, v.Skv, v.D, b, lk);
      auto all_zero = [](const std::vector<double>& x) {
        return std::all_of(x.begin(), x.end(), [](double y) { return y == 0.0; });
      };
      if (lq == 0) {
        CHECK(all_zero(dk_b));
        CHECK(all_zero(dv_b));
        continue;
      }
      if (lk == 0) {
        CHECK(all_zero(o_b));
        CHECK(all_zero(dq_b));
        CHECK(std::all_of(lse_b.begin(), lse_b.end(),
                          [](float x) { return x == -std::numeric_limits<float>::infinity(); }));
        continue;
      }
      Case s = v;
      s.varlen = false;
      s.lq.clear();
      s.lk.clear();
      s.B = 1, s.Sq = lq, s.Skv = lk;
      const Tensor4 sQ = slice(Q, b, lq), sK = slice(K, b, lk), sVs = slice(Vs, b, lk), sVd = slice(Vd, b, lk);
      const Tensor4 sdO = slice(dO, b, lq), sQT = slice(QT, b, lq), sKT = slice(KT, b, lk), sdOT = slice(dOT, b, lq);
      const FwdOut fs = run_forward(s, sQ, sK, sVs);
      CHECK(same(fs.o, o_b));
      CHECK(same_bits(fs.lse, lse_b));
      const BwdOut gs =
          run_backward(s, {&sQ, &sK, &sVd, &sdO, &sQT, &sKT, &sdOT, o_b, slice_vals(dov, v.Hq, v.Sq, v.D, b, lq),
                           lse_b});
      CHECK(same(gs.dq, dq_b));
      CHECK(same(gs.dk, dk_b));
      CHECK(same(gs.dv, dv_b));
    }
  }
}

// A NaN scale never turns into a finite number: a NaN K scale (key 5, D-block 0) makes every row that
// sees key 5 NaN (O and LSE) under a causal mask, and leaves the rows before it finite; a NaN V scale
// (along S: column d = 3, keys 0..31) makes column 3 of every row NaN and nothing else.
TEST_CASE("ref attention: NaN scales propagate", "[ref][attention]") {
  const uint64_t seed = fresh_seed();
  CAPTURE(seed);
  Rng rng(seed);
  Case c;
  c.Sq = c.Skv = 12;
  c.D = 40;
  c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  Tensor4 Q = random_tensor(rng, 1, 1, 12, 40, Blocks::AlongD);
  Tensor4 K = random_tensor(rng, 1, 1, 12, 40, Blocks::AlongD);
  Tensor4 V = random_tensor(rng, 1, 1, 12, 40, Blocks::AlongS);
  for (bool swz : {false, true}) {
    c.swz = swz;
    CAPTURE(swz);
    {
      Tensor4 Kn = K;
      for (int d = 0; d < 32; ++d) Kn.e[Kn.idx(0, 0, 5, d)] = 0xFF;
      const FwdOut f = run_forward(c, Q, Kn, V);
      Mismatches mm;
      for (int64_t i = 0; i < 12; ++i) {
        for (int64_t d = 0; d < 40; ++d)
          mm.add(std::isnan(f.o[size_t(i * 40 + d)]) == (i >= 5), at("O", 0, 0, i, d));
        mm.add(std::isnan(f.lse[size_t(i)]) == (i >= 5), at("LSE", 0, 0, i));
      }
      INFO(mm.first.str());
      CHECK(mm.count == 0);
    }
    {
      Tensor4 Vn = V;
      for (int s = 0; s < 12; ++s) Vn.e[Vn.idx(0, 0, s, 3)] = 0xFF;
      const FwdOut f = run_forward(c, Q, K, Vn);
      Mismatches mm;
      for (int64_t i = 0; i < 12; ++i) {
        for (int64_t d = 0; d < 40; ++d) mm.add(std::isnan(f.o[size_t(i * 40 + d)]) == (d == 3), at("O", 0, 0, i, d));
        mm.add(std::isfinite(f.lse[size_t(i)]), at("LSE", 0, 0, i));
      }
      INFO(mm.first.str());
      CHECK(mm.count == 0);
    }
  }
}

TEST_CASE("ref attention: bad shapes, sequence offsets and arguments are errors, not crashes", "[ref][attention]") {
  Rng rng(fresh_seed());
  Case c;
  c.B = 2, c.Hq = 2, c.Hkv = 1, c.Sq = 8, c.Skv = 8, c.D = 32;
  c.layout = MXQ_ATTN_LAYOUT_BSHD;
  const Tensor4 Q = random_tensor(rng, 2, 2, 8, 32, Blocks::AlongD);
  const Tensor4 K = random_tensor(rng, 2, 1, 8, 32, Blocks::AlongD);
  const Tensor4 V = random_tensor(rng, 2, 1, 8, 32, Blocks::AlongS);
  const Geo gq = c.geo(true), gk = c.geo(false);
  auto qd = pack_data(Q, gq), kd = pack_data(K, gk), vd = pack_data(V, gk);
  auto qs = pack_scales(Q, gq, true, false), ks = pack_scales(K, gk, true, false);
  auto vs = pack_scales(V, gk, false, false);
  std::vector<uint16_t> o(size_t(gq.rows() * c.D), kPoison16);
  std::vector<float> lse(size_t(2 * 2 * 8), 0.0f);
  ExecArgs a;
  a.ptr[MXQ_ARG_Q_DATA] = qd.data(), a.ptr[MXQ_ARG_Q_SCALES] = qs.data();
  a.ptr[MXQ_ARG_K_DATA] = kd.data(), a.ptr[MXQ_ARG_K_SCALES] = ks.data();
  a.ptr[MXQ_ARG_V_DATA] = vd.data(), a.ptr[MXQ_ARG_V_SCALES] = vs.data();
  a.ptr[MXQ_ARG_O] = o.data(), a.ptr[MXQ_ARG_LSE] = lse.data();
  REQUIRE(status_of([&] { cpu::attention_forward(c.desc(MXQ_ATTN_FORWARD), a); }) == MXQ_STATUS_SUCCESS);
  std::fill(o.begin(), o.end(), kPoison16);

  AttentionDesc d = c.desc(MXQ_ATTN_FORWARD);
  d.heads_kv = 3;  // does not divide Hq
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_SHAPE);
  d = c.desc(MXQ_ATTN_FORWARD);
  d.softmax_scale = 0.0f;  // never resolved
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_INVALID_VALUE);

  // Varlen over the same 16 tokens per side.
  d = c.desc(MXQ_ATTN_FORWARD);
  d.varlen = true;
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);  // no cu_seqlens
  std::vector<int32_t> cuq = {0, 10, 6}, cuk = {0, 8, 16};
  a.ptr[MXQ_ARG_CU_SEQLENS_Q] = cuq.data(), a.ptr[MXQ_ARG_CU_SEQLENS_KV] = cuk.data();
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);  // decreases
  cuq = {0, 9, 16};  // 9 > Sq = 8
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  cuq = {-1, 4, 8};
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
  d.layout = MXQ_ATTN_LAYOUT_BHSD;
  CHECK(status_of([&] { cpu::attention_forward(d, a); }) == MXQ_STATUS_NOT_SUPPORTED_COMBINATION);
  CHECK(std::all_of(o.begin(), o.end(), [](uint16_t x) { return x == kPoison16; }));  // nothing written

  a.ptr[MXQ_ARG_LSE] = nullptr;
  CHECK(status_of([&] { cpu::attention_forward(c.desc(MXQ_ATTN_FORWARD), a); }) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  a.ptr[MXQ_ARG_LSE] = lse.data();
  // The backward needs its own operands (none bound here).
  CHECK(status_of([&] { cpu::attention_backward(c.desc(MXQ_ATTN_BACKWARD), a); }) ==
        MXQ_STATUS_BAD_PARAM_NULL_POINTER);
}
