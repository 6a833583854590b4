// MXFP8 attention backward for Hopper (sm_90a), cuDNN's recipe (DESIGN §2.3, src/cpu/attention.cpp
// is the oracle): dQ, dK, dV in bf16 from Q, K, V, dO in E4M3 with UE8M0 scales (Q, K, V, dO along
// D; Q, K, dO also along S), O and dO in bf16, and the forward's LSE.
//
// Why it is shaped this way.
//  - Hopper's FP8 wgmma wants both operands K-major and has no block-scale operand; applying 1x32
//    scales on the CUDA cores after every k32 step would cost more than the MMA itself. Instead each
//    FP8 operand tile is dequantized exactly into bf16 in shared memory (an E4M3 value times 2^(e-127)
//    is a bf16 value unless it leaves bf16's range, docs/NUMERICS.md) and the products run on the
//    BF16 tensor cores with fp32 accumulation. The dequantizing pass is free to write any layout, so
//    the operands quantized along S are written transposed ([D][S]): every B operand is K-major.
//  - Deterministic without atomics: two kernels. The dK/dV kernel owns 128 kv rows of one
//    (batch, kv head) and walks every query head of the GQA group and every 64-row q block:
//    S^T = K Q^T, dP^T = V dO^T, P^T from LSE, dS^T = P^T (dP^T - delta) * scale, then
//    dV += fp8(P*p_scale)^T dO_col and dK += dS^T|q Q_col (dS quantized MXFP8 along s_q: 32
//    consecutive queries, a row of dS^T), accumulated in fp32 registers and written once. The dQ
//    kernel owns 128 q rows of one (batch, q head), walks the kv blocks and recomputes S, P, dP, dS,
//    quantizes dS along s_kv and accumulates dQ += dS|kv K_col. 7 matmuls instead of 5, no atomics,
//    no fp32 dQ workspace, the same bits every run (the deterministic attribute holds trivially).
//  - delta = rowsum(dO * O) from the bf16 copies is a tiny pre-kernel into the workspace.
//  - Warp specialization: one producer warpgroup loads the next step's FP8 tiles with plain global
//    loads, dequantizes them into a double-buffered stage and signals through named barriers; the
//    two math warpgroups (64 rows each) only issue wgmma and do the elementwise work. setmaxnreg moves
//    registers from the producer to the math warpgroups, which hold dK and dV (or dQ) in registers.
//  - P and dS go from the accumulator of one wgmma straight into the A registers of the next
//    (kernels/ptx/wgmma_bf16.cuh): the fp32 accumulator pairs of columns 16k..16k+15 are the A
//    fragment of K step k. The 32-blocks of the dS quantization (32 columns of the accumulator row)
//    live in one quad of lanes, so the block maximum is two shuffles.
//  - P*p_scale is rounded to E4M3 and the E4M3 value (exact in bf16) enters the dV product; dV is
//    multiplied by 1/p_scale once in fp32 at the end, so any p_scale is exact.
// Sequence blocks start at multiples of 64, so a 32-block of dS never straddles two steps and the
// 32-blocks are aligned to position 0 of each sequence like the oracle's. Rows past a sequence load
// as zeros; masked entries of P and dS are exactly 0.
#include <cstdint>

#include "common/fp8.cuh"
#include "common/quant_math.cuh"
#include "core/layout.h"
#include "mxq/mxq.h"
#include "ptx/async_copy.cuh"
#include "ptx/wgmma_bf16.cuh"
#include "sm90/attention_bwd_params.cuh"

