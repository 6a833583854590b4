// MXFP8 grouped GEMM for Hopper (sm_90a), BF16 path: D = alpha * A * B^T (+ D) with A and B MXFP8
// (1x32 UE8M0 scales along K), computed by converting every FP8 element with its scale *exactly*
// to bf16 and running bf16 wgmma with fp32 accumulation. Same problems as gemm_mxfp8.cu: M-grouped
// (fprop/dgrad), K-grouped (wgrad) and dense batched, the same tile scheduling (gemm_tiles.cuh).
//
// Why this path. FP8 wgmma has no scale operand, so a 1x32 MXFP8 GEMM on FP8 tensor cores must fold
// a fresh fp32 partial into the sum after every k32 step: 2 CUDA-core instructions per *output*
// element per 32 K, which caps it at ~50% of the FP8 peak (= the bf16 peak) and still needs every
// issue slot. Here the scales are applied once per *loaded* element instead: an E4M3 / E5M2 value
// times 2^k is a bf16 value (3 or 2 mantissa bits, 8-bit exponent), so the products are exact and
// the tensor core sums them in fp32 -- the accuracy of an fp32 GEMM on the dequantized operands,
// without the FP8 tensor core's truncated 32-product adder. For a 128x256 tile the conversion is
// (128 + 256) elements per K against 32768 MACs, about 3% of the issue slots per MAC that the
// promotion costs; the ceiling becomes the bf16 tensor rate.
//
// Conversion (2 instructions per element, no table, no cvt unit): for a word of four FP8 bytes,
// PRMT spreads bytes (0, 2) and (1, 3) into sign-extended 16-bit lanes; a shift and a mask leave
// sign | exponent | mantissa in bf16 position, which is the value times 2^-120 (E4M3; E5M2: 2^-112),
// subnormals included; one bf16x2 multiply by 2^(E-127+120) applies the scale, exactly (the
// result has <= 4 significant bits) unless it leaves bf16's range. The pairs (0, 2) / (1, 3) permute
// K inside each 4-byte word; A and B use the same permutation, so the dot products are unchanged.
// Rows whose K stage holds an FP8 NaN/Inf, or a scale the single multiply cannot reach (E > 134
// for E4M3, > 142 for E5M2, E = 255 NaN), take an exact per-element path (fp8 -> f32, times
// 2^(E-127), -> bf16): NaN stays NaN, and results below bf16's subnormal range (|x| < 2^-133)
// round, where fp32 output would be subnormal anyway.
//
// Roles (384 threads, setmaxnreg). Warpgroup 0 is the producer: it stages B's FP8 tile (256 rows x
// 64 K per stage) with cp.async into a 4-deep ring, converts each stage and stores it
// 128-byte-swizzled into one of 3 bf16 slots, then arrives on the slot's `full` mbarrier.
// Warpgroups 1 and 2 are consumers, 64 rows each: each thread stages its own A bytes with cp.async
// (4 deep, thread-private, so only cp.async.wait_group orders them), converts them into the bf16 A
// fragments of register-sourced wgmma (m64n128k16 x 2 halves x 4 K steps per stage), waits for
// the slot, issues, waits for its wgmma and releases the slot on its `empty` mbarrier. While one
// consumer converts, the other's wgmma keeps the tensor cores busy. Consumer threads own
// accumulator elements exactly as in gemm_mxfp8.cu; the epilogue is the same. Scale bytes are
// prefetched into L1 when their stage's copies are issued and loaded a stage ahead.
// Each A thread holds bytes [16q, 16q + 16) of its rows' 64-byte stage (q = lane % 4); the K
// permutation above maps byte 16q + 4j + {0, 2, 1, 3} to column {2q, 2q+1, 8+2q, 9+2q} of K step
// j, and the producer writes B's bf16 columns in the same order.
// Measured state and what limits it: docs/PERFORMANCE.md ("Grouped GEMM").
//
// Masking: rows outside the tile's group or N, and K past the range, load as zeros with a zero
// multiplier (padding scales may be NaN); a K-grouped range may start anywhere (register loads of
// unaligned 16-byte windows, gemm_tiles.cuh).
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_bf16.cuh"
#include "sm90/gemm_bf16_convert.cuh"
#include "sm90/gemm_params.cuh"
#include "sm90/gemm_tiles.cuh"

