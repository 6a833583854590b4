// MXFP8 attention backward for Hopper (sm_90a), cuDNN's recipe (DESIGN §2.3, src/cpu/attention.cpp
// is the oracle): dQ, dK, dV in bf16 from Q, K, V, dO in E4M3 with UE8M0 scales (Q, K, V, dO along
// D; Q, K, dO also along S), O and dO in bf16, and the forward's LSE.
//
// Why it is shaped this way.
//  - Hopper's FP8 wgmma wants both operands K-major and has no block-scale operand; applying 1x32
//    scales on the CUDA cores after every k32 step would cost more than the MMA itself. Instead every
//    FP8 operand is dequantized exactly into bf16 (an E4M3 value times 2^(e-127) is a bf16 value
//    unless it leaves bf16's range, docs/NUMERICS.md) and the products run on the BF16 tensor cores
//    with fp32 accumulation.
//  - Except S^T and dP^T on the fused path at D = 128 (kF8, the default there): their operands are
//    rescaled within E4M3 to one power-of-two factor per kv row (K', V', by the dK/dV kernel) and per
//    64-query tile (Q', dO', by the prep), which fold exactly into P's exponent argument and dP - delta,
//    and run on FP8 wgmma; a block past the rescale's error bound raises a flag and the exact kernels
//    queued behind redo the call (docs/NUMERICS.md "Backward on FP8 tensor cores"; PERFORMANCE.md,
//    twenty-second session: +5-6%). dK = dS^T Q_col and dV = Pq^T dO_col run on FP8 wgmma too
//    (twenty-fourth session): dS^T quantized per kv row against a running scale exponent
//    (ds_rows_to_f8: the dK accumulator row is rescaled when the exponent rises), Pq is E4M3 already
//    (one fixed scale, p_scale), and Q_col', dO_col' are rescaled per column d by the prep
//    (f8_col_tile) against the column's largest scale (f8_colmax_body); the factors multiply dK and
//    dV once at the end. dQ = dS|kv K_col on FP8 wgmma as well (twenty-sixth session: +8-11%): dS
//    quantized per query column against one exponent over the CTA's 128 kv rows (one more 256-thread
//    exchange per step), K_col' rescaled per column by the dK/dV kernel itself; each dQ row is
//    multiplied by its power of two before the bulk reduction, each column by K's factor in the post pass.
//  - Dequantize once: a prep kernel writes the seven operands (Q, dO, K, V along D; Q, dO, K along
//    S) as bf16 into the workspace, per (b, h) with the sequence padded to a multiple of 128 with
//    zeros: along-D operands as [S_pad][D], along-S operands transposed as [D][S_pad] so that every B
//    operand of the main kernels is K-major. A first version dequantized tiles inside the main loops;
//    each Q tile was then converted once per kv block (S/128 times) and the converting warps were the
//    bottleneck (docs/PERFORMANCE.md). The prep pass is memory-bound (read 1 byte, write 2 per element).
//  - Deterministic without atomics: two main kernels. The dK/dV kernel owns 128 kv rows of one
//    (batch, kv head) and walks every query head of the GQA group and every 64-row q block:
//    S^T = K Q^T, dP^T = V dO^T, P^T from LSE, dS^T = P^T (dP^T - delta) * scale, then
//    dV += fp8(P*p_scale)^T dO_col and dK += dS^T|q Q_col (dS quantized MXFP8 along s_q: 32
//    consecutive queries, a row of dS^T), accumulated in fp32 registers and written once. The dQ
//    kernel owns 128 q rows of one (batch, q head), walks the kv blocks and recomputes S, P, dP, dS,
//    quantizes dS along s_kv and accumulates dQ += dS|kv K_col. 7 matmuls instead of 5, no atomics,
//    no fp32 dQ workspace, the same bits every run (the deterministic attribute holds trivially).
//  - Fused dQ (the default for plans without the DETERMINISTIC attribute, src/cuda/op_attention_bwd.cpp):
//    the dK/dV kernel also quantizes dS^T along s_kv (a cross-warp block maximum), stores it as bf16
//    in shared memory, computes dQ(64 q x D) += dS|kv K_col for its kv block with one more wgmma chain
//    and adds it into an fp32 workspace with TMA bulk reductions (any order: not deterministic), which
//    a reducer thread of the producer warpgroup issues from staged tiles handed over through
//    mbarriers, so the math warps never wait for them; a post pass converts to bf16. 5 matmuls; the
//    dQ kernel is not launched.
//  - delta = rowsum(dO * O) from the bf16 copies is a tiny pre-kernel into the workspace.
//  - Warp specialization: one thread of the producer warpgroup issues TMA loads of the next steps'
//    bf16 tiles into 128-byte-swizzled stages (2 for dK/dV, 3 for dQ; tensor maps from the launcher,
//    64-column boxes) completing on each stage's full mbarrier; the math warps release a stage by
//    arriving on its empty mbarrier. The two math warpgroups (64 rows each) issue wgmma and do the
//    elementwise work. setmaxnreg moves registers from the producer to the math warpgroups, which
//    hold dK and dV (or dQ) in registers. A cp.async producer warpgroup (version 5) spent ~27% of the
//    kernels' issued instructions on address arithmetic and left the math warps waiting for data.
//  - Software pipelining inside each math warpgroup, limited by registers and by ptxas keeping
//    wgmmas asynchronous only when none is in flight across a loop's back edge (so each loop body
//    retires what it issued): dK/dV issues S^T of the next step as soon as dV is done and dP^T
//    once dK is done, then computes P^T, dS^T of the next step in the same body; dQ issues S and dP
//    of the next step (D = 64: a second register set) or S only (D = 128: dP of the next step goes
//    out behind dQ) before the elementwise work of the current one.
//  - Fused, D = 64: the two math warpgroups share only the stages, so warpgroup 1 starts a P^T/dS^T
//    phase behind warpgroup 0 and they stay out of phase (elementwise work of one next to the
//    products of the other); P there comes from ex2.approx.ftz (P < 2^-126 -> 0, docs/NUMERICS.md).
//  - The elementwise code is straight-line: masks are applied by a second pass of selects only on
//    tiles that need them (a uniform branch), and the MXFP8 scale of dS is computed with selects.
//  - The MXFP8 round trip of dS returns its E4M3 codes to bf16 with the GEMM's exact conversion
//    (sm90/gemm_bf16_convert.cuh: PRMT + shift + mask + one bf16x2 multiply by 2^(E-127+120)) rather
//    than E4M3 -> f16x2 -> fp32 -> multiply -> bf16x2; block maxima propagate NaN, and a warp with a
//    NaN, an Inf or a scale exponent above 134 takes the fp32 form (a uniform branch, same bits).
//  - Per-step bookkeeping is kept off the math warps' issue slots: wgmma descriptors are built once
//    per tile and advanced by constants, and dK/dV's (q block, head) position is advanced
//    incrementally instead of divided out of the step index.
//  - P and dS go from the accumulator of one wgmma straight into the A registers of the next
//    (kernels/ptx/wgmma_bf16.cuh): the fp32 accumulator pairs of columns 16k..16k+15 are the A
//    fragment of K step k. The 32-blocks of the dS quantization (32 columns of the accumulator row)
//    live in one quad of lanes, so the block maximum is two shuffles.
//  - P*p_scale is rounded to E4M3 and the E4M3 value (exact in bf16) enters the dV product; dV is
//    multiplied by 1/p_scale once in fp32 at the end, so any p_scale is exact.
//  - The dK/dV kernels take P*p_scale straight from the exponential and fold softmax_scale/p_scale
//    into dS's quantizations (one multiply by scale * 2^(127-E) per element instead of two
//    multiplies and the 2^(127-E) one: the same fp32 values, docs/NUMERICS.md); the dQ kernel folds
//    softmax_scale the same way. The deterministic path's kernels (dQ, and dK/dV at D = 128) use
//    ex2.approx.ftz for P as well (docs/PERFORMANCE.md, eighteenth session).
// Sequence blocks start at multiples of 64, so a 32-block of dS never straddles two steps and the
// 32-blocks are aligned to position 0 of each sequence like the oracle's. Positions past a sequence
// are zeros in the workspace; masked entries of P and dS are exactly 0.
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "common/quant_math.cuh"
#include "core/layout.h"
#include "mxq/mxq.h"
#include "ptx/async_copy.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_bf16.cuh"
#include "sm90/attention_bwd_params.cuh"
#include "sm90/attention_common.cuh"
#include "sm90/gemm_bf16_convert.cuh"

namespace mxq {
namespace sm90attn {

using dev::Fp8;
using P = AttnBwdSm90Params;

// [[maybe_unused]]: the generic compute_90 pass compiles the wgmma kernels out (see the entries).
[[maybe_unused]] constexpr int kRows = kAttnBwdRowsPerCta;  // 128
constexpr int kStep = kAttnBwdStepRows;                     // 64
[[maybe_unused]] constexpr int kStages = kAttnBwdStages;      // 2 (dK/dV)
[[maybe_unused]] constexpr int kDqStages = kAttnBwdDqStages;  // 3 (dQ)
[[maybe_unused]] constexpr int kThreads = kAttnBwdThreads;  // 384
[[maybe_unused]] constexpr int kMathThreads = 256;
[[maybe_unused]] constexpr float kLog2e = 1.4426950408889634f;

// A stage's TMA loads: the 64-column panels of `rows` rows of a [rows, D] tensor map at row c1, or
// one box of a transposed [D rows][64 positions] map at (c0, c1), all completing on `full`.
template <int D>
__device__ __forceinline__ void tma_rows(uint8_t* tile, const uint8_t* tmap, int32_t c1, uint64_t* full) {
#pragma unroll
  for (int pn = 0; pn < D / 64; ++pn)
    ptx::tma_load_2d(ptx::smem_addr(tile + pn * (kAttnBwdStepRows * 128)), tmap, 64 * pn, c1, full);
}

using Seq = attn::SeqRows;
__device__ __forceinline__ Seq seq_of(const P& p, bool q_side, int64_t b, int64_t h) {
  return q_side ? attn::seq_rows(p.bshd, p.cu_q, p.seqlen_q, p.heads_q, b, h)
                : attn::seq_rows(p.bshd, p.cu_kv, p.seqlen_kv, p.heads_kv, b, h);
}

// Scale byte of (row, 32-block c) of a tensor quantized along D.
__device__ __forceinline__ int64_t d_scale_off(const P& p, int64_t row, int64_t c) {
  return attn::along_d_scale_offset(p.swizzled, row, c, p.d_scale_ld);
}

// Scale byte of (channel d, 32-block c) in a (b, h) entry of a q-side tensor quantized along S (the
// same (row, column) placement as along D, rows being channels: attn::along_d_scale_offset).
__device__ __forceinline__ int64_t q_s_scale_off(const P& p, int64_t d, int64_t c) {
  return attn::along_d_scale_offset(p.swizzled, d, c, p.q_s_scale_ld);
}

// 2 / 8 E4M3 codes times one scale multiplier -> bf16 (exact while in bf16's range).
__device__ __forceinline__ uint32_t dq2(uint32_t pair, float m) { return attn::e4m3x2_to_bf16x2(pair, m, m); }
__device__ __forceinline__ uint4 dequant8(uint2 raw, float m) {
  return make_uint4(dq2(raw.x & 0xFFFFu, m), dq2(raw.x >> 16, m), dq2(raw.y & 0xFFFFu, m), dq2(raw.y >> 16, m));
}

// Positions s0..s0+63 of a tensor quantized along S (scales per (d, s/32) in the (b, h) entry at
// `entry`, row stride `ld`) -> the transposed bf16 tile [D rows][64 positions] in shared memory,
// 128-byte swizzled. Thread (dg = t/8, sg = t%8), t < D, owns positions 8sg..8sg+7 of channels
// 8dg..8dg+7: eight 8-byte loads, eight scale bytes (16 apart swizzled, ld apart linear: the eight
// channels share the 32-block), then one 16-byte store per channel row (the 8 threads of a channel
// row fill its 128 bytes). Positions past the sequence are zeros.
template <int D>
__device__ __forceinline__ void load_col_tile(uint8_t* tile, const uint8_t* __restrict__ data,
                                              const uint8_t* __restrict__ sc, int64_t entry, int64_t ld, bool swz,
                                              const Seq& sq, int64_t s0, int t) {
  if (t >= D) return;
  const int dg = t >> 3, sg = t & 7;
  const int64_t sb = s0 + sg * 8, d0 = dg * 8;
  uint32_t lo[8], hi[8];
  float m[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    lo[k] = hi[k] = 0u;
    if (sb + k < sq.len) {
      const uint2 raw = __ldg(reinterpret_cast<const uint2*>(data + (sq.base + (sb + k) * sq.step) * D + d0));
      lo[k] = raw.x;
      hi[k] = raw.y;
    }
  }
  const bool any = sb < sq.len;
  const int64_t c = sb / 32;
  const uint8_t* sp = sc + entry + (swz ? layout::swizzled_offset(d0, c, ld) : d0 * ld + c);
  const int64_t dstride = swz ? 16 : ld;
#pragma unroll
  for (int dd = 0; dd < 8; ++dd) m[dd] = any ? dev::ue8m0_to_f32(__ldg(sp + dd * dstride)) : 0.0f;
#pragma unroll
  for (int dd = 0; dd < 8; ++dd) {
    const uint32_t* src = dd < 4 ? lo : hi;
    const uint32_t sel = static_cast<uint32_t>(dd & 3) | (static_cast<uint32_t>((dd & 3) + 4) << 4);
    uint32_t w[4];
#pragma unroll
    for (int pp = 0; pp < 4; ++pp) w[pp] = dq2(__byte_perm(src[2 * pp], src[2 * pp + 1], sel), m[dd]);
    *reinterpret_cast<uint4*>(tile + ptx::sw128_offset(static_cast<uint32_t>(d0 + dd), static_cast<uint32_t>(sg))) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// ---- bf16 workspace -> 128-byte-swizzled shared memory (cp.async, 16-byte chunks) ---------------
// ROWS rows of a [S_pad][D] operand starting at `src` -> K-major tile, 64-column panels.
template <int ROWS, int D, int NT>
__device__ __forceinline__ void copy_rows(uint8_t* tile, const uint16_t* src, int t) {
  constexpr int kChunksPerRow = D / 8, kChunks = ROWS * kChunksPerRow;
  const uint32_t base = ptx::smem_addr(tile);
#pragma unroll 4
  for (int u = t; u < kChunks; u += NT) {
    const int r = u / kChunksPerRow, c = u % kChunksPerRow;
    ptx::cp_async_16_zfill(base + (c / 8) * (ROWS * 128) + ptx::sw128_offset(r, c % 8), src + r * D + c * 8, true);
  }
}
// Rows s0..s0+ROWS-1 of two tensors quantized along D with the same scale layout (K and V) -> their
// bf16 K-major tiles (64-column panels, 128-byte swizzle), dequantized exactly; positions past the
// sequence are zeros. Unit u (8 elements of row u / (D/8)) of both tensors per iteration.
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_row_tiles2(uint8_t* tile_a, uint8_t* tile_b, const uint8_t* __restrict__ a,
                                                const uint8_t* __restrict__ a_sc, const uint8_t* __restrict__ b,
                                                const uint8_t* __restrict__ b_sc, const P& p, const Seq& sq, int64_t s0,
                                                int t) {
  constexpr int kUnitsPerRow = D / 8, kUnits = ROWS * kUnitsPerRow;
#pragma unroll 4
  for (int u = t; u < kUnits; u += NT) {
    const int r = u / kUnitsPerRow, c8 = u % kUnitsPerRow;
    const int64_t s = s0 + r;
    uint4 va = make_uint4(0u, 0u, 0u, 0u), vb = va;
    if (s < sq.len) {
      const int64_t row = sq.row(s), so = d_scale_off(p, row, c8 / 4);
      const uint2 ra = __ldg(reinterpret_cast<const uint2*>(a + row * D + c8 * 8));
      const uint2 rb = __ldg(reinterpret_cast<const uint2*>(b + row * D + c8 * 8));
      va = dequant8(ra, dev::ue8m0_to_f32(__ldg(a_sc + so)));
      vb = dequant8(rb, dev::ue8m0_to_f32(__ldg(b_sc + so)));
    }
    const uint32_t off = (c8 / 8) * (ROWS * 128) + ptx::sw128_offset(r, c8 % 8);
    *reinterpret_cast<uint4*>(tile_a + off) = va;
    *reinterpret_cast<uint4*>(tile_b + off) = vb;
  }
}

// ---- FP8 S^T and dP^T (fused path, D = 128; docs/NUMERICS.md "Backward on FP8 tensor cores") --------
// The flag of the call: raised by an operand block past the rescale's error bound (attn::f8_block_bad)
// or by a NaN scale; the exact kernels behind the FP8 ones then redo the call.
__device__ __forceinline__ bool f8_flag_up(const P& p) {
  return *reinterpret_cast<volatile const uint32_t*>(p.f8_flag) != 0u;
}
__device__ __forceinline__ void f8_raise(const P& p) { *reinterpret_cast<volatile uint32_t*>(p.f8_flag) = 1u; }

// Rows s0..s0+ROWS-1 of two tensors quantized along D (K and V, D = 128) -> E4M3 tiles of 128-byte rows
// with the 128-byte swizzle (the K-major layout the FP8 wgmma descriptors read), each row's 32-blocks
// rescaled within E4M3 to the row's largest scale, which goes to fa[r] / fb[r] (1 for a row past the
// sequence). Unit u: 16 bytes (chunk u % 8) of row u / 8, so a row is 8
// consecutive lanes (its maximum: three shuffles) and a 32-block lanes u, u ^ 1 (the factors as
// bf16 bits: powers of two, exact). Rows past the sequence are zeros. A block past the bound or a
// NaN scale raises the flag.
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_row_tiles2_f8(uint8_t* tile_a, uint8_t* tile_b, uint16_t* fa, uint16_t* fb,
                                                   const uint8_t* __restrict__ a, const uint8_t* __restrict__ a_sc,
                                                   const uint8_t* __restrict__ b, const uint8_t* __restrict__ b_sc,
                                                   const P& p, const Seq& sq, int64_t s0, int t) {
  static_assert(D == 128, "FP8 path: rows of 128 bytes");
  constexpr int kCPR = D / 16, kUnits = ROWS * kCPR;
  static_assert(NT % 32 == 0 && kUnits % 32 == 0, "whole warps per round (shuffles)");
  bool bad = false;
#pragma unroll 1
  for (int u0 = 0; u0 < kUnits; u0 += NT) {
    const int u = u0 + t;
    if (u >= kUnits) break;  // whole warps (above)
    const int r = u / kCPR, c = u % kCPR;
    const int64_t s = s0 + r;
    uint4 ra = make_uint4(0u, 0u, 0u, 0u), rb = ra;
    float sa = 0.0f, sb = 0.0f;
    if (s < sq.len) {
      const int64_t row = sq.row(s), so = d_scale_off(p, row, c / 2);
      ra = __ldg(reinterpret_cast<const uint4*>(a + row * D + c * 16));
      rb = __ldg(reinterpret_cast<const uint4*>(b + row * D + c * 16));
      sa = dev::ue8m0_to_f32(__ldg(a_sc + so));
      sb = dev::ue8m0_to_f32(__ldg(b_sc + so));
    }
    float ma = sa, mb = sb;
#pragma unroll
    for (int o = 1; o < 8; o *= 2) {
      ma = fmaxf(ma, __shfl_xor_sync(0xFFFFFFFFu, ma, o));
      mb = fmaxf(mb, __shfl_xor_sync(0xFFFFFFFFu, mb, o));
    }
    const uint4 oa = attn::e4m3x16_rescale(ra, attn::f8_factor(sa, attn::f8_rcp(ma)));
    const uint4 ob = attn::e4m3x16_rescale(rb, attn::f8_factor(sb, attn::f8_rcp(mb)));
    uint32_t ca = attn::f8_chunk_code(ra, oa), cb = attn::f8_chunk_code(rb, ob);
    ca |= __shfl_xor_sync(0xFFFFFFFFu, ca, 1);  // the block's other half
    cb |= __shfl_xor_sync(0xFFFFFFFFu, cb, 1);
    bad |= attn::f8_block_bad(ca, sa < ma) || attn::f8_block_bad(cb, sb < mb) || sa != sa || sb != sb;
    const uint32_t off = ptx::sw128_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(c));
    *reinterpret_cast<uint4*>(tile_a + off) = oa;
    *reinterpret_cast<uint4*>(tile_b + off) = ob;
    if (c == 0) {  // as bf16 (exact: powers of two, 2^-127 a bf16 subnormal)
      fa[r] = static_cast<uint16_t>(__float_as_uint(ma > 0.0f ? ma : 1.0f) >> 16);
      fb[r] = static_cast<uint16_t>(__float_as_uint(mb > 0.0f ? mb : 1.0f) >> 16);
    }
  }
  if (bad) f8_raise(p);
}

// FP8 dQ's B operand (D = 128): positions s0..s0+127 of K quantized along S -> K_col', an E4M3 tile of
// 128 rows d of 128 bytes with the 128-byte swizzle, each (d, 32-block) rescaled within E4M3 to column
// d's largest scale over the sequence (f8_ktc, f8_colmax_body; the post pass multiplies dQ by it), the
// positions of each 16 in the order dQ's A tile holds dS (dq_issue): byte 2 i + h of 16-group g holds
// position 16 g + i + 8 h. Thread t < 256: 16-group t / 32, channels 4 (t % 32) .. + 3: sixteen 4-byte
// loads (a warp reads whole 128-byte rows), transposed by byte permutes into one 16-byte store per
// channel. Positions past the sequence are zeros. No error bound (as Q_col', f8_col_tile); a NaN scale
// raises the flag.
template <int D>
__device__ __forceinline__ void load_col_tile_f8(uint8_t* tile, const P& p, const Seq& sq, int64_t bhk, int64_t s0,
                                                 int t) {
  static_assert(D == 128, "FP8 path: rows of 128 bytes");
  if (t >= 256) return;
  const int g = t >> 5, l = t & 31;
  const int64_t sg = s0 + 16 * g;
  uint32_t raw[16];
#pragma unroll
  for (int i = 0; i < 16; ++i)
    raw[i] = sg + i < sq.len ? __ldg(reinterpret_cast<const uint32_t*>(p.kt + sq.row(sg + i) * D + 4 * l)) : 0u;
  const bool inside = sg < sq.len;
  bool bad = false;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int d = 4 * l + c;
    float f = 0.0f;
    if (inside) {
      const float scale = dev::ue8m0_to_f32(
          __ldg(p.kt_sc + bhk * p.kv_s_entry + attn::along_d_scale_offset(p.swizzled, d, sg / 32, p.kv_s_scale_ld)));
      const float mx = p.f8_ktc[bhk * D + d];
      f = attn::f8_factor(scale, attn::f8_rcp(mx));
      bad |= scale != scale || mx != mx;
    }
    const uint32_t sel = static_cast<uint32_t>(c) | (static_cast<uint32_t>(c + 4) << 4);
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)  // bytes 4k..4k+3: positions 2k, 2k + 8, 2k + 1, 2k + 9
      w[k] = __byte_perm(__byte_perm(raw[2 * k], raw[2 * k + 8], sel), __byte_perm(raw[2 * k + 1], raw[2 * k + 9], sel),
                         0x5410u);
    *reinterpret_cast<uint4*>(tile + ptx::sw128_offset(static_cast<uint32_t>(d), static_cast<uint32_t>(g))) =
        attn::e4m3x16_rescale(make_uint4(w[0], w[1], w[2], w[3]), f);
  }
  if (bad) f8_raise(p);
}

// Rows s0..s0+63 of a q-side operand quantized along D (Q or dO, D = 128) -> E4M3 rows of 128 bytes
// (w8: [B*Hq][S_pad][128], unswizzled: TMA swizzles on load), rescaled within E4M3 to the tile's
// largest scale, which goes to f8f[tile] (1 for a tile without a position). Positions past the
// sequence are zeros. A block past the bound or a NaN scale raises the flag.
template <int D>
__device__ __forceinline__ void f8_rows(const P& p, const uint8_t* __restrict__ data, const uint8_t* __restrict__ sc,
                                        uint8_t* w8, float* f8f, const Seq& sq, int64_t bh, int64_t spad, int64_t s0) {
  static_assert(D == 128, "FP8 path: rows of 128 bytes");
  constexpr int kCPR = D / 16, kPer = kStep * kCPR / kAttnBwdPrepThreads;
  static_assert(kPer * kAttnBwdPrepThreads == kStep * kCPR, "whole rounds");
  __shared__ float red[kAttnBwdPrepThreads / 32];
  const int t = static_cast<int>(threadIdx.x);
  uint4 raw[kPer];
  float sv[kPer];
  float mx = 0.0f;
  bool bad = false;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = t + kAttnBwdPrepThreads * k, r = u / kCPR, c = u % kCPR;
    const int64_t s = s0 + r;
    raw[k] = make_uint4(0u, 0u, 0u, 0u);
    sv[k] = 0.0f;
    if (s < sq.len) {
      const int64_t row = sq.row(s);
      raw[k] = __ldg(reinterpret_cast<const uint4*>(data + row * D + c * 16));
      sv[k] = dev::ue8m0_to_f32(__ldg(sc + d_scale_off(p, row, c / 2)));
    }
    mx = fmaxf(mx, sv[k]);
    bad |= sv[k] != sv[k];
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
  if ((t & 31) == 0) red[t >> 5] = mx;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kAttnBwdPrepThreads / 32; ++w) mx = fmaxf(mx, red[w]);
  const float rmx = attn::f8_rcp(mx);
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = t + kAttnBwdPrepThreads * k, r = u / kCPR, c = u % kCPR;
    const uint4 o = attn::e4m3x16_rescale(raw[k], attn::f8_factor(sv[k], rmx));
    uint32_t code = attn::f8_chunk_code(raw[k], o);
    code |= __shfl_xor_sync(0xFFFFFFFFu, code, 1);  // the block's other half
    bad |= attn::f8_block_bad(code, sv[k] < mx);
    *reinterpret_cast<uint4*>(w8 + (bh * spad + s0 + r) * D + c * 16) = o;
  }
  if (t == 0) f8f[bh * (spad / kStep) + s0 / kStep] = mx > 0.0f ? mx : 1.0f;
  if (bad) f8_raise(p);
}

