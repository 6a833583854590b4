// MXFP8 scaled-dot-product attention, forward, for Hopper (sm_90a): cuDNN's MXFP8 recipe
// (DESIGN §2.3, docs/NUMERICS.md "Attention") with an online softmax.
//
// Why BF16 tensor cores. Hopper's FP8 wgmma reads both operands K-major and has no block-scale
// operand: Q K^T would need a per-32 promotion of every S element (4 per D=128) on the CUDA cores,
// and P V would need V transposed to K-major. Instead every FP8 tile is dequantized exactly into
// bf16 in shared memory (an E4M3 value times 2^k is a bf16 value while it stays inside bf16's
// range) and BF16 wgmma runs at full rate with fp32 accumulation: products are exact and no
// promotion is needed. P is quantized exactly as the recipe says (E4M3 of P * p_scale, satfinite,
// RNE) and, being an FP8 value, enters the P V product as an exact bf16 register fragment.
//
// Except at D = 128, whose default kernel (mxq_attn_fwd_sm90_d128_f8, kF8) runs both products
// on FP8 wgmma after rescaling each operand within E4M3 to one power-of-two factor per Q row, K tile and
// V column (UE8M0 scales are powers of two): exact while the shifted values stay normal, bounded
// otherwise; an operand block past the bound raises a flag and the exact kernel (_inl) redoes the call
// (docs/NUMERICS.md, "Forward on FP8 tensor cores"; PERFORMANCE.md, nineteenth session).
//
// Shape of the work (docs/ARCHITECTURE.md "Attention forward", measurements in PERFORMANCE.md):
//   - a prepass (attn_prep_body) dequantizes K and V once into a bf16 workspace
//     [B*Hkv, round_up(Skv, 128), D], rows past a sequence zeroed, so the main kernel sees one
//     layout for BHSD, BSHD and varlen and needs no bounds on its loads;
//   - the main kernel (attn_fwd_body): a CTA owns 128 query rows of one (batch, head) (192 at D = 64).
//     Warpgroup 0 is the producer: one thread issues TMA loads of 128-key K and V tiles (128-byte
//     swizzled 64-column panels, exactly what the wgmma descriptors read) into two stages, against
//     full / empty mbarriers. Warpgroups 1 and 2 (and 3 at D = 64: setmaxnreg 24 / 160, so that a
//     third softmax hides the latencies that two did not) of 64 rows each dequantize their Q rows
//     once (and at D = 128 and 192 keep them in registers as S's A operand, at D = 256 the first
//     half of D: kQRegKs; shared memory then serves only K and V to the products), then per key
//     tile compute S = Q K^T (m64n128k16 over D), the online softmax in registers, and
//     O += P V (P from registers, V N-major: one m64n128k16 per k step over both 64-wide D panels
//     at D = 128, m64n64k16 at D = 64). Each warpgroup issues S of tile t+1 before P V of tile t
//     (as compiled, its softmax still waits for its P V: see the main loop), and the math
//     warpgroups take turns issuing (ping-pong; three go round), so one's softmax overlaps the
//     others' products.
//     O leaves through the warpgroup's own (no longer read) Q rows in shared memory, as whole-row
//     16-byte stores;
//   - the main kernel is launched as a programmatic dependent of the prepass: its blocks may start
//     (barriers, Q) while the prepass finishes, and the producer waits (griddepcontrol.wait: the
//     prepass complete and its writes visible) before its first TMA load of the workspace;
//   - at D = 128 (the default kernel mxq_attn_fwd_sm90_d128_inl) there is no prepass: the same
//     workspace tiles are converted by the main kernel's producer warpgroup, each 128-key unit of
//     one (batch, KV head) once, claimed through a state word (a tiny kernel clears the words and
//     precedes the main kernel as above). Warps 1-3 convert this CTA's own unit and then units
//     ahead of the running CTAs (a counter), the TMA thread acquires a unit's "ready" before its
//     loads and hands a unit nobody has claimed to its own converter warps: nothing ever waits on
//     a CTA that is not running. Conversion moved off the critical path costs issue slots instead:
//     at D = 64 (half the tensor work per converted element) that was slower (PERFORMANCE.md);
//   - the D = 128 kernel is also persistent (kPersist): one CTA per SM walks the work items (128
//     query rows of one (batch, head), head after head as the hardware runs the non-persistent grid,
//     except under a mask the heads of the last 16 MiB of K/V, whose items run longest first across
//     those heads, with the unit counter in the same order: sec_map; taken from a counter once the
//     previous item's loads are issued), so the next item's first
//     K/V tiles load while the math warpgroups finish the current one, and no CTA launch or
//     barrier setup sits between items. Its producer threads wait on mbarriers with a suspend
//     hint and its converter warps poll from one thread (kLean), so their waits take no issue
//     slots from the math warps.
//
// Masks and lengths: keys at or past the sequence length, and keys a causal mask hides, get
// S = -inf before the row max; rows with no visible key produce O = 0 and LSE = -inf. Rows and keys
// past a sequence are loaded as zeros, so no NaN from memory that the plan does not cover can reach
// a visible result (a NaN inside a visible key tile can: docs/NUMERICS.md). Varlen sequences index
// their rows through cu_seqlens; scales along S restart at each sequence start (the padded-batch
// layout of the API).
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_bf16.cuh"
#include "sm90/attention_common.cuh"
#include "sm90/attention_params.cuh"

namespace mxq {
namespace sm90attn {


constexpr int kTileKV = kAttnSm90TileKV;
constexpr int kPanelBytes = 128 * 128;  // 128 rows x 64 bf16
constexpr float kLn2 = 0.6931471805599453f;
constexpr int kMaskNone = 0, kMaskBottomRight = 2;  // mxqAttentionMask_t (1: causal top-left)

using attn::SeqRows;

// The raw FP8 bytes of a kRows-row tile starting at sequence position s0, read by kThr threads:
// chunk i of thread t is 16 bytes (16 elements along D) of row (t + kThr i) / (D/16). Rows at or
// past the sequence end read as zeros.
template <int D, int kRows, int kThr>
struct RawTile {
  static constexpr int kCPR = D / 16;  // 16-byte chunks per row
  static constexpr int kChunks = kRows * kCPR / kThr;
  uint4 c[kChunks];

  __device__ __forceinline__ void load(const uint8_t* base, const SeqRows& s, int s0, int tid) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const int idx = tid + kThr * i, r = idx / kCPR, col = idx % kCPR;
      const int pos = s0 + r;
      c[i] = pos < s.len ? __ldg(reinterpret_cast<const uint4*>(base + s.row(pos) * D + col * 16))
                         : make_uint4(0u, 0u, 0u, 0u);
    }
  }
};

// 16 E4M3 values times their scales -> 16 bf16 (two 16-byte chunks): exact while the scaled value
// is a bf16 normal or zero; NaN stays NaN.
template <bool kUniform>
__device__ __forceinline__ void dequant16(const uint4& raw, const float* s, uint4& lo, uint4& hi) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
  uint32_t o[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t pair = i & 1 ? w[i >> 1] >> 16 : w[i >> 1] & 0xFFFFu;
    o[i] = attn::e4m3x2_to_bf16x2(pair, kUniform ? s[0] : s[2 * i], kUniform ? s[0] : s[2 * i + 1]);
  }
  lo = make_uint4(o[0], o[1], o[2], o[3]);
  hi = make_uint4(o[4], o[5], o[6], o[7]);
}

// Stores the two bf16 chunks of raw chunk `col` (elements 16 col .. 16 col + 15) of tile row r into
// the 128-byte-swizzled, 64-column-panel layout wgmma reads.
__device__ __forceinline__ void store_chunk_pair(uint8_t* tile, int r, int col, const uint4& lo, const uint4& hi) {
  uint8_t* panel = tile + (col >> 2) * kPanelBytes;
  const uint32_t c16 = static_cast<uint32_t>((col & 3) * 2);
  *reinterpret_cast<uint4*>(panel + ptx::sw128_offset(r, c16)) = lo;
  *reinterpret_cast<uint4*>(panel + ptx::sw128_offset(r, c16 + 1)) = hi;
}

// The FP8 path's rescale within E4M3 and its error bound: attn::e4m3x16_rescale, f8_factor, f8_chunk_code,
// f8_block_bad (sm90/attention_common.cuh, shared with the backward).
using attn::e4m3x16_rescale;
using attn::f8_block_bad;
using attn::f8_chunk_code;
using attn::f8_factor;
using attn::f8_rcp;

// Offset of V's scale for column d and 32-key block c inside its (b, h) entry (columnwise scales).
__device__ __forceinline__ int64_t v_scale_off(const AttnFwdSm90Params& p, int d, int c) {
  return p.swizzled ? layout::swizzled_offset(d, c, p.s_scale_ld) : int64_t(d) * p.s_scale_ld + c;
}

