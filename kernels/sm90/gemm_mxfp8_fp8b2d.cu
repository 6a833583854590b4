// MXFP8 grouped GEMM for Hopper (sm_90a), the 32x32-weight fast path: D = alpha * A * B^T (+ D) for
// plans with MXQ_GEMM_ATTR_B_BLOCK_2D, i.e. B quantized in 32x32 blocks (one UE8M0 scale per 32 rows
// of N x 32 of K, stored as the usual 1x32 scale tensor whose 32-row groups repeat). A keeps exact
// 1x32 scales. M-grouped (fprop/dgrad) and dense batched problems; K-grouped plans keep the first
// FP8-wgmma kernel (gemm_mxfp8.cu).
//
// Why. Hopper's FP8 wgmma runs at twice the bf16 rate but has no scale operand, so each 32-block of K
// is one m64n128k32 wgmma into a fresh fp32 partial that the CUDA cores fold into the running sum:
// acc += P * (sa[row] * sb[col]). With B's scale uniform over 32 columns the product sa * sb is one
// value per (row, 32-column block, k32), so the promotion is ONE FFMA per accumulator element and
// no multiply: the producer computes the products. A fresh partial per 32-block also bounds the
// error of the tensor core's truncated internal FP8 accumulation to 32 products (the first FP8
// kernel's accuracy, docs/NUMERICS.md).
//
// Roles (384 threads, setmaxnreg 56 / 224).
//   * Warp 0 of warpgroup 0, one thread: per 128-wide K stage, TMA loads of A's 128 x 128-byte box and
//     B's 128 x 128-byte box (128-byte swizzle: the layout wgmma's descriptors read) into a ring of
//     kStages stages; `full` completes on the bytes (arrive.expect_tx) and on the scale warp below.
//   * Warps 1..3 of warpgroup 0, stage `it` by warp 1 + it % 3 (three stages in flight, so the global
//     loads' latency is not paid once per stage): lane l loads, before waiting for the free stage, the
//     stage's 4 scale bytes of A's rows l + 32i (i < 4) and of B's 32-row block l % 4 (one row of each
//     32-row block of B: the 32x32 contract) as one word per row (swizzled: the row's aligned word in
//     the 128x4 tile; LINEAR: 4 bytes), takes B's 4 block scales from lanes 0..3 by shuffles and, once
//     the stage is free, stores the fp32 products sa * sb[nb] as [k32][row][nb] (a float4 per row),
//     then arrives on `full` (32 arrivals). The TMA thread and the scale warps wait for free stages
//     with a suspend-time hint (mbar_wait_suspend): retried at once, those waits took ~14% of the
//     issued instructions, on the sub-partitions of the math warps (ncu, 2026-11-23). Rows outside
//     the tile's group or N, and 32-blocks past K, get 0: no scale outside the tensors is read,
//     padding scales (NaN) are never used. (This form,
//     measured 2026-11-23: fprop E8 600-608 TFLOP/s; the byte-per-lane form before it 447-473 in
//     earlier runs: docs/PERFORMANCE.md, "Twelfth session (helper gemm16)".)
//   * Warpgroups 1 and 2 (rows 0..63 and 64..127 of the tile): for each k32 step q, issue the wgmma of
//     step q into partial q % 2, wait until only it is in flight, promote step q - 1 from the other
//     partial (2 LDS.128 of products, 64 FFMA per thread), so the tensor cores run step q while step
//     q - 1 is promoted; a stage is released (256 arrivals on `empty`) once its last step is promoted.
//     The products are loaded before the wgmma wait: loaded after it, their latency stalled the first
//     FFMA of every step (13% of the warp samples). Both changes: fprop E32 / E128 +12-14% / +7-10%,
//     E8 +0.5-13% (noisy) (docs/PERFORMANCE.md, "Fourteenth session" under Grouped GEMM).
// Persistent CTAs walk the tile space of gemm_tiles.cuh (group table from the device-side group
// ends: any group size, empty groups, no host synchronization). Rows of a tile past its group's end
// are loaded (TMA, the next group's rows or zero fill past the tensor) and computed but never stored;
// K past the end is zero-filled by TMA. Epilogue: alpha, optional accumulate, direct stores
// (store_acc_tile).
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "sm90/gemm_params.cuh"
#include "sm90/gemm_tiles.cuh"

