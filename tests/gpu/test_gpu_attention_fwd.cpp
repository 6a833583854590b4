// GPU MXFP8 attention forward (kernels/sm90/attention_fwd.cu) against the CPU oracle
// (src/cpu/attention.cpp) and against a float64 attention without the recipe's P quantization.
//
// Inputs are valid MXFP8 tensors drawn at random (FP8 bytes with a realistic exponent spread,
// zeros and subnormals included, and a random UE8M0 scale per 32-block) in the layouts the API
// documents, so both backends read exactly the same values. The GPU differs from the oracle where
// its online softmax quantizes P against a running row max instead of the final one: those P
// values are rounded to E4M3 at a different binade, an error of the same size as the recipe's own
// P quantization. The tolerances therefore scale with the oracle's distance from the float64
// attention (the recipe's error), measured on the same inputs and printed next to the error of a
// plain bf16 attention (P in bf16, O rounded to bf16): docs/NUMERICS.md "Attention on the GPU".
//
// At D = 128 the default kernel runs S and P V on FP8 tensor cores after rescaling the operands within
// E4M3, and the exact kernel redoes a call whose operands exceed that rescale's error bound
// (docs/NUMERICS.md, "Forward on FP8 tensor cores"). The bytes above (magnitudes mostly 2^-4..2^4)
// exceed it, so those cases check the exact kernel behind the FP8 one; the case "inputs as a
// quantizer writes them" (every 32-block holds a magnitude >= 256) stays on the FP8 kernel. Its
// logits carry the FP8 adder's error, which lse_allowance bounds.
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "core/layout.h"
#include "test_gpu_common.h"

namespace mxq_test {
namespace gpu {
namespace {

namespace L = mxq::layout;

double fp8_value(uint8_t b, mxqDataType_t dt) {
  const int sign = b >> 7;
  double v;
  if (dt == MXQ_DTYPE_E4M3) {
    const int e = (b >> 3) & 15, m = b & 7;
    if ((b & 0x7F) == 0x7F) return std::numeric_limits<double>::quiet_NaN();
    v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  } else {
    const int e = (b >> 2) & 31, m = b & 3;
    if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : (sign ? -1 : 1) * HUGE_VAL;
    v = e == 0 ? std::ldexp(m / 4.0, -14) : std::ldexp(1.0 + m / 4.0, e - 15);
  }
  return sign ? -v : v;
}

// An FP8 byte: mostly magnitudes in [2^-4, 2^4), some zeros/subnormals, some anywhere (finite).
uint8_t random_fp8(std::mt19937_64& rng, mxqDataType_t dt) {
  const int pick = static_cast<int>(rng() % 100);
  const uint8_t sign = static_cast<uint8_t>((rng() & 1) << 7);
  if (dt == MXQ_DTYPE_E4M3) {
    if (pick < 4) return sign | static_cast<uint8_t>(rng() % 8);  // zero / subnormal
    if (pick < 8) return sign | static_cast<uint8_t>(rng() % 0x7F);  // any finite
    return sign | static_cast<uint8_t>(((3 + rng() % 8) << 3) | (rng() % 8));
  }
  if (pick < 4) return sign | static_cast<uint8_t>(rng() % 4);
  if (pick < 8) return sign | static_cast<uint8_t>(rng() % 0x7C);
  return sign | static_cast<uint8_t>(((11 + rng() % 8) << 2) | (rng() % 4));
}

struct Case {
  int64_t B = 1, Hq = 1, Hkv = 1, Sq = 128, Skv = 128, D = 128;
  mxqAttentionLayout_t layout = MXQ_ATTN_LAYOUT_BHSD;
  mxqAttentionMask_t mask = MXQ_ATTN_MASK_NONE;
  bool swz = true;
  bool varlen = false;
  std::vector<int32_t> lens_q, lens_kv;  // varlen: per-sequence lengths (<= Sq / Skv)
  mxqDataType_t dt = MXQ_DTYPE_E4M3;
  float softmax_scale = 0.0f;  // 0: the default 1/sqrt(D)
  bool quantized = false;      // FP8 bytes as a quantizer writes them (magnitudes 2..448, each block's
                               // largest >= 256, a few zeros)
};

std::string describe(const Case& c) {
  std::ostringstream o;
  o << "B" << c.B << " Hq" << c.Hq << " Hkv" << c.Hkv << " Sq" << c.Sq << " Skv" << c.Skv << " D" << c.D
    << (c.layout == MXQ_ATTN_LAYOUT_BSHD ? " BSHD" : " BHSD") << " mask" << int(c.mask) << (c.swz ? " swz" : " linear")
    << (c.varlen ? " varlen" : "") << (c.quantized ? " quantized" : "") << " " << dtype_str(c.dt);
  return o.str();
}

// Memory geometry of one side (queries or keys/values).
struct Side {
  bool bhsd = true;
  int64_t heads = 0, smax = 0, batch = 0;
  std::vector<int64_t> start, len;
  int64_t rows() const { return bhsd ? batch * heads * smax : (start.back() + len.back()) * heads; }
  int64_t row(int64_t b, int64_t h, int64_t s) const {
    return bhsd ? (b * heads + h) * smax + s : (start[b] + s) * heads + h;
  }
};

Side make_side(const Case& c, int64_t heads, int64_t smax, const std::vector<int32_t>& lens) {
  Side s;
  s.bhsd = c.layout == MXQ_ATTN_LAYOUT_BHSD && !c.varlen;
  s.heads = heads;
  s.smax = smax;
  s.batch = c.B;
  int64_t at = 0;
  for (int64_t b = 0; b < c.B; ++b) {
    const int64_t l = c.varlen ? lens[b] : smax;
    s.start.push_back(c.varlen ? at : b * smax);
    s.len.push_back(l);
    at += l;
  }
  return s;
}

struct Inputs {
  Case c;
  Side q, kv;
  std::vector<uint8_t> qd, kd, vd, qs, ks, vs;
  std::vector<int32_t> cu_q, cu_kv;
  int64_t dcols, dcpad, scols, scpad, v_entry;