// One K chunk of the workspace: 16 FP8 elements (one scale) of padded row s of entry e, column chunk
// col -> 32 bf16 bytes (zeros at or past the sequence's length).
template <int D>
__device__ __forceinline__ void prep_k_chunk(const AttnFwdSm90Params& p, int e, int s, int col) {
  const SeqRows seq = attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, e / p.heads_kv, e % p.heads_kv);
  uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
  if (s < seq.len) {
    const int64_t row = seq.row(s), c = col >> 1;
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p.k + row * D + col * 16));
    const int64_t off = attn::along_d_scale_offset(p.swizzled, row, c, p.d_scale_ld);
    const float sc = dev::ue8m0_to_f32(__ldg(p.k_scales + off));
    dequant16<true>(raw, &sc, lo, hi);
  }
  uint4* out = reinterpret_cast<uint4*>(p.ws_k + (static_cast<int64_t>(e) * p.kv_pad + s) * D + col * 16);
  out[0] = lo;
  out[1] = hi;
}

// One V item of the workspace: column chunk col (16 columns, 16 scales) of rows q, q+8, q+16, q+24 of
// 32-key block c of entry e.
template <int D>
__device__ __forceinline__ void prep_v_item(const AttnFwdSm90Params& p, int e, int c, int q, int col) {
  const SeqRows seq = attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, e / p.heads_kv, e % p.heads_kv);
  const int s0 = 32 * c + q;
  uint4 raw[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int s = s0 + 8 * k;
    raw[k] = s < seq.len ? __ldg(reinterpret_cast<const uint4*>(p.v + seq.row(s) * D + col * 16))
                         : make_uint4(0u, 0u, 0u, 0u);
  }
  float sc[16];
  if (s0 < seq.len) {
    const uint8_t* es = p.v_scales + static_cast<int64_t>(e) * p.v_scale_entry;
#pragma unroll
    for (int t = 0; t < 16; ++t) {
      const int d = col * 16 + t;
      sc[t] = dev::ue8m0_to_f32(
          __ldg(es + v_scale_off(p, d, c)));
    }
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int s = s0 + 8 * k;
    uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
    if (s < seq.len) dequant16<false>(raw[k], sc, lo, hi);
    uint4* out = reinterpret_cast<uint4*>(p.ws_v + (static_cast<int64_t>(e) * p.kv_pad + s) * D + col * 16);
    out[0] = lo;
    out[1] = hi;
  }
}

// Prepass: K and V -> bf16 workspace [B*Hkv, kv_pad, D] (rows at or past each sequence's length
// zero), exactly dequantized; memory-bound. K: one 16-byte FP8 chunk per thread and iteration (one
// scale). V: a thread takes the same 16 columns of 4 rows of one 32-key block (rows q, q+8, q+16,
// q+24), so the 16 per-column scales it gathers serve 64 elements instead of 16.
template <int D>
__device__ __forceinline__ void attn_prep_body(const AttnFwdSm90Params& p) {
  constexpr int kCPR = D / 16;
  // Programmatic dependent launch: the main kernel may be scheduled as soon as every block of this
  // grid has started; it reads the workspace only after griddepcontrol.wait, which waits for this
  // grid's completion and the visibility of all its writes (a no-op without the launch attribute).
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int64_t k_chunks = static_cast<int64_t>(p.batch) * p.heads_kv * p.kv_pad * kCPR;
  const int64_t v_items = k_chunks / 4;  // (entry, 32-key block, row q in 0..7, column chunk)
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < k_chunks + v_items; idx += stride) {
    if (idx < k_chunks) {
      const int64_t er = idx / kCPR;  // (entry, padded row)
      prep_k_chunk<D>(p, static_cast<int>(er / p.kv_pad), static_cast<int>(er % p.kv_pad), static_cast<int>(idx % kCPR));
    } else {
      const int64_t i = idx - k_chunks;
      const int64_t eb = i / (kCPR * 8);  // (entry, 32-key block)
      const int blocks = p.kv_pad / 32;
      prep_v_item<D>(p, static_cast<int>(eb / blocks), static_cast<int>(eb % blocks), static_cast<int>((i / kCPR) % 8),
                     static_cast<int>(i % kCPR));
    }
  }
}

// ---- In-kernel K/V conversion (kInline): the workspace tiles are converted by the main kernel's
// producer warpgroups instead of a prepass. A unit is one 128-key tile of one (batch, KV head) entry,
// K and V; its state word (p.tile_state[unit], zeroed by mxq_attn_zero_sm90 before every call) is
// 0 (untouched), 1 (claimed: being converted by a running CTA) or 2 (ready). p.tile_state[n_units]
// is the counter the converter warps take units ahead from. A thread claims a unit by a CAS 0 -> 1,
// converts it, and one thread publishes it with a release store of 2 after a barrier of the
// converting threads (each of which fenced its generic writes for the async proxy and the GPU);
// the TMA thread acquires 2 and fences the async proxy before its loads. Nothing waits on a unit
// that no running CTA holds: a unit found at 0 is converted by the thread that needs it.
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* a) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_gpu(uint32_t* a, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(a), "r"(v) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }

// The converters' staging area in shared memory (kInline; attn_sm90_smem_bytes_inl): the unit's FP8
// K and V rows, then K's scales as floats [128][D/32] and V's [4][D] (the tile's four 32-key blocks).
// Converts unit u with the n converter threads (this one i; named barrier bar over them): the FP8
// rows land in shared memory by cp.async (one memory round trip for the whole unit), the scale bytes
// through registers as floats, then each thread dequantizes from shared memory and stores bf16 rows
// (rows at or past the sequence's length as zeros: the prepass's bits exactly). Ends with the
// writes fenced for the async proxy and the GPU; the caller publishes after a barrier.
template <int D, bool kF8 = false>
__device__ __forceinline__ void convert_unit_staged(const AttnFwdSm90Params& p, int u, int i, int n, int bar,
                                                    uint8_t* stage) {
  constexpr int kCPR = D / 16, kSPR = D / 32;
  const int tpe = p.kv_pad / kTileKV;
  const int e = u / tpe, t = u % tpe;
  const SeqRows seq = attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, e / p.heads_kv, e % p.heads_kv);
  const int len = static_cast<int>(seq.len), s_base = t * kTileKV;
  uint8_t* sk8 = stage;
  uint8_t* sv8 = stage + kTileKV * D;
  float* ksc = reinterpret_cast<float*>(stage + 2 * kTileKV * D);  // [128][kSPR]
  float* vsc = ksc + kTileKV * kSPR;                                 // [4][D]
  for (int idx = i; idx < kTileKV * kCPR; idx += n) {
    const int r = idx / kCPR, col = idx % kCPR, s = s_base + r;
    const bool ok = s < len;
    const int64_t off = ok ? seq.row(s) * D + col * 16 : 0;
    ptx::cp_async_16_zfill(ptx::smem_addr(sk8 + r * D + col * 16), p.k + off, ok);
    ptx::cp_async_16_zfill(ptx::smem_addr(sv8 + r * D + col * 16), p.v + off, ok);
  }
  ptx::cp_async_commit();
  // K's scales [128][kSPR] and V's [4][D] as floats (0 past the sequence); kF8: V's as the factors of
  // V'^T directly (each block's scale times the reciprocal of d's largest, ws_ev).
  const uint8_t* es = p.v_scales + static_cast<int64_t>(e) * p.v_scale_entry;
  const int c0 = t * (kTileKV / 32);  // the unit's first 32-key block
  // kF8: the reciprocal of column d's largest V scale, whose product with a block's scale is its factor.
  auto v_rcp = [&](int d) { return f8_rcp(p.ws_ev[static_cast<int64_t>(e) * D + d]); };
  if (kF8 && p.swizzled) {
    // The swizzled layout keeps a row's four K scales, and a column d's four V scales of this unit's
    // 32-key blocks, in one aligned word (MXQ_ARG_K_SCALES / _V_SCALES: 4-byte alignment when swizzled).
    static_assert(kSPR == 4, "one word of K scales per row");
    for (int r = i; r < kTileKV; r += n) {
      const int s = s_base + r;
      float4 f = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (s < len) {
        const uint32_t w = __ldg(reinterpret_cast<const uint32_t*>(
            p.k_scales + attn::along_d_scale_offset(true, seq.row(s), 0, p.d_scale_ld)));
        f = make_float4(dev::ue8m0_to_f32(static_cast<uint8_t>(w)), dev::ue8m0_to_f32(static_cast<uint8_t>(w >> 8)),
                        dev::ue8m0_to_f32(static_cast<uint8_t>(w >> 16)), dev::ue8m0_to_f32(static_cast<uint8_t>(w >> 24)));
      }
      *reinterpret_cast<float4*>(ksc + r * kSPR) = f;
    }
    for (int d = i; d < D; d += n) {
      const uint32_t w = 32 * c0 < len ? __ldg(reinterpret_cast<const uint32_t*>(es + v_scale_off(p, d, c0))) : 0u;
      const float r = v_rcp(d);
#pragma unroll
      for (int cb = 0; cb < 4; ++cb)
        vsc[cb * D + d] =
            32 * (c0 + cb) < len ? f8_factor(dev::ue8m0_to_f32(static_cast<uint8_t>(w >> (8 * cb))), r) : 0.0f;
    }
  } else {
    for (int idx = i; idx < kTileKV * kSPR; idx += n) {
      const int r = idx / kSPR, c = idx % kSPR, s = s_base + r;
      float f = 0.0f;
      if (s < len)
        f = dev::ue8m0_to_f32(__ldg(p.k_scales + attn::along_d_scale_offset(p.swizzled, seq.row(s), c, p.d_scale_ld)));
      ksc[idx] = f;
    }
    for (int idx = i; idx < 4 * D; idx += n) {
      const int cb = idx / D, d = idx % D;
      float f = 0.0f;
      if (32 * (c0 + cb) < len) {
        f = dev::ue8m0_to_f32(__ldg(es + v_scale_off(p, d, c0 + cb)));
        if constexpr (kF8) f = f8_factor(f, v_rcp(d));
      }
      vsc[idx] = f;
    }
  }
  ptx::cp_async_wait_all();
  ptx::named_barrier_sync(bar, n);
  if constexpr (kF8) {
    // K' = K rescaled to the tile's largest K scale (E4M3, rows of 128 bytes), that scale stored once
    // per unit (ws_kf[4 u], 1 for a tile without a key); a chunk past the error bound, or a NaN scale,
    // raises the call's flag (the exact kernel then redoes the call).
    static_assert(D == 128, "FP8 path: 128-byte K' rows");
    float* red = vsc + 4 * D;  // 4 floats of scratch after the staging area
    float mx = 0.0f;
    bool bad = false;
    for (int idx = i; idx < kTileKV * kSPR; idx += n) {
      mx = fmaxf(mx, ksc[idx]);
      bad |= ksc[idx] != ksc[idx];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
    if ((i & 31) == 0) red[i >> 5] = mx;
    ptx::named_barrier_sync(bar, n);
    mx = fmaxf(fmaxf(red[0], red[1]), red[2]);
    const float rmx = f8_rcp(mx);
    uint8_t* k8 = reinterpret_cast<uint8_t*>(p.ws_k);
    for (int base = 0; base < kTileKV * kCPR; base += n) {  // every lane in each round: the pair shuffle
      const int idx = base + i, r = idx / kCPR, col = idx % kCPR, s = s_base + r;
      uint4 o = make_uint4(0u, 0u, 0u, 0u);
      uint32_t code = 0u;
      float sc = 0.0f;
      if (idx < kTileKV * kCPR && s < len) {
        const uint4 raw = *reinterpret_cast<const uint4*>(sk8 + r * D + col * 16);
        sc = ksc[r * kSPR + (col >> 1)];
        o = e4m3x16_rescale(raw, f8_factor(sc, rmx));
        code = f8_chunk_code(raw, o);
      }
      code |= __shfl_xor_sync(0xFFFFFFFFu, code, 1);  // the block's other half (lane pairs: cols 2c, 2c + 1)
      bad |= f8_block_bad(code, sc < mx);
      if (idx < kTileKV * kCPR)
        *reinterpret_cast<uint4*>(k8 + (static_cast<int64_t>(e) * p.kv_pad + s) * D + col * 16) = o;
    }
    if (i == 0) p.ws_kf[4 * u] = mx > 0.0f ? mx : 1.0f;
    if (bad) *reinterpret_cast<volatile uint32_t*>(p.f8_flag) = 1u;
  } else {
    for (int idx = i; idx < kTileKV * kCPR; idx += n) {
      const int r = idx / kCPR, col = idx % kCPR, s = s_base + r;
      uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
      if (s < len) {
        const uint4 raw = *reinterpret_cast<const uint4*>(sk8 + r * D + col * 16);
        const float sc = ksc[r * kSPR + (col >> 1)];
        dequant16<true>(raw, &sc, lo, hi);
      }
      uint4* out = reinterpret_cast<uint4*>(p.ws_k + (static_cast<int64_t>(e) * p.kv_pad + s) * D + col * 16);
      out[0] = lo;
      out[1] = hi;
    }
  }
  if constexpr (kF8) {
    // V'^T: the unit's 128 x 128 block of rows d (128 bytes: its keys in the P fragments' order, see
    // pack_p8), each (d, 32-key block) rescaled to d's largest V scale over the sequence (ws_ev).
    // Item (dg, kc): columns 4 dg .. 4 dg + 3 of keys 16 kc .. 16 kc + 15 (a half block), read as 16
    // words (consecutive lanes: consecutive words) and transposed by byte permutes.
    uint8_t* v8 = reinterpret_cast<uint8_t*>(p.ws_v) + static_cast<int64_t>(u) * (kTileKV * D);
    bool badv = false;
    for (int idx = i; idx < (D / 4) * (kTileKV / 32); idx += n) {
      const int dg = idx % (D / 4), blk = idx / (D / 4);
      uint32_t code[4] = {0u, 0u, 0u, 0u};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int kc = 2 * blk + h;
        uint32_t w[16];
#pragma unroll
        for (int k = 0; k < 16; ++k) w[k] = *reinterpret_cast<const uint32_t*>(sv8 + (16 * kc + k) * D + 4 * dg);
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
          const int d = 4 * dg + ii;
          const uint32_t sel = static_cast<uint32_t>(ii | ((4 + ii) << 4));
          uint32_t ow[4];
#pragma unroll
          for (int c = 0; c < 4; ++c)  // logical keys 4c .. 4c+3 of the half block: physical 2c, 2c+1, 8+2c, 9+2c
            ow[c] = __byte_perm(__byte_perm(w[2 * c], w[2 * c + 1], sel), __byte_perm(w[8 + 2 * c], w[9 + 2 * c], sel),
                                0x5410);
          const uint4 raw = make_uint4(ow[0], ow[1], ow[2], ow[3]);
          const uint4 o = e4m3x16_rescale(raw, vsc[blk * D + d]);
          code[ii] |= f8_chunk_code(raw, o);
          *reinterpret_cast<uint4*>(v8 + d * kTileKV + kc * 16) = o;
        }
      }
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
        const float f = vsc[blk * D + 4 * dg + ii];  // the block's factor (NaN for a NaN scale)
        badv |= f8_block_bad(code[ii], f < 1.0f) || f != f;
      }
    }
    if (badv) *reinterpret_cast<volatile uint32_t*>(p.f8_flag) = 1u;
  } else {
    for (int idx = i; idx < kTileKV * kCPR * 2; idx += n) {
      const int r = idx / (2 * kCPR), c8 = idx % (2 * kCPR), s = s_base + r;  // 8 columns from 8 c8
      uint4 o = make_uint4(0u, 0u, 0u, 0u);
      if (s < len) {
        const uint2 raw = *reinterpret_cast<const uint2*>(sv8 + r * D + c8 * 8);
        const float4 a = *reinterpret_cast<const float4*>(vsc + (r >> 5) * D + c8 * 8);
        const float4 b = *reinterpret_cast<const float4*>(vsc + (r >> 5) * D + c8 * 8 + 4);
        o.x = attn::e4m3x2_to_bf16x2(raw.x & 0xFFFFu, a.x, a.y);
        o.y = attn::e4m3x2_to_bf16x2(raw.x >> 16, a.z, a.w);
        o.z = attn::e4m3x2_to_bf16x2(raw.y & 0xFFFFu, b.x, b.y);
        o.w = attn::e4m3x2_to_bf16x2(raw.y >> 16, b.z, b.w);
      }
      *reinterpret_cast<uint4*>(p.ws_v + (static_cast<int64_t>(e) * p.kv_pad + s) * D + c8 * 8) = o;
    }
  }
  fence_proxy_async_global();
  __threadfence();
}

// Zeroes the unit state words and the two counters (a programmatic dependent launch precedes the main
// kernel, whose producer threads execute griddepcontrol.wait before touching them).
__device__ __forceinline__ void attn_zero_body(const AttnFwdSm90Params& p) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int last = static_cast<int>(attn_sm90_f8_flag_word(p.n_units));
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i <= last; i += gridDim.x * blockDim.x) p.tile_state[i] = 0u;
}
// The FP8 path's zero kernel: also each (entry, d)'s largest V scale over the entry's sequence.
__device__ __forceinline__ void attn_zero_f8_body(const AttnFwdSm90Params& p) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int tid = blockIdx.x * blockDim.x + threadIdx.x, nthr = gridDim.x * blockDim.x;
  const int words = static_cast<int>(attn_sm90_state_words(p.n_units));  // both sets and the flag
  for (int i = tid; i < words; i += nthr) p.tile_state[i] = 0u;
  // One warp per (entry, d): lane l takes blocks 4l..4l+3, 4l+128.. (one 32-bit word of the swizzled
  // layout, whose 4 blocks of a row are consecutive bytes; byte loads in LINEAR rows), then a warp max;
  // the launcher gives each warp one (entry, d), so the scan is one memory round trip.
  constexpr int D = 128;
  const int entries = p.batch * p.heads_kv, lane = threadIdx.x & 31;
  for (int wi = tid >> 5; wi < entries * D; wi += nthr >> 5) {  // warp-uniform
    const int e = wi / D, d = wi % D;
    const SeqRows seq = attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, e / p.heads_kv, e % p.heads_kv);
    const uint8_t* es = p.v_scales + static_cast<int64_t>(e) * p.v_scale_entry;
    const int nb = static_cast<int>((seq.len + 31) / 32);
    uint32_t mx = 0u;
    for (int c4 = 4 * lane; c4 < nb; c4 += 128) {
      uint32_t w = 0u;
      if (p.swizzled) {
        w = __ldg(reinterpret_cast<const uint32_t*>(es + v_scale_off(p, d, c4)));
      } else {
#pragma unroll
        for (int b = 0; b < 4; ++b)
          if (c4 + b < nb) w |= static_cast<uint32_t>(__ldg(es + v_scale_off(p, d, c4 + b))) << (8 * b);
      }
      if (nb - c4 < 4) w &= (1u << (8 * (nb - c4))) - 1u;  // blocks past the sequence
      w = __vmaxu4(w, w >> 16);
      w = __vmaxu4(w, w >> 8);
      mx = max(mx, w & 0xFFu);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
    if (lane == 0) p.ws_ev[wi] = nb > 0 ? dev::ue8m0_to_f32(static_cast<uint8_t>(mx)) : 0.0f;
  }
}