namespace mxq {
namespace sm90attn {

using dev::Fp8;
using P = AttnBwdSm90Params;

constexpr int kRows = kAttnBwdRowsPerCta;  // 128
constexpr int kStep = kAttnBwdStepRows;    // 64
constexpr int kStages = kAttnBwdStages;    // 2
constexpr int kThreads = kAttnBwdThreads;  // 384
constexpr int kMathThreads = 256;
constexpr float kLog2e = 1.4426950408889634f;
// Named barriers (0 is __syncthreads): stage s is full / empty.
constexpr int kBarFull = 1, kBarEmpty = 3, kBarProducer = 5;

__device__ __forceinline__ void bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Positions of one (b, h) sequence: memory row of position s is base + s * rstride, s < len.
struct Seq {
  int64_t base, rstride, len;
};
__device__ __forceinline__ Seq seq_of(const P& p, bool q_side, int64_t b, int64_t h) {
  const int64_t H = q_side ? p.heads_q : p.heads_kv;
  const int64_t S = q_side ? p.seqlen_q : p.seqlen_kv;
  const int32_t* cu = q_side ? p.cu_q : p.cu_kv;
  int64_t start = b * S, len = S;
  if (cu) {
    // Malformed offsets are clamped (start >= 0, 0 <= length <= S_max) so no index leaves a sequence.
    const int64_t c0 = cu[b], c1 = cu[b + 1];
    start = c0 < 0 ? 0 : c0;
    len = c1 - start;
    len = len < 0 ? 0 : len > S ? S : len;
  }
  if (p.bshd) return {start * H + h, H, len};
  return {(b * H + h) * S, 1, len};
}

// Scale byte of (row, 32-block c) of a tensor quantized along D.
__device__ __forceinline__ int64_t d_scale_off(const P& p, int64_t row, int64_t c) {
  return p.swizzled ? layout::swizzled_offset(row, c, p.d_scale_ld) : row * p.d_scale_ld + c;
}

// Key j visible to query i (both inside their sequences).
__device__ __forceinline__ bool visible(int mask, int64_t i, int64_t j, int64_t off) {
  return mask == MXQ_ATTN_MASK_NONE || j <= i + off;
}

// 8 E4M3 codes times one scale multiplier -> 8 bf16 (exact while in bf16's range).
__device__ __forceinline__ uint32_t dq2(uint32_t pair, float m) {
  float a, b;
  dev::fp8x2_to_f32x2<Fp8::E4M3>(static_cast<uint16_t>(pair), a, b);
  return dev::f32x2_to_bf16x2(__fmul_rn(a, m), __fmul_rn(b, m));
}
__device__ __forceinline__ uint4 dequant8(uint2 raw, float m) {
  return make_uint4(dq2(raw.x & 0xFFFFu, m), dq2(raw.x >> 16, m), dq2(raw.y & 0xFFFFu, m), dq2(raw.y >> 16, m));
}

// A [ROWS x D] tile of positions s0.. of a tensor quantized along D -> bf16, K-major, 128-byte
// swizzled, 64-column panels of ROWS*128 bytes. Rows past the sequence are zeros. Units of 8
// elements; threads t = 0..NT-1 of the caller's group.
template <int ROWS, int D, int NT>
__device__ __forceinline__ void load_row_tile(uint8_t* tile, const uint8_t* __restrict__ data,
                                              const uint8_t* __restrict__ sc, const P& p, const Seq& sq, int64_t s0,
                                              int t) {
  constexpr int kUnitsPerRow = D / 8;
  constexpr int kUnits = ROWS * kUnitsPerRow;
  constexpr int kBatch = 4;  // loads in flight per thread before converting
  constexpr int kIters = (kUnits + NT - 1) / NT;
#pragma unroll 1
  for (int i0 = 0; i0 < kIters; i0 += kBatch) {
    uint2 raw[kBatch];
    float m[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int u = t + (i0 + k) * NT;
      const int r = u / kUnitsPerRow, c8 = u % kUnitsPerRow;
      const int64_t s = s0 + r;
      raw[k] = make_uint2(0u, 0u);
      m[k] = 0.0f;
      if (i0 + k < kIters && u < kUnits && s < sq.len) {
        const int64_t row = sq.base + s * sq.rstride;
        raw[k] = __ldg(reinterpret_cast<const uint2*>(data + row * D + c8 * 8));
        m[k] = dev::ue8m0_to_f32(__ldg(sc + d_scale_off(p, row, c8 / 4)));
      }
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int u = t + (i0 + k) * NT;
      if (i0 + k < kIters && u < kUnits) {
        const int r = u / kUnitsPerRow, c8 = u % kUnitsPerRow;
        const bool in = s0 + r < sq.len;
        const uint4 v = in ? dequant8(raw[k], m[k]) : make_uint4(0u, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(tile + (c8 / 8) * (ROWS * 128) + ptx::sw128_offset(r, c8 % 8)) = v;
      }
    }
  }
}

// ---- the producer's staged path: raw FP8 bytes by cp.async, scale bytes by plain loads, then an
// exact shared-to-shared dequantization into the bf16 operand layouts ----------------------------
//
// Raw staging tile [64 positions][D bytes]: 16-byte chunk c of position r is stored at chunk
// c ^ ((r >> 3) & (D/16 - 1)), so the column dequantizer's reads of 8 positions 8 apart hit
// different banks. Positions past the sequence are zero-filled.
template <int D>
__device__ __forceinline__ uint32_t raw_offset(int r, int chunk) {
  return static_cast<uint32_t>(r * D + ((chunk ^ ((r >> 3) & (D / 16 - 1))) << 4));
}

template <int D>
__device__ __forceinline__ void issue_raw(uint8_t* raw, const uint8_t* __restrict__ data, const Seq& sq, int64_t s0,
                                          int t) {
  constexpr int kChunks = D / 16, kPer = kStep * kChunks / 128;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = t + k * 128;
    const int r = u / kChunks, c = u % kChunks;
    const int64_t s = s0 + r;
    const bool in = s < sq.len;
    const uint8_t* src = in ? data + (sq.base + s * sq.rstride) * D + c * 16 : data;
    ptx::cp_async_16_zfill(ptx::smem_addr(raw + raw_offset<D>(r, c)), src, in);
  }
}

// Scale bytes along D of positions s0..s0+63 -> sb[64][4] (127, i.e. 1.0, past the sequence).
template <int D>
__device__ __forceinline__ void load_row_scales(uint8_t* sb, const uint8_t* __restrict__ sc, const P& p,
                                                const Seq& sq, int64_t s0, int t) {
  constexpr int kC = D / 32, kPer = kStep * kC / 128;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = t + k * 128;
    const int r = u / kC, c = u % kC;
    const int64_t s = s0 + r;
    sb[r * 4 + c] = s < sq.len ? __ldg(sc + d_scale_off(p, sq.base + s * sq.rstride, c)) : uint8_t(127);
  }
}

// Scale bytes along S of channels 0..D-1 for the two 32-blocks of positions s0..s0+63 -> sb[D][2].
template <int D>
__device__ __forceinline__ void load_col_scales(uint8_t* sb, const uint8_t* __restrict__ sc, int64_t entry, int64_t ld,
                                                bool swz, const Seq& sq, int64_t s0, int t) {
  constexpr int kPer = 2 * D / 128;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = t + k * 128;
    const int d = u >> 1, blk = u & 1;
    const int64_t c = s0 / 32 + blk;
    sb[u] = s0 + 32 * blk < sq.len ? __ldg(sc + entry + (swz ? layout::swizzled_offset(d, c, ld) : d * ld + c))
                                   : uint8_t(127);
  }
}