  // Dequantized value of element (b, h, s, d) of Q / K (along D) or V (along S).
  double q_at(int64_t b, int64_t h, int64_t s, int64_t d) const { return along_d(qd, qs, q, b, h, s, d); }
  double k_at(int64_t b, int64_t h, int64_t s, int64_t d) const { return along_d(kd, ks, kv, b, h, s, d); }
  double v_at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    const int64_t r = kv.row(b, h, s);
    const int64_t off = (b * c.Hkv + h) * v_entry + (c.swz ? L::swizzled_offset(d, s / 32, scpad) : d * scols + s / 32);
    return fp8_value(vd[r * c.D + d], c.dt) * scale_value(vs[off]);
  }
  static double scale_value(uint8_t e) { return e == 0xFF ? std::nan("") : std::ldexp(1.0, int(e) - 127); }
  double along_d(const std::vector<uint8_t>& data, const std::vector<uint8_t>& sc, const Side& sd, int64_t b, int64_t h,
                 int64_t s, int64_t d) const {
    const int64_t r = sd.row(b, h, s);
    const int64_t off = c.swz ? L::swizzled_offset(r, d / 32, dcpad) : r * dcols + d / 32;
    return fp8_value(data[r * c.D + d], c.dt) * scale_value(sc[off]);
  }
};

Inputs make_inputs(const Case& c, std::mt19937_64& rng) {
  Inputs in{c, make_side(c, c.Hq, c.Sq, c.lens_q), make_side(c, c.Hkv, c.Skv, c.lens_kv), {}, {}, {}, {}, {}, {}, {},
            {}, 0, 0, 0, 0, 0};
  in.dcols = L::scale_cols(c.D);
  in.dcpad = L::swz_cols(in.dcols);
  in.scols = L::scale_cols(c.Skv);
  in.scpad = L::swz_cols(in.scols);
  in.v_entry = L::scale_bytes(c.swz, c.D, in.scols);
  auto fill_data = [&](std::vector<uint8_t>& v, int64_t rows) {
    v.resize(static_cast<size_t>(rows * c.D));
    for (auto& x : v) {
      x = random_fp8(rng, c.dt);
      if (c.quantized && c.dt == MXQ_DTYPE_E4M3)
        x = rng() % 50 == 0 ? 0 : static_cast<uint8_t>((x & 0x80) | (0x40 + rng() % 0x3F));
    }
  };
  // Quantized inputs (magnitudes 2..448) get scales 2^-12..2^-7, so that the logits stay in the tens.
  auto rand_scale = [&] { return static_cast<uint8_t>((c.quantized ? 115 : 123) + static_cast<int>(rng() % 6)); };
  auto fill_along_d = [&](std::vector<uint8_t>& v, int64_t rows) {
    v.assign(static_cast<size_t>(L::scale_bytes(c.swz, rows, in.dcols)), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t cc = 0; cc < in.dcols; ++cc)
        v[c.swz ? L::swizzled_offset(r, cc, in.dcpad) : r * in.dcols + cc] = rand_scale();
  };
  fill_data(in.qd, in.q.rows());
  fill_data(in.kd, in.kv.rows());
  fill_data(in.vd, in.kv.rows());
  if (c.quantized && c.dt == MXQ_DTYPE_E4M3) {
    // As a quantizer writes them: every 32-block holds an element of magnitude >= 256 (its amax).
    auto big = [&](uint8_t& x) { x = static_cast<uint8_t>((x & 0x80) | (0x70 + rng() % 15)); };
    for (auto* v : {&in.qd, &in.kd})
      for (size_t r = 0; r < v->size() / static_cast<size_t>(c.D); ++r)
        for (int64_t b0 = 0; b0 < c.D; b0 += 32)
          big((*v)[r * c.D + b0 + rng() % std::min<int64_t>(32, c.D - b0)]);
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < c.Hkv; ++h)
        for (int64_t d = 0; d < c.D; ++d)
          for (int64_t s0 = 0; s0 < in.kv.len[b]; s0 += 32)
            big(in.vd[in.kv.row(b, h, s0 + rng() % std::min<int64_t>(32, in.kv.len[b] - s0)) * c.D + d]);
  }
  fill_along_d(in.qs, in.q.rows());
  fill_along_d(in.ks, in.kv.rows());
  in.vs.assign(static_cast<size_t>(c.B * c.Hkv * in.v_entry), 0);
  for (int64_t e = 0; e < c.B * c.Hkv; ++e)
    for (int64_t d = 0; d < c.D; ++d)
      for (int64_t cc = 0; cc < in.scols; ++cc)
        in.vs[e * in.v_entry + (c.swz ? L::swizzled_offset(d, cc, in.scpad) : d * in.scols + cc)] = rand_scale();
  if (c.varlen) {
    in.cu_q.push_back(0);
    in.cu_kv.push_back(0);
    for (int64_t b = 0; b < c.B; ++b) {
      in.cu_q.push_back(in.cu_q.back() + c.lens_q[b]);
      in.cu_kv.push_back(in.cu_kv.back() + c.lens_kv[b]);
    }
  }
  return in;
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

mxqAttentionPlan_t make_plan(mxqHandle_t h, const Case& c) {
  mxqAttentionPlan_t p = nullptr;
  MXQ_REQUIRE_OK(mxqAttentionPlanCreate(h, &p));
  auto set64 = [&](mxqAttentionAttribute_t a, int64_t v) { MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, a, &v, 8)); };
  auto set32 = [&](mxqAttentionAttribute_t a, int32_t v) { MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, a, &v, 4)); };
  set64(MXQ_ATTN_ATTR_BATCH, c.B);
  set64(MXQ_ATTN_ATTR_HEADS_Q, c.Hq);
  set64(MXQ_ATTN_ATTR_HEADS_KV, c.Hkv);
  set64(MXQ_ATTN_ATTR_SEQLEN_Q, c.Sq);
  set64(MXQ_ATTN_ATTR_SEQLEN_KV, c.Skv);
  set64(MXQ_ATTN_ATTR_HEAD_DIM, c.D);
  set32(MXQ_ATTN_ATTR_LAYOUT, c.varlen ? MXQ_ATTN_LAYOUT_BSHD : c.layout);
  set32(MXQ_ATTN_ATTR_MASK, c.mask);
  set32(MXQ_ATTN_ATTR_SCALE_LAYOUT, c.swz ? MXQ_SCALE_LAYOUT_SWIZZLED_128x4 : MXQ_SCALE_LAYOUT_LINEAR);
  set32(MXQ_ATTN_ATTR_VARLEN, c.varlen ? 1 : 0);
  set32(MXQ_ATTN_ATTR_QKV_DTYPE, c.dt);
  if (c.softmax_scale > 0.0f) MXQ_REQUIRE_OK(mxqAttentionPlanSetAttribute(p, MXQ_ATTN_ATTR_SOFTMAX_SCALE, &c.softmax_scale, 4));
  return p;
}