// Index i over lanes x per positions, in sections: sections of G lanes over the first lanes - T lanes,
// then one of the last T, each section position-major (all its lanes at position 0, then 1, ...); a
// bijection onto (lane, pos). Work items: lanes = (batch, head) pairs, positions = query blocks
// (longest first under a mask); units: lanes = KV entries, positions = key tiles (G and T over Hq / Hkv).
// G = 1, T = 0: lane-major, the order of the non-persistent grid and of the units.
__device__ __forceinline__ void sec_map(int i, int per, int lanes, int G, int T, int& lane, int& pos) {
  const int base = lanes - T;
  if (i < base * per) {
    const int sec = i / (G * per), j = i - sec * G * per, gs = min(G, base - sec * G);
    pos = j / gs;
    lane = sec * G + (j - pos * gs);
  } else {
    const int j = i - base * per;
    pos = j / T;
    lane = base + (j - pos * T);
  }
}

// Descriptor of an N-major B operand 128 wide (two 64-column panels kPanelBytes apart): leading byte
// offset = the panel stride, stride byte offset = 1024 between 8-row groups, 128-byte swizzle. Its
// low word (start address, leading byte offset), computed once per tile; the high word is the K-major
// one's, so ptx::smem_desc_sw128_at completes it (offsets inside the tile added as bytes >> 4).
template <int kVPanelBytes = kPanelBytes>
__device__ __forceinline__ uint32_t desc_nmajor128_lo(uint32_t smem_addr) {
  return ((smem_addr & 0x3FFFFu) >> 4) | (static_cast<uint32_t>(kVPanelBytes >> 4) << 16);
}

// kPingPong: the two math warpgroups take turns issuing their tensor-core work (named barriers
// 3 and 4), so one warpgroup's softmax runs while the other's GEMMs occupy the tensor cores.
// kInline: K/V converted inside this kernel (the workspace's units claimed through state words,
// see convert_unit_staged), else by the prepass. kProdRegs / kMathRegs: the setmaxnreg split
// (128 x kProdRegs + 256 x kMathRegs <= 384 x 168, the registers the CTA is launched with).
// kPersist (kInline only): one CTA per SM walks work items (128 query rows of one (batch, head), in
// the order the hardware would run the non-persistent grid, except for the sections of p.sec_heads /
// p.tail_heads: sec_map); the first item of CTA i is i, the next
// ones come from a counter (p.tile_state[n_units + 1], zeroed with the state words). The TMA thread
// takes each item, publishes it in a two-slot ring (mbarriers item_full / item_empty) that the math
// warpgroups read, and streams its K/V tiles through the same stage ring as the previous item's
// (stage and phase from a running tile count), so the next item's first tiles load while the math
// warpgroups finish the current one. The turns of the two math warpgroups restart per item, and a
// warpgroup rewrites its Q rows only after a barrier behind its own epilogue's reads of them.
// kLean: the TMA thread's waits for free stages suspend on the mbarrier (try_wait with a time hint)
// instead of retrying at once, and the converter warps' idle polling is one thread's loop.
// kMathWG: math warpgroups of 64 query rows each (a CTA owns 64 kMathWG query rows); 3 only at D = 64
// after the prepass, not persistent (their turns go round: warpgroup i hands the tensor cores to
// warpgroup i + 1 mod 3).
// kKV: keys per K/V tile: 128, or 64 at D = 192 and 256 (after the prepass), where O's accumulator
// (D / 2 registers per thread) leaves room for only half as many scores.
// kQRegKs: S's first kQRegKs k16 steps take Q from registers (wgmma RS: fragments loaded once per
// item from the Q tile), the rest from shared memory (SS); each RS step saves the 2 KiB of Q that
// the SS form reads from shared memory per wgmma (PERFORMANCE.md, sixteenth session).
// kF8 (D = 128, kInline): S = Q' K'^T and P V on FP8 wgmma: Q' per row, K' per 128-key tile, V'^T per
// column d over the sequence, each rescaled within E4M3; the Q and K factors folded into the softmax's
// constant per row and tile, the V factors into O at the end.
template <int D, bool kPingPong, bool kInline, int kProdRegs, int kMathRegs, bool kPersist = false,
          bool kLean = false, int kMathWG = 2, int kKV = kTileKV, int kQRegKs = 0, bool kF8 = false>
