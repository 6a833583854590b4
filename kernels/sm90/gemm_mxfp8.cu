// MXFP8 grouped GEMM for Hopper (sm_90a): D = alpha * A * B^T (+ D), A and B FP8 with one UE8M0
// scale per 32 elements along K, fp32 accumulation, bf16 or fp32 output; M-grouped (fprop/dgrad:
// group g's rows of A times B[g]), K-grouped (wgrad: D[g] = A[:, tokens of g] * B[:, tokens of g]^T)
// and dense batched (each batch entry is one group of M rows).
//
// Why it is shaped this way. Hopper's FP8 wgmma (m64nNk32) has no scale operand, so each k32 step
// is one wgmma into a *fresh* fp32 accumulator, and the CUDA cores fold it into the running sum
// with the block scales: acc += P * (sa[row] * sb[col]) (FMUL + FFMA per element). A fresh
// accumulator per 32-block also bounds the error of the tensor core's reduced-precision internal
// FP8 accumulation to 32 products. To keep the tensor cores busy during that promotion each math
// warpgroup double-buffers the partial accumulator: the wgmma of step j+1 runs while step j is
// promoted, and the two warpgroups of a CTA (64 rows each) interleave on the SM.
//
// Loads are cp.async with zero-fill into 128-byte-swizzled shared memory (the layout wgmma's
// descriptors read): rows outside the tile's group and K beyond the tensor come in as zeros at
// 16-byte granularity, so any group size (0 included, not a multiple of 32 or 128) needs no TMA
// tensor map per group and no padding from the caller. Scales (4 bytes per row per 128-wide K
// stage: one aligned word in the swizzled layout) are fetched into registers one iteration before
// they are converted to fp32 and stored to shared memory, so their latency stays hidden.
//
// Persistent CTAs walk a linear tile index (scheduling shared with the BF16-path kernel in
// gemm_tiles.cuh); group g's m-tiles are found by a binary search of a
// per-CTA shared-memory table built from the device-side group ends (no host synchronization,
// CUDA-graph capturable). Ends are clamped to [previous end, rows] so malformed offsets can never
// index outside A or D. Because m-tiles are numbered across groups, tile mt is also the 128-row
// tile of the M-grouped swizzled scale layout (group bases padded to 128 rows): 128*mt is the
// scale row of the tile's first row.
//
// K-grouped plans are G independent dense problems: tile t is (group, m-tile, n-tile) by plain
// division, and the same shared table holds the clamped token ends and, in place of the tile
// prefix, each group's first scale column (the exclusive scan of layout::kgroup_col_pad). The
// k-stage index restarts at the group's first token, so stage kt covers tokens t0 + 128*kt.. and
// scale column base_g + 4*kt..; bytes at or past the group's end load as zeros (a partial last
// 32-block never sees the next group's tokens). A group start need not be 16-byte aligned; such
// tiles, and a group's ragged last 16 bytes, load through registers (two aligned 16-byte loads,
// funnel-shifted, byte-masked) instead of cp.async, whose zero-fill form needs aligned sources.
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/wgmma.cuh"
#include "sm90/gemm_params.cuh"
#include "sm90/gemm_tiles.cuh"