constexpr uint8_t kPoison = 0xFF;  // bf16 0xFFFF and fp32 0xFFFFFFFF are NaNs no backend writes here

struct Outputs {
  std::vector<uint16_t> o;
  std::vector<float> lse;
};

void* mut(const void* p) { return const_cast<void*>(p); }

// The forward's argument list in slot order (Q, Q scales, K, K scales, V, V scales, O, LSE, then
// the cu_seqlens pair when given): one place for every test that executes a plan.
std::vector<mxqExecArg_t> fwd_args(const void* q, const void* qs, const void* k, const void* ks, const void* v,
                                   const void* vs, void* o, void* lse, const void* cu_q = nullptr,
                                   const void* cu_kv = nullptr) {
  std::vector<mxqExecArg_t> a = {{MXQ_ARG_Q_DATA, 0, mut(q)}, {MXQ_ARG_Q_SCALES, 0, mut(qs)},
                                 {MXQ_ARG_K_DATA, 0, mut(k)}, {MXQ_ARG_K_SCALES, 0, mut(ks)},
                                 {MXQ_ARG_V_DATA, 0, mut(v)}, {MXQ_ARG_V_SCALES, 0, mut(vs)},
                                 {MXQ_ARG_O, 0, o},           {MXQ_ARG_LSE, 0, lse}};
  if (cu_q) a.push_back({MXQ_ARG_CU_SEQLENS_Q, 0, mut(cu_q)});
  if (cu_kv) a.push_back({MXQ_ARG_CU_SEQLENS_KV, 0, mut(cu_kv)});
  return a;
}

