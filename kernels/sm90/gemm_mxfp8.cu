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
// Persistent CTAs walk a linear tile index; group g's m-tiles are found by a binary search of a
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

namespace mxq {
namespace sm90gemm {

using ptx::Fp8Kind;

[[maybe_unused]] constexpr int kThreads = kGemmSm90Threads;
constexpr int kBM = kGemmSm90TileM, kBN = kGemmSm90TileN, kBK = kGemmSm90TileK;
[[maybe_unused]] constexpr int kStages = kGemmSm90Stages;
[[maybe_unused]] constexpr int kStageBytes = static_cast<int>(gemm_sm90_stage_bytes());
[[maybe_unused]] constexpr int kABytes = kBM * kBK;
[[maybe_unused]] constexpr int kScaleStageFloats = (kBM + kBN) * 4;

// Exclusive scan of one int per thread over the block with an associative op; also returns the total.
template <typename Op>
__device__ int block_exclusive_scan(int v, Op op, int identity, int* warp_buf, int& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int incl = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int o = __shfl_up_sync(0xFFFFFFFFu, incl, d);
    if (lane >= d) incl = op(incl, o);
  }
  if (lane == 31) warp_buf[warp] = incl;
  __syncthreads();
  int before = identity, all = identity;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    const int x = warp_buf[w];
    if (w < warp) before = op(before, x);
    all = op(all, x);
  }
  __syncthreads();  // warp_buf may be reused by the caller's next scan
  int excl = __shfl_up_sync(0xFFFFFFFFu, incl, 1);
  if (lane == 0) excl = identity;
  total = all;
  return op(before, excl);
}

struct TileInfo {
  int64_t row_begin;  // first row of A (and of D, but for K-grouped's g*M offset)
  int rows_valid;     // rows of the tile inside its group (1..128)
  int n0, n_valid;
  int64_t mt;         // m-tile index across groups
  int group;
  int64_t t0, len;    // K range of the tile: [t0, t0 + len) (K-grouped: the group's tokens)
  int col_base;       // first scale column of the K range
};