// raw [64][D] + row scales -> bf16 [64 x D] K-major, 128-byte swizzled, 64-column panels.
template <int D>
__device__ __forceinline__ void dequant_row(uint8_t* tile, const uint8_t* raw, const uint8_t* sb, int t) {
  constexpr int kUnitsPerRow = D / 8, kPer = kStep * kUnitsPerRow / 128;
#pragma unroll 4
  for (int k = 0; k < kPer; ++k) {
    const int u = t + k * 128;
    const int r = u / kUnitsPerRow, c8 = u % kUnitsPerRow;
    const uint2 x = *reinterpret_cast<const uint2*>(raw + raw_offset<D>(r, c8 >> 1) + (c8 & 1) * 8);
    const float m = dev::ue8m0_to_f32(sb[r * 4 + c8 / 4]);
    *reinterpret_cast<uint4*>(tile + (c8 / 8) * (kStep * 128) + ptx::sw128_offset(r, c8 % 8)) = dequant8(x, m);
  }
}

// raw [64][D] + column scales -> the transposed bf16 tile [D rows][64 positions], K-major along S,
// one 128-byte swizzled panel. Thread (dg = t/8, sg = t%8) owns positions 8sg..8sg+7 of channels
// 8dg..8dg+7: eight 8-byte reads, then one 16-byte store per channel row (the 8 threads of a
// channel row fill its 128 bytes).
template <int D>
__device__ __forceinline__ void dequant_col(uint8_t* tile, const uint8_t* raw, const uint8_t* sb, int t) {
  constexpr int kUnits = 8 * (D / 8);
  if (t >= kUnits) return;
  const int dg = t >> 3, sg = t & 7, blk = sg >> 2;
  uint32_t lo[8], hi[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint2 x = *reinterpret_cast<const uint2*>(raw + raw_offset<D>(8 * sg + k, dg >> 1) + (dg & 1) * 8);
    lo[k] = x.x;
    hi[k] = x.y;
  }
#pragma unroll
  for (int dd = 0; dd < 8; ++dd) {
    const int d = 8 * dg + dd;
    const float m = dev::ue8m0_to_f32(sb[d * 2 + blk]);
    const uint32_t* src = dd < 4 ? lo : hi;
    const uint32_t sel = static_cast<uint32_t>(dd & 3) | (static_cast<uint32_t>((dd & 3) + 4) << 4);
    uint32_t w[4];
#pragma unroll
    for (int pp = 0; pp < 4; ++pp) w[pp] = dq2(__byte_perm(src[2 * pp], src[2 * pp + 1], sel), m);
    *reinterpret_cast<uint4*>(tile + ptx::sw128_offset(static_cast<uint32_t>(d), static_cast<uint32_t>(sg))) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// fp32 pair -> E4M3 (RNE, satfinite) -> the E4M3 values as a bf16 pair (exact).
__device__ __forceinline__ uint32_t e4m3_round_bf16x2(float a, float b) {
  return dq2(dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(a, b), 1.0f);
}

// Given the 32 fp32 accumulator values of a 64x64 tile (rows r0, r0+8; the layout of
// wgmma_bf16.cuh), MXFP8-quantizes each row's two 32-column blocks (E4M3, RCEIL, the quantizer's
// arithmetic: cpu mx_roundtrip) and returns the dequantized values as bf16 A fragments.
__device__ __forceinline__ void mx_rows_to_frags(const float (&x)[32], uint32_t (&a)[4][4]) {
#pragma unroll
  for (int blk = 0; blk < 2; ++blk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float amax = 0.0f;
#pragma unroll
      for (int jj = 4 * blk; jj < 4 * blk + 4; ++jj)
        amax = fmaxf(amax, fmaxf(fabsf(x[4 * jj + 2 * half]), fabsf(x[4 * jj + 2 * half + 1])));
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
      const uint32_t e = dev::scale_exponent<Fp8::E4M3>(amax, MXQ_SCALE_MODE_RCEIL);
      const float inv = dev::scale_inverse(e);
      const float m = dev::ue8m0_to_f32(static_cast<uint8_t>(e));
#pragma unroll
      for (int jj = 4 * blk; jj < 4 * blk + 4; ++jj) {
        const uint16_t q = dev::f32x2_to_fp8x2_satfinite<Fp8::E4M3>(__fmul_rn(x[4 * jj + 2 * half], inv),
                                                                    __fmul_rn(x[4 * jj + 2 * half + 1], inv));
        // accumulator pair index (4 jj + 2 half) / 2 -> fragment [k = jj/2][(jj%2)*2 + half]
        a[jj >> 1][(jj & 1) * 2 + half] = dq2(q, m);
      }
    }
  }
}

__device__ __forceinline__ uint64_t desc(uint32_t addr) { return ptx::smem_desc_sw128(addr); }

// ---- delta = rowsum(dO * O), fp32, into the workspace ------------------------------------------
template <int D>
__device__ __forceinline__ void delta_body(const P& p) {
  constexpr int kTpr = D / 8;                                 // threads per row, 8 bf16 each
  constexpr int kRowsPerBlock = kAttnBwdDeltaThreads / kTpr;
  const int64_t b = blockIdx.z, h = blockIdx.y;
  const Seq sq = seq_of(p, true, b, h);
  const int64_t s = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kTpr;
  const int part = threadIdx.x % kTpr;
  float acc = 0.0f;
  if (s < sq.len) {
    const int64_t row = sq.base + s * sq.rstride;
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
  if (part == 0 && s < sq.len) p.delta[(b * p.heads_q + h) * p.seqlen_q + s] = acc;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- dK / dV ----------------------------------------------------------------------------------
template <int D>
__device__ __forceinline__ void dkv_body(const P& p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  constexpr int kRowTile = kRows * D * 2, kStepTile = kStep * D * 2, kRawTile = kStep * D;
  uint8_t* k_tile = smem;
  uint8_t* v_tile = k_tile + kRowTile;
  uint8_t* stage0 = v_tile + kRowTile;  // per stage: Q, dO, Q_col^T, dO_col^T (bf16)
  uint8_t* raw = stage0 + kStages * 4 * kStepTile;  // FP8 staging of the next step: Q, dO, Q_col, dO_col
  float* small = reinterpret_cast<float*>(raw + 4 * kRawTile);  // [stage][lse*log2e 64 | delta 64]
  uint8_t* sbuf = reinterpret_cast<uint8_t*>(small + kStages * 128);  // scale bytes: 2 x [64][4], 2 x [D][2]

  const int tid = threadIdx.x;
  const int64_t b = blockIdx.z, hk = blockIdx.y;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const Seq kvs = seq_of(p, false, b, hk);
  if (j0 >= kvs.len) return;  // varlen: past this sequence (uniform over the CTA)
  const int64_t lq = seq_of(p, true, b, 0).len, lk = kvs.len;
  const int64_t off = p.mask == MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0;
  const int64_t nqb = (lq + kStep - 1) / kStep;
  int64_t qb_first = 0;
  if (p.mask != MXQ_ATTN_MASK_NONE) qb_first = j0 - off > 0 ? (j0 - off) / kStep : 0;
  const int64_t per_head = nqb > qb_first ? nqb - qb_first : 0;
  const int64_t n_iters = per_head * p.group;

  // Resident K and V (along D), all 384 threads.
  load_row_tile<kRows, D, kThreads>(k_tile, p.k, p.k_sc, p, kvs, j0, tid);
  load_row_tile<kRows, D, kThreads>(v_tile, p.v, p.v_sc, p, kvs, j0, tid);
  ptx::fence_proxy_async_shared();
  __syncthreads();

  if (tid >= kMathThreads) {
    // ---- producer warpgroup ----
    asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n");
    const int t = tid - kMathThreads;
    float lse_next = 0.0f, delta_next = 0.0f;
    // Step `it`'s raw bytes (cp.async) and scale bytes into the staging buffers, LSE/delta into registers.
    auto prefetch = [&](int64_t it) {
      const int64_t h = hk * p.group + it / per_head;
      const int64_t s0 = (qb_first + it % per_head) * kStep;
      const Seq qs = seq_of(p, true, b, h);
      issue_raw<D>(raw, p.q, qs, s0, t);
      issue_raw<D>(raw + kRawTile, p.dout, qs, s0, t);
      issue_raw<D>(raw + 2 * kRawTile, p.qt, qs, s0, t);
      issue_raw<D>(raw + 3 * kRawTile, p.doutt, qs, s0, t);
      ptx::cp_async_commit();
      const int64_t entry = (b * p.heads_q + h) * p.q_s_entry;
      load_row_scales<D>(sbuf, p.q_sc, p, qs, s0, t);
      load_row_scales<D>(sbuf + 256, p.dout_sc, p, qs, s0, t);
      load_col_scales<D>(sbuf + 512, p.qt_sc, entry, p.q_s_scale_ld, p.swizzled, qs, s0, t);
      load_col_scales<D>(sbuf + 512 + 2 * D, p.doutt_sc, entry, p.q_s_scale_ld, p.swizzled, qs, s0, t);
      if (t < kStep) {
        const int64_t s = s0 + t;
        const int64_t li = (b * p.heads_q + h) * p.seqlen_q + s;
        lse_next = s < qs.len ? __ldg(p.lse + li) * kLog2e : 0.0f;
        delta_next = s < qs.len ? __ldg(p.delta + li) : 0.0f;
      }
    };
    if (n_iters > 0) prefetch(0);
    for (int64_t it = 0; it < n_iters; ++it) {
      const int st = static_cast<int>(it & 1);
      if (it >= kStages) bar_sync(kBarEmpty + st, kThreads);
      ptx::cp_async_wait<0>();
      bar_sync(kBarProducer, 128);  // every producer thread's copies and scale bytes are in
      uint8_t* stg = stage0 + st * 4 * kStepTile;
      dequant_row<D>(stg, raw, sbuf, t);
      dequant_row<D>(stg + kStepTile, raw + kRawTile, sbuf + 256, t);
      dequant_col<D>(stg + 2 * kStepTile, raw + 2 * kRawTile, sbuf + 512, t);
      dequant_col<D>(stg + 3 * kStepTile, raw + 3 * kRawTile, sbuf + 512 + 2 * D, t);
      if (t < kStep) {
        small[st * 128 + t] = lse_next;
        small[st * 128 + 64 + t] = delta_next;
      }
      ptx::fence_proxy_async_shared();
      bar_arrive(kBarFull + st, kThreads);
      bar_sync(kBarProducer, 128);  // staging buffers read by everyone: free for the next step
      if (it + 1 < n_iters) prefetch(it + 1);
    }
    return;
  }

  // ---- math warpgroups: 64 kv rows each ----
  asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
  const int wg = tid >> 7, t = tid & 127, w = t >> 5, l = t & 31;
  const int r0 = 16 * w + (l >> 2);
  const int64_t ja = j0 + wg * 64 + r0, jb = ja + 8;  // the thread's two kv positions
  const uint32_t k_addr = ptx::smem_addr(k_tile) + wg * 64 * 128;
  const uint32_t v_addr = ptx::smem_addr(v_tile) + wg * 64 * 128;
  float dk[D / 2], dv[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.0f;

  for (int64_t it = 0; it < n_iters; ++it) {
    const int st = static_cast<int>(it & 1);
    const int64_t i0 = (qb_first + it % per_head) * kStep;
    uint8_t* stg = stage0 + st * 4 * kStepTile;
    const uint32_t q_addr = ptx::smem_addr(stg), do_addr = q_addr + kStepTile;
    const uint32_t qc_addr = q_addr + 2 * kStepTile, doc_addr = q_addr + 3 * kStepTile;
    const float* lse2 = small + st * 128;
    const float* dlt = lse2 + 64;
    bar_sync(kBarFull + st, kThreads);

    float s[32], dp[32];
    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < D / 16; ++k) {
      const uint32_t ko = (k >> 2) * (kRows * 128) + (k & 3) * 32, qo = (k >> 2) * (kStep * 128) + (k & 3) * 32;
      ptx::wgmma_bf16_ss<64, 0>(s, desc(k_addr + ko), desc(q_addr + qo), k > 0);
    }
#pragma unroll
    for (int k = 0; k < D / 16; ++k) {
      const uint32_t ko = (k >> 2) * (kRows * 128) + (k & 3) * 32, qo = (k >> 2) * (kStep * 128) + (k & 3) * 32;
      ptx::wgmma_bf16_ss<64, 0>(dp, desc(v_addr + ko), desc(do_addr + qo), k > 0);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_acc(s);
    ptx::fence_acc(dp);

    // P^T, dS^T elementwise: entry idx is (kv row ja/jb, q column i0 + col).
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = 8 * jj + 2 * (l & 3) + e;
        const int64_t i = i0 + col;
        const float lse_l2 = lse2[col], delta = dlt[col];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int idx = 4 * jj + 2 * half + e;
          const int64_t j = half ? jb : ja;
          const bool vis = i < lq && j < lk && visible(p.mask, i, j, off);
          const float pr = vis ? exp2f(fmaf(s[idx], p.scale_log2, -lse_l2)) : 0.0f;
          dp[idx] = vis ? __fmul_rn(__fmul_rn(pr, __fsub_rn(dp[idx], delta)), p.softmax_scale) : 0.0f;
          s[idx] = __fmul_rn(pr, p.p_scale);
        }
      }
    }
    uint32_t pa[4][4], da[4][4];
#pragma unroll
    for (int q = 0; q < 16; ++q) pa[q >> 2][q & 3] = e4m3_round_bf16x2(s[2 * q], s[2 * q + 1]);
    mx_rows_to_frags(dp, da);

    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dv, pa[k], desc(doc_addr + k * 32), 1);
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dk, da[k], desc(qc_addr + k * 32), 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_acc(dv);
    ptx::fence_acc(dk);
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // the A registers stay live until the wgmmas reading them are done
      ptx::fence_regs(pa[k]);
      ptx::fence_regs(da[k]);
    }
    if (it + kStages < n_iters) bar_arrive(kBarEmpty + st, kThreads);
  }

  // Epilogue: bf16 pairs straight from the accumulators; rows past the sequence are not written.
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t j = half ? jb : ja;
    if (j >= lk) continue;
    const int64_t row = kvs.base + j * kvs.rstride;
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj) {
      const int x = 8 * jj + 2 * (l & 3);
      const int idx = 4 * jj + 2 * half;
      *reinterpret_cast<uint32_t*>(p.dk + row * D + x) = dev::f32x2_to_bf16x2(dk[idx], dk[idx + 1]);
      *reinterpret_cast<uint32_t*>(p.dv + row * D + x) =
          dev::f32x2_to_bf16x2(__fmul_rn(dv[idx], p.inv_p_scale), __fmul_rn(dv[idx + 1], p.inv_p_scale));
    }
  }
}