Outputs run_cpu(const Inputs& in) {
  Handle cpu(MXQ_BACKEND_CPU);
  mxqAttentionPlan_t p = make_plan(cpu, in.c);
  MXQ_REQUIRE_OK(mxqAttentionPlanFinalize(p));
  Outputs out;
  out.o.assign(static_cast<size_t>(in.q.rows() * in.c.D), 0xFFFF);
  out.lse.assign(static_cast<size_t>(in.c.B * in.c.Hq * in.c.Sq), f32_of(0xFFFFFFFFu));
  const std::vector<mxqExecArg_t> args =
      fwd_args(in.qd.data(), in.qs.data(), in.kd.data(), in.ks.data(), in.vd.data(), in.vs.data(), out.o.data(),
               out.lse.data(), in.c.varlen ? in.cu_q.data() : nullptr, in.c.varlen ? in.cu_kv.data() : nullptr);
  MXQ_REQUIRE_OK(mxqAttentionExecute(cpu, p, args.data(), static_cast<int>(args.size()), nullptr, 0, nullptr));
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p));
  return out;
}

struct GpuRun {
  std::unique_ptr<DeviceBuffer> q, qs, k, ks, v, vs, o, lse, cuq, cukv, ws;
  std::vector<mxqExecArg_t> args() const {
    return fwd_args(q->ptr(), qs->ptr(), k->ptr(), ks->ptr(), v->ptr(), vs->ptr(), o->ptr(), lse->ptr(),
                    cuq ? cuq->ptr() : nullptr, cukv ? cukv->ptr() : nullptr);
  }
};

Outputs run_gpu(const Inputs& in, mxqHandle_t gpu, mxqAttentionPlan_t p, GpuRun& g, int repeat = 1) {
  g.q = std::make_unique<DeviceBuffer>(in.qd);
  g.qs = std::make_unique<DeviceBuffer>(in.qs);
  g.k = std::make_unique<DeviceBuffer>(in.kd);
  g.ks = std::make_unique<DeviceBuffer>(in.ks);
  g.v = std::make_unique<DeviceBuffer>(in.vd);
  g.vs = std::make_unique<DeviceBuffer>(in.vs);
  g.o = std::make_unique<DeviceBuffer>(static_cast<size_t>(in.q.rows() * in.c.D * 2));
  g.lse = std::make_unique<DeviceBuffer>(static_cast<size_t>(in.c.B * in.c.Hq * in.c.Sq * 4));
  g.o->poison(kPoison);
  g.lse->poison(kPoison);
  if (in.c.varlen) {
    g.cuq = std::make_unique<DeviceBuffer>(bytes_of(in.cu_q));
    g.cukv = std::make_unique<DeviceBuffer>(bytes_of(in.cu_kv));
  }
  const std::vector<mxqExecArg_t> args = g.args();
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqAttentionPlanGetWorkspaceSize(p, &ws));
  g.ws = std::make_unique<DeviceBuffer>(ws);
  g.ws->poison(0xFF);  // NaN bf16 everywhere: the kernels must write every workspace byte they read
  for (int i = 0; i < repeat; ++i)
    MXQ_REQUIRE_OK(mxqAttentionExecute(gpu, p, args.data(), static_cast<int>(args.size()), g.ws->ptr(), ws, nullptr));
  Outputs out;
  const auto ob = g.o->download();
  const auto lb = g.lse->download();
  out.o.resize(ob.size() / 2);
  out.lse.resize(lb.size() / 4);
  std::memcpy(out.o.data(), ob.data(), ob.size());
  std::memcpy(out.lse.data(), lb.data(), lb.size());
  CHECK(g.o->guards_intact(kPoison));
  CHECK(g.lse->guards_intact(kPoison));
  return out;
}