// FP8 dK and dV (docs/NUMERICS.md "Backward on FP8 tensor cores"): positions s0..s0+63 of Q or dO
// quantized along S (D = 128) -> the transposed E4M3 tile of the dK or dV product's B operand, row d
// of 64 bytes in w8 ([B*Hq][D][S_pad] bytes, unswizzled: TMA swizzles on load), each (d, 32-block)
// rescaled within E4M3 to column d's largest scale over the sequence and the KV group's query heads
// (colmax, f8_colmax_body), so that one power-of-two factor per column multiplies dK or dV at the end.
// The positions of each 32-block
// are stored in the order of the dS^T and Pq 8-bit A fragments (ds_rows_to_f8; as the forward's V'^T):
// logical position 4c + t of half h holds physical position 16 h + 8 (t / 2) + 2 c + t % 2. Thread t:
// column t % 128, 32-block t / 128; the raw tile goes through shared memory (coalesced loads). No
// error bound: a value shifted below E4M3's normal range moves by at most 2^-10 of its column's factor,
// 2^-17.8 of the column's largest magnitude (NUMERICS); a NaN scale raises the flag.
template <int D>
__device__ __forceinline__ void f8_col_tile(const P& p, uint8_t* tile, const uint8_t* __restrict__ data,
                                            const uint8_t* __restrict__ sc, uint8_t* w8, const float* colmax,
                                            const Seq& sq, int64_t bh, int64_t s0) {
  static_assert(D == 128 && kAttnBwdPrepThreads == 2 * D, "a thread per (column, 32-block)");
  const int t = static_cast<int>(threadIdx.x);
  // The thread's scale and column factor first, so that their loads overlap the tile's.
  const int d = t % D, blk = t / D;
  const int64_t cblk = s0 / 32 + blk;
  const bool inside = 32 * cblk < sq.len;
  float scale = 0.0f, mx = 0.0f;
  if (inside) {
    const uint8_t* e = sc + bh * p.q_s_entry;
    scale = dev::ue8m0_to_f32(__ldg(e + q_s_scale_off(p, d, cblk)));
    mx = colmax[bh / p.group * D + d];  // (b, kv head) = (b, q head) / group, as Hq = Hkv * group
  }
  for (int u = t; u < kStep * D / 16; u += kAttnBwdPrepThreads) {
    const int r = u / (D / 16), c = u % (D / 16);
    const int64_t s = s0 + r;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (s < sq.len) v = __ldg(reinterpret_cast<const uint4*>(data + sq.row(s) * D + c * 16));
    *reinterpret_cast<uint4*>(tile + r * D + c * 16) = v;
  }
  __syncthreads();
  const float f = inside ? attn::f8_factor(scale, attn::f8_rcp(mx)) : 0.0f;
  const bool bad = inside && (scale != scale || mx != mx);
  const uint8_t* col = tile + 32 * blk * D + d;
  uint4 raw[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    uint32_t w[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int p0 = 16 * h + 2 * c;  // logical 4c + t -> physical p0, p0 + 1, p0 + 8, p0 + 9
      w[c] = static_cast<uint32_t>(col[p0 * D]) | (static_cast<uint32_t>(col[(p0 + 1) * D]) << 8) |
             (static_cast<uint32_t>(col[(p0 + 8) * D]) << 16) | (static_cast<uint32_t>(col[(p0 + 9) * D]) << 24);
    }
    raw[h] = make_uint4(w[0], w[1], w[2], w[3]);
  }
  uint4* dst = reinterpret_cast<uint4*>(w8 + (bh * D + d) * p.sq_pad + s0 + 32 * blk);
  dst[0] = attn::e4m3x16_rescale(raw[0], f);
  dst[1] = attn::e4m3x16_rescale(raw[1], f);
  if (bad) f8_raise(p);
}

// The FP8 path's first kernel, one block per (b, kv head) and tensor (blockIdx.y: Q, dO, K along S):
// clears the call's flag (block 0) and writes the tensor's colmax[(b, kv head, d)] (f8_qtc, f8_dotc,
// f8_ktc), its largest scale in column d over the sequence (Q, dO: and the KV group's query heads; 1 for an empty
// sequence; a NaN scale gives NaN, and f8_col_tile raises the flag). The largest UE8M0 code is the
// largest scale (0xFF, NaN, above every other). Swizzled scales with a 16-byte aligned base: each
// 512-byte tile (128 columns d x 4 blocks) is 32 coalesced 16-byte loads, lane l holding columns
// l + 32k (word k) of 4 blocks (its bytes); else one byte per load.
template <int D>
__device__ __forceinline__ void f8_colmax_body(const P& p) {
  static_assert(D == 128 && kAttnBwdPrepThreads == 256, "one 128-row band of scale tiles, 8 warps");
  constexpr int kWarps = kAttnBwdPrepThreads / 32;
  __shared__ uint32_t red[kWarps][D];
  const int t = static_cast<int>(threadIdx.x), l = t & 31, w = t >> 5;
  // The prep grid is a programmatic dependent: its first slices (the dQ zeroing, delta) need nothing
  // from here and start at once; the others wait for this grid (prep_block).
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const int64_t bhk = blockIdx.x, b = bhk / p.heads_kv;
  if (bhk == 0 && blockIdx.y == 0 && t == 0) *p.f8_flag = 0u;
  // blockIdx.y 2: K along S (its own (b, kv head) entry, no group), for dQ's K_col' (load_col_tile_f8).
  const bool kside = blockIdx.y == 2;
  const uint8_t* scales = blockIdx.y == 0 ? p.qt_sc : blockIdx.y == 1 ? p.doutt_sc : p.kt_sc;
  float* colmax = blockIdx.y == 0 ? p.f8_qtc : blockIdx.y == 1 ? p.f8_dotc : p.f8_ktc;
  const int64_t group = kside ? 1 : p.group, entry = kside ? p.kv_s_entry : p.q_s_entry;
  const int64_t ld = kside ? p.kv_s_scale_ld : p.q_s_scale_ld;
  const int64_t nblk = (seq_of(p, !kside, b, 0).len + 31) / 32;
  auto max_byte = [](uint32_t x) {
    x = __vmaxu4(x, x >> 16);
    return __vmaxu4(x, x >> 8) & 0xFFu;
  };
  uint32_t mx[4] = {0u, 0u, 0u, 0u};  // swizzled: columns l + 32 k; else mx[0]: column t % D
  const bool vec = p.swizzled && (reinterpret_cast<uintptr_t>(scales) & 15u) == 0;
  for (int64_t g = 0; g < group; ++g) {
    const uint8_t* e = scales + (bhk * group + g) * entry;
    if (vec) {
      const int64_t ntiles = (nblk + 3) / 4;
#pragma unroll 4
      for (int64_t tl = w; tl < ntiles; tl += kWarps) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(e + tl * 512) + l);
        const int64_t left = nblk - 4 * tl;  // blocks of this tile inside the sequence (>= 1)
        const uint32_t keep = left >= 4 ? 0xFFFFFFFFu : (1u << (8 * left)) - 1u;
        mx[0] = max(mx[0], max_byte(v.x & keep));
        mx[1] = max(mx[1], max_byte(v.y & keep));
        mx[2] = max(mx[2], max_byte(v.z & keep));
        mx[3] = max(mx[3], max_byte(v.w & keep));
      }
    } else {
      const int64_t d = t % D;
      for (int64_t c = t / D; c < nblk; c += kAttnBwdPrepThreads / D)
        mx[0] = max(mx[0], static_cast<uint32_t>(__ldg(e + attn::along_d_scale_offset(p.swizzled, d, c, ld))));
    }
  }
  for (int i = t; i < kWarps * D; i += kAttnBwdPrepThreads) (&red[0][0])[i] = 0u;
  __syncthreads();
  if (vec) {
#pragma unroll
    for (int k = 0; k < 4; ++k) red[w][l + 32 * k] = mx[k];
  } else {
    red[t / D][t % D] = mx[0];
  }
  __syncthreads();
  if (t < D) {
    uint32_t m = 0u;
#pragma unroll
    for (int k = 0; k < kWarps; ++k) m = max(m, red[k][t]);
    colmax[bhk * D + t] = nblk == 0 ? 1.0f : dev::ue8m0_to_f32(static_cast<uint8_t>(m));
  }
}

using attn::ex2;

// int64 -> int32 for tile-local mask arithmetic (|bounds| far beyond a tile saturate harmlessly).
__device__ __forceinline__ int clamp32(int64_t v) {
  return static_cast<int>(v < -(int64_t(1) << 30) ? -(int64_t(1) << 30) : v > (int64_t(1) << 30) ? (int64_t(1) << 30) : v);
}

using attn::e4m3_round_bf16x2;