// ---- dQ ---------------------------------------------------------------------------------------
template <int D>
__device__ __forceinline__ void dq_body(const P& p, int64_t qblock) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  constexpr int kRowTile = kRows * D * 2, kStepTile = kStep * D * 2, kRawTile = kStep * D;
  uint8_t* q_tile = smem;
  uint8_t* do_tile = q_tile + kRowTile;
  uint8_t* stage0 = do_tile + kRowTile;  // per stage: K, V, K_col^T (bf16)
  uint8_t* raw = stage0 + kStages * 3 * kStepTile;  // FP8 staging of the next step: K, V, K_col
  float* small = reinterpret_cast<float*>(raw + 3 * kRawTile);  // lse*log2e [128], delta [128]
  uint8_t* sbuf = reinterpret_cast<uint8_t*>(small + 2 * kRows);  // scale bytes: 2 x [64][4], [D][2]

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

  load_row_tile<kRows, D, kThreads>(q_tile, p.q, p.q_sc, p, qs, i0, tid);
  load_row_tile<kRows, D, kThreads>(do_tile, p.dout, p.dout_sc, p, qs, i0, tid);
  if (tid < kRows) {
    const int64_t s = i0 + tid;
    const int64_t li = (b * p.heads_q + h) * p.seqlen_q + s;
    small[tid] = s < lq ? __ldg(p.lse + li) * kLog2e : 0.0f;
    small[kRows + tid] = s < lq ? __ldg(p.delta + li) : 0.0f;
  }
  ptx::fence_proxy_async_shared();
  __syncthreads();

  if (tid >= kMathThreads) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 56;\n");
    const int t = tid - kMathThreads;
    const int64_t entry = (b * p.heads_kv + hk) * p.kv_s_entry;
    auto prefetch = [&](int64_t it) {
      const int64_t s0 = it * kStep;
      issue_raw<D>(raw, p.k, kvs, s0, t);
      issue_raw<D>(raw + kRawTile, p.v, kvs, s0, t);
      issue_raw<D>(raw + 2 * kRawTile, p.kt, kvs, s0, t);
      ptx::cp_async_commit();
      load_row_scales<D>(sbuf, p.k_sc, p, kvs, s0, t);
      load_row_scales<D>(sbuf + 256, p.v_sc, p, kvs, s0, t);
      load_col_scales<D>(sbuf + 512, p.kt_sc, entry, p.kv_s_scale_ld, p.swizzled, kvs, s0, t);
    };
    if (n_iters > 0) prefetch(0);
    for (int64_t it = 0; it < n_iters; ++it) {
      const int st = static_cast<int>(it & 1);
      if (it >= kStages) bar_sync(kBarEmpty + st, kThreads);
      ptx::cp_async_wait<0>();
      bar_sync(kBarProducer, 128);
      uint8_t* stg = stage0 + st * 3 * kStepTile;
      dequant_row<D>(stg, raw, sbuf, t);
      dequant_row<D>(stg + kStepTile, raw + kRawTile, sbuf + 256, t);
      dequant_col<D>(stg + 2 * kStepTile, raw + 2 * kRawTile, sbuf + 512, t);
      ptx::fence_proxy_async_shared();
      bar_arrive(kBarFull + st, kThreads);
      bar_sync(kBarProducer, 128);
      if (it + 1 < n_iters) prefetch(it + 1);
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
  const int wg = tid >> 7, t = tid & 127, w = t >> 5, l = t & 31;
  const int r0 = 16 * w + (l >> 2);
  const int64_t ia = i0 + wg * 64 + r0, ib = ia + 8;
  const float lse_a = small[wg * 64 + r0], lse_b = small[wg * 64 + r0 + 8];
  const float dl_a = small[kRows + wg * 64 + r0], dl_b = small[kRows + wg * 64 + r0 + 8];
  const uint32_t q_addr = ptx::smem_addr(q_tile) + wg * 64 * 128;
  const uint32_t do_addr = ptx::smem_addr(do_tile) + wg * 64 * 128;
  float dq[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) dq[i] = 0.0f;

  for (int64_t it = 0; it < n_iters; ++it) {
    const int st = static_cast<int>(it & 1);
    const int64_t jbase = it * kStep;
    const uint32_t k_addr = ptx::smem_addr(stage0 + st * 3 * kStepTile);
    const uint32_t v_addr = k_addr + kStepTile, kc_addr = k_addr + 2 * kStepTile;
    bar_sync(kBarFull + st, kThreads);

    float s[32], dp[32];
    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < D / 16; ++k) {
      const uint32_t ao = (k >> 2) * (kRows * 128) + (k & 3) * 32, bo = (k >> 2) * (kStep * 128) + (k & 3) * 32;
      ptx::wgmma_bf16_ss<64, 0>(s, desc(q_addr + ao), desc(k_addr + bo), k > 0);
    }
#pragma unroll
    for (int k = 0; k < D / 16; ++k) {
      const uint32_t ao = (k >> 2) * (kRows * 128) + (k & 3) * 32, bo = (k >> 2) * (kStep * 128) + (k & 3) * 32;
      ptx::wgmma_bf16_ss<64, 0>(dp, desc(do_addr + ao), desc(v_addr + bo), k > 0);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_acc(s);
    ptx::fence_acc(dp);

#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int64_t j = jbase + 8 * jj + 2 * (l & 3) + e;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int idx = 4 * jj + 2 * half + e;
          const int64_t i = half ? ib : ia;
          const bool vis = i < lq && j < lk && visible(p.mask, i, j, off);
          const float pr = vis ? exp2f(fmaf(s[idx], p.scale_log2, -(half ? lse_b : lse_a))) : 0.0f;
          dp[idx] = vis ? __fmul_rn(__fmul_rn(pr, __fsub_rn(dp[idx], half ? dl_b : dl_a)), p.softmax_scale) : 0.0f;
        }
      }
    }
    uint32_t da[4][4];
    mx_rows_to_frags(dp, da);

    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::wgmma_bf16_rs<D, 0>(dq, da[k], desc(kc_addr + k * 32), 1);
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_acc(dq);
#pragma unroll
    for (int k = 0; k < 4; ++k) ptx::fence_regs(da[k]);
    if (it + kStages < n_iters) bar_arrive(kBarEmpty + st, kThreads);
  }

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t i = half ? ib : ia;
    if (i >= lq) continue;
    const int64_t row = qs.base + i * qs.rstride;