double bf16_value(uint16_t h) { return f32_of(static_cast<uint32_t>(h) << 16); }
float bf16_round(double v) {
  const float f = static_cast<float>(v);
  const uint32_t u = f32_bits(f);
  return f32_of(((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16) << 16);
}

bool visible(mxqAttentionMask_t m, int64_t i, int64_t j, int64_t lq, int64_t lk) {
  if (m == MXQ_ATTN_MASK_CAUSAL_TOP_LEFT) return j <= i;
  if (m == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT) return j <= i + lk - lq;
  return true;
}

// Float64 attention without the recipe's P quantization (the truth the recipe approximates), and a
// plain bf16 attention on the same inputs: P rounded to bf16 for the P V product, O rounded to bf16.
struct Plain {
  std::vector<double> o, o_bf16;
};
Plain plain_attention(const Inputs& in) {
  const Case& c = in.c;
  Plain r;
  r.o.assign(static_cast<size_t>(in.q.rows() * c.D), std::nan(""));
  r.o_bf16 = r.o;
  const double scale = c.softmax_scale > 0.0f ? c.softmax_scale : 1.0 / std::sqrt(double(c.D));
  const int64_t grp = c.Hq / c.Hkv;
  std::vector<double> qrow(c.D), s, num(c.D), num16(c.D);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.Hq; ++h) {
      const int64_t hk = h / grp, lq = in.q.len[b], lk = in.kv.len[b];
      std::vector<double> km(static_cast<size_t>(lk * c.D)), vm(km.size());
      for (int64_t j = 0; j < lk; ++j)
        for (int64_t d = 0; d < c.D; ++d) {
          km[j * c.D + d] = in.k_at(b, hk, j, d);
          vm[j * c.D + d] = in.v_at(b, hk, j, d);
        }
      s.assign(static_cast<size_t>(lk), 0.0);
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t d = 0; d < c.D; ++d) qrow[d] = in.q_at(b, h, i, d);
        double m = -HUGE_VAL;
        for (int64_t j = 0; j < lk; ++j) {
          if (!visible(c.mask, i, j, lq, lk)) continue;
          double acc = 0.0;
          for (int64_t d = 0; d < c.D; ++d) acc += qrow[d] * km[j * c.D + d];
          s[j] = acc * scale;
          m = std::max(m, s[j]);
        }
        const int64_t orow = in.q.row(b, h, i) * c.D;
        std::fill(num.begin(), num.end(), 0.0);
        std::fill(num16.begin(), num16.end(), 0.0);
        double l = 0.0;
        for (int64_t j = 0; j < lk; ++j) {
          if (!visible(c.mask, i, j, lq, lk)) continue;
          const double p = std::exp(s[j] - m), p16 = bf16_round(p);
          l += p;
          for (int64_t d = 0; d < c.D; ++d) {
            num[d] += p * vm[j * c.D + d];
            num16[d] += p16 * vm[j * c.D + d];
          }
        }
        for (int64_t d = 0; d < c.D; ++d) {
          r.o[orow + d] = l > 0 ? num[d] / l : 0.0;
          r.o_bf16[orow + d] = l > 0 ? bf16_round(num16[d] / l) : 0.0;
        }
      }
    }
  return r;
}

struct Err {
  double num = 0.0, den = 0.0;
  void add(double x, double ref) {
    num += (x - ref) * (x - ref);
    den += ref * ref;
  }
  double rel() const { return den > 0 ? std::sqrt(num / den) : std::sqrt(num); }
};

// The LSE tolerance of row i (flat index into [B, Hq, Sq]) over 1e-4: LSE = m + ln l is as exact as
// the logits S_ij, which the FP8 path (docs/NUMERICS.md, "Attention forward on FP8 tensor cores")
// accumulates on FP8 tensor cores, whose adder keeps about 13 bits of the partial sums: |dS_ij| <=
// 2^-11 * scale * sum_d |q_id k_jd| (a plain bf16 attention's logits are 16x coarser). Returns
// 1e-4 + 2^-11 * max_j (scale * sum_d |q_id k_jd|) / (1 + |LSE|) over the keys the row sees.
double lse_allowance(const Inputs& in, int64_t i, double lse) {
  const Case& c = in.c;
  const int64_t s = i % c.Sq, h = (i / c.Sq) % c.Hq, b = i / (c.Sq * c.Hq), hk = h / (c.Hq / c.Hkv);
  const int64_t lq = in.q.len[b], lk = in.kv.len[b];
  const double scale = c.softmax_scale > 0 ? c.softmax_scale : 1.0 / std::sqrt(double(c.D));
  int64_t kend = lk;
  if (c.mask == MXQ_ATTN_MASK_CAUSAL_TOP_LEFT) kend = std::min(lk, s + 1);
  if (c.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT) kend = std::min(lk, s + 1 + lk - lq);
  double worst = 0.0;
  for (int64_t j = 0; j < kend; ++j) {
    double a = 0.0;
    for (int64_t d = 0; d < c.D; ++d) a += std::fabs(in.q_at(b, h, s, d) * in.k_at(b, hk, j, d));
    worst = std::max(worst, a * scale);
  }
  return 1e-4 + std::ldexp(worst, -11) / (1.0 + std::fabs(lse));
}