// dev::scale_exponent<E4M3>(amax, RCEIL), dev::scale_inverse and dev::ue8m0_to_f32 of one block,
// written with selects only (no branches inside the unrolled elementwise code), bit-identical to them.
__device__ __forceinline__ uint32_t rceil_e4m3_exponent(float amax) {
  const uint32_t a = __float_as_uint(amax) & 0x7FFFFFFFu;
  const uint32_t b = __float_as_uint(__fmul_rn(__uint_as_float(a), __uint_as_float(0x3B124925u)));  // fl32(1/448)
  const uint32_t e0 = b >> 23, mant = b & 0x7FFFFFu;
  const bool inc = (mant != 0u) & (e0 != 0xFEu) & !((e0 == 0u) & (mant <= 0x400000u));
  uint32_t e = e0 + (inc ? 1u : 0u);  // b == 0 gives 0
  e = b == 0x7F800000u ? 0xFEu : e;   // amax = inf
  e = a > 0x7F800000u ? 0xFFu : e;    // amax = NaN
  return e;
}
// The inverse scale and the multiplier of a block whose scale exponent is e.
__device__ __forceinline__ void e4m3_scale_of_exponent(uint32_t e, float& inv, float& m) {
  const uint32_t ib = e == 0xFFu ? 0x7FFFFFFFu : e == 0xFEu ? 0x00400000u : (254u - e) << 23;
  const uint32_t mb = e == 0u ? 0x00400000u : e == 0xFFu ? 0x7FC00000u : e << 23;
  inv = __uint_as_float(ib);
  m = __uint_as_float(mb);
}
__device__ __forceinline__ void rceil_e4m3_scale(float amax, float& inv, float& m) {
  e4m3_scale_of_exponent(rceil_e4m3_exponent(amax), inv, m);
}

// The MX block maxima of a 64x64 accumulator tile's rows (blocks of 32 columns: this thread's 8
// values of each, then the 4 lanes of a row by two shuffles): absmax(v, y0, y1) folds |y0|, |y1|
// into v, max2 combines two maxima (fmaxf for the quantizer's NaN-ignoring maximum, max.NaN to let
// a NaN reach the scale).
template <typename AbsMax, typename Max2>
__device__ __forceinline__ void block_amax(const float (&x)[32], float (&amax)[2][2], AbsMax absmax, Max2 max2) {
#pragma unroll
  for (int blk = 0; blk < 2; ++blk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float v = 0.0f;
#pragma unroll
      for (int jj = 4 * blk; jj < 4 * blk + 4; ++jj) v = absmax(v, x[4 * jj + 2 * half], x[4 * jj + 2 * half + 1]);
      amax[blk][half] = v;
    }
  }
#pragma unroll
  for (int lanes = 1; lanes <= 2; lanes *= 2)
#pragma unroll
    for (int blk = 0; blk < 2; ++blk)
#pragma unroll
      for (int half = 0; half < 2; ++half)
        amax[blk][half] = max2(amax[blk][half], __shfl_xor_sync(0xFFFFFFFFu, amax[blk][half], lanes));
}

// Given the 32 fp32 accumulator values of a 64x64 tile (rows r0, r0+8; the layout of
// wgmma_bf16.cuh), MXFP8-quantizes each row's two 32-column blocks (E4M3, RCEIL, the quantizer's
// arithmetic: cpu mx_roundtrip) and returns the dequantized values as bf16 A fragments.
// The exact general form: E4M3 -> f16x2 -> two fp32, times the fp32 multiplier, -> bf16x2.
// The values are x * f (the folded factor, see mx_rows_to_frags), formed here in fp32.
__device__ __forceinline__ void mx_rows_to_frags_exact(const float (&x_)[32], uint32_t (&a)[4][4], float f) {
  auto xv = [&](int i) { return __fmul_rn(x_[i], f); };  // formed at each use: no copy
  float amax[2][2];
  block_amax(x_, amax,
             [&](float v, float y0, float y1) { return fmaxf(v, fmaxf(fabsf(__fmul_rn(y0, f)), fabsf(__fmul_rn(y1, f)))); },
             [](float u, float w) { return fmaxf(u, w); });
#pragma unroll
  for (int blk = 0; blk < 2; ++blk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float inv, m;
      rceil_e4m3_scale(amax[blk][half], inv, m);
#pragma unroll
      for (int jj = 4 * blk; jj < 4 * blk + 4; ++jj) {
        const uint16_t q = dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(__fmul_rn(xv(4 * jj + 2 * half), inv),
                                                                    __fmul_rn(xv(4 * jj + 2 * half + 1), inv));
        // accumulator pair index (4 jj + 2 half) / 2 -> fragment [k = jj/2][(jj%2)*2 + half]
        a[jj >> 1][(jj & 1) * 2 + half] = dq2(q, m);
      }
    }
  }
}

// max(v, |x|) with NaN propagation (max.NaN; ptxas folds the abs into the FMNMX).
__device__ __forceinline__ float max_abs_nan(float v, float x) {
  float d;
  asm("{\n.reg .f32 t;\nabs.f32 t, %2;\nmax.NaN.f32 %0, %1, t;\n}" : "=f"(d) : "f"(v), "f"(x));
  return d;
}
__device__ __forceinline__ float max_nan(float v, float x) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(v), "f"(x));
  return d;
}

// mx_rows_to_frags_exact's results, cheaper: the E4M3 codes go to bf16 by bit placement and one
// bf16x2 multiply by 2^(E-127+120) (sm90/gemm_bf16_convert.cuh, exact, subnormals included), and
// the inverse scale is 2^(127-E) directly. Valid while every block's scale exponent E <= 134 and
// no block holds a NaN (an E4M3 NaN code would come out finite): the block maxima propagate NaN
// here, so a NaN, an Inf or a large block gives E > 134 and its warp takes the exact form (a
// warp-uniform branch; amax is then recomputed with fmaxf, as the quantizer does).
// The values to quantize are x * f (dK/dV: x = P * p_scale * (dP - delta), f = softmax_scale /
// p_scale; dQ kernel: x = P * (dP - delta), f = softmax_scale): the block maximum is multiplied by f
// (the maximum commutes with the rounding of a positive multiply) and each element is multiplied
// once by f * 2^(127-E), whose bits are fc - (E << 23) (fold_ok: f in [2^-119, 2), so that is a
// normal float for every E <= 134). A power-of-two multiply is exact, so x * (f * 2^(127-E)) is the
// fp32 value (x * f) * 2^(127-E) and the E4M3 codes are those of x * f (docs/NUMERICS.md).
__device__ __forceinline__ void mx_rows_to_frags(const float (&x)[32], uint32_t (&a)[4][4], float f, uint32_t fc,
                                                 bool fold_ok) {
  using Cvt = sm90gemm::Fp8Bits<ptx::Fp8Kind::E4M3>;
  float amax[2][2];
  block_amax(x, amax, [](float v, float y0, float y1) { return max_abs_nan(max_abs_nan(v, y0), y1); }, max_nan);
  uint32_t e[2][2];
  bool slow = !fold_ok;
#pragma unroll
  for (int blk = 0; blk < 2; ++blk)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      e[blk][half] = rceil_e4m3_exponent(__fmul_rn(amax[blk][half], f));
      slow |= e[blk][half] > static_cast<uint32_t>(Cvt::kMaxFastE);
    }
  if (__any_sync(0xFFFFFFFFu, slow)) {
    mx_rows_to_frags_exact(x, a, f);
    return;
  }
#pragma unroll
  for (int blk = 0; blk < 2; ++blk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float inv = __uint_as_float(fc - (e[blk][half] << 23));  // f * 2^(127-E), E <= 134
      const uint32_t mul = ((e[blk][half] + Cvt::kBias) << 7) * 0x00010001u;  // bf16x2 2^(E-127+120)
#pragma unroll
      for (int jj = 4 * blk; jj < 4 * blk + 4; ++jj) {
        const uint16_t q = dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(__fmul_rn(x[4 * jj + 2 * half], inv),
                                                                    __fmul_rn(x[4 * jj + 2 * half + 1], inv));
        a[jj >> 1][(jj & 1) * 2 + half] = sm90gemm::cvt_fast_pair<ptx::Fp8Kind::E4M3>(q, mul);
      }
    }
  }
}

// ---- FP8 dK: dS^T quantized per kv row against a running scale (docs/NUMERICS.md) ----------------
// kF8: the E4M3 A fragments of dK += dS^T Q_col' over the step's two k32 steps. Each kv row of the
// thread (r0: half 0, r0 + 8: half 1) keeps one scale exponent ra[half] for the whole walk instead of
// one per 32-block and step: its values x * f (mx_rows_to_frags) are multiplied by 2^(127 - ra) and
// rounded to E4M3 as the recipe rounds them: the same code wherever ra is the block's own exponent,
// and wherever the shifted value stays in E4M3's normal range (a power-of-two shift commutes with the
// rounding there). When a row's maximum over the step's 64 queries needs a larger exponent than ra,
// ra becomes that exponent plus kDsHead (headroom, so that rises are rare) and the row's dK
// accumulator is multiplied by 2^(ra_old - ra_new) first (exact: a power of two; a warp-uniform
// branch, taken by the whole warp if any of its rows rises). dK = acc * 2^(ra - 127) times Q_col's
// column factor at the end. A value below 2^-(6 + kDsHead) of its row's largest so far rounds on
// E4M3's subnormal grid (at most 2^-10 * 2^(ra - 127) away). The fast form multiplies once by
// f * 2^(127 - ra), whose bits are fc - (ra << 23) while ra <= 134 and f's fold is valid (fold_ok);
// else the warp multiplies by f, then by 2^(127 - ra) (the same fp32 values). Returns true if a row's
// maximum is NaN or Inf (exponent >= 254): the caller raises the flag and the exact kernels redo the
// call, so that such inputs get the exact path's results.
constexpr uint32_t kDsHead = 2;
// The 8-bit A fragments of two k32 steps from a 64 x 64 accumulator tile's 32 values (rows r0: half 0,
// r0 + 8: half 1): word j of step kk holds row r0 (+ 8 for j odd), logical k = 4 (l % 4) + 0..3 (+ 16
// for j >= 2), i.e. physical columns 2 (l % 4) + {0, 1} and + 8 (+ 16), the order Q_col' and dO_col'
// are stored in (f8_col_tile). q2(u, v, half) returns the E4M3 pair of u, v (u in the low byte).
template <typename Q2>
__device__ __forceinline__ void pack_f8_frags(const float (&x)[32], uint32_t (&a)[2][4], Q2 q2) {
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    const float* q = x + 16 * kk;
    a[kk][0] = q2(q[0], q[1], 0) | (q2(q[4], q[5], 0) << 16);
    a[kk][1] = q2(q[2], q[3], 1) | (q2(q[6], q[7], 1) << 16);
    a[kk][2] = q2(q[8], q[9], 0) | (q2(q[12], q[13], 0) << 16);
    a[kk][3] = q2(q[10], q[11], 1) | (q2(q[14], q[15], 1) << 16);
  }
}
__device__ __forceinline__ uint32_t e4m3x2_code(float u, float v) {
  return static_cast<uint32_t>(dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(u, v));
}
template <int N>
__device__ __forceinline__ bool ds_rows_to_f8(const float (&x)[32], uint32_t (&a)[2][4], uint32_t (&ra)[2],
                                              float (&acc)[N], float f, uint32_t fc, bool fold_ok) {
  float am[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float v = 0.0f;
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) v = max_abs_nan(max_abs_nan(v, x[4 * jj + 2 * half]), x[4 * jj + 2 * half + 1]);
    am[half] = v;
  }
#pragma unroll
  for (int lanes = 1; lanes <= 2; lanes *= 2)
#pragma unroll
    for (int half = 0; half < 2; ++half) am[half] = max_nan(am[half], __shfl_xor_sync(0xFFFFFFFFu, am[half], lanes));
  uint32_t e[2];
  bool grow = false, bad = false;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    e[half] = rceil_e4m3_exponent(__fmul_rn(am[half], f));
    bad |= e[half] >= 254u;
    e[half] = min(e[half], 253u);
    grow |= e[half] > ra[half];
  }
  if (__any_sync(0xFFFFFFFFu, grow)) {
    float fr[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const uint32_t n = e[half] > ra[half] ? min(e[half] + kDsHead, e[half] <= 134u ? 134u : 253u) : ra[half];
      const uint32_t dl = n - ra[half];
      fr[half] = dl >= 127u ? 0.0f : __uint_as_float((127u - dl) << 23);
      ra[half] = n;
    }
#pragma unroll
    for (int i = 0; i < N; ++i) acc[i] = __fmul_rn(acc[i], fr[(i >> 1) & 1]);
  }
  if (__any_sync(0xFFFFFFFFu, !fold_ok || ra[0] > 134u || ra[1] > 134u)) {
    float m[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float unused;
      e4m3_scale_of_exponent(ra[half], m[half], unused);  // 2^(127 - ra)
    }
    pack_f8_frags(x, a, [&](float u, float v, int half) {
      return e4m3x2_code(__fmul_rn(__fmul_rn(u, f), m[half]), __fmul_rn(__fmul_rn(v, f), m[half]));
    });
  } else {
    const float inv[2] = {__uint_as_float(fc - (ra[0] << 23)), __uint_as_float(fc - (ra[1] << 23))};
    pack_f8_frags(x, a, [&](float u, float v, int half) {
      return e4m3x2_code(__fmul_rn(u, inv[half]), __fmul_rn(v, inv[half]));
    });
  }
  return bad;
}

// ---- fused dQ: dS^T quantized along s_kv (its accumulator ROWS) -------------------------------
// In the dK/dV kernel the tile in registers is dS^T (rows = kv positions r0, r0 + 8 of each warp's 16,
// columns = queries), and dQ's 32-blocks run along s_kv: a block is the 32 rows of two warps
// (2k, 2k + 1) of a warpgroup. Per warp, each column's maximum over its 16 rows is reduced by a
// transposing butterfly (lane bits 4, 3, 2; 14 shuffles): afterwards lane (g = l/4, c = l%4) holds
// columns 8g + 2c and 8g + 2c + 1. Their scale exponents (rceil_e4m3_exponent is monotone, so the
// exponent of the block maximum is the maximum of the two warps' exponents) are packed in one word
// (low half: the even column), exchanged with the partner warp through shared memory and merged
// with a 16-bit max; every lane then fetches the words of its 8 column pairs by shuffles.
// kExact: fmaxf maxima folded from 0 (the quantizer's, NaN ignored); else max.NaN (a NaN or an Inf
// gives an exponent past the fast conversion's range, and the pair of warps redoes the block exactly).
// The values are x * f (mx_rows_to_frags): the exact form multiplies each element, the fast form the
// two maxima.
template <bool kExact>
__device__ __forceinline__ uint32_t col_block_exponents(const float (&x)[32], int l, float f) {
  float v[16];  // v[2 jj + e]: max over rows r0, r0 + 8 of column 8 jj + 2 (l % 4) + e
#pragma unroll
  for (int jj = 0; jj < 8; ++jj)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float a = kExact ? __fmul_rn(x[4 * jj + e], f) : x[4 * jj + e];
      const float b = kExact ? __fmul_rn(x[4 * jj + 2 + e], f) : x[4 * jj + 2 + e];
      v[2 * jj + e] = kExact ? fmaxf(0.0f, fmaxf(fabsf(a), fabsf(b))) : max_abs_nan(fabsf(a), b);
    }
  auto level = [&](auto n_tag) {  // n = 8, 4, 2: lanes exchange across lane bit 2n
    constexpr int n = decltype(n_tag)::value;
    const bool up = (l & (2 * n)) != 0;
#pragma unroll
    for (int k = 0; k < n; ++k) {
      const float send = up ? v[k] : v[k + n], keep = up ? v[k + n] : v[k];
      const float got = __shfl_xor_sync(0xFFFFFFFFu, send, 2 * n);
      v[k] = kExact ? fmaxf(keep, got) : max_nan(keep, got);
    }
  };
  level(std::integral_constant<int, 8>{});
  level(std::integral_constant<int, 4>{});
  level(std::integral_constant<int, 2>{});
  if constexpr (!kExact) {
    v[0] = __fmul_rn(v[0], f);
    v[1] = __fmul_rn(v[1], f);
  }
  return rceil_e4m3_exponent(v[0]) | (rceil_e4m3_exponent(v[1]) << 16);
}
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}
// Quantize the thread's 32 dS^T values with their columns' block exponents (word of column pair
// (8 jj + 2c, +1) from lane 4 jj + c) and store the dequantized bf16 pairs into the dS^T tile
// (128-byte rows of 64 queries, 128-byte swizzle) with four stmatrix.x4: the thread's pair of
// (row r0 + 8 half, columns 8 jj + 2c, +1) is element (l/4, 2c) of the 8x8 block (jj, half), so the
// blocks (2k, 0), (2k, 1), (2k + 1, 0), (2k + 1, 1) are the four matrices of stmatrix k, whose
// lanes 8i..8i+7 address the rows of matrix i. row_addr: the shared address of the row this lane
// addresses (the warp's first row + 8 ((l / 8) % 2) + l % 8). 16 4-byte stores before (attnb10).
// The values are x * f, as in col_block_exponents; fc: the bits of f * 2^127 (mx_rows_to_frags).
template <bool kExact>
__device__ __forceinline__ void col_quant_store(const float (&x)[32], uint32_t e2, uint32_t row_addr, int l, float f,
                                                uint32_t fc) {
  using Cvt = sm90gemm::Fp8Bits<ptx::Fp8Kind::E4M3>;
  const int c = l & 3;
  uint32_t bfs[4];
  const uint32_t ysel = static_cast<uint32_t>((l & 7) ^ (l >> 4));  // chunk of (row, jj = 2k + l/16) = 2k ^ ysel
#pragma unroll
  for (int jj = 0; jj < 8; ++jj) {
    const uint32_t ej = __shfl_sync(0xFFFFFFFFu, e2, 4 * jj + c);
    const uint32_t e0 = ej & 0xFFFFu, e1 = ej >> 16;
    float inv0, inv1, m0 = 0.0f, m1 = 0.0f;
    uint32_t mul = 0u;
    if constexpr (kExact) {
      e4m3_scale_of_exponent(e0, inv0, m0);
      e4m3_scale_of_exponent(e1, inv1, m1);
    } else {
      inv0 = __uint_as_float(fc - (e0 << 23));  // f * 2^(127-E), E <= 134
      inv1 = __uint_as_float(fc - (e1 << 23));
      mul = (ej + static_cast<uint32_t>(Cvt::kBias) * 0x00010001u) << 7;  // bf16x2 2^(E-127+120) per half
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const float xa = kExact ? __fmul_rn(x[4 * jj + 2 * half], f) : x[4 * jj + 2 * half];
      const float xb = kExact ? __fmul_rn(x[4 * jj + 2 * half + 1], f) : x[4 * jj + 2 * half + 1];
      const uint16_t q = dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(__fmul_rn(xa, inv0), __fmul_rn(xb, inv1));
      const uint32_t bf = kExact ? attn::e4m3x2_to_bf16x2(q, m0, m1) : sm90gemm::cvt_fast_pair<ptx::Fp8Kind::E4M3>(q, mul);
      bfs[(jj & 1) * 2 + half] = bf;
    }
    if (jj & 1) stmatrix_x4(row_addr + (static_cast<uint32_t>(jj - 1) ^ ysel) * 16u, bfs[0], bfs[1], bfs[2], bfs[3]);
  }
}