#pragma unroll
    for (int jj = 0; jj < D / 8; ++jj) {
      const int x = 8 * jj + 2 * (l & 3);
      const int idx = 4 * jj + 2 * half;
      *reinterpret_cast<uint32_t*>(p.dq + row * D + x) = dev::f32x2_to_bf16x2(dq[idx], dq[idx + 1]);
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <int D>
__device__ __forceinline__ void dkv_entry(const P& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  dkv_body<D>(p);
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
#define MXQ_ATTN_BWD_ENTRIES(D)                                                                              \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdDeltaThreads)                                    \
      mxq_attn_bwd_sm90_delta_d##D(const mxq::AttnBwdSm90Params p) {                                         \
    mxq::sm90attn::delta_body<D>(p);                                                                         \
  }                                                                                                          \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)                                      \
      mxq_attn_bwd_sm90_dkv_d##D(const mxq::AttnBwdSm90Params p) {                                           \
    mxq::sm90attn::dkv_entry<D>(p);                                                                          \
  }                                                                                                          \
  extern "C" __global__ void __launch_bounds__(mxq::kAttnBwdThreads, 1)                                      \
      mxq_attn_bwd_sm90_dq_d##D(const mxq::AttnBwdSm90Params p) {                                            \
    mxq::sm90attn::dq_entry<D>(p);                                                                           \
  }

MXQ_ATTN_BWD_ENTRIES(64)
MXQ_ATTN_BWD_ENTRIES(128)