// Runs one case on both backends and checks the GPU result (see the file comment).
void check_case(const Case& c) {
  const uint64_t seed = fresh_seed();
  INFO("seed: " << seed << "  case: " << describe(c));
  std::mt19937_64 rng(seed);
  const Inputs in = make_inputs(c, rng);
  const Outputs ref = run_cpu(in);
  Handle gpu(MXQ_BACKEND_CUDA);
  mxqAttentionPlan_t p = make_plan(gpu, c);
  MXQ_REQUIRE_OK(mxqAttentionPlanFinalize(p));
  GpuRun g;
  const Outputs got = run_gpu(in, gpu, p, g);
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p));
  const Plain plain = plain_attention(in);

  // Written exactly where the oracle writes; fully masked rows exactly 0 / -inf.
  size_t wrote_mismatch = 0, masked_mismatch = 0;
  Err e_gpu_ref, e_gpu_plain, e_ref_plain, e_bf16_plain;
  double worst_row = 0.0;
  for (int64_t r = 0; r < in.q.rows(); ++r) {
    Err row;
    for (int64_t d = 0; d < c.D; ++d) {
      const size_t i = static_cast<size_t>(r * c.D + d);
      const bool ref_w = ref.o[i] != 0xFFFF, got_w = got.o[i] != 0xFFFF;
      if (ref_w != got_w) {
        ++wrote_mismatch;
        continue;
      }
      if (!ref_w) continue;
      const double x = bf16_value(got.o[i]), y = bf16_value(ref.o[i]);
      e_gpu_ref.add(x, y);
      row.add(x, y);
      e_gpu_plain.add(x, plain.o[i]);
      e_ref_plain.add(y, plain.o[i]);
      e_bf16_plain.add(plain.o_bf16[i], plain.o[i]);
    }
    if (row.den > 0) worst_row = std::max(worst_row, row.rel());
  }
  double lse_err = 0.0;
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    const bool ref_w = f32_bits(ref.lse[i]) != 0xFFFFFFFFu, got_w = f32_bits(got.lse[i]) != 0xFFFFFFFFu;
    if (ref_w != got_w) {
      ++wrote_mismatch;
      continue;
    }
    if (!ref_w) continue;
    if (std::isinf(ref.lse[i]) || std::isinf(got.lse[i])) {
      if (ref.lse[i] != got.lse[i]) ++masked_mismatch;
      continue;
    }
    double e = std::fabs(double(got.lse[i]) - ref.lse[i]) / (1.0 + std::fabs(double(ref.lse[i])));
    if (e > 1e-4) e = std::min(e, 1e-4 * e / lse_allowance(in, static_cast<int64_t>(i), double(ref.lse[i])));
    lse_err = std::max(lse_err, e);
  }
  const double recipe = e_ref_plain.rel();
  std::ostringstream msg;
  msg << describe(c) << ": O rel. Frobenius error GPU vs oracle " << e_gpu_ref.rel() << ", GPU vs fp64 "
      << e_gpu_plain.rel() << ", oracle vs fp64 " << recipe << ", plain bf16 attention vs fp64 " << e_bf16_plain.rel()
      << "; worst row vs oracle " << worst_row << "; LSE max rel. error " << lse_err;
  std::printf("%s\n", msg.str().c_str());  // the figures docs/NUMERICS.md quotes
  UNSCOPED_INFO(msg.str());
  CHECK(wrote_mismatch == 0);
  CHECK(masked_mismatch == 0);
  CHECK(e_gpu_ref.rel() <= 1.6 * recipe + 2e-3);
  CHECK(e_gpu_plain.rel() <= 1.25 * recipe + 1e-3);
  CHECK(worst_row <= 0.1);
  CHECK(lse_err <= 1e-4);
  // The counts of each kind of comparison are real: a case whose outputs are all masked or all
  // poison would check nothing.
  CHECK(e_gpu_ref.den > 0);
}

}  // namespace

// D = 192 and 256 run after the prepass with 64-key tiles (the workspace stays padded to 128 keys):
// for them also key lengths at a tile boundary and one past it.
TEST_CASE("gpu attention fwd: masks, head dims, odd lengths (BHSD, swizzled)", "[gpu][attention][fwd]") {
  for (int64_t D : {64, 128, 192, 256})
    for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
      Case c;
      c.B = 2;
      c.Hq = 2;
      c.Hkv = 2;
      c.Sq = 200;
      c.Skv = 333;
      c.D = D;
      c.mask = mask;
      check_case(c);
      if (D > 128) {
        c.B = 1;
        c.Sq = 129;
        c.Skv = 64;
        check_case(c);
        c.Sq = 1;
        c.Skv = 65;
        check_case(c);
      }
    }
}

TEST_CASE("gpu attention fwd: inputs as a quantizer writes them", "[gpu][attention][fwd]") {
  for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT})
    for (bool bshd : {false, true}) {
      Case c;
      c.B = 2;
      c.Hq = 4;
      c.Hkv = 2;
      c.Sq = 300;
      c.Skv = 517;
      c.mask = mask;
      c.layout = bshd ? MXQ_ATTN_LAYOUT_BSHD : MXQ_ATTN_LAYOUT_BHSD;
      c.swz = !bshd;
      c.quantized = true;
      check_case(c);
    }
  Case c;
  c.B = 3;
  c.Hq = 2;
  c.Hkv = 1;
  c.Sq = 300;
  c.Skv = 400;
  c.varlen = true;
  c.lens_q = {300, 1, 129};
  c.lens_kv = {400, 77, 256};
  c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  c.quantized = true;
  check_case(c);
}