namespace mxq {
namespace sm90gemm {
namespace bf16path {

using ptx::Fp8Kind;

constexpr int kThreads = kGemmSm90Bf16Threads;
constexpr int kBM = kTileM, kBN = kGemmSm90Bf16TileN, kBK = kGemmSm90Bf16TileK;
constexpr int kStages = kGemmSm90Bf16Stages;
constexpr int kSlotBytes = static_cast<int>(gemm_sm90_bf16_slot_bytes());
constexpr int kFp8Stages = kGemmSm90Bf16Fp8Stages;
constexpr int kStageBytes = kBN * kBK;  // FP8 staging of one K stage of B
constexpr int kAStages = kGemmSm90Bf16AStages;
constexpr int kAStageBytes = kBM * kBK;  // FP8 staging of one K stage of A (consumer-private)
// setmaxnreg budgets. The CTA's register pool is what it launched with, 384 threads x 168
// (__launch_bounds__(384, 1)); the consumers' increase blocks until the producer's decrease has
// freed enough, so 128 * kProducerRegs + 256 * kConsumerRegs must fit in 384 * 168. The producer
// holds no loads in flight (they land in shared memory); each consumer thread holds two
// 64-register accumulators and the A fragments.
constexpr int kProducerRegs = 104, kConsumerRegs = 200;
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * 168, "setmaxnreg pool: 384 threads launched at 168 registers");

template <Fp8Kind AK, Fp8Kind BK, bool kOutF32>
__device__ __forceinline__ void gemm_body(const GemmSm90Params& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  uint8_t* smem_stage = smem + kStages * kSlotBytes;  // FP8 staging ring of the producer
  uint8_t* smem_astage = smem_stage + kFp8Stages * kStageBytes;  // A staging ring of the consumers
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_astage + kAStages * kAStageBytes);
  uint64_t* empty = full + kStages;
  int* table = reinterpret_cast<int*>(empty + kStages);  // ends[G+1], prefix[G+1]
  __shared__ int warp_buf[kThreads / 32];

  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbar_init(&full[s], 128);   // every producer thread arrives once per stage
      ptx::mbar_init(&empty[s], 256);  // every consumer thread arrives once per stage
    }
  }
  const TileSpace ts = build_tile_space<kThreads>(p, kBN, table, warp_buf);
  __syncthreads();  // barriers initialized, table visible

  const bool swz = p.swizzled != 0;
  const int64_t K = p.k, N = p.n;
  const int wg = tid >> 7;

  if (wg == 0) {
    // ---- producer: B tile (256 rows) -> bf16 slots ----------------------------------------------
    ptx::setmaxnreg_dec<kProducerRegs>();
    uint32_t it = 0;  // stage counter across tiles: slot it % kStages, round it / kStages
    for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
      const TileInfo ti = decode_tile(p, ts, t, kBN);
      auto run = [&](auto kg_tag) {
        constexpr bool kKG = decltype(kg_tag)::value;
        const int64_t b_group = kKG ? 0 : ti.group;
        const int64_t len = kKG ? ti.len : K;
        const int kc = static_cast<int>(layout::scale_cols(len));
        const int nk = static_cast<int>(layout::ceil_div(len, kBK));
        const uint8_t* b_scales = p.b_scales + b_group * p.b_scale_stride;
        const bool aligned = (ti.t0 & 15) == 0;  // every row 16-byte aligned (K % 16 == 0): t0 decides
        const uint8_t* brow[2];
        bool bvalid[2];
        int64_t srow[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int row = tid + 128 * r;
          bvalid[r] = row < ti.n_valid;
          brow[r] = p.b + (b_group * N + ti.n0 + (bvalid[r] ? row : 0)) * K + ti.t0;
          srow[r] = ti.n0 + row;
        }
        auto scale_ptr = [&](int r, int kb) {
          const int64_t col = ti.col_base + kb;
          return b_scales + (swz ? layout::swizzled_offset(srow[r], col, p.scale_ld) : srow[r] * p.scale_ld + col);
        };
        // This thread's FP8 staging area of slot s8: rows r = 0, 1, four 16-byte chunks each,
        // chunk index XORed with the thread's low bits so a warp's 16-byte reads hit distinct banks.
        auto stage_ptr = [&](int s8, int r, int c) {
          return smem_stage + s8 * kStageBytes + tid * 128 + (((r * 4 + c) ^ (tid & 7)) << 4);
        };
        // Copies K-stage kt of this thread's rows into staging slot s8 (no registers held): cp.async
        // with zero-fill when the K range starts 16-byte aligned (always, but for K-grouped tiles),
        // else through registers.
        auto issue = [&](int kt) {
          const int s8 = kt % kFp8Stages;
#pragma unroll
          for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              const int64_t off = int64_t(kt) * kBK + 16 * c, rem = len - off;
              const int nb = !bvalid[r] || rem <= 0 ? 0 : (rem >= 16 ? 16 : static_cast<int>(rem));
              uint8_t* dst = stage_ptr(s8, r, c);
              if (!kKG || (aligned && (nb & 15) == 0))
                ptx::cp_async_16_zfill(ptx::smem_addr(dst), nb ? brow[r] + off : p.b, nb != 0);
              else
                *reinterpret_cast<uint4*>(dst) = load_unaligned_16(brow[r] + off, nb);
            }
#pragma unroll
            for (int h = 0; h < 2; ++h)
              if (bvalid[r] && 2 * kt + h < kc) prefetch_l1(scale_ptr(r, 2 * kt + h));
          }
        };
        // Scale bytes of stage kt's two 32-blocks (L1-prefetched when the stage was issued).
        auto load_e = [&](int kt, uint32_t (&e)[2][2]) {
#pragma unroll
          for (int r = 0; r < 2; ++r)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int kb = 2 * kt + h;
              e[r][h] = bvalid[r] && kb < kc ? __ldg(scale_ptr(r, kb)) : 0u;
            }
        };