__device__ __forceinline__ void attn_fwd_body(const AttnFwdSm90Params& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!kPersist || kInline, "the persistent schedule is built on the in-kernel conversion");
  // The exact kernel behind the FP8 one (gate): nothing to do unless that one raised its flag. It is a
  // programmatic dependent of the FP8 kernel, so it waits for that grid's completion and writes first;
  // its state words and counters are a second set, zeroed with the first by the zero kernel.
  if (!kF8 && p.gate) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (*reinterpret_cast<volatile const uint32_t*>(p.f8_flag) == 0u) return;
  }
  // The FP8 kernel lets the exact kernel behind it launch at once: its CTAs take the SMs that this
  // grid's CTAs leave at the end and wait there (griddepcontrol.wait above), so the launch overlaps this
  // grid's tail instead of following its completion.
  if constexpr (kF8) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  constexpr int kPanels = D / 64;
  constexpr int kTileBytes = kKV * D * 2;
  constexpr int kKVPanelBytes = kKV * 128;  // one 64-column panel of a K or V tile
  static_assert(kKV == kTileKV || (kKV == 64 && !kInline), "64-key tiles: after the prepass");
  static_assert(!kF8 || (D == 128 && kInline && kKV == kTileKV), "FP8 path: D = 128, in-kernel conversion");
  constexpr int kK8Bytes = kKV * D;  // kF8: K' tile (E4M3), then its factor (16 bytes)
  static_assert(kMathWG == 2 || (kMathWG == 3 && D == 64 && !kInline), "three math warpgroups: D = 64, prepass");
  constexpr int kSt = 2;  // K/V stages (three fit, measured no faster at D = 128 and at D = 64: PERFORMANCE.md)
  constexpr int kRowsQ = 64 * kMathWG;                // query rows per CTA
  constexpr int kQBytes = kRowsQ * D * 2;             // the Q tile (one 64-column panel per 64 of D)
  constexpr int kThreads = 128 * (1 + kMathWG);
  constexpr int kBarPP = 1 + kMathWG;  // named barriers: 1 .. kMathWG per math warpgroup, then the turns
  constexpr uint32_t kTxBytes = kTileBytes;  // one K or V tile per TMA transaction
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  // Q, then K stages 0 and 1, then V stages 0 and 1, then the mbarriers.
  uint8_t* sq = smem;
  auto sk = [&](int st) { return smem + kQBytes + st * kTileBytes; };
  auto sv = [&](int st) { return smem + kQBytes + (kSt + st) * kTileBytes; };
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kQBytes + 2 * kSt * kTileBytes);
  auto full_k = [&](int st) { return bars + st; };
  auto full_v = [&](int st) { return bars + kSt + st; };
  auto empty_k = [&](int st) { return bars + 2 * kSt + st; };
  auto empty_v = [&](int st) { return bars + 3 * kSt + st; };
  // kInline: the converters' unit, the unit the TMA thread waits for (-1: none), "all tiles issued",
  // the items this CTA has taken (kPersist), and the converters' staging area.
  // need_slot, done_flag and items_taken pass between warps without a barrier: shared-memory atomics
  // (and volatile reads) only. kPersist: the item ring's mbarriers and slots after them.
  volatile int* conv_slot = reinterpret_cast<volatile int*>(bars + 4 * kSt);
  int* need_slot = const_cast<int*>(conv_slot) + 1;
  int* done_flag = const_cast<int*>(conv_slot) + 2;
  volatile int* items_taken = conv_slot + 3;
  uint64_t* item_full = bars + 4 * kSt + 2;
  uint64_t* item_empty = bars + 4 * kSt + 4;
  volatile int* item_slot = reinterpret_cast<volatile int*>(bars + 4 * kSt + 6);
  uint8_t* conv_stage = reinterpret_cast<uint8_t*>(bars) + 128;

  const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, warp = (tid >> 5) & 3;
  // Work items: linear index i -> query block (fastest), head, batch, as the hardware orders the
  // non-persistent grid (nqb x Hq x B); kPersist: query block outer within each section of heads
  // (sec_map; the launcher's sections, PERFORMANCE.md eleventh session).
  const int nqb = kPersist ? (p.seqlen_q + kRowsQ - 1) / kRowsQ : static_cast<int>(gridDim.x);
  const int n_items = kPersist ? nqb * p.heads_q * p.batch : 0x7FFFFFFF;
  const int first_item =
      kPersist ? static_cast<int>(blockIdx.x)
               : static_cast<int>(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  const int group = p.heads_q / p.heads_kv;
  struct Work {
    int b, h, hk, qb, q0, lq, lk, shift, n_tiles;
    SeqRows sq_seq;
  };
  auto item_work = [&](int i) {
    Work w;
    int qi = i % nqb, bh = i / nqb;
    if constexpr (kPersist) sec_map(i, nqb, p.heads_q * p.batch, p.sec_heads, p.tail_heads, bh, qi);
    // Causal masks make late query blocks the longest: start them first.
    w.qb = p.mask != kMaskNone ? nqb - 1 - qi : qi;
    w.h = bh % p.heads_q;
    w.b = bh / p.heads_q;
    w.hk = w.h / group;
    w.sq_seq = attn::seq_rows(p.bshd, p.cu_q, p.seqlen_q, p.heads_q, w.b, w.h);
    const SeqRows skv_seq = attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, w.b, w.hk);
    w.q0 = w.qb * kRowsQ;
    w.lq = static_cast<int>(w.sq_seq.len);
    w.lk = static_cast<int>(skv_seq.len);
    // Key j is visible to query i iff j < lk and (no mask, or j <= i + shift).
    w.shift = p.mask == kMaskBottomRight ? w.lk - w.lq : 0;
    int kv_end = w.lk;
    if (p.mask != kMaskNone) kv_end = min(kv_end, w.q0 + kRowsQ + w.shift);
    w.n_tiles = kv_end > 0 && w.q0 < w.lq ? (kv_end + kKV - 1) / kKV : 0;
    return w;
  };
  if constexpr (!kPersist) {
    const Work w0 = item_work(first_item);
    if (w0.q0 >= w0.lq) return;  // the whole CTA, before any barrier
  }

  if (tid == 0) {
#pragma unroll
    for (int st = 0; st < kSt; ++st) {
      ptx::mbar_init(full_k(st), 1);
      ptx::mbar_init(full_v(st), 1);
      ptx::mbar_init(empty_k(st), kMathWG * 128);
      ptx::mbar_init(empty_v(st), kMathWG * 128);
    }
    if constexpr (kPersist) {
      for (int sl = 0; sl < 2; ++sl) {
        ptx::mbar_init(item_full + sl, 1);
        ptx::mbar_init(item_empty + sl, kMathWG * 128);
      }
    }
    ptx::mbar_fence_init();
    if constexpr (kInline) {
      *need_slot = -1;
      *done_flag = 0;
      *items_taken = 0;
    }
  }
  __syncthreads();

  static_assert(128 * kProdRegs + 128 * kMathWG * kMathRegs <= kThreads * (65536 / kThreads / 8 * 8),
                "setmaxnreg would wait for registers forever");
  static_assert(!kInline || kProdRegs >= 40, "the converter warps need 40 registers");
  if (wg == 0) {  // producer: one thread issues every TMA load
    ptx::setmaxnreg_dec<kProdRegs>();
    // One TMA thread's loads of tile t (gt-th tile of this CTA: stage and phase) at workspace row row_base.
    auto issue_tile = [&](int row_base, int t, int gt) {
      const int st = gt % kSt;
      const uint32_t ph = (gt / kSt) & 1;
      if constexpr (kLean) ptx::mbar_wait_suspend(empty_k(st), ph ^ 1);
      else ptx::mbar_wait(empty_k(st), ph ^ 1);
      if constexpr (kF8) {
        ptx::mbar_arrive_expect_tx(full_k(st), kK8Bytes + 16);
        ptx::tma_load_2d(ptx::smem_addr(sk(st)), p.tmap_k8, 0, row_base + t * kKV, full_k(st));
        ptx::bulk_load(ptx::smem_addr(sk(st) + kK8Bytes), p.ws_kf + 4 * ((row_base + t * kKV) / kTileKV), 16,
                       full_k(st));
      } else {
        ptx::mbar_arrive_expect_tx(full_k(st), kTxBytes);
#pragma unroll
        for (int pn = 0; pn < kPanels; ++pn)
          ptx::tma_load_2d(ptx::smem_addr(sk(st) + pn * kKVPanelBytes), p.tmap_k, 64 * pn, row_base + t * kKV,
                           full_k(st));
      }
      if constexpr (kLean) ptx::mbar_wait_suspend(empty_v(st), ph ^ 1);
      else ptx::mbar_wait(empty_v(st), ph ^ 1);
      if constexpr (kF8) {
        ptx::mbar_arrive_expect_tx(full_v(st), kK8Bytes);
        ptx::tma_load_2d(ptx::smem_addr(sv(st)), p.tmap_v8, 0, row_base + t * kKV, full_v(st));
      } else {
        ptx::mbar_arrive_expect_tx(full_v(st), kTxBytes);
#pragma unroll
        for (int pn = 0; pn < kPanels; ++pn)
          ptx::tma_load_2d(ptx::smem_addr(sv(st) + pn * kKVPanelBytes), p.tmap_v, 64 * pn, row_base + t * kKV,
                           full_v(st));
      }
    };
    if constexpr (!kInline) {
      const Work w = item_work(first_item);
      if (tid == 0 && w.n_tiles > 0) {
        ptx::tma_prefetch_desc(p.tmap_k);
        ptx::tma_prefetch_desc(p.tmap_v);
        // The workspace is the prepass's output (programmatic dependent launch: see attn_prep_body).
        asm volatile("griddepcontrol.wait;" ::: "memory");
        const int row_base = (w.b * p.heads_kv + w.hk) * p.kv_pad;
        for (int t = 0; t < w.n_tiles; ++t) issue_tile(row_base, t, t);
      }
    } else {
      // The state words are zeroed by the preceding grid (programmatic dependent launch).
      asm volatile("griddepcontrol.wait;" ::: "memory");
      const int tpe = p.kv_pad / kTileKV;
      uint32_t* const state = p.tile_state;
      if (warp == 0) {  // the TMA warp: lane 0 issues; a unit nobody has claimed goes to this CTA's converters
        if (lane == 0) {
          ptx::tma_prefetch_desc(kF8 ? p.tmap_k8 : p.tmap_k);
          ptx::tma_prefetch_desc(kF8 ? p.tmap_v8 : p.tmap_v);
        }
        int item = first_item, g = 0, it = 0;
        for (;;) {
          int nxt = 0;
          if constexpr (kPersist) {  // publish the item (or the end), take the next one
            if (lane == 0) {
              const int slot = it & 1;
              ptx::mbar_wait(item_empty + slot, ((it >> 1) & 1) ^ 1);
              item_slot[slot] = item < n_items ? item : -1;
              ptx::mbar_arrive(item_full + slot);
              if (item < n_items) atomicAdd(const_cast<int*>(items_taken), 1);
            }
            ++it;
          }
          if (item >= n_items) break;
          const Work w = item_work(item);
          const int e = w.b * p.heads_kv + w.hk, row_base = e * p.kv_pad;
          uint32_t ready = 0;
          int ready_base = 0;
          for (int t = 0; t < w.n_tiles; ++t) {
            bool fresh = false;  // a new acquire since the last load: fence before the async-proxy reads
            if (t % 32 == 0) {  // the states of the next 32 tiles, one acquire load per lane
              ready_base = t;
              const uint32_t sv_ = t + lane < w.n_tiles ? ld_acquire_gpu(state + e * tpe + t + lane) : 2u;
              ready = __ballot_sync(0xFFFFFFFFu, sv_ == 2u);
              fresh = true;
            }
            if (lane == 0) {
              if (!((ready >> (t - ready_base)) & 1u)) {
                fresh = true;
                const int u = e * tpe + t;
                for (uint32_t st_; (st_ = ld_acquire_gpu(state + u)) != 2u;) {
                  if (st_ == 0u) atomicExch(need_slot, u);  // this CTA's converters claim it
                  __nanosleep(200);
                }
              }
              if (fresh) {
                __threadfence();  // the other lanes' acquires (ordered by the warp barrier) before the loads
                fence_proxy_async_global();
              }
              issue_tile(row_base, t, g + t);
            }
            __syncwarp();
          }
          g += w.n_tiles;
          if constexpr (!kPersist) break;
          // The next item, taken only now (all of this one's loads issued): taken earlier, a long item
          // would wait behind this one while another CTA idles (measured -7% at S16384 causal).
          if (lane == 0) nxt = static_cast<int>(gridDim.x) + static_cast<int>(atomicAdd(state + p.n_units + 1, 1u));
          item = __shfl_sync(0xFFFFFFFFu, nxt, 0);
        }
        if (lane == 0) atomicExch(done_flag, 1);
      } else {  // warps 1-3: units the TMA thread waits for, this CTA's own unit, up to quota units ahead
        const int wtid = tid - 32;
        const Work w0 = item_work(first_item);
        const int own_t = (w0.h % group) * nqb + w0.qb, own_e = w0.b * p.heads_kv + w0.hk;
        int converted = 0;
        bool own_tried = false, exhausted = false;
        for (;;) {
          if (wtid == 0) {
            int u = -1;
            // kLean: this thread alone polls until there is something to do, sleeping longer while
            // idle (else all three warps meet at two barriers per round; PERFORMANCE.md, eighth session).
            for (uint32_t nap = 256;; nap = min(2 * nap, 2048u)) {
              // kPersist: quota units per item this CTA has taken, so conversion keeps about a wave ahead.
              const int allowed = kPersist ? p.quota * *items_taken : p.quota;
              const int need = atomicExch(need_slot, -1);  // posted again while the TMA thread finds it untouched
              if (need >= 0) {
                if (atomicCAS(state + need, 0u, 1u) == 0u) u = need;
              } else if (!own_tried) {
                own_tried = true;
                if (own_t < tpe && atomicCAS(state + own_e * tpe + own_t, 0u, 1u) == 0u) u = own_e * tpe + own_t;
              } else if (!exhausted && converted < allowed) {
                int v = static_cast<int>(atomicAdd(state + p.n_units, 1u));
                if (kPersist && p.conv_sec && v < p.n_units) {  // the units in the items' order of sections
                  int e_, t_;
                  sec_map(v, tpe, p.n_units / tpe, p.sec_heads / group, p.tail_heads / group, e_, t_);
                  v = e_ * tpe + t_;
                }
                if (v >= p.n_units) exhausted = true;
                else if (atomicCAS(state + v, 0u, 1u) == 0u) {
                  u = v;
                  ++converted;
                }
              } else if (atomicAdd(done_flag, 0) != 0) {
                u = -2;
              } else {
                __nanosleep(kLean ? nap : 1000u);
                if (kLean) continue;
              }
              if (!kLean || u != -1) break;
            }
            *conv_slot = u;
          }
          ptx::named_barrier_sync(5, 96);
          const int u = *conv_slot;
          ptx::named_barrier_sync(5, 96);  // everyone has read the slot
          if (u == -2) break;
          if (u < 0) continue;
          convert_unit_staged<D, kF8>(p, u, wtid, 96, 5, conv_stage);
          ptx::named_barrier_sync(5, 96);
          if (wtid == 0) st_release_gpu(state + u, 2u);
        }
      }
    }
    return;
  }

  ptx::setmaxnreg_inc<kMathRegs>();
  const int cw = wg - 1, ctid = tid - 128 * (wg);
  const uint32_t q_addr = ptx::smem_addr(sq) + static_cast<uint32_t>(cw * 64 * 128);
  const float c = p.scale_log2;
  // The Q descriptor's low word and the running tile count g pass through a shuffle from lane 0: the
  // values are the same in every lane, and so marked, ptxas keeps the descriptor and stage arithmetic
  // of the main loop on the uniform datapath (PERFORMANCE.md, ninth session).
  const uint32_t q_desc_lo = __shfl_sync(0xFFFFFFFFu, ptx::smem_desc_sw128_lo(q_addr), 0);
  int g = 0, it = 0;
  // The next item from the ring (kPersist; -1: none left), else this CTA's one item.
  auto take_item = [&]() -> int {
    if constexpr (kPersist) {
      const int slot = it & 1;
      ptx::mbar_wait(item_full + slot, (it >> 1) & 1);
      const int v = item_slot[slot];
      ptx::mbar_arrive(item_empty + slot);
      ++it;
      return v;
    } else {
      return first_item;
    }
  };
  // This warpgroup's 64 raw query rows and their chunks' scales.
  RawTile<D, 64, 128> rq;
  float qsc[RawTile<D, 64, 128>::kChunks];
  auto load_q = [&](const Work& w) {
    const int s0 = w.q0 + 64 * cw;
    rq.load(p.q, w.sq_seq, s0, ctid);
#pragma unroll
    for (int i = 0; i < RawTile<D, 64, 128>::kChunks; ++i) {
      const int idx = ctid + 128 * i, r = idx / (D / 16), col = idx % (D / 16);
      const int pos = s0 + r;
      qsc[i] = pos < w.sq_seq.len ? dev::ue8m0_to_f32(__ldg(p.q_scales + attn::along_d_scale_offset(
                                                          p.swizzled, w.sq_seq.row(pos), col >> 1, p.d_scale_ld)))
                                  : 0.0f;
    }
  };
  static_assert(kQRegKs >= 0 && kQRegKs <= D / 16, "k steps of S with Q from registers");
  uint32_t qf[kQRegKs > 0 ? kQRegKs : 1][4];  // Q as the register A operand of S's first kQRegKs k steps
  uint32_t qf8[kF8 ? 4 : 1][4];  // kF8: Q' (E4M3) as the A operand of S's four k32 steps
  float cr[2] = {c, c};           // kF8: c times the largest Q scale of each of the thread's two rows
  int item = take_item();
  Work w = item_work(item < 0 ? 0 : item);
  while (item >= 0) {
    if (kPersist && w.q0 >= w.lq) {  // an empty query block of a varlen batch
      item = take_item();
      if (item >= 0) w = item_work(item);
      continue;
    }
    const int q0 = w.q0, lq = w.lq, lk = w.lk, shift = w.shift;
    const int n_tiles = __shfl_sync(0xFFFFFFFFu, w.n_tiles, 0);  // warp-uniform, as g below
    g = __shfl_sync(0xFFFFFFFFu, g, 0);  // warp-uniform (above)
    // This warpgroup's 64 query rows, dequantized into rows [64 cw, 64 cw + 64) of the Q tile (rows
    // past the sequence as zeros).
    if constexpr (kF8) {
      // Q' = each row's blocks rescaled to the row's largest scale (E4M3), 64 rows of 128 bytes with
      // the 128-byte swizzle in this warpgroup's first 8 KiB of the Q tile, the row maxima as floats
      // in its rows of the second panel; a row's 8 chunks are 8 consecutive lanes.
      load_q(w);
      constexpr int kCPR = D / 16;
      uint8_t* q8 = sq + cw * 8192;
      float* qmx = reinterpret_cast<float*>(sq + 16384 + cw * 8192);
#pragma unroll
      for (int i = 0; i < RawTile<D, 64, 128>::kChunks; ++i) {
        const int idx = ctid + 128 * i, r = idx / kCPR, col = idx % kCPR;
        float mx = qsc[i];
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 4));
        const uint4 o = e4m3x16_rescale(rq.c[i], f8_factor(qsc[i], f8_rcp(mx)));
        *reinterpret_cast<uint4*>(q8 + ptx::sw128_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(col))) = o;
        if (col == 0) qmx[r] = mx > 0.0f ? mx : 1.0f;
        uint32_t code = f8_chunk_code(rq.c[i], o);
        code |= __shfl_xor_sync(0xFFFFFFFFu, code, 1);  // the block's other half
        if (f8_block_bad(code, qsc[i] < mx) || qsc[i] != qsc[i])
          *reinterpret_cast<volatile uint32_t*>(p.f8_flag) = 1u;
      }
      ptx::named_barrier_sync(1 + cw, 128);
      const uint32_t trow = static_cast<uint32_t>(warp * 16 + (lane >> 2));
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) ptx::lds_a_frag_sw128(q8, trow, ks, lane, qf8[ks]);
      cr[0] = c * qmx[trow];
      cr[1] = c * qmx[trow + 8];
    } else {
      load_q(w);
      constexpr int kCPR = D / 16;
#pragma unroll
      for (int i = 0; i < RawTile<D, 64, 128>::kChunks; ++i) {
        const int idx = ctid + 128 * i, r = idx / kCPR, col = idx % kCPR;
        uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;
        if (q0 + 64 * cw + r < w.sq_seq.len) dequant16<true>(rq.c[i], &qsc[i], lo, hi);
        store_chunk_pair(sq, 64 * cw + r, col, lo, hi);
      }
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(1 + cw, 128);
      if constexpr (kQRegKs > 0) {  // the A fragments of S's first kQRegKs k steps, from the rows just stored
        const uint32_t trow = static_cast<uint32_t>(cw * 64 + warp * 16 + (lane >> 2));
#pragma unroll
        for (int ks = 0; ks < kQRegKs; ++ks) ptx::lds_a_frag_sw128(sq + (ks >> 2) * kPanelBytes, trow, ks, lane, qf[ks]);
      }
    }

    // This thread's two rows of the warpgroup's 64 (r and r + 8 of the accumulator layout).
    const int row0 = q0 + cw * 64 + warp * 16 + (lane >> 2);
    float o_acc[kPanels][32];