TEST_CASE("gpu attention fwd: more queries than keys, fully masked rows, tiny shapes", "[gpu][attention][fwd]") {
  for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_TOP_LEFT, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
    Case c;
    c.Sq = 300;
    c.Skv = 129;
    c.mask = mask;
    check_case(c);
    c.Sq = 1;
    c.Skv = 1;
    check_case(c);
    c.Sq = 33;
    c.Skv = 257;
    c.D = 64;
    check_case(c);
  }
}

TEST_CASE("gpu attention fwd: GQA / MQA, BSHD, LINEAR scales, softmax scale", "[gpu][attention][fwd]") {
  Case c;
  for (int64_t D : {128, 192, 256}) {
    c = Case{};
    c.B = 2;
    c.Hq = 4;
    c.Hkv = 2;
    c.Sq = 257;
    c.Skv = 190;
    c.D = D;
    c.layout = MXQ_ATTN_LAYOUT_BSHD;
    c.swz = false;
    check_case(c);
    c.Hkv = 1;
    c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
    c.swz = true;
    check_case(c);
  }
  c.layout = MXQ_ATTN_LAYOUT_BHSD;
  c.D = 64;
  c.softmax_scale = 0.3f;
  check_case(c);
}

// Under a mask the persistent D = 128 kernel runs the (batch, head) pairs of the last 16 MiB of bf16
// K/V as one section, longest query blocks first across its heads, the heads before it in sections of
// one KV head's query heads, and its converters take K/V units in the same order (sec_map in
// kernels/sm90/attention_fwd.cu). Every shape above fits in one section; here 10 KV heads of 4096 keys
// (2 MiB each) make 2 sections of 2 query heads, then a last one of 16.
TEST_CASE("gpu attention fwd: many heads under a mask (sections of the persistent order)", "[gpu][attention][fwd]") {
  Case c;
  c.Hq = 20;
  c.Hkv = 10;
  c.Sq = 130;
  c.Skv = 4096;
  c.mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  check_case(c);
}

TEST_CASE("gpu attention fwd: variable-length packed sequences", "[gpu][attention][fwd]") {
  for (int64_t D : {128, 256})
    for (bool swz : {true, false})
      for (auto mask : {MXQ_ATTN_MASK_NONE, MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT}) {
        Case c;
        c.B = 4;
        c.Hq = 2;
        c.Hkv = 1;
        c.Sq = 300;
        c.Skv = 280;
        c.D = D;
        c.varlen = true;
        c.swz = swz;
        c.mask = mask;
        c.lens_q = {1, 300, 77, 130};
        c.lens_kv = {33, 280, 0, 129};
        check_case(c);
      }
}

TEST_CASE("gpu attention fwd: a NaN in Q makes its row NaN, on both backends", "[gpu][attention][fwd]") {
  Case c;
  c.Sq = 150;
  c.Skv = 150;
  std::mt19937_64 rng(fresh_seed());
  Inputs in = make_inputs(c, rng);
  const int64_t bad = 77;
  in.qd[bad * c.D + 5] = 0x7F;  // E4M3 NaN
  const Outputs ref = run_cpu(in);
  Handle gpu(MXQ_BACKEND_CUDA);
  mxqAttentionPlan_t p = make_plan(gpu, c);
  MXQ_REQUIRE_OK(mxqAttentionPlanFinalize(p));
  GpuRun g;
  const Outputs got = run_gpu(in, gpu, p, g);
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p));
  for (int64_t r = 0; r < c.Sq; ++r)
    for (int64_t d = 0; d < c.D; ++d) {
      const size_t i = static_cast<size_t>(r * c.D + d);
      INFO("row " << r << " d " << d);
      REQUIRE(std::isnan(bf16_value(got.o[i])) == (r == bad));
      REQUIRE(std::isnan(bf16_value(ref.o[i])) == (r == bad));
    }
  CHECK(std::isnan(got.lse[bad]));
  CHECK(std::isnan(ref.lse[bad]));
}