namespace mxq {
namespace sm90gemm {
namespace fp8b2d {

using ptx::Fp8Kind;

constexpr int kThreads = kGemmSm90Fp8B2dThreads;
constexpr int kBM = kTileM, kBN = kGemmSm90Fp8B2dTileN, kBK = kGemmSm90TileK;
constexpr int kStages = kGemmSm90Fp8B2dStages;
constexpr int kABytes = kBM * kBK;
constexpr int kStageBytes = static_cast<int>(gemm_sm90_fp8b2d_stage_bytes());
constexpr int kNb = kBN / 32;                                                     // 32-column blocks of B
constexpr int kScaleFloats = static_cast<int>(gemm_sm90_fp8b2d_scale_bytes() / 4);  // [4][kBM][kNb]
constexpr int kScaleWarps = 3;
// setmaxnreg: launched at 384 x 168; 128 * 56 + 256 * 224 = 64512 = 384 * 168 (the math warps need
// 192 accumulator registers; the scale warps spill at 40).
constexpr int kProducerRegs = 56, kConsumerRegs = 224;
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * 168, "setmaxnreg pool: 384 threads launched at 168 registers");
static_assert(kNb == 4, "the consumers read a row's products as one float4");

template <Fp8Kind AK, Fp8Kind BK, bool kOutF32, int kU>
__device__ __forceinline__ void gemm_body(const GemmSm90TmaParams& tp) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const GemmSm90Params& p = tp.g;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);  // [kStages] (A box, B box)
  float* sprod = reinterpret_cast<float*>(smem + kStages * kStageBytes);  // [kStages][4][kBM][kNb]
  uint64_t* full = reinterpret_cast<uint64_t*>(sprod + kStages * kScaleFloats);
  uint64_t* empty = full + kStages;
  int* table = reinterpret_cast<int*>(empty + kStages);  // ends[G+1], prefix[G+1]
  __shared__ int warp_buf[kThreads / 32];

  const int tid = threadIdx.x;
  // full: the TMA thread's arrive.expect_tx and the 32 lanes of the stage's scale warp; empty: every
  // math thread, once the stage's last k32 step is promoted.
  if (tid == 0) ptx::mbar_init_ring(full, empty, kStages, 1 + 32, 256);
  const TileSpace ts = build_tile_space<kThreads>(p, kBN, table, warp_buf);
  __syncthreads();  // barriers initialized, table visible

  const int64_t K = p.k, N = p.n;
  const int nk = static_cast<int>(layout::ceil_div(K, static_cast<int64_t>(kBK)));
  const int kc = static_cast<int>(layout::scale_cols(K));
  const int wg = tid >> 7, warp = tid >> 5, lane = tid & 31;