#pragma unroll
    for (int pn = 0; pn < kPanels; ++pn)
#pragma unroll
      for (int i = 0; i < 32; ++i) o_acc[pn][i] = 0.0f;
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.0f, 0.0f};

    // Software pipeline (per warpgroup): S of tile t+1 is issued before O += P_t V_t, so its softmax
    // could run while P V does; as compiled, ptxas hoists the P V wait (wgmma_wait<0>) to the top of
    // the softmax, to interleave O's rescale and P's packing with it, and keeping the wait below the
    // softmax measured slower (PERFORMANCE.md, ninth session): the softmax overlaps the other
    // warpgroup's products (ping-pong). Stages and phases follow the CTA's running tile count g + t.
    constexpr int kS = kKV / 2;   // scores per thread and tile
    constexpr int kPK = kKV / 16;  // k16 steps of P V
    float s[kS];
    uint32_t pf[kF8 ? 1 : kPK][4];
    uint32_t pf8[kF8 ? 4 : 1][4];
    auto issue_s = [&](int t) {  // S = Q K_t^T for 64 rows x kKV keys, into s
      const int st = (g + t) % kSt;
      ptx::mbar_wait(full_k(st), ((g + t) / kSt) & 1);
      const uint32_t k_addr = ptx::smem_addr(sk(st));
      ptx::wgmma_fence();
      if constexpr (kF8) {
#pragma unroll
        for (int ks = 0; ks < 4; ++ks)
          ptx::wgmma_e4m3_rs_n128(s, qf8[ks], ptx::smem_desc_k128_sw128(k_addr + 32 * ks), ks > 0);
      } else {
#pragma unroll
      for (int ks = 0; ks < D / 16; ++ks) {
        const uint32_t off = static_cast<uint32_t>((ks >> 2) * kPanelBytes + (ks & 3) * 32);
        const uint32_t koff = static_cast<uint32_t>((ks >> 2) * kKVPanelBytes + (ks & 3) * 32);
        if (ks < kQRegKs)
          ptx::wgmma_bf16_rs<kKV, 0>(s, qf[ks < kQRegKs ? ks : 0], ptx::smem_desc_sw128_at(ptx::smem_desc_sw128_lo(k_addr), koff), ks > 0);
        else
          ptx::wgmma_bf16_ss<kKV, 0>(s, ptx::smem_desc_sw128_at(q_desc_lo, off),
                                     ptx::smem_desc_sw128_at(ptx::smem_desc_sw128_lo(k_addr), koff), ks > 0);
      }
      }
      ptx::wgmma_commit();
    };
    // kF8: the factor of tile t's K' (read from its K stage before the stage is released) times each
    // row's c and Q factor.
    float ct[2] = {c, c};
    auto apply_kf = [&](int t) {
      if constexpr (kF8) {
        const float kft = *reinterpret_cast<const float*>(sk((g + t) % kSt) + kK8Bytes);
        ct[0] = cr[0] * kft;
        ct[1] = cr[1] * kft;
      }
    };
    // Online softmax of tile t in s (log2 domain; masked and out-of-range keys -> -inf): leaves
    // P * p_scale = exp2(S * scale * log2(e) - m + log2(p_scale)) in s (one FFMA and one SFU op per
    // element), updates the running max and the running sum of P * p_scale, returns O's rescale factor.
    auto softmax = [&](int t, float (&corr)[2]) {
      const int kv0 = t * kKV;
      const bool need_mask = kv0 + kKV > lk || (p.mask != kMaskNone && kv0 + kKV - 1 > q0 + cw * 64 + shift);
      if (need_mask) {
#pragma unroll
        for (int i = 0; i < kS; ++i) {
          const int col = kv0 + 8 * (i >> 2) + 2 * (lane & 3) + (i & 1);
          const int row = row0 + 8 * ((i >> 1) & 1);
          const bool vis = col < lk && (p.mask == kMaskNone || col <= row + shift);
          s[i] = vis ? s[i] : -INFINITY;
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        // The row max of the thread's kS / 2 scores as a tree, 5 deep at 128 keys (a chain from -inf
        // was 17 deep and one instruction longer: PERFORMANCE.md, ninth session); exact in any order.
        constexpr int kPairs = kS / 4;
        float m16[kPairs];
#pragma unroll
        for (int j = 0; j < kPairs; ++j) m16[j] = fmaxf(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]);
        static_assert(kPairs == 16 || kPairs == 8, "128- or 64-key tiles");
        if constexpr (kPairs == 16) {
#pragma unroll
          for (int j = 0; j < 8; ++j) m16[j] = fmaxf(m16[j], m16[j + 8]);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) m16[j] = fmaxf(m16[j], m16[j + 4]);
        float mx = fmaxf(fmaxf(m16[0], m16[2]), fmaxf(m16[1], m16[3]));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, 2));
        const float cc = kF8 ? ct[r] : c;
        const float m_new = fmaxf(m_run[r], mx * cc);  // c > 0: the max commutes with the scaling
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet
        corr[r] = attn::ex2_ftz(m_run[r] - m_use);
        m_run[r] = m_new;
        const float bias = p.log2_p_scale - m_use;
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kPairs; ++j) {
          const float a = attn::ex2_ftz(fmaf(s[4 * j + 2 * r], cc, bias));
          const float e = attn::ex2_ftz(fmaf(s[4 * j + 2 * r + 1], cc, bias));
          s[4 * j + 2 * r] = a;
          s[4 * j + 2 * r + 1] = e;
          sum += a + e;
        }
        l_run[r] = l_run[r] * corr[r] + sum;  // per-thread partial; the quad is summed at the end
      }
    };
    // Pq = fp8(P * p_scale) as the A fragments of the kPK k16 steps of P V (E4M3 -> f16 -> bf16 by a
    // shift and one exact bf16x2 multiply; a NaN P comes out finite, but a pair is two columns of one
    // row and that row's sum l is NaN, so the
    // O and LSE are NaN as with the exact form: attention_common.cuh).
    auto pack_p = [&] {
      if constexpr (kF8) {
        // Pq = E4M3(P * p_scale) straight into the 8-bit A fragments of P V's four k32 steps. Fragment
        // word j holds row r (+ 8 for j odd), logical keys 4 (lane % 4) + 0..3 (+ 16 for j >= 2); the
        // thread's scores of a 32-key block are physical keys 2 (lane % 4) + {0, 1} + {0, 8, 16, 24},
        // so logical key 4c + t of half h is physical 16 h + 8 (t / 2) + 2c + t % 2, the order V'^T
        // is stored in (convert_unit_staged).
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const float* q = s + 16 * kk;
          auto pk = [](float a, float b, float c2, float d2) {
            return static_cast<uint32_t>(dev::f32x2_to_fp8x2_satfinite<dev::Fp8::E4M3>(a, b)) |
                   (static_cast<uint32_t>(dev::f32x2_to_fp8x2_satfinite<dev::Fp8::E4M3>(c2, d2)) << 16);
          };
          pf8[kk][0] = pk(q[0], q[1], q[4], q[5]);
          pf8[kk][1] = pk(q[2], q[3], q[6], q[7]);
          pf8[kk][2] = pk(q[8], q[9], q[12], q[13]);
          pf8[kk][3] = pk(q[10], q[11], q[14], q[15]);
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < kPK; ++kk)
#pragma unroll
          for (int r = 0; r < 4; ++r) pf[kk][r] = attn::p_e4m3_bf16x2(s[8 * kk + 2 * r], s[8 * kk + 2 * r + 1]);
      }
    };

    if (n_tiles > 0) {
      float corr[2];
      issue_s(0);
      ptx::wgmma_wait<0>();
      ptx::fence_acc(s);
      apply_kf(0);
      ptx::mbar_arrive(empty_k(g % kSt));
      softmax(0, corr);  // O is still zero: nothing to rescale
      pack_p();
    }
    // One pipeline step on tile t; kNext: tile t+1 exists (a compile-time flag, so ptxas sees one
    // fixed wgmma group structure per loop body and keeps the wgmma asynchronous).
    auto step = [&](int t, auto next_tag) {
      constexpr bool kNext = decltype(next_tag)::value;
      const int st = (g + t) % kSt;
      if constexpr (kPingPong) ptx::named_barrier_sync(kBarPP + cw, 256);  // this warpgroup's turn
      if constexpr (kNext) issue_s(t + 1);
      // O += Pq V_t, V [keys, d] N-major in 64-wide d panels.
      ptx::mbar_wait(full_v(st), ((g + t) / kSt) & 1);
      const uint32_t v_addr = ptx::smem_addr(sv(st));
      ptx::wgmma_fence();
      if constexpr (kF8) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          ptx::wgmma_e4m3_rs_n128(*reinterpret_cast<float(*)[64]>(&o_acc[0][0]), pf8[kk],
                                  ptx::smem_desc_k128_sw128(v_addr + 32 * kk), 1);
      } else if constexpr (kPanels >= 2) {
        // One m64n128k16 per k step and pair of 64-wide d panels (the accumulator's columns 0..63
        // are o_acc[2 pp], 64..127 o_acc[2 pp + 1], the same registers as the two n64 products), then
        // an m64n64k16 for a last odd panel (D = 192).
#pragma unroll
        for (int kk = 0; kk < kPK; ++kk) {
#pragma unroll
          for (int pp = 0; pp < kPanels / 2; ++pp)
            ptx::wgmma_bf16_rs<128, 1>(
                *reinterpret_cast<float(*)[64]>(&o_acc[2 * pp][0]), pf[kk],
                ptx::smem_desc_sw128_at(desc_nmajor128_lo<kKVPanelBytes>(v_addr + 2 * pp * kKVPanelBytes), kk * 2048),
                1);
          if constexpr (kPanels % 2 == 1)
            ptx::wgmma_bf16_rs<64, 1>(
                o_acc[kPanels - 1], pf[kk],
                ptx::smem_desc_sw128(v_addr + static_cast<uint32_t>((kPanels - 1) * kKVPanelBytes + kk * 2048)), 1);
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < kPK; ++kk)
#pragma unroll
          for (int pn = 0; pn < kPanels; ++pn)
            ptx::wgmma_bf16_rs<64, 1>(
                o_acc[pn], pf[kk],
                ptx::smem_desc_sw128(v_addr + static_cast<uint32_t>(pn * kKVPanelBytes + kk * 2048)), 1);
      }
      ptx::wgmma_commit();
      // The next warpgroup's turn; the last warpgroup gives no turn after its last step, so every
      // arrival is matched by a sync (warpgroup 0 syncs n times on its barrier: one initial arrival +
      // n - 1).
      if constexpr (kPingPong) {
        if constexpr (kMathWG == 2) {
          if (cw == 0 || kNext) ptx::named_barrier_arrive(kBarPP + (cw ^ 1), 256);
        } else {
          if (cw != kMathWG - 1 || kNext) ptx::named_barrier_arrive(kBarPP + (cw + 1) % kMathWG, 256);
        }
      }
      float corr[2] = {1.0f, 1.0f};
      if constexpr (kNext) {  // S of tile t+1 is done (commit groups retire in order)
        ptx::wgmma_wait<1>();
        ptx::fence_acc(s);
        apply_kf(t + 1);
        ptx::mbar_arrive(empty_k((g + t + 1) % kSt));
        softmax(t + 1, corr);
      }
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int pn = 0; pn < kPanels; ++pn) ptx::fence_acc(o_acc[pn]);
      if constexpr (kF8) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) ptx::fence_regs(pf8[kk]);
      } else {
#pragma unroll
        for (int kk = 0; kk < kPK; ++kk) ptx::fence_regs(pf[kk]);
      }
      ptx::mbar_arrive(empty_v(st));
      if constexpr (kNext) {
#pragma unroll
        for (int pn = 0; pn < kPanels; ++pn)
#pragma unroll
          for (int i = 0; i < 32; ++i) o_acc[pn][i] *= corr[(i >> 1) & 1];
        pack_p();
      }
    };
    if constexpr (kPingPong)
      if (cw == kMathWG - 1 && n_tiles > 0) ptx::named_barrier_arrive(kBarPP, 256);  // warpgroup 0 goes first
    for (int t = 0; t + 1 < n_tiles; ++t) step(t, std::true_type{});
    if (n_tiles > 0) step(n_tiles - 1, std::false_type{});
    g += n_tiles;

    // Epilogue: l sums P * p_scale, so O = acc / l in bf16 and LSE = ln(sum exp(S)) =
    // (m + log2 l - log2 p_scale) ln 2.
    // O through this warpgroup's own rows of the Q tile (only its S products read them, and the last
    // one has completed), in the same swizzled panel layout (conflict-free 4-byte stores), then
    // 16-byte stores of whole 128- or 256-byte rows to global memory.
    if constexpr (kF8) {  // V' was rescaled per column d: O times d's factor
      const float* ev = p.ws_ev + static_cast<int64_t>(w.b * p.heads_kv + w.hk) * D + 2 * (lane & 3);
#pragma unroll
      for (int pn = 0; pn < kPanels; ++pn)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float2 f = *reinterpret_cast<const float2*>(ev + 64 * pn + 8 * j);
          o_acc[pn][4 * j] *= f.x;
          o_acc[pn][4 * j + 1] *= f.y;
          o_acc[pn][4 * j + 2] *= f.x;
          o_acc[pn][4 * j + 3] *= f.y;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_run[r];
      l += __shfl_xor_sync(0xFFFFFFFFu, l, 1);
      l += __shfl_xor_sync(0xFFFFFFFFu, l, 2);
      const int row = row0 + 8 * r;
      const float inv = l == 0.0f ? 0.0f : 1.0f / l;
      const uint32_t trow = static_cast<uint32_t>(cw * 64 + warp * 16 + (lane >> 2) + 8 * r);
#pragma unroll
      for (int pn = 0; pn < kPanels; ++pn)
#pragma unroll
        for (int j = 0; j < 8; ++j)
          *reinterpret_cast<uint32_t*>(sq + pn * kPanelBytes + ptx::sw128_offset(trow, j) + 4 * (lane & 3)) =
              dev::f32x2_to_bf16x2(o_acc[pn][4 * j + 2 * r] * inv, o_acc[pn][4 * j + 2 * r + 1] * inv);
      if ((lane & 3) == 0 && row < lq)
        p.lse[(static_cast<int64_t>(w.b) * p.heads_q + w.h) * p.seqlen_q + row] =
            l == 0.0f ? -INFINITY : (m_run[r] + log2f(l) - p.log2_p_scale) * kLn2;
    }
    ptx::named_barrier_sync(1 + cw, 128);
    constexpr int kCPR = D / 8;  // 16-byte chunks of a bf16 row