TEST_CASE("gpu attention fwd: graph capture and repeated runs give identical bits", "[gpu][attention][fwd]") {
  Case c;
  c.B = 1;
  c.Hq = 3;
  c.Hkv = 3;
  c.Sq = 260;
  c.Skv = 260;
  c.mask = MXQ_ATTN_MASK_CAUSAL_TOP_LEFT;
  std::mt19937_64 rng(fresh_seed());
  const Inputs in = make_inputs(c, rng);
  Handle gpu(MXQ_BACKEND_CUDA);
  mxqAttentionPlan_t p = make_plan(gpu, c);
  MXQ_REQUIRE_OK(mxqAttentionPlanFinalize(p));
  GpuRun g1, g2;
  const Outputs a = run_gpu(in, gpu, p, g1);
  const Outputs b = run_gpu(in, gpu, p, g2, 3);
  CHECK(a.o == b.o);
  CHECK(std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4) == 0);

  // The same execution captured into a CUDA graph on a side stream: capture records only (outputs
  // stay poisoned), the replay writes the same bits.
  g2.o->poison(kPoison);
  g2.lse->poison(kPoison);
  const std::vector<uint8_t> poisoned_o = g2.o->download();
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqAttentionPlanGetWorkspaceSize(p, &ws));
  const std::vector<mxqExecArg_t> args = g2.args();
  CapturedGraph graph(
      [&](mxqStream_t s) { return mxqAttentionExecute(gpu, p, args.data(), 8, g2.ws->ptr(), ws, s); });
  MXQ_REQUIRE_STATUS(graph.status, MXQ_STATUS_SUCCESS);
  CHECK(g2.o->download() == poisoned_o);
  graph.launch();
  const auto ob = g2.o->download();
  const auto lb = g2.lse->download();
  CHECK(std::memcmp(ob.data(), a.o.data(), ob.size()) == 0);
  CHECK(std::memcmp(lb.data(), a.lse.data(), lb.size()) == 0);
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p));
}

TEST_CASE("gpu attention fwd: bad arguments get a status and a message", "[gpu][attention][fwd]") {
  Handle gpu(MXQ_BACKEND_CUDA);
  Case c;
  c.Sq = 64;
  c.Skv = 64;
  std::mt19937_64 rng(fresh_seed());
  const Inputs in = make_inputs(c, rng);
  mxqAttentionPlan_t p = make_plan(gpu, c);
  MXQ_REQUIRE_OK(mxqAttentionPlanFinalize(p));
  DeviceBuffer q(in.qd.size() + 16), qs(in.qs), k(in.kd), ks(in.ks), v(in.vd), vs(in.vs);
  DeviceBuffer o(static_cast<size_t>(c.Sq * c.D * 2)), lse(static_cast<size_t>(c.Sq * 4));
  o.poison(kPoison);
  auto misq = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(q.ptr()) + 8);
  std::vector<mxqExecArg_t> arg_list = fwd_args(misq, qs.ptr(), k.ptr(), ks.ptr(), v.ptr(), vs.ptr(), o.ptr(), lse.ptr());
  mxqExecArg_t* args = arg_list.data();
  size_t need = 0;
  MXQ_REQUIRE_OK(mxqAttentionPlanGetWorkspaceSize(p, &need));
  REQUIRE(need > 0);
  DeviceBuffer ws(need);
  MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, p, args, 8, ws.ptr(), need, nullptr), MXQ_STATUS_BAD_PARAM_MISALIGNED);
  CHECK(std::string(mxqGetLastErrorMessage()).find("Q") != std::string::npos);
  args[0].ptr = q.ptr();
  // Swizzled scales are read as whole words: a scale pointer off 4-byte alignment is refused.
  REQUIRE(c.swz);
  DeviceBuffer ks1(in.ks.size() + 4);
  args[3].ptr = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(ks1.ptr()) + 2);
  MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, p, args, 8, ws.ptr(), need, nullptr), MXQ_STATUS_BAD_PARAM_MISALIGNED);
  CHECK(std::string(mxqGetLastErrorMessage()).find("4-byte aligned") != std::string::npos);
  args[3].ptr = ks.ptr();
  MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, p, args, 8, ws.ptr(), need - 1, nullptr), MXQ_STATUS_BAD_PARAM_WORKSPACE);
  MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, p, args, 8, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_WORKSPACE);
  args[6].ptr = nullptr;
  MXQ_REQUIRE_STATUS(mxqAttentionExecute(gpu, p, args, 8, ws.ptr(), need, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  const auto ob = o.download();
  CHECK(std::all_of(ob.begin(), ob.end(), [](uint8_t x) { return x == kPoison; }));  // nothing written
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p));

  // A head dim without a kernel: declined at Finalize with the reason.
  Case odd = c;
  odd.D = 96;
  mxqAttentionPlan_t p2 = make_plan(gpu, odd);
  const mxqStatus_t st = mxqAttentionPlanFinalize(p2);
  INFO(mxqGetStatusName(st) << ": " << mxqGetLastErrorMessage());
  CHECK(st / 1000 == 2);
  CHECK(std::string(mxqGetLastErrorMessage()).find("head dim 96") != std::string::npos);
  MXQ_REQUIRE_OK(mxqAttentionPlanDestroy(p2));
}

}  // namespace gpu
}  // namespace mxq_test