  if (wg == 0) {
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (warp == 0) {
      // ---- TMA thread ----------------------------------------------------------------------------------
      if (lane != 0) return;
      ptx::tma_prefetch_desc(tp.tmap_a);
      ptx::tma_prefetch_desc(tp.tmap_b);
      uint32_t it = 0;
      for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
        const TileInfo ti = decode_tile(p, ts, t, kBN);
        const int32_t arow = static_cast<int32_t>(ti.row_begin);
        const int32_t brow = static_cast<int32_t>(static_cast<int64_t>(ti.group) * N + ti.n0);
        for (int kt = 0; kt < nk; ++kt, ++it) {
          const uint32_t s = it % kStages, round = it / kStages;
          ptx::mbar_wait_suspend(&empty[s], (round & 1) ^ 1);
          ptx::mbar_arrive_expect_tx(&full[s], kStageBytes);
          uint8_t* st = smem + s * kStageBytes;
          ptx::tma_load_2d(ptx::smem_addr(st), tp.tmap_a, kt * kBK, arow, &full[s]);
          ptx::tma_load_2d(ptx::smem_addr(st + kABytes), tp.tmap_b, kt * kBK, brow, &full[s]);
        }
      }
      return;
    }
    // ---- scale warps: the products sa[row] * sb[column block] of a stage ---------------------------------
    if (warp > kScaleWarps) return;
    const int sw = warp - 1;
    const bool swz = p.swizzled != 0;
    const int64_t ld = p.scale_ld;
    uint32_t it = 0;
    for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
      const TileInfo ti = decode_tile(p, ts, t, kBN);
      // Lane l takes rows l + 32i (i < 4) of A and 32-row block l % 4 of B; each loads the stage's 4
      // scale bytes of its row as one word (swizzled: the row's aligned word in the 128x4 tile;
      // LINEAR: 4 bytes). A's scale row of tile row 0: swizzled, 128 * (the m-tile across groups /
      // batch entries: group bases padded to 128 rows); LINEAR, the data row. B: rows n0 + 32 nb (one
      // row of each 32-row block: the hint's contract), in the swizzled layout the first 16 bytes of
      // the 128x4 tile of rows n0.. (n0 is a multiple of 128).
      const uint8_t* a_base = swz ? p.a_scales + ti.mt * (ld >> 2) * 512 + lane * 16
                                  : p.a_scales + (ti.row_begin + lane) * ld;
      const int nbl = lane & 3;
      const uint8_t* b_base = p.b_scales + static_cast<int64_t>(ti.group) * p.b_scale_stride +
                              (swz ? static_cast<int64_t>(ti.n0 >> 7) * (ld >> 2) * 512 + nbl * 4
                                   : (ti.n0 + 32 * nbl) * ld);
      const int a_rows = ti.rows_valid - lane;  // row lane + 32i is in the tile's group iff 32i < a_rows
      const int b_blocks = (ti.n_valid + 31) / 32;  // 32-row blocks of B inside N (1..4)
      const bool b_valid = nbl < b_blocks;
      // Stage it0 + kt of the ring is this warp's when (it0 + kt) % 3 == sw.
      const uint32_t it0 = it;
      it += nk;
      for (int kt = static_cast<int>((sw + kScaleWarps - it0 % kScaleWarps) % kScaleWarps); kt < nk; kt += kScaleWarps) {
        const int kb0 = kt * 4;
        // The 4 scale bytes at p (a row's columns kb0..kb0+3), bytes past ceil(K/32) as 0 (masked below).
        auto word = [&](const uint8_t* q) -> uint32_t {
          if (swz) return __ldg(reinterpret_cast<const uint32_t*>(q + int64_t(kt) * 512));
          uint32_t w = 0;
#pragma unroll
          for (int jj = 0; jj < 4; ++jj)
            if (kb0 + jj < kc) w |= static_cast<uint32_t>(__ldg(q + kb0 + jj)) << (8 * jj);
          return w;
        };
        uint32_t aw[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) aw[i] = 32 * i < a_rows ? word(a_base + (swz ? int64_t(i) * 4 : int64_t(32 * i) * ld)) : 0u;
        const uint32_t bw = b_valid ? word(b_base) : 0u;
        const uint32_t sit = it0 + kt, s = sit % kStages, round = sit / kStages;
        ptx::mbar_wait_suspend(&empty[s], (round & 1) ^ 1);
        float* dst = sprod + s * kScaleFloats + lane * kNb;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool kv = kb0 + j < kc;
          // Block nb's B scale from lane nb's word (lanes 4g + nb hold the same block).
          const uint32_t bj = (bw >> (8 * j)) & 0xFFu;
          float sb[kNb];
#pragma unroll
          for (int nb = 0; nb < kNb; ++nb) {
            const uint32_t e = __shfl_sync(0xFFFFFFFFu, bj, nb);
            sb[nb] = kv && nb < b_blocks ? dev::ue8m0_to_f32(static_cast<uint8_t>(e)) : 0.0f;
          }
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const float sa = kv && 32 * i < a_rows ? dev::ue8m0_to_f32(static_cast<uint8_t>(aw[i] >> (8 * j))) : 0.0f;
            *reinterpret_cast<float4*>(dst + j * (kBM * kNb) + 32 * i * kNb) =
                make_float4(sa * sb[0], sa * sb[1], sa * sb[2], sa * sb[3]);
          }
        }
        ptx::mbar_arrive(&full[s]);
      }
    }
    return;
  }

  // ---- math warpgroups ---------------------------------------------------------------------------------
  ptx::setmaxnreg_inc<kConsumerRegs>();
  const int cw = wg - 1, warp_in_wg = warp & 3;
  const int r0 = cw * 64 + warp_in_wg * 16 + (lane >> 2);  // accumulator rows r0, r0 + 8
  const int c0 = (lane & 3) * 2;                            // accumulator columns 8c + c0, + 1
  uint32_t it = 0;
  for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    float part[2][64];

    auto issue = [&](float(&d)[64], uint32_t a_addr, uint32_t b_addr) {
      ptx::fence_acc(d);
      ptx::wgmma_fence();
      ptx::wgmma_m64n128k32<AK, BK>(d, ptx::smem_desc_k128_sw128(a_addr), ptx::smem_desc_k128_sw128(b_addr));
      ptx::wgmma_commit();
    };
    // acc += d * (sa * sb): this thread's rows r0 and r0 + 8, columns 8c + c0 (+1) lie in block c / 4.
    // The products of k32 step j of ring stage st for rows r0 and r0 + 8: read before the wgmma wait
    // (the stage's `full` was awaited before its wgmma was issued), so the shared-memory latency is
    // not paid after the wait.
    auto load_prods = [&](uint32_t st, int j, float4& s0, float4& s1) {
      const float* prod = sprod + st * kScaleFloats + j * (kBM * kNb);
      s0 = *reinterpret_cast<const float4*>(prod + r0 * kNb);
      s1 = *reinterpret_cast<const float4*>(prod + (r0 + 8) * kNb);
    };
    auto promote = [&](const float(&d)[64], const float4 s0, const float4 s1) {
      const float a0[4] = {s0.x, s0.y, s0.z, s0.w}, a1[4] = {s1.x, s1.y, s1.z, s1.w};
#pragma unroll
      for (int c = 0; c < 16; ++c) {
        acc[c * 4 + 0] = fmaf(d[c * 4 + 0], a0[c >> 2], acc[c * 4 + 0]);
        acc[c * 4 + 1] = fmaf(d[c * 4 + 1], a0[c >> 2], acc[c * 4 + 1]);
        acc[c * 4 + 2] = fmaf(d[c * 4 + 2], a1[c >> 2], acc[c * 4 + 2]);
        acc[c * 4 + 3] = fmaf(d[c * 4 + 3], a1[c >> 2], acc[c * 4 + 3]);
      }
    };

    // kU stages per loop body, their 4 kU k32 steps in one software pipeline: the wgmma of step q + 1
    // is issued before step q is promoted, also across the body's stage boundaries (the next stage's
    // `full` is awaited between them). Only the body's last step is promoted with no wgmma of this
    // warpgroup in flight (the other warpgroup's fill the tensor cores then). Nothing is in flight
    // across the loop's back edge, which keeps ptxas from serializing the wgmmas (C7514); stages
    // left over (nk % kU) run one per body.
    auto body = [&](auto u_tag) {
      constexpr int U = decltype(u_tag)::value;
      const uint32_t base = ptx::smem_addr(smem) + cw * 64 * kBK;
#pragma unroll
      for (int q = 0; q < 4 * U; ++q) {
        const int u = q / 4, jj = q % 4;
        const uint32_t s = (it + u) % kStages;
        if (jj == 0) ptx::mbar_wait(&full[s], ((it + u) / kStages) & 1);
        const uint32_t a_addr = base + s * kStageBytes + 32 * jj;
        issue(part[q & 1], a_addr, a_addr - cw * 64 * kBK + kABytes);
        if (q > 0) {
          const int pu = (q - 1) / 4, pj = (q - 1) % 4;
          const uint32_t ps = (it + pu) % kStages;
          float4 s0, s1;
          load_prods(ps, pj, s0, s1);
          ptx::wgmma_wait<1>();
          ptx::fence_acc(part[(q - 1) & 1]);
          promote(part[(q - 1) & 1], s0, s1);
          if (pj == 3) ptx::mbar_arrive(&empty[ps]);  // its wgmmas are done, its products read
        }
      }
      const uint32_t ls = (it + U - 1) % kStages;
      float4 l0, l1;
      load_prods(ls, 3, l0, l1);
      ptx::wgmma_wait<0>();
      ptx::fence_acc(part[(4 * U - 1) & 1]);
      promote(part[(4 * U - 1) & 1], l0, l1);
      ptx::mbar_arrive(&empty[ls]);
      it += U;
    };
    int kt = 0;
    if constexpr (kU > 1)
      for (; kt + kU <= nk; kt += kU) body(std::integral_constant<int, kU>{});
    for (; kt < nk; ++kt) body(std::integral_constant<int, 1>{});

    // ---- epilogue: alpha, optional accumulate, round once ------------------------------------------------
    // (The tile's rows and columns are decoded only now: nothing of them is live across the K loop.)
    const TileInfo ti = decode_tile(p, ts, t, kBN);
    store_acc_tile<kOutF32>(p, ti, false, r0, c0, reinterpret_cast<const float(&)[1][64]>(acc));
  }