// The `valid` (0..16) bytes at an arbitrarily aligned src, zero-extended to 16: the aligned 16-byte
// words covering them (only those, so nothing outside the operand is read), shifted into place.
__device__ __forceinline__ uint4 load_unaligned_16(const uint8_t* src, int valid) {
  if (valid <= 0) return make_uint4(0u, 0u, 0u, 0u);
  const int sh = static_cast<int>(reinterpret_cast<uintptr_t>(src) & 15);
  const uint4* base = reinterpret_cast<const uint4*>(src - sh);
  const uint4 lo = __ldg(base);
  const uint4 hi = sh + valid > 16 ? __ldg(base + 1) : make_uint4(0u, 0u, 0u, 0u);
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = sh >> 2;
  const uint32_t bits = static_cast<uint32_t>(sh & 3) * 8;
  uint32_t sel[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) sel[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[i + 3];
  uint32_t o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int nb = valid - 4 * i;
    const uint32_t mask = nb >= 4 ? 0xFFFFFFFFu : nb <= 0 ? 0u : (1u << (8 * nb)) - 1u;
    o[i] = __funnelshift_r(sel[i], sel[i + 1], bits) & mask;
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

template <Fp8Kind AK, Fp8Kind BK, bool kOutF32>
__device__ __forceinline__ void gemm_body(const GemmSm90Params& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  float* scale_smem = reinterpret_cast<float*>(smem + kStages * kStageBytes);
  int* table = reinterpret_cast<int*>(scale_smem + kStages * kScaleStageFloats);  // ends[G+1], prefix[G+1]
  __shared__ int warp_buf[kThreads / 32];

  const int tid = threadIdx.x;
  const int wg = tid >> 7, lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
  const bool grouped = p.group_ends != nullptr;
  const bool kgrouped = grouped && p.kgrouped != 0;
  const bool swz = p.swizzled != 0;
  const int G = p.groups;
  const int64_t K = p.k, N = p.n;
  const int n_tiles = static_cast<int>(layout::ceil_div(N, kBN));
  // Dense: m-tiles per batch entry; K-grouped: m-tiles of every group's [M, N] output.
  const int mt_per_group = !grouped ? static_cast<int>(layout::ceil_div(p.rows_per_group, kBM))
                           : kgrouped ? static_cast<int>(layout::ceil_div(p.rows_total, kBM)) : 0;
  // What a group of `len` rows (M-grouped: m-tiles) or tokens (K-grouped: scale columns) occupies.
  auto group_units = [&](int len) {
    return kgrouped ? static_cast<int>(layout::kgroup_col_pad(swz, len)) : (len + kBM - 1) / kBM;
  };

  // ---- group table: ends[g+1] (monotone, clamped), prefix[g] = units of groups before g -------
  int* ends = table;
  int* prefix = table + (G + 1);
  int64_t total_m_tiles;
  if (grouped) {
    const int chunk = (G + kThreads - 1) / kThreads;
    const int g0 = min(G, tid * chunk), g1 = min(G, g0 + chunk);
    const int rows = static_cast<int>(kgrouped ? K : p.rows_total);
    int run = 0;
    for (int g = g0; g < g1; ++g) {
      int64_t e = p.offsets_i64 ? static_cast<const int64_t*>(p.group_ends)[g]
                                : static_cast<int64_t>(static_cast<const int32_t*>(p.group_ends)[g]);
      e = e < 0 ? 0 : (e > rows ? rows : e);
      run = max(run, static_cast<int>(e));
      ends[g + 1] = run;
    }
    int dummy;
    const int before = block_exclusive_scan(run, [](int a, int b) { return max(a, b); }, 0, warp_buf, dummy);
    int tiles = 0;
    for (int g = g0; g < g1; ++g) {
      ends[g + 1] = max(ends[g + 1], before);
      const int prev = g == g0 ? max(before, 0) : ends[g];
      tiles += group_units(ends[g + 1] - prev);
    }
    if (tid == 0) ends[0] = 0;
    int total;
    int run_tiles = block_exclusive_scan(tiles, [](int a, int b) { return a + b; }, 0, warp_buf, total);
    for (int g = g0; g < g1; ++g) {
      prefix[g] = run_tiles;
      const int prev = g == g0 ? before : ends[g];
      run_tiles += group_units(ends[g + 1] - prev);
    }
    if (tid == 0) prefix[G] = total;
    __syncthreads();
    total_m_tiles = kgrouped ? static_cast<int64_t>(mt_per_group) * G : total;
  } else {
    total_m_tiles = static_cast<int64_t>(mt_per_group) * G;
  }
  const int64_t total_tiles = total_m_tiles * n_tiles;

  // Per-thread constants of the accumulator fragment (wgmma m64nN fp32 layout).
  const int r0 = wg * 64 + warp_in_wg * 16 + (lane >> 2);  // and r0 + 8
  const int c0 = (lane & 3) * 2;                            // and + 8*j, + 1

  for (int64_t t = blockIdx.x; t < total_tiles; t += gridDim.x) {
    // ---- which tile ----------------------------------------------------------------------------
    TileInfo ti;
    ti.mt = t / n_tiles;
    const int nt = static_cast<int>(t % n_tiles);
    ti.n0 = nt * kBN;
    ti.n_valid = static_cast<int>(N - ti.n0 < kBN ? N - ti.n0 : kBN);
    ti.t0 = 0;
    ti.len = K;
    ti.col_base = 0;
    if (kgrouped) {
      ti.group = static_cast<int>(ti.mt / mt_per_group);
      ti.row_begin = (ti.mt - static_cast<int64_t>(ti.group) * mt_per_group) * kBM;
      ti.rows_valid = static_cast<int>(p.rows_total - ti.row_begin < kBM ? p.rows_total - ti.row_begin : kBM);
      ti.t0 = ends[ti.group];
      ti.len = ends[ti.group + 1] - ends[ti.group];
      ti.col_base = prefix[ti.group];
    } else if (grouped) {
      int lo = 0, hi = G - 1;  // last g with prefix[g] <= mt
      while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (prefix[mid] <= ti.mt) lo = mid; else hi = mid - 1;
      }
      ti.group = lo;
      ti.row_begin = ends[lo] + (ti.mt - prefix[lo]) * kBM;
      ti.rows_valid = static_cast<int>(ends[lo + 1] - ti.row_begin < kBM ? ends[lo + 1] - ti.row_begin : kBM);
    } else {
      ti.group = static_cast<int>(ti.mt / mt_per_group);
      const int64_t local = (ti.mt - static_cast<int64_t>(ti.group) * mt_per_group) * kBM;
      ti.row_begin = static_cast<int64_t>(ti.group) * p.rows_per_group + local;
      ti.rows_valid = static_cast<int>(p.rows_per_group - local < kBM ? p.rows_per_group - local : kBM);
    }
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
          ptx::fence_operands(d);
          ptx::wgmma_fence();
          ptx::wgmma_m64n128k32<AK, BK>(d, ptx::smem_desc_k128_sw128(a_addr + j * 32),
                                        ptx::smem_desc_k128_sw128(b_addr + j * 32));
          ptx::wgmma_commit();
        };
        auto promote = [&](int j, float(&d)[64]) {
          ptx::fence_operands(d);
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
      const bool pairs = (N & 1) == 0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int rl = r0 + h * 8;
        if (rl >= ti.rows_valid) continue;
        const int64_t row = (kKG ? static_cast<int64_t>(ti.group) * p.rows_total : 0) + ti.row_begin + rl;
#pragma unroll
        for (int c = 0; c < 16; ++c) {
          const int cl = c * 8 + c0;
          if (cl >= ti.n_valid) continue;
          const int64_t idx = row * N + ti.n0 + cl;
          float v0 = p.alpha * acc[c * 4 + h * 2], v1 = p.alpha * acc[c * 4 + h * 2 + 1];
          const bool two = cl + 1 < ti.n_valid;
          if constexpr (kOutF32) {
            float* d = static_cast<float*>(p.d) + idx;
            if (two && pairs) {
              if (p.accumulate) {
                const float2 o = *reinterpret_cast<const float2*>(d);
                v0 += o.x;
                v1 += o.y;
              }
              *reinterpret_cast<float2*>(d) = make_float2(v0, v1);
            } else {
              if (p.accumulate) v0 += d[0];
              d[0] = v0;
              if (two) {
                if (p.accumulate) v1 += d[1];
                d[1] = v1;
              }
            }
          } else {
            uint16_t* d = static_cast<uint16_t*>(p.d) + idx;
            auto bf = [](uint16_t x) { return __uint_as_float(static_cast<uint32_t>(x) << 16); };
            if (two && pairs) {
              if (p.accumulate) {
                const uint32_t o = *reinterpret_cast<const uint32_t*>(d);
                v0 += bf(static_cast<uint16_t>(o & 0xFFFFu));
                v1 += bf(static_cast<uint16_t>(o >> 16));
              }
              *reinterpret_cast<uint32_t*>(d) = dev::f32x2_to_bf16x2(v0, v1);
            } else {
              if (p.accumulate) v0 += bf(d[0]);
              d[0] = static_cast<uint16_t>(dev::f32x2_to_bf16x2(v0, 0.0f) & 0xFFFFu);
              if (two) {
                if (p.accumulate) v1 += bf(d[1]);
                d[1] = static_cast<uint16_t>(dev::f32x2_to_bf16x2(v1, 0.0f) & 0xFFFFu);
              }
            }
          }
        }
      }
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