#pragma unroll
    for (int i = 0; i < 64 * kCPR / 128; ++i) {
      const int idx = ctid + 128 * i, r = idx / kCPR, cc = idx % kCPR;
      const int row = q0 + cw * 64 + r;
      if (row < lq) {
        const uint4 v = *reinterpret_cast<const uint4*>(sq + (cc >> 3) * kPanelBytes +
                                                        ptx::sw128_offset(static_cast<uint32_t>(cw * 64 + r), cc & 7));
        *reinterpret_cast<uint4*>(p.o + w.sq_seq.row(row) * D + cc * 8) = v;
      }
    }
    if constexpr (!kPersist) break;
    ptx::named_barrier_sync(1 + cw, 128);  // the rows are read before the next item's Q overwrites them
    item = take_item();
    if (item >= 0) w = item_work(item);
  }
#endif
}

}  // namespace sm90attn
}  // namespace mxq

extern "C" __global__ void __launch_bounds__(256) mxq_attn_zero_sm90(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_zero_body(p);
}
extern "C" __global__ void __launch_bounds__(256) mxq_attn_zero_f8_sm90(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_zero_f8_body(p);
}

// The prepass and the variant without turns (MXQ_ATTN_SM90_PINGPONG=0) for both head dims; the
// default kernels: D = 64 after the prepass, D = 128 with the conversion in the kernel
// (PERFORMANCE.md "Seventh session": measured faster there, slower at D = 64).
#define MXQ_ATTN_FWD_KERNELS(D)                                                                          \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90PrepThreads)                                \
      mxq_attn_prep_sm90_d##D(const __grid_constant__ mxq::AttnFwdSm90Params p) {                        \
    mxq::sm90attn::attn_prep_body<D>(p);                                                                 \
  }                                                                                                      \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads, 1)                                 \
      mxq_attn_fwd_sm90_d##D##_nopp(const __grid_constant__ mxq::AttnFwdSm90Params p) {                  \
    mxq::sm90attn::attn_fwd_body<D, false, false, 24, 240, false, false, 2, mxq::attn_sm90_tile_kv(D)>(p); \
  }