namespace mxq {
namespace sm90gemm {

using ptx::Fp8Kind;

[[maybe_unused]] constexpr int kThreads = kGemmSm90Threads;
constexpr int kBM = kGemmSm90TileM, kBN = kGemmSm90TileN, kBK = kGemmSm90TileK;
[[maybe_unused]] constexpr int kStages = kGemmSm90Stages;
[[maybe_unused]] constexpr int kStageBytes = static_cast<int>(gemm_sm90_stage_bytes());
[[maybe_unused]] constexpr int kABytes = kBM * kBK;
[[maybe_unused]] constexpr int kScaleStageFloats = (kBM + kBN) * 4;

template <Fp8Kind AK, Fp8Kind BK, bool kOutF32>
__device__ __forceinline__ void gemm_body(const GemmSm90Params& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  float* scale_smem = reinterpret_cast<float*>(smem + kStages * kStageBytes);
  int* table = reinterpret_cast<int*>(scale_smem + kStages * kScaleStageFloats);  // ends[G+1], prefix[G+1]
  __shared__ int warp_buf[kThreads / 32];

  const int tid = threadIdx.x;
  const int wg = tid >> 7, lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
  const bool swz = p.swizzled != 0;
  const int64_t K = p.k, N = p.n;
  const TileSpace ts = build_tile_space<kThreads>(p, kBN, table, warp_buf);
  const bool kgrouped = ts.kgrouped;

  // Per-thread constants of the accumulator fragment (wgmma m64nN fp32 layout).
  const int r0 = wg * 64 + warp_in_wg * 16 + (lane >> 2);  // and r0 + 8
  const int c0 = (lane & 3) * 2;                            // and + 8*j, + 1

  for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
    const TileInfo ti = decode_tile(p, ts, t, kBN);
    const int64_t b_group = kgrouped ? 0 : ti.group;  // K-grouped: one B shared by every group
    const uint8_t* a_tile = p.a + ti.row_begin * K + ti.t0;
    const uint8_t* b_tile = p.b + (b_group * N + ti.n0) * K + ti.t0;
    const uint8_t* b_scales = p.b_scales + b_group * p.b_scale_stride;
    // Uniform over the CTA: every row starts 16-byte aligned (K % 16 == 0), so only t0 decides.
    const bool aligned = (ti.t0 & 15) == 0;

    // K-grouped tiles get their own instance of the tile loop: the dense / M-grouped one keeps K,
    // a zero K offset and zero scale column base as kernel constants (no registers, no register
    // load path) under the 255-register budget the two accumulators already nearly fill.
    auto run_tile = [&](auto kgrouped_tag) {
      constexpr bool kKG = decltype(kgrouped_tag)::value;
      const int64_t len = kKG ? ti.len : K;
      const int col_base = kKG ? ti.col_base : 0;
      const int kc = static_cast<int>(layout::scale_cols(len));  // 32-blocks of the K range
      const int nk = static_cast<int>(layout::ceil_div(len, kBK));
      // Issues the loads of K-stage kt into slot s (4 + 4 16-byte chunks per thread): cp.async when
      // the K range starts aligned, else through registers. Bytes past the range land as zeros.
      auto load_stage = [&](int kt, int s) {
        uint8_t* sa = smem + s * kStageBytes;
        uint8_t* sb = sa + kABytes;
        const int64_t k0 = static_cast<int64_t>(kt) * kBK;
#pragma unroll
        for (int i = 0; i < (kBM * kBK / 16) / kThreads; ++i) {
          const int idx = tid + i * kThreads, r = idx >> 3, c = idx & 7;
          const int64_t rem = len - (k0 + c * 16);
          const int kbytes = rem <= 0 ? 0 : (rem >= 16 ? 16 : static_cast<int>(rem));
          const int na = r < ti.rows_valid ? kbytes : 0, nb = r < ti.n_valid ? kbytes : 0;
          const uint32_t soff = r * 128 + ((c ^ (r & 7)) << 4);
          // Whole or empty chunks of an aligned range go through cp.async (the only kind outside
          // K-grouping); a group's ragged last chunk and unaligned ranges through registers.
          if (!kKG || (aligned && (na & 15) == 0))
            ptx::cp_async_16_zfill(ptx::smem_addr(sa + soff), na ? a_tile + r * K + k0 + c * 16 : p.a, na != 0);
          else
            *reinterpret_cast<uint4*>(sa + soff) = load_unaligned_16(a_tile + r * K + k0 + c * 16, na);
          if (!kKG || (aligned && (nb & 15) == 0))
            ptx::cp_async_16_zfill(ptx::smem_addr(sb + soff), nb ? b_tile + r * K + k0 + c * 16 : p.b, nb != 0);
          else
            *reinterpret_cast<uint4*>(sb + soff) = load_unaligned_16(b_tile + r * K + k0 + c * 16, nb);
        }
      };
      // Scale bytes of K-stage kt for this thread's row (threads 0..127: A rows, 128..255: B rows),
      // four 32-blocks packed in a word; blocks past K or rows outside the tile read as 0 and are
      // masked again at conversion.
      const int srow = tid & 127;
      const bool s_is_b = tid >= 128;
      const bool srow_valid = s_is_b ? srow < ti.n_valid : srow < ti.rows_valid;
      auto load_scales = [&](int kt) -> uint32_t {
        if (!srow_valid) return 0u;
        const int kb0 = kt * 4;
        if (swz) {
          // K-grouped column bases are multiples of 4 here, so the four columns stay one word.
          // A's scale row: K-grouped, the data row; else the m-tile across groups / batch entries.
          const int64_t r = s_is_b ? static_cast<int64_t>(ti.n0) + srow : (kKG ? ti.row_begin : ti.mt * kBM) + srow;
          const uint8_t* base = s_is_b ? b_scales : p.a_scales;
          return __ldg(reinterpret_cast<const uint32_t*>(base + layout::swizzled_offset(r, col_base + kb0, p.scale_ld)));
        }
        const uint8_t* rowp = (s_is_b ? b_scales + (static_cast<int64_t>(ti.n0) + srow) * p.scale_ld
                                      : p.a_scales + (ti.row_begin + srow) * p.scale_ld) + col_base;
        uint32_t w = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (kb0 + j < kc) w |= static_cast<uint32_t>(__ldg(rowp + kb0 + j)) << (8 * j);
        return w;
      };
      auto store_scales = [&](uint32_t w, int kt, int s) {
        float* dst = scale_smem + s * kScaleStageFloats + (s_is_b ? kBM * 4 : 0);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const bool v = srow_valid && kt * 4 + j < kc;
          dst[j * 128 + srow] = v ? dev::ue8m0_to_f32(static_cast<uint8_t>(w >> (8 * j))) : 0.0f;
        }
      };

      float acc[64];
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
      float part[2][64];

      __syncthreads();  // every warp is done with the previous tile's shared memory
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s) {
        if (s < nk) {
          load_stage(s, s);
          store_scales(load_scales(s), s, s);
        }
        ptx::cp_async_commit();
      }
      uint32_t pending = 0;