#pragma unroll
        for (int s = 0; s < kFp8Stages - 1; ++s) {
          if (s < nk) issue(s);
          ptx::cp_async_commit();
        }
        uint32_t e[2][2] = {{0u, 0u}, {0u, 0u}};
        if (nk > 0) load_e(0, e);
        for (int kt = 0; kt < nk; ++kt) {
          if (kt + kFp8Stages - 1 < nk) issue(kt + kFp8Stages - 1);
          ptx::cp_async_commit();
          ptx::cp_async_wait<kFp8Stages - 1>();  // this thread's copies of stage kt have landed
          const uint32_t slot = it % kStages, round = it / kStages;
          ptx::mbar_wait(&empty[slot], (round & 1) ^ 1);
          uint8_t* dst = smem + slot * kSlotBytes;
          const int s8 = kt % kFp8Stages;
#pragma unroll
          for (int r = 0; r < 2; ++r) {
            const int row = tid + 128 * r;
            const int kb0 = 2 * kt;
            const Scale s0 = make_scale<BK>(e[r][0], bvalid[r] && kb0 < kc);
            const Scale s1 = make_scale<BK>(e[r][1], bvalid[r] && kb0 + 1 < kc);
            uint32_t w[16];  // w[4q + j]: word j of chunk q
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              const uint4 v = *reinterpret_cast<const uint4*>(stage_ptr(s8, r, c));
              w[4 * c + 0] = v.x;
              w[4 * c + 1] = v.y;
              w[4 * c + 2] = v.z;
              w[4 * c + 3] = v.w;
            }
            uint32_t spec = 0;
#pragma unroll
            for (int i = 0; i < 16; ++i) spec |= special_bits<BK>(w[i]);
            const bool slow = s0.slow || s1.slow || (spec & 0x80808080u) != 0;
            uint8_t* drow = dst + row * 128;
            // Two separately unrolled versions, so the rare exact path costs nothing in the fast one.
            auto emit = [&](auto slow_tag) {
              constexpr bool kSlow = decltype(slow_tag)::value;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                uint32_t lo[4], hi[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                  if constexpr (kSlow) cvt_exact<BK>(w[4 * q + j], q < 2 ? s0.exact : s1.exact, lo[q], hi[q]);
                  else cvt_fast<BK>(w[4 * q + j], q < 2 ? s0.fast : s1.fast, lo[q], hi[q]);
                }
                store_kstep(drow, row & 7, j, lo, hi);
              }
            };
            if (slow) emit(std::true_type{});
            else emit(std::false_type{});
          }
          ptx::fence_proxy_async_shared();  // generic-proxy stores -> wgmma's async-proxy reads
          ptx::mbar_arrive(&full[slot]);
          ++it;
          if (kt + 1 < nk) load_e(kt + 1, e);  // in flight while waiting for the next slot
        }
        ptx::cp_async_wait<0>();  // nothing may still land in staging when the next tile starts
      };
      if (ts.kgrouped) run(std::true_type{});
      else run(std::false_type{});
    }
    return;
  }

  // ---- consumers: 64 rows each, A in registers, bf16 wgmma ----------------------------------------
  ptx::setmaxnreg_inc<kConsumerRegs>();
  const int cw = wg - 1, lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
  const int q = lane & 3;
  const int r0 = cw * 64 + warp_in_wg * 16 + (lane >> 2);  // and r0 + 8
  const int c0 = q * 2;                                     // and + 8*j, + 1
  // This thread's A staging: [slot][row h][consumer thread] 16-byte chunks (a warp's reads are
  // consecutive 16-byte words: no bank conflicts).
  const int ctid = tid - 128;
  auto a_stage_ptr = [&](int s8, int h) { return smem_astage + ((s8 * 2 + h) * 256 + ctid) * 16; };
  uint32_t it = 0;
  for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
    const TileInfo ti = decode_tile(p, ts, t, kBN);
    const bool wg_active = cw * 64 < ti.rows_valid;  // a decode tile's second half may be empty
    float acc[2][64];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[h][i] = 0.0f;

    auto run = [&](auto kg_tag) {
      constexpr bool kKG = decltype(kg_tag)::value;
      const int64_t len = kKG ? ti.len : K;
      const int kc = static_cast<int>(layout::scale_cols(len));
      const int nk = static_cast<int>(layout::ceil_div(len, kBK));
      bool avalid[2];
      const uint8_t* arow[2];
      int64_t srow[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int rl = r0 + 8 * h;
        avalid[h] = rl < ti.rows_valid;
        arow[h] = p.a + (ti.row_begin + (avalid[h] ? rl : 0)) * K + ti.t0;
        // A's scale row: K-grouped, the data row; else the m-tile across groups / batch entries.
        srow[h] = swz ? (kKG ? ti.row_begin : ti.mt * kBM) + rl : ti.row_begin + rl;
      }
      const bool aligned = (ti.t0 & 15) == 0;  // every row 16-byte aligned (K % 16 == 0): t0 decides
      auto scale_ptr = [&](int h, int kb) {
        const int64_t col = ti.col_base + kb;
        return p.a_scales + (swz ? layout::swizzled_offset(srow[h], col, p.scale_ld) : srow[h] * p.scale_ld + col);
      };
      // Copies this thread's two 16-byte A chunks of K-stage kt into its private staging slot (no
      // registers held while in flight), and pulls the stage's scale bytes towards L1.
      auto issue_a = [&](int kt) {
        const int s8 = kt % kAStages;
        const int kb = 2 * kt + (q >> 1);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int64_t off = int64_t(kt) * kBK + 16 * q, rem = len - off;
          const int nb = !avalid[h] || rem <= 0 ? 0 : (rem >= 16 ? 16 : static_cast<int>(rem));
          uint8_t* dst = a_stage_ptr(s8, h);
          if (!kKG || (aligned && (nb & 15) == 0))
            ptx::cp_async_16_zfill(ptx::smem_addr(dst), nb ? arow[h] + off : p.a, nb != 0);
          else
            *reinterpret_cast<uint4*>(dst) = load_unaligned_16(arow[h] + off, nb);
          if (avalid[h] && kb < kc) prefetch_l1(scale_ptr(h, kb));
        }
      };
      auto load_e = [&](int kt, uint32_t (&e)[2]) {
        const int kb = 2 * kt + (q >> 1);
#pragma unroll
        for (int h = 0; h < 2; ++h) e[h] = avalid[h] && kb < kc ? __ldg(scale_ptr(h, kb)) : 0u;
      };
      if (wg_active) {
#pragma unroll
        for (int s8 = 0; s8 < kAStages - 1; ++s8) {
          if (s8 < nk) issue_a(s8);
          ptx::cp_async_commit();
        }
      }
      uint32_t e[2] = {0u, 0u};
      if (nk > 0 && wg_active) load_e(0, e);
      for (int kt = 0; kt < nk; ++kt) {
        const uint32_t slot = it % kStages, round = it / kStages;
        if (wg_active) {
          if (kt + kAStages - 1 < nk) issue_a(kt + kAStages - 1);
          ptx::cp_async_commit();
          ptx::cp_async_wait<kAStages - 1>();  // this thread's copies of stage kt have landed
          const uint4 raw[2] = {*reinterpret_cast<const uint4*>(a_stage_ptr(kt % kAStages, 0)),
                                *reinterpret_cast<const uint4*>(a_stage_ptr(kt % kAStages, 1))};
          // A fragments of the 4 K steps: x[j] = {lo(r0), lo(r0+8), hi(r0), hi(r0+8)} of word j.
          const int kb = 2 * kt + (q >> 1);
          const Scale s0 = make_scale<AK>(e[0], avalid[0] && kb < kc);
          const Scale s1 = make_scale<AK>(e[1], avalid[1] && kb < kc);
          const uint32_t w0[4] = {raw[0].x, raw[0].y, raw[0].z, raw[0].w};
          const uint32_t w1[4] = {raw[1].x, raw[1].y, raw[1].z, raw[1].w};
          uint32_t spec = 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) spec |= special_bits<AK>(w0[j]) | special_bits<AK>(w1[j]);
          const bool slow = s0.slow || s1.slow || (spec & 0x80808080u) != 0;
          uint32_t x[4][4];
          if (!slow) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              cvt_fast<AK>(w0[j], s0.fast, x[j][0], x[j][2]);
              cvt_fast<AK>(w1[j], s1.fast, x[j][1], x[j][3]);
            }
          } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              cvt_exact<AK>(w0[j], s0.exact, x[j][0], x[j][2]);
              cvt_exact<AK>(w1[j], s1.exact, x[j][1], x[j][3]);
            }
          }
          // Next stage's scales (L1-prefetched three stages ago), in flight during this stage's wgmma.
          if (kt + 1 < nk) load_e(kt + 1, e);
          ptx::mbar_wait(&full[slot], round & 1);
          const uint32_t b_addr = ptx::smem_addr(smem + slot * kSlotBytes);
          ptx::fence_acc(acc[0]);
          ptx::fence_acc(acc[1]);
          ptx::wgmma_fence();
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            ptx::wgmma_bf16_rs<128, 0>(acc[0], x[j], ptx::smem_desc_k128_sw128(b_addr + 32 * j), 1);
            ptx::wgmma_bf16_rs<128, 0>(acc[1], x[j], ptx::smem_desc_k128_sw128(b_addr + 128 * 128 + 32 * j), 1);
          }
          ptx::wgmma_commit();
          ptx::wgmma_wait<0>();
          ptx::fence_acc(acc[0]);
          ptx::fence_acc(acc[1]);
        } else {
          ptx::mbar_wait(&full[slot], round & 1);
        }
        ptx::mbar_arrive(&empty[slot]);
        ++it;
      }
      ptx::cp_async_wait<0>();  // nothing may still land in staging when the next tile starts
    };
    if (ts.kgrouped) run(std::true_type{});
    else run(std::false_type{});

    // ---- epilogue: alpha, optional accumulate, round once (as gemm_mxfp8.cu) ---------------------
    if (wg_active) store_acc_tile<kOutF32>(p, ti, ts.kgrouped, r0, c0, acc);
  }
#else
  // Generic PTX build (compute_90 without 'a'): wgmma and setmaxnreg do not exist there; the
  // launcher never selects this kernel on such a device, and a stray launch fails loudly.
  __trap();
#endif
}

}  // namespace bf16path
}  // namespace sm90gemm
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_gemm.cpp):
// mxq_gemm_sm90_bf16path_<A>_<B>_<D>.
#define MXQ_GEMM_SM90_BF16_ENTRY(NAME, AK, BK, F32)                                                            \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90Bf16Threads, 1) NAME(const mxq::GemmSm90Params p) { \
    mxq::sm90gemm::bf16path::gemm_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32>(p);                   \
  }

MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e4m3_e4m3_bf16, E4M3, E4M3, false)
MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e4m3_e4m3_f32, E4M3, E4M3, true)
MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e4m3_e5m2_bf16, E4M3, E5M2, false)
MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e4m3_e5m2_f32, E4M3, E5M2, true)
MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e5m2_e4m3_bf16, E5M2, E4M3, false)
MXQ_GEMM_SM90_BF16_ENTRY(mxq_gemm_sm90_bf16path_e5m2_e4m3_f32, E5M2, E4M3, true)