#else
  // Generic PTX build (compute_90 without 'a'): no wgmma, setmaxnreg or TMA; the launcher never
  // selects this kernel on such a device, and a stray launch fails loudly.
  __trap();
#endif
}

}  // namespace fp8b2d
}  // namespace sm90gemm
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_gemm.cpp):
// mxq_gemm_sm90_fp8b2d_<A>_<B>_<D>.
#define MXQ_GEMM_SM90_FP8B2D_ENTRY(NAME, AK, BK, F32, U)                                                  \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90Fp8B2dThreads, 1)                            \
      NAME(const __grid_constant__ mxq::GemmSm90TmaParams p) {                                            \
    mxq::sm90gemm::fp8b2d::gemm_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32, U>(p);             \
  }
// 4 stages per loop body. The m64n64k32-halves form (three wgmmas in flight while one half is
// promoted) measured 6-12% slower on fprop and was removed (docs/PERFORMANCE.md, "Twelfth session
// (helper gemm16)"; its code is in commit e28dc41).
#define MXQ_GEMM_SM90_FP8B2D_ENTRIES(A, B, AK, BK)                                             \
  MXQ_GEMM_SM90_FP8B2D_ENTRY(mxq_gemm_sm90_fp8b2d_##A##_##B##_bf16, AK, BK, false, 4)          \
  MXQ_GEMM_SM90_FP8B2D_ENTRY(mxq_gemm_sm90_fp8b2d_##A##_##B##_f32, AK, BK, true, 4)
MXQ_GEMM_SM90_FP8B2D_ENTRIES(e4m3, e4m3, E4M3, E4M3)
MXQ_GEMM_SM90_FP8B2D_ENTRIES(e4m3, e5m2, E4M3, E5M2)
MXQ_GEMM_SM90_FP8B2D_ENTRIES(e5m2, e4m3, E5M2, E4M3)