// kF8 (FP8 dQ): the thread's 32 dS^T values x * f quantized to E4M3 against their query column's scale
// exponent (word of column pair (8 jj + 2c, +1) from lane 4 jj + c: the largest over the CTA's 128 kv
// rows, dq_issue) and stored into dQ's A tile, [64 q][128 kv'] bytes with the 128-byte swizzle: the
// thread's rows r0 and r0 + 8 of column q are the 16-bit unit at kv' = 64 wg + 16 w + 2 (l / 4) of row
// q (K_col' holds its positions in the same order, load_col_tile_f8), so each pair is one cvt and one
// 2-byte store (a warp's store: 16 bytes of each of 4 rows, in 4 distinct 16-byte bank groups).
// a0 / a1: the thread's addresses for the columns of parity 0 / 1 in row group 0 (rows 8 jj on at
// + 1024 jj). kFast: one multiply by f * 2^(127 - E) (bits fc - (E << 23), E <= 134 and f's fold
// valid, mx_rows_to_frags); else by f, then by 2^(127 - E).
template <bool kFast>
__device__ __forceinline__ void col_quant_store_f8(const float (&x)[32], uint32_t e2, uint32_t a0, uint32_t a1, int l,
                                                   float f, uint32_t fc) {
  const int c = l & 3;
#pragma unroll
  for (int jj = 0; jj < 8; ++jj) {
    const uint32_t ej = __shfl_sync(0xFFFFFFFFu, e2, 4 * jj + c);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const uint32_t ex = e ? ej >> 16 : ej & 0xFFFFu;
      float u = x[4 * jj + e], v = x[4 * jj + 2 + e];
      if constexpr (kFast) {
        const float inv = __uint_as_float(fc - (ex << 23));
        u = __fmul_rn(u, inv), v = __fmul_rn(v, inv);
      } else {
        float inv, unused;
        e4m3_scale_of_exponent(ex, inv, unused);
        u = __fmul_rn(__fmul_rn(u, f), inv), v = __fmul_rn(__fmul_rn(v, f), inv);
      }
      const uint16_t q = dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(u, v);
      asm volatile("st.shared.b16 [%0], %1;" ::"r"((e ? a1 : a0) + 1024u * jj), "h"(q) : "memory");
    }
  }
}

// TMA bulk reduction (sm_90): `bytes` of fp32 in shared memory added element-wise, atomically, to
// global memory; its bulk group is committed and waited for with ptx/tma.cuh's bulk_* helpers.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, uint32_t src_smem, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst), "r"(src_smem),
               "r"(bytes)
               : "memory");
}

// Fused dQ's tile counters (p.dq_cnt): the reducer thread of a kv CTA adds 1 once the bulk reductions
// of its contribution to a tile are complete (their async-proxy writes fenced for the generic proxy,
// then a release add at GPU scope); the post pass acquires 0 before reading the tile.
__device__ __forceinline__ void dq_tile_done(int32_t* cnt) {
  asm volatile("fence.proxy.async.global;" ::: "memory");
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(cnt) : "memory");
}
__device__ __forceinline__ int32_t ld_acquire_gpu(const int32_t* a) {
  int32_t v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
  return v;
}

// The number of kv CTAs whose walk includes q step qs of batch entry b (every query head of their
// group): kv block kb walks q blocks from qb_first = max(0, (128 kb - off) / 64) (dkv_body), so it
// reaches qs iff 128 kb < 64 (qs + 1) + off; none for steps past the sequence.
__device__ __forceinline__ int32_t dq_contributors(const P& p, int64_t b, int64_t qs) {
  const int64_t lq = seq_of(p, true, b, 0).len, lk = seq_of(p, false, b, 0).len;
  if (qs * kStep >= lq) return 0;
  const int64_t nkb = (lk + kRows - 1) / kRows;
  if (p.mask == MXQ_ATTN_MASK_NONE) return static_cast<int32_t>(nkb);
  const int64_t off = p.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0;
  const int64_t x = (qs + 1) * kStep + off;
  const int64_t n = x > 0 ? (x + kRows - 1) / kRows : 0;
  return static_cast<int32_t>(n < nkb ? n : nkb);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma m64n64k16 bf16 with A read transposed from shared memory (A stored M-major: the dS^T tile,
// 128-byte rows of 64 queries = M, a K step of 16 kv rows = 2048 bytes) and B K-major; the forms of
// ptx/wgmma_bf16.cuh fix A K-major, so the transposed-A form is spelled here, for this kernel only.
__device__ __forceinline__ void wgmma_bf16_ss_ta64(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " MXQ_WGMMA_ACC32_REGS ", %32, %33, p, 1, 1, 1, 0;\n}\n"
               : MXQ_WGMMA_ACC32_OPS(d)
               : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#endif

// kF8: one stage's loads (Q', dO': one box of 64 rows x 128 bytes each; Q_col', dO_col': one [D][64]
// box each, 64-byte swizzle; all E4M3) completing on `fb`, at q row qrow of the [B*Hq*S_pad] rows and
// position i0 of the transposed maps' row drow.
template <int D>
__device__ __forceinline__ void tma_stage_f8(const P& p, uint32_t stg, uint32_t fb, int32_t i0, int32_t qrow,
                                             int32_t drow) {
  static_assert(D == 128, "FP8 path: rows of 128 bytes");
  constexpr int kStepTile = kStep * D * 2;  // a stage slot: bf16 [64][D]
  ptx::mbar_arrive_expect_tx(fb, 4 * kStep * D);
  ptx::tma_load_2d(stg, p.tmap_q, 0, qrow, fb);
  ptx::tma_load_2d(stg + kStepTile, p.tmap_do, 0, qrow, fb);
  ptx::tma_load_2d(stg + 2 * kStepTile, p.tmap_qt, i0, drow, fb);
  ptx::tma_load_2d(stg + 3 * kStepTile, p.tmap_dot, i0, drow, fb);
}

// Descriptor of a K-major operand of 64-byte rows with the 64-byte swizzle (8-row groups 512 bytes
// apart; the tile 512-byte aligned); stepping along K inside the row adds to the start address.
__device__ __forceinline__ uint64_t desc_sw64(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4) | (uint64_t(1) << 16) | (uint64_t(512 >> 4) << 32) |
         (uint64_t(2) << 62);
}
// Descriptor of the tile whose descriptor low word is `lo`, `off` bytes in (ptx/wgmma_bf16.cuh).
__device__ __forceinline__ uint64_t desc(uint32_t lo, uint32_t off) { return ptx::smem_desc_sw128_at(lo, off); }

// acc[64 x 64] = A B^T over D (bf16 wgmma m64n64k16, not committed): A is 64 rows of a 128-row
// tile (kRows-row 64-column panels), B a 64-row step tile (kStep-row panels), both K-major along D.
// The first NR k steps take A from registers instead (wgmma RS; frag[k]: the A fragment of k step k).
template <int D, int NR = 0>
__device__ __forceinline__ void issue_product_over_d(float (&acc)[32], uint32_t a_addr, uint32_t b_addr,
                                                     const uint32_t (*frag)[4] = nullptr) {
  ptx::undef_acc(acc);  // the first wgmma overwrites acc
  const uint32_t a_lo = ptx::smem_desc_sw128_lo(a_addr), b_lo = ptx::smem_desc_sw128_lo(b_addr);
#pragma unroll
  for (int k = 0; k < D / 16; ++k) {
    const uint32_t ao = (k >> 2) * (kRows * 128) + (k & 3) * 32, bo = (k >> 2) * (kStep * 128) + (k & 3) * 32;
    if (k < NR) ptx::wgmma_bf16_rs<64, 0>(acc, frag[k], desc(b_lo, bo), k > 0);
    else ptx::wgmma_bf16_ss<64, 0>(acc, desc(a_lo, ao), desc(b_lo, bo), k > 0);
  }
}

// kF8: acc[64 x 64] = A' B'^T over D = 128 (FP8 wgmma, not committed): A' 64 rows of a 128-row E4M3
// tile of 128-byte rows, B' a 64-row one; four k32 steps of 32 bytes.
__device__ __forceinline__ void issue_product_f8(float (&acc)[32], uint32_t a_addr, uint32_t b_addr) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  ptx::undef_acc(acc);  // the first wgmma overwrites acc
  const uint32_t a_lo = ptx::smem_desc_sw128_lo(a_addr), b_lo = ptx::smem_desc_sw128_lo(b_addr);
#pragma unroll
  for (int k = 0; k < 4; ++k) ptx::wgmma_e4m3_ss_n64(acc, desc(a_lo, k * 32), desc(b_lo, k * 32), k > 0);
#endif
}

// ---- delta = rowsum(dO * O), fp32, into the workspace: rows s0..s0+63 of q-side entry bh ---------
// (a slice of the prep kernel's grid). D/8 threads per row, 8 bf16 of O and dO each.
template <int D>
__device__ __forceinline__ void delta_rows(const P& p, int64_t bh, int64_t s0) {
  constexpr int kTpr = D / 8;
  constexpr int kRowsPerPass = kAttnBwdPrepThreads / kTpr;
  static_assert(kStep % kRowsPerPass == 0, "every pass has the same trip count (shuffles)");
  const int64_t b = bh / p.heads_q, h = bh % p.heads_q;
  const Seq sq = seq_of(p, true, b, h);
  if (s0 >= sq.len) return;
  const int part = static_cast<int>(threadIdx.x) % kTpr;
#pragma unroll
  for (int r = static_cast<int>(threadIdx.x) / kTpr; r < kStep; r += kRowsPerPass) {
    const int64_t s = s0 + r;
    float acc = 0.0f;
    if (s < sq.len) {
      const int64_t row = sq.row(s);
      const uint4 o = __ldg(reinterpret_cast<const uint4*>(p.o_bf16 + row * D) + part);
      const uint4 g = __ldg(reinterpret_cast<const uint4*>(p.dout_bf16 + row * D) + part);
      const uint32_t ow[4] = {o.x, o.y, o.z, o.w}, gw[4] = {g.x, g.y, g.z, g.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        acc = fmaf(__uint_as_float(ow[k] << 16), __uint_as_float(gw[k] << 16), acc);
        acc = fmaf(__uint_as_float(ow[k] & 0xFFFF0000u), __uint_as_float(gw[k] & 0xFFFF0000u), acc);
      }
    }
#pragma unroll
    for (int o = kTpr / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xFFFFFFFFu, acc, o);
    if (part == 0 && s < sq.len) p.delta[bh * p.seqlen_q + s] = acc;
  }
}

// ---- prep: the FP8 operands the main loops stream -> bf16 workspace, once; delta; the fused
// path's dQ accumulator zeroed ---------------------------------------------------------------------
// blockIdx.z picks the slice (kAttnBwdPrepSlices*: the operand, the zeroing or delta), blockIdx.y
// the (b, h) of its side, blockIdx.x a block of 64 positions of S_pad. Positions past the sequence are
// written as zeros.
enum PrepSlice { kPrepQ, kPrepDO, kPrepK, kPrepV, kPrepQt, kPrepDOt, kPrepKt, kPrepZeroDq, kPrepDelta };