      for (int kt = 0; kt < nk; ++kt) {
        ptx::cp_async_wait<kStages - 2>();
        ptx::fence_proxy_async_shared();
        __syncthreads();
        if (kt >= 1 && kt + kStages - 2 < nk) store_scales(pending, kt + kStages - 2, (kt + kStages - 2) % kStages);
        if (kt + kStages - 1 < nk) {
          load_stage(kt + kStages - 1, (kt + kStages - 1) % kStages);
          pending = load_scales(kt + kStages - 1);
        }
        ptx::cp_async_commit();

        const int s = kt % kStages;
        const uint32_t a_addr = ptx::smem_addr(smem + s * kStageBytes + wg * 64 * kBK);
        const uint32_t b_addr = ptx::smem_addr(smem + s * kStageBytes + kABytes);
        const float* sca = scale_smem + s * kScaleStageFloats;
        const float* scb = sca + kBM * 4;

        auto issue = [&](int j, float(&d)[64]) {
          ptx::fence_acc(d);
          ptx::wgmma_fence();
          ptx::wgmma_m64n128k32<AK, BK>(d, ptx::smem_desc_k128_sw128(a_addr + j * 32),
                                        ptx::smem_desc_k128_sw128(b_addr + j * 32));
          ptx::wgmma_commit();
        };
        auto promote = [&](int j, float(&d)[64]) {
          ptx::fence_acc(d);
          const float sa0 = sca[j * 128 + r0], sa1 = sca[j * 128 + r0 + 8];
#pragma unroll
          for (int c = 0; c < 16; ++c) {
            const float2 sb = *reinterpret_cast<const float2*>(scb + j * 128 + c * 8 + c0);
            acc[c * 4 + 0] = fmaf(d[c * 4 + 0], sa0 * sb.x, acc[c * 4 + 0]);
            acc[c * 4 + 1] = fmaf(d[c * 4 + 1], sa0 * sb.y, acc[c * 4 + 1]);
            acc[c * 4 + 2] = fmaf(d[c * 4 + 2], sa1 * sb.x, acc[c * 4 + 2]);
            acc[c * 4 + 3] = fmaf(d[c * 4 + 3], sa1 * sb.y, acc[c * 4 + 3]);
          }
        };
        issue(0, part[0]);
        issue(1, part[1]);
        ptx::wgmma_wait<1>();
        promote(0, part[0]);
        issue(2, part[0]);
        ptx::wgmma_wait<1>();
        promote(1, part[1]);
        issue(3, part[1]);
        ptx::wgmma_wait<1>();
        promote(2, part[0]);
        ptx::wgmma_wait<0>();
        promote(3, part[1]);
      }
      ptx::cp_async_wait<0>();  // nothing may still be landing when the next tile reuses the slots

      // ---- epilogue: alpha, optional accumulate, round once ------------------------------------
      store_acc_tile<kOutF32>(p, ti, kKG, r0, c0, reinterpret_cast<const float(&)[1][64]>(acc));
    };
    if (kgrouped) run_tile(std::true_type{});
    else run_tile(std::false_type{});
  }
#else
  // Generic PTX build (compute_90 without 'a'): wgmma does not exist there; the launcher never
  // selects this kernel on such a device, and a stray launch fails loudly rather than silently.
  __trap();
#endif
}

}  // namespace sm90gemm
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_gemm.cpp):
// mxq_gemm_sm90_<A>_<B>_<D>.
#define MXQ_GEMM_SM90_ENTRY(NAME, AK, BK, F32)                                                         \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90Threads, 1) NAME(const mxq::GemmSm90Params p) { \
    mxq::sm90gemm::gemm_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32>(p);                   \
  }

MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e4m3_e4m3_bf16, E4M3, E4M3, false)
MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e4m3_e4m3_f32, E4M3, E4M3, true)
MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e4m3_e5m2_bf16, E4M3, E5M2, false)
MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e4m3_e5m2_f32, E4M3, E5M2, true)
MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e5m2_e4m3_bf16, E5M2, E4M3, false)
MXQ_GEMM_SM90_ENTRY(mxq_gemm_sm90_e5m2_e4m3_f32, E5M2, E4M3, true)