MXQ_ATTN_FWD_KERNELS(64)
MXQ_ATTN_FWD_KERNELS(128)
MXQ_ATTN_FWD_KERNELS(192)
MXQ_ATTN_FWD_KERNELS(256)

// D = 192 and 256: the prepass, two math warpgroups taking turns, 64-key tiles (O's accumulator takes
// 96 or 128 registers per thread, S 32, P 16).
extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads, 1)
    mxq_attn_fwd_sm90_d192(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_fwd_body<192, true, false, 24, 240, false, false, 2, 64, 12>(p);
}
extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads, 1)
    mxq_attn_fwd_sm90_d256(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_fwd_body<256, true, false, 24, 240, false, false, 2, 64, 8>(p);
}

// D = 64: three math warpgroups, 192 query rows per CTA, setmaxnreg 24 / 160 (PERFORMANCE.md, tenth
// session: the third warpgroup's softmax hides the latencies two could not).
extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads3, 1)
    mxq_attn_fwd_sm90_d64(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_fwd_body<64, true, false, 24, 160, false, false, 3>(p);
}
extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads, 1)
    mxq_attn_fwd_sm90_d128_inl(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_fwd_body<128, true, true, 40, 232, true, true, 2, mxq::sm90attn::kTileKV, 8>(p);
}
// D = 128, the default: S and P V on FP8 wgmma (docs/NUMERICS.md; MXQ_ATTN_SM90_F8=0: the _inl kernel).
// setmaxnreg 56 / 216: the FP8 fragments leave the math warps room, and the converters' V'^T
// transposition spills less (PERFORMANCE.md, nineteenth session: +1-3% over 40 / 232).
extern "C" __global__ void __launch_bounds__(mxq::kAttnSm90Threads, 1)
    mxq_attn_fwd_sm90_d128_f8(const __grid_constant__ mxq::AttnFwdSm90Params p) {
  mxq::sm90attn::attn_fwd_body<128, true, true, 56, 216, true, true, 2, mxq::sm90attn::kTileKV, 0, true>(p);
}