template <int D, bool kF8 = false>
__device__ __forceinline__ void prep_block(const P& p, uint32_t bx, uint32_t by, uint32_t bz) {
  __shared__ alignas(1024) uint8_t tile[D * 128];
  // Two-kernel path: z = 0..6 the operands, 7 delta. The fused path (dq_acc set) leaves K, V and
  // K_col to the dK/dV kernel: z = 0..5 are Q, dO, Q_col, dO_col, the zeroing, delta; kF8: Q and dO
  // as E4M3 rescaled per tile (f8_rows), Q_col and dO_col as the FP8 dK and dV products' E4M3 tiles
  // (f8_col_tile). The exact fallback behind the FP8 kernels (f8_mode 2) does nothing unless their
  // flag is up, and then z = 0..4: Q, dO, Q_col, dO_col to bf16 and the dQ accumulator and its
  // counters reset (the other slices' results are the FP8 run's, unchanged).
  const int z = static_cast<int>(bz);
  static_assert(kPrepQt == 4 && kPrepDOt == 5 && kPrepZeroDq == 7 && kPrepDelta == 8 &&
                    kAttnBwdPrepSlicesFused == 6 && kAttnBwdPrepSlicesFallback == 5,
                "slice maps");
  // kF8: the zeroing and delta first (z = 0, 1), then Q, dO, Q_col, dO_col, which wait for the
  // column-factor kernel before them (a programmatic launch: it also clears the flag they may raise).
  const int op = p.f8_mode == 2 ? (z < 2 ? z : z < 4 ? z + 2 : kPrepZeroDq)
                 : kF8         ? (z < 2 ? kPrepZeroDq + z : z < 4 ? z - 2 : z)
                 : p.dq_acc    ? (z < 2 ? z : z < 4 ? z + 2 : z + 3)
                               : (z == 7 ? kPrepDelta : z);
  if (kF8 && op < kPrepZeroDq) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (op == kPrepDelta) {
    const int64_t bh = by, s0 = static_cast<int64_t>(bx) * kStep;
    if (bh < p.batch * p.heads_q) delta_rows<D>(p, bh, s0);
    return;
  }
  if (op == kPrepZeroDq) {
    // Fused-dQ path: zero the fp32 dQ accumulator tiles of q step s0/64 of (b, q head) by
    // (64 x D values, contiguous in the accumulator's layout).
    const int64_t bh = by, s0 = static_cast<int64_t>(bx) * kStep;
    if (bh >= p.batch * p.heads_q || s0 >= p.sq_pad) return;
    float4* dst = reinterpret_cast<float4*>(p.dq_acc + (bh * p.sq_pad + s0) * D);
    for (int u = threadIdx.x; u < kStep * D / 4; u += kAttnBwdPrepThreads) dst[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (threadIdx.x == 0)
      p.dq_cnt[bh * (p.sq_pad / kStep) + s0 / kStep] = -dq_contributors(p, bh / p.heads_q, s0 / kStep);
    return;
  }
  const bool q_side = op == kPrepQ || op == kPrepDO || op == kPrepQt || op == kPrepDOt;
  const int64_t H = q_side ? p.heads_q : p.heads_kv;
  const int64_t bh = by;
  const int64_t spad = q_side ? p.sq_pad : p.skv_pad;
  const int64_t s0 = static_cast<int64_t>(bx) * kStep;
  if (bh >= p.batch * H || s0 >= spad) return;
  const int64_t b = bh / H, h = bh % H;
  const Seq sq = seq_of(p, q_side, b, h);
  const uint8_t* data;
  const uint8_t* sc;
  uint16_t* out;
  switch (op) {
    case kPrepQ: data = p.q, sc = p.q_sc, out = p.w_q; break;
    case kPrepDO: data = p.dout, sc = p.dout_sc, out = p.w_do; break;
    case kPrepK: data = p.k, sc = p.k_sc, out = p.w_k; break;
    case kPrepV: data = p.v, sc = p.v_sc, out = p.w_v; break;
    case kPrepQt: data = p.qt, sc = p.qt_sc, out = p.w_qt; break;
    case kPrepDOt: data = p.doutt, sc = p.doutt_sc, out = p.w_dot; break;
    default: data = p.kt, sc = p.kt_sc, out = p.w_kt; break;
  }
  if (kF8 && op <= kPrepDO) {
    if constexpr (kF8)
      f8_rows<D>(p, data, sc, reinterpret_cast<uint8_t*>(out), op == kPrepQ ? p.f8_qf : p.f8_dof, sq, bh, spad, s0);
  } else if (kF8 && (op == kPrepQt || op == kPrepDOt)) {
    if constexpr (kF8)
      f8_col_tile<D>(p, tile, data, sc, reinterpret_cast<uint8_t*>(out), op == kPrepQt ? p.f8_qtc : p.f8_dotc, sq, bh,
                     s0);
  } else if (op <= kPrepV) {
    // [S_pad][D] rows: 8 elements per unit, 16-byte coalesced stores.
    constexpr int kUnitsPerRow = D / 8;
    for (int u = threadIdx.x; u < kStep * kUnitsPerRow; u += kAttnBwdPrepThreads) {
      const int r = u / kUnitsPerRow, c8 = u % kUnitsPerRow;
      const int64_t s = s0 + r;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (s < sq.len) {
        const int64_t row = sq.base + s * sq.step;
        const uint2 raw = __ldg(reinterpret_cast<const uint2*>(data + row * D + c8 * 8));
        v = dequant8(raw, dev::ue8m0_to_f32(__ldg(sc + d_scale_off(p, row, c8 / 4))));
      }
      *reinterpret_cast<uint4*>(out + (bh * spad + s) * D + c8 * 8) = v;
    }
  } else {
    // [D][S_pad]: dequantize the transposed 64-position tile in shared memory, then write 128-byte rows.
    const int64_t entry = bh * (q_side ? p.q_s_entry : p.kv_s_entry);
    const int64_t ld = q_side ? p.q_s_scale_ld : p.kv_s_scale_ld;
    load_col_tile<D>(tile, data, sc, entry, ld, p.swizzled != 0, sq, s0, threadIdx.x);
    __syncthreads();
    for (int u = threadIdx.x; u < D * 8; u += kAttnBwdPrepThreads) {
      const int d = u >> 3, c = u & 7;
      *reinterpret_cast<uint4*>(out + (bh * D + d) * spad + s0 + c * 8) =
          *reinterpret_cast<const uint4*>(tile + ptx::sw128_offset(static_cast<uint32_t>(d), static_cast<uint32_t>(c)));
    }
  }
}

// The prep grid's blocks; behind the FP8 kernels (f8_mode 2, z = kAttnBwdPrepSlicesFallback slices)
// a grid of a few blocks per SM that does nothing unless the flag is up, and then walks the blocks
// (a barrier between blocks: the Q_col slice's tile in shared memory): a full grid of blocks that
// return at once took ~30 us.
template <int D, bool kF8 = false>
__device__ __forceinline__ void prep_body(const P& p) {
  if (kF8 || p.f8_mode != 2) {
    prep_block<D, kF8>(p, blockIdx.x, blockIdx.y, blockIdx.z);
    return;
  }
  if (!f8_flag_up(p)) return;  // final by then
  const uint32_t gx = static_cast<uint32_t>(p.sq_pad / kStep), gy = static_cast<uint32_t>(p.batch * p.heads_q);
  for (uint32_t v = blockIdx.x; v < gx * gy * kAttnBwdPrepSlicesFallback; v += gridDim.x) {
    prep_block<D, false>(p, v % gx, (v / gx) % gy, v / (gx * gy));
    __syncthreads();
  }
}

// ---- fused-dQ post pass: the fp32 dQ workspace -> bf16 dQ in the output layout ----------------
// The workspace holds, per (b, q head), 64-row q step and 64-column panel of D, one 64 x 64 fp32
// tile in the accumulator's fragment order (what the dK/dV kernel's bulk reductions add): float4
// unit u = (w * 8 + j) * 32 + l holds rows 16w + l/4 and 16w + l/4 + 8, columns 8j + 2(l%4) + 0/1.
template <int D>
__device__ __forceinline__ void dq_post_tile(const P& p, uint32_t bx, uint32_t by, uint32_t bz) {
  constexpr int kPanels = D / 64;
  const int64_t b = bz, h = by;
  const int64_t qs = bx / kPanels, panel = bx % kPanels;
  const Seq sq = seq_of(p, true, b, h);
  if (qs * kStep >= sq.len) return;
  // A programmatic dependent of the dK/dV kernel: it starts once every CTA of that kernel has started
  // (so none waits for an SM this one holds) and converts each tile as soon as its counter reaches 0.
  const int64_t tile = (b * p.heads_q + h) * (p.sq_pad / kStep) + qs;
  // Behind an FP8 kernel (f8_mode 1): a raised flag ends the wait (CTAs that saw it did not add; the
  // exact kernels redo the call).
  __shared__ int abandon;
  // (The wait is bounded, ~16 s: a miscount would show as wrong dQ in the tests rather than a hang.)
  if (threadIdx.x == 0) {
    uint32_t ns = 256;
    bool up = false;
    for (uint32_t polls = 0; ld_acquire_gpu(p.dq_cnt + tile) != 0 && polls < (1u << 22); ++polls) {
      if (p.f8_mode == 1 && f8_flag_up(p)) {
        up = true;
        break;
      }
      __nanosleep(ns);
      ns = ns < 4096 ? 2 * ns : ns;
    }
    abandon = up;
  }
  __syncthreads();
  if (abandon) return;
  const float4* src = reinterpret_cast<const float4*>(p.dq_acc) + (tile * kPanels + panel) * 1024;
  // Behind the FP8 kernel: dQ's K_col' was rescaled per column d (f8_ktc of the (b, kv head)).
  const float* fk = p.f8_mode == 1 ? p.f8_ktc + (b * p.heads_q + h) / p.group * D : nullptr;
#pragma unroll
  for (int k = 0; k < 1024 / kAttnBwdPostThreads; ++k) {
    const int u = static_cast<int>(threadIdx.x) + k * kAttnBwdPostThreads;
    const int w = u >> 8, j = (u >> 5) & 7, l = u & 31;
    float4 v = __ldcg(src + u);  // L2: other SMs' reductions
    const int64_t r = qs * kStep + 16 * w + (l >> 2);
    const int64_t col = panel * 64 + 8 * j + 2 * (l & 3);
    if (fk) {
      const float2 f = *reinterpret_cast<const float2*>(fk + col);
      v = make_float4(v.x * f.x, v.y * f.y, v.z * f.x, v.w * f.y);
    }
    if (r < sq.len)
      *reinterpret_cast<uint32_t*>(p.dq + (sq.base + r * sq.step) * D + col) = dev::f32x2_to_bf16x2(v.x, v.y);
    if (r + 8 < sq.len)
      *reinterpret_cast<uint32_t*>(p.dq + (sq.base + (r + 8) * sq.step) * D + col) = dev::f32x2_to_bf16x2(v.z, v.w);
  }
}
// The post pass's blocks; behind the FP8 kernels (f8_mode 2, launched after the exact dK/dV kernel,
// not as its dependent) a grid of a few blocks per SM that does nothing unless the flag is up, and
// then walks the tiles (a full grid of blocks that return at once took ~20 us).
template <int D>
__device__ __forceinline__ void dq_post_body(const P& p) {
  if (p.f8_mode != 2) {
    dq_post_tile<D>(p, blockIdx.x, blockIdx.y, blockIdx.z);
    return;
  }
  if (!f8_flag_up(p)) return;  // final by then
  const uint32_t gx = static_cast<uint32_t>((p.seqlen_q + kStep - 1) / kStep * (D / 64));
  const uint32_t gy = static_cast<uint32_t>(p.heads_q), n = gx * gy * static_cast<uint32_t>(p.batch);
  for (uint32_t v = blockIdx.x; v < n; v += gridDim.x) {
    dq_post_tile<D>(p, v % gx, (v / gx) % gy, v / (gx * gy));
    __syncthreads();  // `abandon` is written again by the next tile
  }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- dK / dV (kFused: and dQ's contribution of the CTA's kv block, by fp32 reductions) -----------
// The fused form (non-deterministic: reductions land in any order) adds to each step, after dK is
// issued: dS^T quantized along s_kv (col_block_exponents / col_quant_store, a pair-of-warps exchange
// through shared memory), stored as bf16 into a dS^T tile, and dQ(64 q x D) += dS|kv K_col over the
// CTA's 128 kv rows as one more wgmma chain (A = the dS^T tile read transposed, B = the resident
// K_col^T), added into the fp32 dQ workspace by TMA bulk reductions (dq_stage, the reducer thread:
// full/empty mbarriers per staging tile). The next step's S^T (D = 64: and dP^T) is issued while dQ
// runs, once dK has retired. dS^T goes to shared memory by stmatrix. D = 128: warpgroup wg
// computes dQ's 64 columns 64 wg..64 wg+63 over both warpgroups' kv rows (N split: the dS^T tile is
// shared, so a named barrier waits for both halves); its tile is the stage's Q tile (16 KiB, read
// only by S^T: a barrier per warpgroup half waits for the other warpgroup's S^T before it is
// overwritten; the stage is released after dQ). D = 64: each warpgroup reduces its own kv rows'
// product over all 64 columns (K split: no cross-warpgroup barrier; twice the reductions), from
// its own dS^T tile per stage. kF8 (D = 128): dQ's E4M3 A tile sits in the free upper half of the
// stage's Q' slot (ds_f8_tile) and the staging tiles in the free halves of the K and V tiles,
// so no guard barrier precedes the dS write and the stage's release does not wait for the reducer.
// kRegKs: S^T's and dP^T's first kRegKs k steps take the resident K and V rows from registers (A
// fragments read once from the tiles), the rest from shared memory.
// kF8 (fused, D = 128): S^T = K' Q'^T and dP^T = V' dO'^T on FP8 wgmma (m64n64k32): K', V' rescaled
// within E4M3 per kv row here (load_row_tiles2_f8), Q', dO' per 64-query tile by the prep; the row
// factors and the tile's fold into P's exponent argument and into dP - delta (front). dV and dK on
// FP8 wgmma too (m64n128k32, A from registers): Pq's E4M3 codes, and dS^T's against a running
// exponent per kv row (ds_rows_to_f8), over the prep's Q_col' and dO_col' (per-column factors, applied
// in the epilogue with the rows'). dQ on FP8 wgmma (m64n64k32, both from shared memory): dS quantized
// per query column against one exponent over the CTA's 128 kv rows into an E4M3 A tile (dq_issue),
// K_col' rescaled per column d (load_col_tile_f8); each dQ row times its 2^(E - 127) in dq_store, the
// column factors in the post pass. Does nothing once the call's flag is up
// (the prep raised it, or another CTA's K or V rows or dS did): the exact kernels behind redo the call.
template <int D, bool kFused, int kRegKs = 0, bool kF8 = false>
__device__ __forceinline__ void dkv_body(const P& p) {
  // Fused: the post pass (a programmatic dependent) may launch once every CTA has started; it waits
  // on the tile counters, not on this grid's completion.
  if constexpr (kFused) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  static_assert(!kF8 || (kFused && D == 128 && kRegKs == 0), "FP8 S^T, dP^T: the fused D = 128 kernel");
  if constexpr (kF8) {
    // Another CTA may raise the flag meanwhile: one read, shared, so that the CTA returns as a whole.
    __shared__ uint32_t up;
    if (threadIdx.x == 0) up = f8_flag_up(p);
    __syncthreads();
    if (up) return;
  } else if (p.f8_mode == 2 && !f8_flag_up(p)) {  // the flag is final by then
    return;
  }
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  constexpr int kRowTile = kRows * D * 2, kStepTile = kStep * D * 2;
  constexpr bool kDsInStage = kStepTile >= kAttnBwdDsTile;  // D = 128: dS^T over the stage's Q tile
  // Fused: what of step it+1 goes out behind dQ(it) (dK retired): D = 128 S^T only (registers), D = 64 S^T and dP^T.
  [[maybe_unused]] constexpr bool kEarlyDp = !kDsInStage;
  // Fused, D = 64 (docs/PERFORMANCE.md, "Ninth session"): P by ex2.approx.ftz (a P below 2^-126 is 0,
  // docs/NUMERICS.md; 3 fewer instructions per entry than ex2.approx's subnormal fix-up), and
  // warpgroup 1 starts once warpgroup 0 has finished its first P^T and dS^T (barrier 9), so that the
  // two warpgroups, which share nothing but the stages, run out of phase: one's elementwise work
  // overlaps the other's products. D = 128 gained nothing from either (its warpgroups meet at the dS^T
  // barrier every step, and a ping-pong order around it was slower).
  constexpr bool kD64Fused = kFused && !kDsInStage;
  // P for dV comes from ex2.approx.ftz on the two-kernel D = 128 path as well (measured +1-2% there,
  // -1% on the fused D = 128 path; docs/PERFORMANCE.md, eighteenth session; NUMERICS.md: same Pq).
  constexpr bool kFtzP = kD64Fused || (kDsInStage && !kFused);
  // P * p_scale comes straight from the exponential (log2(p_scale) subtracted from LSE once per lane),
  // so Pq needs no multiply; dS^T is kept as P * p_scale * (dP - delta) and the factor
  // softmax_scale / p_scale (p.ds_scale) is folded into both of its quantizations: the block maximum
  // is multiplied by it, and each element once by ds_scale * 2^(127-E), whose bits are an integer
  // subtraction (mx_rows_to_frags). Outside ds_scale in [2^-119, 2) (p.ds_fold == 0) every block
  // takes the exact form, which multiplies each element by ds_scale first.
  uint8_t* k_tile = smem;
  uint8_t* v_tile = k_tile + kRowTile;
  uint8_t* stage0 = v_tile + kRowTile;  // per stage: Q, dO, Q_col^T, dO_col^T (bf16)
  uint8_t* kc_tile = stage0 + kStages * 4 * kStepTile;  // fused: K_col^T, [2 panels of 64 kv][D][64] bf16
  uint8_t* ds_area = kc_tile + (kFused ? kRowTile : 0);  // fused, D = 64: a dS^T tile per stage
  // fused, D = 64: 64 x 64 fp32 dQ staging tiles, two per warpgroup (D = 128 stages in the stage's dO tiles)
  uint8_t* stg_area = ds_area + (kFused && !kDsInStage ? kStages * kAttnBwdDsTile : 0);
  uint32_t* xch = reinterpret_cast<uint32_t*>(stg_area + (kFused && !kDsInStage ? 4 * kAttnBwdDqTileBytes : 0));
  uint64_t* full = reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(xch) + (kFused ? 1024 : 0));  // [kStages]
  uint64_t* empty = full + kStages;                                                                     // [kStages]
  [[maybe_unused]] uint64_t* dq_full = empty + kStages;   // [buffer][warpgroup]: staging tile written
  [[maybe_unused]] uint64_t* dq_empty = dq_full + 4;     // [buffer][warpgroup]: its bulk read done (D = 64, kF8)
  // kF8: the row factors of K' and V' as bf16 (powers of two), after the mbarriers.
  [[maybe_unused]] uint16_t* fkv = reinterpret_cast<uint16_t*>(dq_empty + 4);  // [2][kRows]
  // Staging tile of the fp32 dQ product of buffer (step parity) buf and warpgroup g. kF8: one per
  // warpgroup outside the stage, in the second half of the K (warpgroup 0) and V tiles (K' and V'
  // take the first), so that the stage's release does not wait for the reducer's bulk read.
  constexpr bool kOwnStg = !kDsInStage || kF8;
  [[maybe_unused]] auto stg_tile = [&](int buf, int g) -> uint8_t* {
    if constexpr (kF8) return (g == 0 ? k_tile : v_tile) + kRows * D;
    else if constexpr (kDsInStage) return stage0 + buf * 4 * kStepTile + (g == 0 ? 1 : 3) * kStepTile;
    else return stg_area + (buf * 2 + g) * kAttnBwdDqTileBytes;
  };

  const int tid = threadIdx.x;
  // The grid's order: (kv block, kv head, batch entry), head-major; with p.cta_heads > 1 (causal masks)
  // (pair within a chunk, kv block, chunk of cta_heads (b, kv head) pairs), kv-block-major within a chunk,
  // so that every chunk's longest walks start first and its shortest end it (docs/PERFORMANCE.md,
  // twenty-fifth session; the last chunk's missing pairs return). Both from the block indices alone, so
  // that the compiler can recompute them rather than hold them.
  const bool chunked = p.cta_heads > 1;
  const int64_t kb = chunked ? blockIdx.y : blockIdx.x;
  const uint32_t bhk32 = chunked ? blockIdx.z * gridDim.x + blockIdx.x : blockIdx.z * gridDim.y + blockIdx.y;  // < 2^16
  if (bhk32 >= static_cast<uint32_t>(p.batch * p.heads_kv)) return;
  const uint32_t b32 = bhk32 / static_cast<uint32_t>(p.heads_kv);
  const int64_t bhk = bhk32, b = b32, hk = bhk32 - b32 * static_cast<uint32_t>(p.heads_kv);
  const int64_t j0 = kb * kRows;
  const Seq kvs = seq_of(p, false, b, hk);
  if (j0 >= kvs.len) return;  // varlen: past this sequence (uniform over the CTA)
  const int64_t lq = seq_of(p, true, b, 0).len, lk = kvs.len;
  const int64_t off = p.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0;
  const int64_t nqb = (lq + kStep - 1) / kStep;
  int64_t qb_first = 0;
  if (p.mask != MXQ_ATTN_MASK_NONE) qb_first = j0 - off > 0 ? (j0 - off) / kStep : 0;
  const int64_t per_head = nqb > qb_first ? nqb - qb_first : 0;
  const int64_t n_iters = per_head * p.group;

  // The stages' full/empty rings (fused: and the dQ staging tiles'), set up by thread 0.
  auto init_barriers = [&] {
    if constexpr (kFused) {
      // D = 128 (not kF8): the reducer thread releases a stage too (its staging tiles are in it).
      ptx::mbar_init_ring(full, empty, kStages, 1, kMathThreads + (kDsInStage && !kF8 ? 1 : 0));
      ptx::mbar_init_ring(dq_full, dq_empty, 4, 128, 1);
    } else {
      ptx::mbar_init_ring(full, empty, kStages, 1, kMathThreads);
    }
  };
  // kF8: the barriers first, so that the TMA thread issues the first stages' loads before it joins
  // the dequantization below (they used to wait for it: ~1.5-2 us per CTA, docs/PERFORMANCE.md,
  // twenty-third session).
  [[maybe_unused]] int pre = 0;  // kF8: steps whose loads are issued here
  if constexpr (kF8) {
    if (tid == 0) init_barriers();
    __syncthreads();
    pre = n_iters < kStages ? static_cast<int>(n_iters) : kStages;
    if (tid == kMathThreads) {
      const int32_t sq_pad = static_cast<int32_t>(p.sq_pad);
      const int32_t bh0 = static_cast<int32_t>(bhk * p.group), qb0 = static_cast<int32_t>(qb_first);
      const uint32_t stage_s = ptx::smem_addr(stage0), bar_s = ptx::smem_addr(full);
      for (int it = 0; it < pre; ++it) {  // step it: q block qb0 + it % per_head of head bh0 + it / per_head
        const int32_t h = it / static_cast<int32_t>(per_head), qb = qb0 + it % static_cast<int32_t>(per_head);
        tma_stage_f8<D>(p, stage_s + it * 4 * kStepTile, bar_s + 8 * it, qb * kStep, (bh0 + h) * sq_pad + qb * kStep,
                     (bh0 + h) * D);
      }
    }
  }
  // kF8: K' and V' take the first 16 KiB of their tiles (dQ's staging the second), their row factors fkv.
  if constexpr (kFused) {
    // Resident K, V and K_col^T (two 64-position panels) dequantized here from the FP8 inputs, all
    // 384 threads (the prep kernel converts only the q side on this path): about 1/40 of a step's
    // loads, against 3 of the prep's 7 operands (docs/PERFORMANCE.md, twenty-first session).
    if constexpr (kF8)
      load_row_tiles2_f8<kRows, D, kThreads>(k_tile, v_tile, fkv, fkv + kRows, p.k, p.k_sc, p.v, p.v_sc, p, kvs, j0,
                                             tid);
    else
      load_row_tiles2<kRows, D, kThreads>(k_tile, v_tile, p.k, p.k_sc, p.v, p.v_sc, p, kvs, j0, tid);
    if constexpr (kF8) {
      load_col_tile_f8<D>(kc_tile, p, kvs, bhk, j0, tid);
    } else {
      const int pn = tid / D;
      if (pn < 2)
        load_col_tile<D>(kc_tile + pn * (D * 128), p.kt, p.kt_sc, bhk * p.kv_s_entry, p.kv_s_scale_ld,
                         p.swizzled != 0, kvs, j0 + 64 * pn, tid - pn * D);
    }
  } else {
    // Resident K and V from the bf16 workspace, all 384 threads.
    copy_rows<kRows, D, kThreads>(k_tile, p.w_k + (bhk * p.skv_pad + j0) * D, tid);
    copy_rows<kRows, D, kThreads>(v_tile, p.w_v + (bhk * p.skv_pad + j0) * D, tid);
    ptx::cp_async_commit();
  }
  if (!kF8 && tid == 0) init_barriers();
  ptx::cp_async_wait<0>();
  ptx::fence_proxy_async_shared();
  __syncthreads();

  if (tid >= kMathThreads) {
    // ---- producer warpgroup (24 registers, so 32-bit state only: shared addresses, TMA coordinates
    // and step counters advanced incrementally; step it is q block qb_first + it % per_head of query
    // head hk * group + it / per_head; loops not unrolled: with the reducer's loop next to the TMA
    // loop, 64-bit state or the compiler's 4x unrolling spilled 100-200 bytes) ----
    const int n_it = static_cast<int>(n_iters), ph32 = static_cast<int>(per_head);
    const int32_t bh0 = static_cast<int32_t>(bhk * p.group), qb0 = static_cast<int32_t>(qb_first);
    const uint32_t stage_s = ptx::smem_addr(stage0), bar_s = ptx::smem_addr(full);  // full, empty, dq_full, dq_empty
    ptx::setmaxnreg_dec<24>();
    if constexpr (kFused) {
      // ---- dQ reducer: one thread of producer warp 1. The math warpgroups hand over each step's
      // staged fp32 dQ tiles through dq_full (128 arrivals each, no waiting on their side); it issues
      // one bulk reduce-add per tile, waits until both tiles have been read and releases them: at
      // D = 128 by arriving on the stage's empty barrier (the staging tiles are in the stage), at
      // D = 64 on dq_empty (the math warps wait for it two steps later, before the next write).
      if (tid == kMathThreads + 32) {
        constexpr int kTile = (D / 64) * 4096;  // floats per 64-row q step of the accumulator
        const int qsteps = static_cast<int>(p.sq_pad / kStep);
        float* dst = p.dq_acc + (static_cast<int64_t>(bh0) * qsteps + qb0) * kTile;
        const int64_t skip = static_cast<int64_t>(qsteps - ph32) * kTile;  // to the next head's first q block
        // stg_tile(buf, g) = stg0 + buf * dstg + g * dwg
        const uint32_t stg0 = kF8          ? ptx::smem_addr(k_tile) + kRows * D
                              : kDsInStage ? stage_s + kStepTile
                                           : stage_s + static_cast<uint32_t>(stg_area - stage0);
        constexpr uint32_t dstg = kF8 ? 0u : kDsInStage ? 4 * kStepTile : 2 * kAttnBwdDqTileBytes;
        constexpr uint32_t dwg = kF8 ? kRowTile : kDsInStage ? 2 * kStepTile : kAttnBwdDqTileBytes;
        const uint32_t dqf = bar_s + 16 * kStages, dqe = dqf + 32;  // dq_full[4], dq_empty[4]
        // The tile counter of step it (index bh * qsteps + q block, advanced like dst), and that of
        // the step before, whose reductions are complete once this step's are read.
        int32_t tile = bh0 * qsteps + qb0, tile_prev = 0;
#pragma unroll 1
        for (int it = 0, qi = 0; it < n_it; ++it) {
          const int buf = it & 1;
          const uint32_t ph = static_cast<uint32_t>(it >> 1) & 1u;
          const uint32_t s0 = stg0 + (buf ? dstg : 0u);
#pragma unroll
          for (int g = 0; g < 2; ++g) {
            ptx::mbar_wait(dqf + (buf * 2 + g) * 8, ph);
            bulk_reduce_add_f32(dst + (kDsInStage ? g * 4096 : 0), s0 + (g ? dwg : 0u), kAttnBwdDqTileBytes);
          }
          ptx::bulk_commit_group();
          ptx::bulk_wait_group_read<0>();
          if constexpr (!kOwnStg) {
            ptx::mbar_arrive(bar_s + 8 * (kStages + buf));  // empty[buf]
          } else {
            ptx::mbar_arrive(dqe + buf * 16);
            ptx::mbar_arrive(dqe + buf * 16 + 8);
          }
          if (it > 0) {
            ptx::bulk_wait_group<1>();  // step it-1's reductions complete
            dq_tile_done(p.dq_cnt + tile_prev);
          }
          tile_prev = tile;
          dst += kTile, ++tile;
          if (++qi == ph32) qi = 0, dst += skip, tile += qsteps - ph32;
        }
        ptx::bulk_wait_group<0>();  // before the CTA's shared memory goes away
        if (n_it > 0) dq_tile_done(p.dq_cnt + tile_prev);
      }
    }
    if (tid == kMathThreads) {
      ptx::tma_prefetch_desc(p.tmap_q);
      ptx::tma_prefetch_desc(p.tmap_do);
      ptx::tma_prefetch_desc(p.tmap_qt);
      ptx::tma_prefetch_desc(p.tmap_dot);
      const int32_t i0_first = qb0 * kStep, sq_pad = static_cast<int32_t>(p.sq_pad);
      int32_t i0 = i0_first, qrow = bh0 * sq_pad + i0_first, drow = bh0 * D;
      int it = 0, qi = 0;
      if constexpr (kF8) {  // the first `pre` steps went out before the dequantization
        for (; it < pre; ++it) {
          i0 += kStep, qrow += kStep;
          if (++qi == ph32) qi = 0, i0 = i0_first, qrow += sq_pad - ph32 * kStep, drow += D;
        }
      }
#pragma unroll 1
      for (; it < n_it; ++it) {
        const int st = it & 1;
        const uint32_t fb = bar_s + 8 * st, stg = stage_s + st * 4 * kStepTile;
        ptx::mbar_wait(fb + 8 * kStages, static_cast<uint32_t>((it >> 1) & 1) ^ 1u);  // empty[st]
        if constexpr (kF8) {
          tma_stage_f8<D>(p, stg, fb, i0, qrow, drow);
        } else {
          ptx::mbar_arrive_expect_tx(fb, 4 * kStepTile);
#pragma unroll
          for (int pn = 0; pn < D / 64; ++pn) {
            ptx::tma_load_2d(stg + pn * (kStep * 128), p.tmap_q, 64 * pn, qrow, fb);
            ptx::tma_load_2d(stg + kStepTile + pn * (kStep * 128), p.tmap_do, 64 * pn, qrow, fb);
          }
          ptx::tma_load_2d(stg + 2 * kStepTile, p.tmap_qt, i0, drow, fb);
          ptx::tma_load_2d(stg + 3 * kStepTile, p.tmap_dot, i0, drow, fb);
        }
        i0 += kStep, qrow += kStep;
        if (++qi == ph32) qi = 0, i0 = i0_first, qrow += sq_pad - ph32 * kStep, drow += D;
      }
    }
    return;
  }

  // ---- math warpgroups: 64 kv rows each ----
  ptx::setmaxnreg_inc<kFused ? 240 : 232>();
  const int wg = tid >> 7, t = tid & 127, w = t >> 5, l = t & 31;
  const int r0 = 16 * w + (l >> 2);
  const int64_t jw = j0 + wg * 64;  // the warpgroup's first kv row
  const int64_t ja = jw + r0, jb = ja + 8;  // the thread's two kv positions
  const uint32_t k_addr = ptx::smem_addr(k_tile) + wg * 64 * 128;
  const uint32_t v_addr = ptx::smem_addr(v_tile) + wg * 64 * 128;
  const int lim_k = clamp32(lk - jw);
  const bool causal = p.mask != MXQ_ATTN_MASK_NONE;
  const float scale_log2 = p.scale_log2;
  // kF8: the row factors of the thread's two kv rows, read from shared memory at each step (four
  // registers held across the loop made ptxas spill).
  [[maybe_unused]] const uint16_t* fk_a = fkv + wg * 64 + r0;
  [[maybe_unused]] const uint16_t* fv_a = fkv + kRows + wg * 64 + r0;
  auto bf = [](uint16_t h) { return __uint_as_float(static_cast<uint32_t>(h) << 16); };
  float dk[D / 2], dv[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.0f;
  // Fused dQ: named barriers 1-4 pair the warps (2k, 2k+1) of each warpgroup for the exponent
  // exchange; D = 128: 5 + w guards warpgroup w's half of the stage's Q tile (its S^T readers arrive,
  // warpgroup w syncs before writing dS^T there), 7 waits for the whole dS^T tile (256 threads);
  // D = 64: 7 + wg for the warpgroup's own tile (128 threads), 9 once for the warpgroups' start offset.
  [[maybe_unused]] const int bar_pair = 1 + 2 * wg + (w >> 1);
  [[maybe_unused]] const int bar_ds = kDsInStage ? 7 : 7 + wg;
  [[maybe_unused]] constexpr int kDsThreads = kDsInStage ? 256 : 128;
  [[maybe_unused]] uint32_t* xch_mine = xch + (wg * 4 + w) * 32 + l;
  [[maybe_unused]] uint32_t* xch_partner = xch + (wg * 4 + (w ^ 1)) * 32 + l;
  [[maybe_unused]] const uint32_t kc_lo0 = ptx::smem_desc_sw128_lo(ptx::smem_addr(kc_tile));

  // Pipeline per warpgroup (commit groups retire in order). Each loop body finishes step it and
  // starts step it+1: dV and dK of step it are issued, S^T of step it+1 as soon as dV is done (its
  // A registers free), dP^T of step it+1 once dK is done (the stage free), and P^T, dS^T of step
  // it+1 are computed while dP^T runs. Nothing is in flight across the loop's back edge, which
  // ptxas needs to keep the wgmmas asynchronous.
  float s[32], dp[32];
  // dK's A fragments: bf16, 4 k16 steps; kF8: E4M3, 2 k32 steps (ds_rows_to_f8), against the running
  // scale exponents ra of the thread's two kv rows.
  // Pq's (dV's) likewise: kF8 packs E4M3(P * p_scale) straight into 8-bit fragments (front).
  constexpr int kFragKs = kF8 ? 2 : 4;  // k steps of pa and da
  uint32_t pa[kFragKs][4], da[kFragKs][4];
  [[maybe_unused]] uint32_t ra[2] = {0u, 0u};
  auto stage_addr = [&](int64_t it) { return ptx::smem_addr(stage0 + static_cast<int>(it & 1) * 4 * kStepTile); };
  uint32_t kf[kRegKs > 0 ? kRegKs : 1][4], vf[kRegKs > 0 ? kRegKs : 1][4];
  if constexpr (kRegKs > 0) {
    const uint32_t row = static_cast<uint32_t>(wg * 64 + r0);
#pragma unroll
    for (int ks = 0; ks < kRegKs; ++ks) {
      const int panel = (ks >> 2) * (kRows * 128);
      ptx::lds_a_frag_sw128(k_tile + panel, row, ks, l, kf[ks]);
      ptx::lds_a_frag_sw128(v_tile + panel, row, ks, l, vf[ks]);
    }
  }
  auto issue_s = [&](int64_t it) {
    ptx::mbar_wait(&full[it & 1], static_cast<uint32_t>((it >> 1) & 1));
    ptx::wgmma_fence();
    if constexpr (kF8) issue_product_f8(s, k_addr, stage_addr(it));
    else issue_product_over_d<D, kRegKs>(s, k_addr, stage_addr(it), kf);
    ptx::wgmma_commit();
  };
  auto issue_dp = [&](int64_t it) {
    ptx::wgmma_fence();
    if constexpr (kF8) issue_product_f8(dp, v_addr, stage_addr(it) + kStepTile);
    else issue_product_over_d<D, kRegKs>(dp, v_addr, stage_addr(it) + kStepTile, vf);
    ptx::wgmma_commit();
  };
  // With S^T and dP^T of step it issued: P^T, dS^T (fp32, in dp) and Pq (bf16 fragments, in pa).
  // LSE and delta of a step's 64 queries, read by the math warps straight from global memory
  // (nothing in shared memory to order against the producer): lane l loads columns l and l + 32 (written
  // at the top of the previous step's body; ptxas places them among the S^T wgmmas of their step:
  // pinning them earlier with volatile loads measured the same), and the entries a thread needs
  // come from its warp by shuffles. LSE is kept unscaled until used.
  struct Ld {
    float lse_lo, lse_hi, dlt_lo, dlt_hi;
    float fq, fdo;  // kF8: the factors of the step's Q' and dO' tiles
  };
  // A step's position, advanced incrementally (a division per step cost ~40 instructions per warp):
  // its first query row i0 and its (batch, q head) bh; step it is q block qb_first + it % per_head
  // of query head hk * group + it / per_head.
  struct Pos {
    int64_t i0, bh;
  };
  const int64_t i0_first = qb_first * kStep, i0_end = nqb * kStep;
  auto next_pos = [&](Pos ps) {
    ps.i0 += kStep;
    const bool wrap = ps.i0 >= i0_end;
    ps.i0 = wrap ? i0_first : ps.i0;
    ps.bh += wrap ? 1 : 0;
    return ps;
  };
  auto load_ld = [&](const Pos& ps) {
    const int64_t i0 = ps.i0, bh = ps.bh;
    const float* lse_g = p.lse + bh * p.seqlen_q + i0;
    const float* dlt_g = p.delta + bh * p.seqlen_q + i0;
    const int nq = clamp32(lq - i0);
    Ld r;
    r.lse_lo = l < nq ? __ldg(lse_g + l) : 0.0f;
    r.lse_hi = l + 32 < nq ? __ldg(lse_g + l + 32) : 0.0f;
    r.dlt_lo = l < nq ? __ldg(dlt_g + l) : 0.0f;
    r.dlt_hi = l + 32 < nq ? __ldg(dlt_g + l + 32) : 0.0f;
    r.fq = r.fdo = 1.0f;
    if constexpr (kF8) {
      const int64_t tile = bh * (p.sq_pad / kStep) + i0 / kStep;
      r.fq = __ldg(p.f8_qf + tile);
      r.fdo = __ldg(p.f8_dof + tile);
    }
    return r;
  };
  // dV += Pq^T dO_col of step it (not waited for).
  auto issue_dv = [&](int64_t it) {
    ptx::wgmma_fence();
    if constexpr (kF8) {  // dO_col': 128 rows d of 64 bytes (queries), 64-byte swizzle
      const uint32_t doc = stage_addr(it) + 3 * kStepTile;
#pragma unroll
      for (int k = 0; k < 2; ++k) ptx::wgmma_e4m3_rs_n128(dv, pa[k], desc_sw64(doc + k * 32), 1);
    } else {
      const uint32_t doc_lo = ptx::smem_desc_sw128_lo(stage_addr(it) + 3 * kStepTile);
#pragma unroll
      for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dv, pa[k], desc(doc_lo, k * 32), 1);
    }
    ptx::wgmma_commit();
  };
  auto front = [&](const Pos& ps, const Ld& ld) {
    const int64_t i0 = ps.i0;
    const float lse_lo = fmaf(ld.lse_lo, kLog2e, -p.log2_p_scale);  // P * p_scale from the exponential
    const float lse_hi = fmaf(ld.lse_hi, kLog2e, -p.log2_p_scale);
    const float dlt_lo = ld.dlt_lo, dlt_hi = ld.dlt_hi;
    // kF8: S^T = S'^T * fK(row) * fQ(tile) and dP^T = dP'^T * fV(row) * fdO(tile), powers of two.
    // (The softmax scale times fQ is one power-of-two multiple of it: exact.)
    const float cq = kF8 ? scale_log2 * ld.fq : scale_log2;
    const float c_a = kF8 ? cq * bf(fk_a[0]) : scale_log2, c_b = kF8 ? cq * bf(fk_a[8]) : scale_log2;
    [[maybe_unused]] float g_a = 0.0f, g_b = 0.0f;
    if constexpr (kF8) g_a = ld.fdo * bf(fv_a[0]), g_b = ld.fdo * bf(fv_a[8]);
    // Tile-local mask: entry (row r, column c) is visible iff c < lim_q, r < lim_k and (no mask or r <= c + lim_c).
    const bool full = i0 + kStep <= lq && jw + 64 <= lk && (!causal || jw + 63 <= i0 + off);
    const int lim_q = clamp32(lq - i0), lim_c = clamp32(i0 + off - jw);
    auto visible = [&](int idx) {  // idx = 4 jj + 2 half + e
      const int col = 8 * (idx >> 2) + 2 * (l & 3) + (idx & 1), r = r0 + 8 * ((idx >> 1) & 1);
      return (col < lim_q) & (r < lim_k) & (!causal | (r <= col + lim_c));
    };
    // P^T while dP^T is still on the tensor cores: entry idx is (kv row r0 / r0+8, q column col).
    ptx::wgmma_wait<1>();
    ptx::fence_acc(s);
    if constexpr (kFused && kDsInStage && !kF8) ptx::named_barrier_arrive(5 + (wg ^ 1), 256);  // S^T read the Q tile
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = 8 * jj + 2 * (l & 3) + e;
        const float lse_l2 = __shfl_sync(0xFFFFFFFFu, jj < 4 ? lse_lo : lse_hi, col & 31);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int idx = 4 * jj + 2 * half + e;
          const float x = fmaf(s[idx], half ? c_b : c_a, -lse_l2);
          s[idx] = kFtzP ? attn::ex2_ftz(x) : ex2(x);
        }
      }
    }
    if (!full) {  // masked entries: P = 0 (a uniform branch; selects inside)
#pragma unroll
      for (int idx = 0; idx < 32; ++idx) s[idx] = visible(idx) ? s[idx] : 0.0f;
    }
    ptx::wgmma_wait<0>();
    ptx::fence_acc(dp);
    // dS^T / ds_scale = (P^T p_scale) (dP^T - delta), exactly 0 where masked whatever dP is.
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float delta = __shfl_sync(0xFFFFFFFFu, jj < 4 ? dlt_lo : dlt_hi, (8 * jj + 2 * (l & 3) + e) & 31);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int idx = 4 * jj + 2 * half + e;
          if constexpr (kF8) dp[idx] = __fmul_rn(s[idx], __fmaf_rn(dp[idx], half ? g_b : g_a, -delta));
          else dp[idx] = __fmul_rn(s[idx], __fsub_rn(dp[idx], delta));
        }
      }
    }
    if (!full) {
#pragma unroll
      for (int idx = 0; idx < 32; ++idx) dp[idx] = visible(idx) ? dp[idx] : 0.0f;
    }
    // Pq = E4M3(P * p_scale) as bf16 A fragments (kF8: as 8-bit ones).
    if constexpr (kF8) {
      pack_f8_frags(s, pa, [](float u, float v, int) { return e4m3x2_code(u, v); });
    } else {
#pragma unroll
      for (int q = 0; q < 16; ++q) pa[q >> 2][q & 3] = e4m3_round_bf16x2(s[2 * q], s[2 * q + 1]);
    }
  };
  // dV += Pq^T dO_col, dK += q(dS^T) Q_col of step it; with kNext, start step it+1.
  // Fused: dS^T of step it (in dp) along s_kv -> the dS^T tile; dQ's product issued (not committed).
  [[maybe_unused]] auto ds_tile = [&](int64_t it) -> uint8_t* {
    if constexpr (kDsInStage) return stage0 + static_cast<int>(it & 1) * 4 * kStepTile;
    else return ds_area + static_cast<int>(it & 1) * kAttnBwdDsTile;
  };
  // kF8: dQ's E4M3 A tile (dS, [64 q][128 kv'] bytes, both warpgroups' halves) in the free upper half
  // of the stage's Q' slot, so that no S^T reader needs guarding (barriers 5 + wg) before it is written.
  [[maybe_unused]] auto ds_f8_tile = [&](int64_t it) -> uint32_t {
    return ptx::smem_addr(stage0 + static_cast<int>(it & 1) * 4 * kStepTile + kStep * D);
  };
  // kF8: the step's scale exponents of dS's query columns over the CTA's 128 kv rows (word 4 jj + c:
  // columns 8 jj + 2c, +1), written by warp 0 for dq_store in the free half of the K_col' area (a
  // register across the dQ product made ptxas spill). Rewritten past the next step's barrier 5, which
  // every thread reaches after its dq_store.
  [[maybe_unused]] uint32_t* dq_e2s = reinterpret_cast<uint32_t*>(kc_tile + kRows * D);
  [[maybe_unused]] auto dq_issue = [&](int64_t it, float (&acc)[32]) {
    if constexpr (kF8) {
      // FP8 dQ (docs/NUMERICS.md "dQ on FP8 wgmma"): one scale exponent per query column over all 128 kv
      // rows (the eight warps' column maxima, barrier 5), dS quantized against it into the A tile
      // (ds_f8_tile, [64 q][128 kv'] bytes), dQ's 64 x 64 of this warpgroup = A K_col'^T over the
      // warpgroup's 64 columns d (four k32 wgmmas); dq_store multiplies each query row by 2^(E - 127).
      uint32_t e2 = col_block_exponents<false>(dp, l, p.ds_scale);
      *xch_mine = e2;
      ptx::named_barrier_sync(5, 256);
#pragma unroll
      for (int k = 0; k < 8; ++k) e2 = __vmaxu2(e2, xch[k * 32 + l]);
      if (tid < 32) dq_e2s[l] = e2;
      const uint32_t elo = e2 & 0xFFFFu, ehi = e2 >> 16;
      if (__any_sync(0xFFFFFFFFu, elo >= 254u || ehi >= 254u) && l == 0) f8_raise(p);  // a NaN or an Inf in dS
      const uint32_t tile = ds_f8_tile(it);
      const int c = l & 3;
      const uint32_t chunk = static_cast<uint32_t>(4 * wg + w), byte = static_cast<uint32_t>(2 * (l >> 2));
      const uint32_t a0 = tile + (2 * c) * 128 + ((chunk ^ (2 * c)) << 4) + byte;
      const uint32_t a1 = tile + (2 * c + 1) * 128 + ((chunk ^ (2 * c + 1)) << 4) + byte;
      if (__any_sync(0xFFFFFFFFu, p.ds_fold == 0 || elo > 134u || ehi > 134u))
        col_quant_store_f8<false>(dp, e2, a0, a1, l, p.ds_scale, p.ds_scale_c);
      else
        col_quant_store_f8<true>(dp, e2, a0, a1, l, p.ds_scale, p.ds_scale_c);
      ptx::fence_proxy_async_shared();  // generic stores -> wgmma's reads
      ptx::named_barrier_sync(bar_ds, kDsThreads);
      ptx::wgmma_fence();
      issue_product_f8(acc, tile, ptx::smem_addr(kc_tile) + wg * 64 * 128);
      return;
    }
    uint8_t* tile = ds_tile(it);
    uint32_t e2 = col_block_exponents<false>(dp, l, p.ds_scale);
    *xch_mine = e2;
    ptx::named_barrier_sync(bar_pair, 64);
    e2 = __vmaxu2(e2, *xch_partner);
    const bool slow = (e2 & 0xFFFFu) > static_cast<uint32_t>(sm90gemm::Fp8Bits<ptx::Fp8Kind::E4M3>::kMaxFastE) ||
                      (e2 >> 16) > static_cast<uint32_t>(sm90gemm::Fp8Bits<ptx::Fp8Kind::E4M3>::kMaxFastE) ||
                      p.ds_fold == 0;
    const uint32_t row_addr = ptx::smem_addr(tile) + (64 * wg + 16 * w + 8 * ((l >> 3) & 1) + (l & 7)) * 128;
    if (__any_sync(0xFFFFFFFFu, slow)) {  // uniform over the pair of warps: they merged the same words
      ptx::named_barrier_sync(bar_pair, 64);  // the partner has read the fast words
      e2 = col_block_exponents<true>(dp, l, p.ds_scale);
      *xch_mine = e2;
      ptx::named_barrier_sync(bar_pair, 64);
      e2 = __vmaxu2(e2, *xch_partner);
      if constexpr (kDsInStage) ptx::named_barrier_sync(5 + wg, 256);  // the other S^T is done with Q
      col_quant_store<true>(dp, e2, row_addr, l, p.ds_scale, p.ds_scale_c);
    } else {
      if constexpr (kDsInStage) ptx::named_barrier_sync(5 + wg, 256);
      col_quant_store<false>(dp, e2, row_addr, l, p.ds_scale, p.ds_scale_c);
    }
    ptx::fence_proxy_async_shared();  // generic stores -> wgmma's reads
    ptx::named_barrier_sync(bar_ds, kDsThreads);
    const uint32_t a_lo = ptx::smem_desc_sw128_lo(ptx::smem_addr(tile));
    ptx::undef_acc(acc);
    ptx::wgmma_fence();
    if constexpr (kDsInStage) {  // N split: this warpgroup's 64 columns of dQ, K = all 128 kv rows
#pragma unroll
      for (int kk = 0; kk < 8; ++kk) {
        const uint32_t bo = (kk >> 2) * (D * 128) + wg * 64 * 128 + (kk & 3) * 32;
        wgmma_bf16_ss_ta64(acc, desc(a_lo, kk * 2048), desc(kc_lo0, bo), kk > 0);
      }
    } else {  // K split: the warpgroup's own 64 kv rows, all D columns
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma_bf16_ss_ta64(acc, desc(a_lo, wg * 8192 + kk * 2048), desc(kc_lo0, wg * (D * 128) + kk * 32), kk > 0);
    }
  };
  // The retired dQ product of step it -> its 64 x 64 fp32 staging tile in fragment order (8
  // conflict-free 16-byte stores per thread), handed to the reducer thread through dq_full: the math
  // warps never wait for the bulk copy (a named barrier and thread 0's bulk issue and read wait sat
  // here before, ~0.4 ms of 4.2 at B2 H32 S4096 D128). D = 128: the staging tiles are the stage's dO
  // (warpgroup 0) and dO_col^T (warpgroup 1) tiles, whose readers (dP^T, dV of both warpgroups) are
  // done once the dS^T barrier of the step is passed; the reducer's arrival completes the stage's
  // release. D = 64: two tiles per warpgroup; the one of step it - 2 must have been read (dq_empty).
  // kF8: one tile per warpgroup outside the stage (stg_tile); the one of step it - 1 must have been read.
  // (Per-thread red.global.add.v2.f32 of the same data cost ~1.1 ms of 4.7 at B2 H32 S4096 D128.)
  [[maybe_unused]] auto dq_store = [&](int64_t it, float (&acc)[32]) {
    const int buf = static_cast<int>(it & 1);
    uint8_t* stg = stg_tile(buf, wg);
    if constexpr (kF8) {  // one tile per warpgroup: step it-1's must have been read
      if (it > 0) ptx::mbar_wait(&dq_empty[((it - 1) & 1) * 2 + wg], static_cast<uint32_t>(((it - 1) >> 1) & 1));
    } else if constexpr (!kDsInStage) {
      ptx::mbar_wait(&dq_empty[buf * 2 + wg], static_cast<uint32_t>((it >> 1) & 1) ^ 1u);
    }
    if constexpr (kF8) {  // query rows 16 w + l / 4 (+ 8) times 2^(E - 127) (word 4 (2 w + h) + l / 8)
      const int rq = l >> 2;
      float m[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t ew = dq_e2s[4 * (2 * w + h) + (rq >> 1)];
        const uint32_t ex = (rq & 1) ? ew >> 16 : ew & 0xFFFFu;
        // 2^(E - 127): e4m3_scale_of_exponent's multiplier without its NaN case (E 255 has raised the
        // flag; that form cost 4 more loop instructions)
        m[h] = __uint_as_float(ex == 0u ? 0x00400000u : min(ex, 254u) << 23);
      }
#pragma unroll
      for (int i = 0; i < 32; ++i) acc[i] = __fmul_rn(acc[i], m[(i >> 1) & 1]);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j)
      *reinterpret_cast<float4*>(stg + ((w * 8 + j) * 32 + l) * 16) =
          make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
  };
  [[maybe_unused]] auto dq_hand = [&](int64_t it) {
    ptx::fence_proxy_async_shared();  // generic stores -> the bulk copy's reads
    ptx::mbar_arrive(&dq_full[static_cast<int>(it & 1) * 2 + wg]);
  };
  [[maybe_unused]] auto dq_stage = [&](int64_t it, float (&acc)[32]) {
    dq_store(it, acc);
    dq_hand(it);
  };
  auto back = [&](int64_t it, const Pos& pc, const Pos& pn, auto next_tag) {  // pc, pn: positions of steps it, it+1
    constexpr bool kNext = decltype(next_tag)::value;
    [[maybe_unused]] const uint32_t qc_lo = ptx::smem_desc_sw128_lo(stage_addr(it) + 2 * kStepTile);
    Ld ldn{};
    if constexpr (kNext) ldn = load_ld(pn);
    // dV's products start while dS is quantized on the CUDA cores.
    issue_dv(it);
    if constexpr (kF8) {  // dK on FP8 wgmma: Q_col' is 128 rows d of 64 bytes (queries), 64-byte swizzle
      if (ds_rows_to_f8(dp, da, ra, dk, p.ds_scale, p.ds_scale_c, p.ds_fold != 0)) f8_raise(p);
      ptx::wgmma_fence();
      const uint32_t qc = stage_addr(it) + 2 * kStepTile;
#pragma unroll
      for (int k = 0; k < 2; ++k) ptx::wgmma_e4m3_rs_n128(dk, da[k], desc_sw64(qc + k * 32), 1);
    } else {
      mx_rows_to_frags(dp, da, p.ds_scale, p.ds_scale_c, p.ds_fold != 0);
      ptx::wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dk, da[k], desc(qc_lo, k * 32), 1);
    }
    ptx::wgmma_commit();
    if constexpr (kFused) {
      ptx::wgmma_wait<1>();  // dV done: its A registers are free for the column quantization
#pragma unroll
      for (int k = 0; k < kFragKs; ++k) ptx::fence_regs(pa[k]);
      float dq[32];
      dq_issue(it, dq);
      ptx::wgmma_commit();
      if constexpr (kNext) {
        // Step it+1's S^T (D = 64: and dP^T) goes out while dQ runs, once dK has retired (its A
        // registers free; P^T's and dS^T's fp32 values are dead by now). At D = 128 dP^T waits for
        // dQ: with both next to the dQ accumulator ptxas serializes the wgmmas and spills (C7512).
        ptx::wgmma_wait<1>();
#pragma unroll
        for (int k = 0; k < kFragKs; ++k) ptx::fence_regs(da[k]);
        issue_s(it + 1);
        if constexpr (kEarlyDp) {
          issue_dp(it + 1);
          ptx::wgmma_wait<2>();  // dQ done
        } else {
          ptx::wgmma_wait<1>();  // dQ done
        }
        ptx::fence_acc(dq);
        if constexpr (kEarlyDp) {
          // D = 64 (own staging tiles): handed over after step it+1's front, whose proxy fence
          // then finds the stores drained.
          dq_store(it, dq);
          ptx::mbar_arrive(&empty[it & 1]);
          front(pn, ldn);
          dq_hand(it);
        } else {
          // D = 128: dP^T of step it+1 goes out between the staging stores and their proxy fence,
          // so the stores drain while the tensor cores have it (the fence waits for them). kF8: the
          // hand-off first (the multiplied staging values next to dP^T's accumulator spilled).
          dq_store(it, dq);
          if constexpr (kF8) {
            dq_hand(it);
            issue_dp(it + 1);
          } else {
            issue_dp(it + 1);
            dq_hand(it);
          }
          ptx::mbar_arrive(&empty[it & 1]);  // the reducer's arrival completes the release
          front(pn, ldn);
        }
      } else {
        ptx::wgmma_wait<0>();
#pragma unroll
        for (int k = 0; k < kFragKs; ++k) ptx::fence_regs(da[k]);
        ptx::fence_acc(dq);
        dq_stage(it, dq);
      }
    } else if constexpr (kNext) {
      ptx::wgmma_wait<1>();  // dV done: its A registers are free
#pragma unroll
      for (int k = 0; k < kFragKs; ++k) ptx::fence_regs(pa[k]);
      issue_s(it + 1);
      ptx::wgmma_wait<1>();  // dK done: the stage and dK's A registers are free
#pragma unroll
      for (int k = 0; k < kFragKs; ++k) ptx::fence_regs(da[k]);
      ptx::mbar_arrive(&empty[it & 1]);
      issue_dp(it + 1);
      front(pn, ldn);
    } else {
      ptx::wgmma_wait<0>();
#pragma unroll
      for (int k = 0; k < kFragKs; ++k) {  // the A registers stay live until the wgmmas reading them are done
        ptx::fence_regs(pa[k]);
        ptx::fence_regs(da[k]);
      }
    }
  };
  if (n_iters > 0) {  // one block, so ptxas sees every wgmma retired before the epilogue
    Pos pn{i0_first, bhk * p.group};
    const Ld ld0 = load_ld(pn);
    if constexpr (kD64Fused) {
      if (wg == 1) ptx::named_barrier_sync(9, 256);  // the start offset (above)
    }
    issue_s(0);
    issue_dp(0);
    front(pn, ld0);
    if constexpr (kD64Fused) {
      if (wg == 0) ptx::named_barrier_arrive(9, 256);
    }
    for (int64_t it = 0; it + 1 < n_iters; ++it) {
      const Pos pc = pn;
      pn = next_pos(pn);
      back(it, pc, pn, std::true_type{});
    }
    back(n_iters - 1, pn, pn, std::false_type{});
  }
  ptx::fence_acc(dv);
  ptx::fence_acc(dk);
  // A bf16 pair of dK (columns x, x + 1 of row half): kF8 multiplies the accumulator by its row's
  // 2^(ra - 127) and Q_col's column factors (powers of two: exact unless dK leaves fp32's normal range).
  [[maybe_unused]] float dk_row[2] = {1.0f, 1.0f};
  if constexpr (kF8) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float inv;
      e4m3_scale_of_exponent(ra[half], inv, dk_row[half]);
    }
  }
  auto dk_pair = [&](int idx, int half, int x) {
    if constexpr (kF8) {
      const float2 c = __ldg(reinterpret_cast<const float2*>(p.f8_qtc + bhk * D + x));
      return dev::f32x2_to_bf16x2(__fmul_rn(__fmul_rn(dk[idx], dk_row[half]), c.x),
                                  __fmul_rn(__fmul_rn(dk[idx + 1], dk_row[half]), c.y));
    } else {
      return dev::f32x2_to_bf16x2(dk[idx], dk[idx + 1]);
    }
  };
  // dV's: times 1 / p_scale (P was p_scale times larger), then kF8 dO_col's column factors (exact).
  auto dv_pair = [&](int idx, int x) {
    float a = __fmul_rn(dv[idx], p.inv_p_scale), b2 = __fmul_rn(dv[idx + 1], p.inv_p_scale);
    if constexpr (kF8) {
      const float2 c = __ldg(reinterpret_cast<const float2*>(p.f8_dotc + bhk * D + x));
      a = __fmul_rn(a, c.x), b2 = __fmul_rn(b2, c.y);
    }
    return dev::f32x2_to_bf16x2(a, b2);
  };

  // kF8 with 16-byte aligned dK and dV: the epilogue through shared memory, so that every global store
  // is a coalesced 16-byte one (the direct 4-byte stores below took ~5-7 us per CTA, docs/PERFORMANCE.md,
  // twenty-third session). The stage of step n_iters (parity n_iters & 1) is free: its last step,
  // n_iters - 2, is done by both warpgroups once either passes the last dS^T barrier, and the producer
  // loads nothing more. Warpgroup wg's dK and dV rows [64][256 bytes] take 32 KiB of it, 16-byte chunks
  // XOR-swizzled by row (conflict-free fragment stores and row reads).
  bool staged = false;
  if constexpr (kF8) {
    if (((reinterpret_cast<uintptr_t>(p.dk) | reinterpret_cast<uintptr_t>(p.dv)) & 15u) == 0) {
      staged = true;
      uint8_t* ebuf = stage0 + static_cast<int>(n_iters & 1) * 4 * kStepTile + wg * (2 * 64 * D * 2);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = r0 + 8 * half;
#pragma unroll
        for (int jj = 0; jj < D / 8; ++jj) {
          const int idx = 4 * jj + 2 * half;
          const uint32_t off = static_cast<uint32_t>(row * (D * 2) + ((jj ^ (row & 7)) << 4) + (l & 3) * 4);
          *reinterpret_cast<uint32_t*>(ebuf + off) = dk_pair(idx, half, 8 * jj + 2 * (l & 3));
          *reinterpret_cast<uint32_t*>(ebuf + 64 * D * 2 + off) = dv_pair(idx, 8 * jj + 2 * (l & 3));
        }
      }
      ptx::named_barrier_sync(10 + wg, 128);
      constexpr int kChunks = D * 2 / 16;  // per row
#pragma unroll 4
      for (int u = t; u < 2 * 64 * kChunks; u += 128) {
        const int x = u / (64 * kChunks), row = (u / kChunks) % 64, c = u % kChunks;
        const int64_t j = jw + row;
        if (j >= lk) continue;
        const uint4 v = *reinterpret_cast<const uint4*>(ebuf + x * (64 * D * 2) + row * (D * 2) + ((c ^ (row & 7)) << 4));
        uint16_t* out = x ? p.dv : p.dk;
        *reinterpret_cast<uint4*>(out + (kvs.base + j * kvs.step) * D + c * 8) = v;
      }
    }
  }

  // Epilogue: bf16 pairs straight from the accumulators; rows past the sequence are not written.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t j = half ? jb : ja;
    if (staged || j >= lk) continue;
    const int64_t row = kvs.base + j * kvs.step;
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj) {
      const int x = 8 * jj + 2 * (l & 3);
      const int idx = 4 * jj + 2 * half;
      *reinterpret_cast<uint32_t*>(p.dk + row * D + x) = dk_pair(idx, half, x);
      *reinterpret_cast<uint32_t*>(p.dv + row * D + x) = dv_pair(idx, x);
    }
  }
}

// ---- dQ ---------------------------------------------------------------------------------------
template <int D>
__device__ __forceinline__ void dq_body(const P& p, int64_t qblock) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  constexpr int kRowTile = kRows * D * 2, kStepTile = kStep * D * 2;
  uint8_t* q_tile = smem;
  uint8_t* do_tile = q_tile + kRowTile;
  uint8_t* stage0 = do_tile + kRowTile;  // per stage: K, V, K_col^T (bf16)
  float* small = reinterpret_cast<float*>(stage0 + kDqStages * 3 * kStepTile);  // lse [128], delta [128]
  uint64_t* full = reinterpret_cast<uint64_t*>(small + 2 * kRows);                // [kDqStages]
  uint64_t* empty = full + kDqStages;                                             // [kDqStages]

  const int tid = threadIdx.x;
  const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / p.group;
  const int64_t i0 = qblock * kRows;
  const Seq qs = seq_of(p, true, b, h);
  if (i0 >= qs.len) return;
  const Seq kvs = seq_of(p, false, b, hk);
  const int64_t lq = qs.len, lk = kvs.len;
  const int64_t off = p.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0;
  int64_t n_iters = (lk + kStep - 1) / kStep;
  if (p.mask != MXQ_ATTN_MASK_NONE) {
    const int64_t i_last = (i0 + kRows < lq ? i0 + kRows : lq) - 1;
    const int64_t reach = i_last + off;  // last visible key of the block's last query
    const int64_t nb = reach >= 0 ? reach / kStep + 1 : 0;
    n_iters = nb < n_iters ? nb : n_iters;
  }
  const int64_t bh = b * p.heads_q + h, bhk = b * p.heads_kv + hk;

  copy_rows<kRows, D, kThreads>(q_tile, p.w_q + (bh * p.sq_pad + i0) * D, tid);
  copy_rows<kRows, D, kThreads>(do_tile, p.w_do + (bh * p.sq_pad + i0) * D, tid);
  ptx::cp_async_commit();
  if (tid < kRows) {
    const int64_t s = i0 + tid;
    const int64_t li = bh * p.seqlen_q + s;
    small[tid] = s < lq ? __ldg(p.lse + li) * kLog2e : 0.0f;
    small[kRows + tid] = s < lq ? __ldg(p.delta + li) : 0.0f;
  }
  if (tid == 0) ptx::mbar_init_ring(full, empty, kDqStages, 1, kMathThreads);
  ptx::cp_async_wait<0>();
  ptx::fence_proxy_async_shared();
  __syncthreads();

  if (tid >= kMathThreads) {
    // ---- producer: one thread issues the TMA loads of each step, up to kDqStages steps ahead ----
    ptx::setmaxnreg_dec<24>();
    if (tid == kMathThreads) {
      ptx::tma_prefetch_desc(p.tmap_k);
      ptx::tma_prefetch_desc(p.tmap_v);
      ptx::tma_prefetch_desc(p.tmap_kt);
      int st = 0;  // it % kDqStages
      uint32_t ph = 0;  // (it / kDqStages) & 1
      for (int64_t it = 0; it < n_iters; ++it) {
        ptx::mbar_wait(&empty[st], ph ^ 1u);
        const int64_t j0 = it * kStep;
        uint8_t* stg = stage0 + st * 3 * kStepTile;
        ptx::mbar_arrive_expect_tx(&full[st], 3 * kStepTile);
        const int32_t krow = static_cast<int32_t>(bhk * p.skv_pad + j0);
        tma_rows<D>(stg, p.tmap_k, krow, &full[st]);
        tma_rows<D>(stg + kStepTile, p.tmap_v, krow, &full[st]);
        ptx::tma_load_2d(ptx::smem_addr(stg + 2 * kStepTile), p.tmap_kt, static_cast<int32_t>(j0),
                         static_cast<int32_t>(bhk * D), &full[st]);
        if (++st == kDqStages) st = 0, ph ^= 1u;
      }
    }
    return;
  }

  ptx::setmaxnreg_inc<232>();
  const int wg = tid >> 7, t = tid & 127, w = t >> 5, l = t & 31;
  const int r0 = 16 * w + (l >> 2);
  const int64_t iw = i0 + wg * 64;  // the warpgroup's first query row
  const int64_t ia = iw + r0, ib = ia + 8;
  const float lse_a = small[wg * 64 + r0], lse_b = small[wg * 64 + r0 + 8];
  const float dl_a = small[kRows + wg * 64 + r0], dl_b = small[kRows + wg * 64 + r0 + 8];
  const uint32_t q_addr = ptx::smem_addr(q_tile) + wg * 64 * 128;
  const uint32_t do_addr = ptx::smem_addr(do_tile) + wg * 64 * 128;
  const int lim_i = clamp32(lq - iw);
  // 32-bit loop state (fewer live registers next to two S/dP sets): lengths and offsets fit easily.
  const bool rows_full = iw + 64 <= lq;
  const int lk32 = clamp32(lk), ioff32 = clamp32(iw + off), n_it = static_cast<int>(n_iters);
  const bool causal = p.mask != MXQ_ATTN_MASK_NONE;
  const float scale_log2 = p.scale_log2, softmax_scale = p.softmax_scale;
  float dq[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dq[i] = 0.0f;

  // Software pipeline per warpgroup: S (and at D = 64 dP, in a second register set) of step it+1
  // is issued before the elementwise work of step it, so that work overlaps it on the tensor cores.
  // Each loop body ends with every wgmma retired (ptxas keeps wgmmas asynchronous only when nothing
  // is in flight across the back edge); a stage is released after the body that read it last, so
  // with three stages the producer runs a full step ahead of the FULL wait.
  float sA[32], dpA[32], sB[32], dpB[32];
  uint32_t da[4][4];
  auto issue_sdp = [&](int it, float (&s_)[32], float (&dp_)[32]) {
    const int st = it % kDqStages;
    ptx::mbar_wait(&full[st], static_cast<uint32_t>((it / kDqStages) & 1));
    const uint32_t k_addr = ptx::smem_addr(stage0 + st * 3 * kStepTile), v_addr = k_addr + kStepTile;
    ptx::wgmma_fence();
    issue_product_over_d<D>(s_, q_addr, k_addr);
    issue_product_over_d<D>(dp_, do_addr, v_addr);
    ptx::wgmma_commit();
  };
  // kMode 0: the last step; 1: S and dP of step it+1 (into sn, dpn) are issued first; 2 (D = 128,
  // where a second dP set does not fit): S of step it+1 first, dP of step it+1 into dp after dQ.
  auto body = [&](int it, float (&s)[32], float (&dp)[32], float (&sn)[32], float (&dpn)[32], auto mode_tag) {
    constexpr int kMode = decltype(mode_tag)::value;
    if constexpr (kMode == 1) issue_sdp(it + 1, sn, dpn);
    if constexpr (kMode == 2) {
      const int stn = (it + 1) % kDqStages;
      ptx::mbar_wait(&full[stn], static_cast<uint32_t>(((it + 1) / kDqStages) & 1));
      ptx::wgmma_fence();
      issue_product_over_d<D>(sn, q_addr, ptx::smem_addr(stage0 + stn * 3 * kStepTile));
      ptx::wgmma_commit();
    }
    const int st = it % kDqStages;
    const uint32_t kc_lo = ptx::smem_desc_sw128_lo(ptx::smem_addr(stage0 + st * 3 * kStepTile) + 2 * kStepTile);
    const int jbase = it * kStep;
    // Tile-local mask: entry (row r, column c) is visible iff r < lim_i, c < lim_j and (no mask or c <= r + lim_c).
    const bool full = rows_full && jbase + kStep <= lk32 && (!causal || jbase + kStep - 1 <= ioff32);
    const int lim_j = lk32 - jbase, lim_c = ioff32 - jbase;
    auto visible = [&](int idx) {  // idx = 4 jj + 2 half + e
      const int c = 8 * (idx >> 2) + 2 * (l & 3) + (idx & 1), r = r0 + 8 * ((idx >> 1) & 1);
      return (r < lim_i) & (c < lim_j) & (!causal | (c <= r + lim_c));
    };
    // P by ex2.approx.ftz (P < 2^-126 -> 0; docs/NUMERICS.md): +2-4% on this path (eighteenth session).
#pragma unroll
    for (int idx = 0; idx < 32; ++idx) s[idx] = attn::ex2_ftz(fmaf(s[idx], scale_log2, -((idx & 2) ? lse_b : lse_a)));
    if (!full) {  // masked entries: P = 0 (a uniform branch; selects inside)
#pragma unroll
      for (int idx = 0; idx < 32; ++idx) s[idx] = visible(idx) ? s[idx] : 0.0f;
    }
#pragma unroll
    for (int idx = 0; idx < 32; ++idx) {
      const float delta = (idx & 2) ? dl_b : dl_a;  // idx = 4 jj + 2 half + e
      dp[idx] = __fmul_rn(s[idx], __fsub_rn(dp[idx], delta));  // softmax_scale: folded into the quantizer
    }
    if (!full) {  // masked: exactly 0, whatever dP is
#pragma unroll
      for (int idx = 0; idx < 32; ++idx) dp[idx] = visible(idx) ? dp[idx] : 0.0f;
    }
    mx_rows_to_frags(dp, da, softmax_scale, p.sm_scale_c, p.sm_fold != 0);
    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dq, da[k], desc(kc_lo, k * 32), 1);
    ptx::wgmma_commit();
    if constexpr (kMode == 2) {
      ptx::wgmma_fence();
      issue_product_over_d<D>(dp, do_addr, ptx::smem_addr(stage0 + ((it + 1) % kDqStages) * 3 * kStepTile) + kStepTile);
      ptx::wgmma_commit();
    }
    ptx::wgmma_wait<0>();
    ptx::fence_acc(dq);
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::fence_regs(da[k]);
    if constexpr (kMode != 0) {
      ptx::fence_acc(sn);
      ptx::fence_acc(dpn);
    }
    ptx::mbar_arrive(&empty[st]);
  };
  using Last = std::integral_constant<int, 0>;
  using Both = std::integral_constant<int, 1>;
  using SOnly = std::integral_constant<int, 2>;
  // The step loop, unrolled by two over the S register sets A/B; dP alternates between dpA and dp2
  // (D = 64: its own second set dpB, every step issued a step ahead; D = 128: dpA only, S alone
  // ahead). One block, so ptxas sees every wgmma retired before the epilogue.
  auto pipeline = [&](auto& dp2, auto ahead) {
    issue_sdp(0, sA, dpA);
    ptx::wgmma_wait<0>();
    ptx::fence_acc(sA);
    ptx::fence_acc(dpA);
    int it = 0;
    for (; it + 2 < n_it; it += 2) {
      body(it, sA, dpA, sB, dp2, ahead);
      body(it + 1, sB, dp2, sA, dpA, ahead);
    }
    if (it + 1 < n_it) {
      body(it, sA, dpA, sB, dp2, ahead);
      body(it + 1, sB, dp2, sA, dpA, Last{});
    } else {
      body(it, sA, dpA, sB, dp2, Last{});
    }
  };
  if (n_it > 0) {
    if constexpr (D > 64) pipeline(dpA, SOnly{});
    else pipeline(dpB, Both{});
  }

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = half ? ib : ia;
    if (i >= lq) continue;
    const int64_t row = qs.base + i * qs.step;
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj) {
      const int x = 8 * jj + 2 * (l & 3);
      const int idx = 4 * jj + 2 * half;
      *reinterpret_cast<uint32_t*>(p.dq + row * D + x) = dev::f32x2_to_bf16x2(dq[idx], dq[idx + 1]);
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <int D, bool kFused, int kRegKs = 0, bool kF8 = false>
__device__ __forceinline__ void dkv_entry(const P& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  dkv_body<D, kFused, kRegKs, kF8>(p);
#else
  // Generic PTX build (compute_90 without 'a'): no wgmma; the launcher never selects this kernel
  // on such a device, and a stray launch fails loudly rather than silently.
  __trap();
#endif
}
template <int D>
__device__ __forceinline__ void dq_entry(const P& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // Causal masks give later q blocks more work: launch them first.
  const int64_t nqb = gridDim.x;
  dq_body<D>(p, p.mask != MXQ_ATTN_MASK_NONE ? nqb - 1 - blockIdx.x : blockIdx.x);
#else
  __trap();
#endif
}

}  // namespace sm90attn
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_attention_bwd.cpp).
#define MXQ_ATTN_BWD_ENTRIES(D)                                                                                    \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdPrepThreads)                                           \
      mxq_attn_bwd_sm90_prep_d##D(const __grid_constant__ mxq::AttnBwdSm90Params p) {                              \
    mxq::sm90attn::prep_body<D>(p);                                                                                \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)                                            \
      mxq_attn_bwd_sm90_dkv_d##D(const __grid_constant__ mxq::AttnBwdSm90Params p) {                               \
    mxq::sm90attn::dkv_entry<D, false, (D == 64 ? 4 : 0)>(p);                                                      \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)                                            \
      mxq_attn_bwd_sm90_dkvq_d##D(const __grid_constant__ mxq::AttnBwdSm90Params p) {                              \
    mxq::sm90attn::dkv_entry<D, true>(p);                                                                          \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdPostThreads)                                           \
      mxq_attn_bwd_sm90_dqpost_d##D(const __grid_constant__ mxq::AttnBwdSm90Params p) {                            \
    mxq::sm90attn::dq_post_body<D>(p);                                                                             \
  }                                                                                                                \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)                                            \
      mxq_attn_bwd_sm90_dq_d##D(const __grid_constant__ mxq::AttnBwdSm90Params p) {                                \
    mxq::sm90attn::dq_entry<D>(p);                                                                                 \
  }

// The FP8 S^T / dP^T kernels of the fused path at D = 128 (and their prep): docs/NUMERICS.md.
extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdPrepThreads, mxq::kAttnBwdPrepBlocksPerSm)
    mxq_attn_bwd_sm90_prep8_d128(const __grid_constant__ mxq::AttnBwdSm90Params p) {
  mxq::sm90attn::prep_body<128, true>(p);
}
extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdPrepThreads)
    mxq_attn_bwd_sm90_f8colmax_d128(const __grid_constant__ mxq::AttnBwdSm90Params p) {
  mxq::sm90attn::f8_colmax_body<128>(p);
}
extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)
    mxq_attn_bwd_sm90_dkvq8_d128(const __grid_constant__ mxq::AttnBwdSm90Params p) {
  mxq::sm90attn::dkv_entry<128, true, 0, true>(p);
}

// The two-kernel path's dK/dV kernel at D = 64 takes K and V from registers for S^T and dP^T (+7%
// measured); the fused kernel measured 1.5% slower with them (PERFORMANCE.md, sixteenth session),
// and at D = 128 they do not fit (spills from 2 k steps of 8 on).
MXQ_ATTN_BWD_ENTRIES(64)
MXQ_ATTN_BWD_ENTRIES(128)
