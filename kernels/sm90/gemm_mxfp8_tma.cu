// MXFP8 grouped GEMM for Hopper (sm_90a), BF16 path with a TMA producer: D = alpha * A * B^T (+ D)
// with A and B MXFP8 (1x32 UE8M0 scales along K). Every FP8 element is converted with its scale
// *exactly* to bf16 (sm90/gemm_bf16_convert.cuh) and multiplied on bf16 wgmma with fp32
// accumulation, so the result has the accuracy of an fp32 GEMM on the dequantized operands. Same
// problems and tile scheduling as the other sm_90a GEMM kernels (gemm_tiles.cuh): M-grouped
// (fprop/dgrad), K-grouped (wgrad), dense batched; 128x256 output tiles, 64-wide K stages,
// persistent CTAs.
//
// Roles (384 threads, setmaxnreg 40 / 232). One thread of warpgroup 0 issues, per K stage, two TMA
// loads -- A's 128 x 64 FP8 box and B's 256 x 64 box, 64-byte swizzled -- into a 4-deep ring whose
// `full` mbarrier completes on the bytes and whose `empty` mbarrier counts the 256 consumer
// threads. Warpgroups 1 and 2 (64 output rows each) do everything else, in lockstep:
//   1. wait for the stage; thread t converts row t of B (64 FP8 bytes, two 32-blocks) into the
//      stage's bf16 slot (128-byte swizzle, the layout wgmma's descriptor reads) and its A rows'
//      bytes into the A fragments of register-sourced wgmma; release the FP8 stage;
//   2. proxy fence, named barrier over the 256 consumer threads (B's slot is whole);
//   3. issue the stage's 4 m64n256k16 wgmmas (one per 16-wide K step, all 256 columns) and commit;
//      wait until one group is pending, i.e. the *previous* stage's wgmmas are done. (Two
//      m64n128k16 per K step, the form until the fifth session, issue twice the wgmmas and send the
//      A fragments twice: ~2% slower, docs/PERFORMANCE.md "Grouped GEMM".)
// So a stage's conversion runs while the tensor cores work on the stage before it. Reuse: the A
// fragments alternate between two register sets (the loop is unrolled by two; an odd stage count
// gets one all-zero stage, whose TMA box lies past K and whose scales are 0), and a bf16 slot is
// rewritten three stages later, by which time both warpgroups have passed a wait showing its
// wgmmas done and a named barrier after it.
//
// B dequantized ahead (kBPre, the `_bpre` entry points): for tall groups the launcher first runs
// the pre-kernel bprep_staged_body (K-grouped plans: after a one-block table kernel), which writes
// B once as bf16 into the workspace in the slot order step 1 would produce; the producer then
// loads B's 256 x 64 bf16 box by TMA (128-byte swizzle) straight into the ring stage's slot, the
// consumers convert only A, skip step 2, and release a stage after the wait that shows its wgmmas
// done (the stage before the one just issued). K-grouped kBPre plans also copy A's rows of every
// group whose first token is not 16-byte aligned into the workspace (arelayout_body), at the
// columns where that group's B stages are, so that their tiles, like the aligned groups' (read from
// A), run whole 32-blocks per stage: the shifted path below (a 16-byte chunk straddling two blocks,
// per-stage scale bytes, a select per byte) cost wgrad E8 with uneven groups ~15% of the main
// kernel's time (docs/PERFORMANCE.md, "Thirteenth session (lead)").
//
// Operands swapped (kSwap, the `_apre` entry points): M-grouped plans whose A is the smaller operand
// (M < G * N) and whose groups are not short (`use_apre`, src/cuda/op_gemm.cpp) dequantize A instead
// (the same pre-kernel, on A's rows; swizzled scale rows found through the group table,
// bprep_table_body) and compute D^T: a tile is 128 weight
// rows of the group's B (the FP8 box the math warps convert into register fragments, exactly as A
// above) against up to kSwapTokens tokens of the group (the bf16 slot, by TMA from the workspace), and
// D is written transposed (store_acc_tile_swap). A tile of at most 128 tokens (a group's last) issues
// m64n128k16 wgmmas instead of m64n256k16 ones.
//
// Epilogue. K-grouped tiles with in-kernel B (wgrad with short groups: E128 has ~4 K stages per
// 128 KiB fp32 tile) stage the tile in the bf16 slots, free once both warpgroups' last wgmmas are
// done, and one thread per warpgroup stores it box by box with TMA (store_tile_tma); the math warps
// wait only for the TMA unit to have read the slots, not for the writes. K-grouped tiles with B
// dequantized ahead (the `_kgrouped_bpre_tma` entry points, kBpStore: short groups, where each of the
// M / 128 m-tiles would convert the same B stages again) cannot use the ring's slots, which the
// producer is refilling with the next tile's stages: they stage in 8 boxes of their own after the A
// boxes (4 per warpgroup: a bf16 block in one pass, fp32 in two), and a warpgroup waits only for the
// TMA unit to have read its previous tile's boxes. M-grouped and dense tiles with B dequantized ahead
// and K <= 4096 (the `_bpre_tma` entry points, same kBpStore staging: fprop E32 +2.7%, where a tile
// is 64 K stages; longer tiles measured slower, docs/PERFORMANCE.md "Eleventh session") do the same,
// with D seen as [1, rows_total, N]: a warpgroup whose 64 rows run past its group's end copies the
// valid rows of each staged box out itself (the tensor map cannot clip there). Every other plan, and
// plans that accumulate or whose D is not 16-byte aligned row by row, store the fragments directly
// (store_acc_tile).
//
// Layout of a thread's data. A: thread (warp w, lane l) of consumer c owns rows r0 = 64c + 16w +
// l/4 and r0 + 8, and the 16 bytes [16q, 16q + 16) of each (q = l % 4); the K permutation of
// gemm_bf16_convert.cuh maps byte 16q + 4j + {0, 2, 1, 3} to column {2q, 2q + 1, 8 + 2q, 9 + 2q} of
// K step j, and B's bf16 columns are written in the same order. FP8 stages are read through the
// 64-byte swizzle (16-byte chunk c of row r at r * 64 + ((c ^ (r / 2 % 4)) * 16)), which makes a
// warp's 16-byte reads of 32 B rows and of 8 A rows conflict-free.
//
// Masking. Rows outside the tile's group, N or the tensor, TMA fills or neighbours' data, land only
// in accumulator rows and columns that are never stored; their scale multiplier is 0 so no scale
// outside the tensors is read. K past the end: TMA zero-fills past K, and scale columns past
// ceil(K/32) multiply by 0 (padding scales may be NaN). K-grouped ranges end anywhere inside a
// stage, where the next group's tokens follow: the stage's bytes past the range are masked to zero
// before conversion.
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "ptx/wgmma_bf16.cuh"
#include "sm90/gemm_bf16_convert.cuh"
#include "sm90/gemm_params.cuh"
#include "sm90/gemm_tiles.cuh"

namespace mxq {
namespace sm90gemm {
namespace tmapath {

constexpr int kThreads = kGemmSm90TmaThreads;
constexpr int kBM = kTileM, kBN = kGemmSm90TmaTileN, kBK = kGemmSm90TmaTileK;
constexpr int kStages = kGemmSm90TmaFp8Stages;
constexpr int kSwapTokens = kGemmSm90TmaSwapTokens;
static_assert(kSwapTokens == kBN, "kSwap: a tile's tokens are the rows of one bf16 slot");
constexpr int kSlots = kGemmSm90TmaSlots;
constexpr int kSlotBytes = static_cast<int>(gemm_sm90_tma_slot_bytes());
constexpr int kAStageBytes = kBM * kBK;
constexpr int kStageBytes = static_cast<int>(gemm_sm90_tma_fp8_stage_bytes());
// setmaxnreg: launched at 384 x 168; 128 * 40 + 256 * 232 = 64512 = 384 * 168.
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(kProducerRegs + 2 * kConsumerRegs <= 3 * 168, "setmaxnreg pool: 384 threads launched at 168 registers");
constexpr int kConsumerBarrier = 1;  // named barrier of the 256 consumer threads

// Byte offset of 16-byte chunk c of 64-byte row r under TMA's 64-byte swizzle.
__device__ __forceinline__ uint32_t sw64_offset(uint32_t r, uint32_t c) { return r * 64u + ((c ^ ((r >> 1) & 3u)) << 4); }

// Scale codes: a UE8M0 byte, or kNoScale for a row or 32-block outside the operand (multiplier 0;
// padding scales may be NaN and must not be used). The fast path's 16-bit bf16 multiplier
// 2^(E-127+bias), the exact fp32 multiplier, and whether the fast one cannot represent it.
constexpr uint32_t kNoScale = 0x100u;
template <Fp8Kind K>
__device__ __forceinline__ uint32_t code_mult(uint32_t e) {
  return e == kNoScale ? 0u : (e + Fp8Bits<K>::kBias) << 7;
}
__device__ __forceinline__ float code_exact(uint32_t e) {
  return e == kNoScale ? 0.0f : dev::ue8m0_to_f32(static_cast<uint8_t>(e));
}
template <Fp8Kind K>
__device__ __forceinline__ bool code_slow(uint32_t e) {
  return e != kNoScale && static_cast<int>(e) > Fp8Bits<K>::kMaxFastE;
}

// A's register fragments of one 64-wide stage from a thread's rows r0, r0 + 8 (aw[h][j]: word j of row
// r0 + 8h's 16-byte chunk): x[j] = {lo(r0), lo(r0 + 8), hi(r0), hi(r0 + 8)} of word j, with the rows'
// scale codes ea[h] (kShift: [0] the block before the chunk's boundary, taken by the bytes `qsel`
// leaves out; else [1] only), the fast or the exact conversion.
template <Fp8Kind AK, bool kShift, bool kSlow>
__device__ __forceinline__ void convert_a_frags(const uint32_t (&aw)[2][4], const uint32_t (&ea)[2][2], uint32_t qsel,
                                                uint32_t (&x)[4][4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t H = ea[h][1];
      if constexpr (kShift) {
        const uint32_t L = ea[h][0];
        const uint32_t sel = (qsel >> (4 * j)) & 0xFu;
        if constexpr (kSlow) cvt_exact_sel<AK>(aw[h][j], code_exact(L), code_exact(H), sel, x[j][h], x[j][h + 2]);
        else cvt_fast_sel<AK>(aw[h][j], code_mult<AK>(L), code_mult<AK>(H), sel, x[j][h], x[j][h + 2]);
      } else {
        if constexpr (kSlow) cvt_exact<AK>(aw[h][j], code_exact(H), x[j][h], x[j][h + 2]);
        else cvt_fast<AK>(aw[h][j], code_mult<AK>(H) * 0x00010001u, x[j][h], x[j][h + 2]);
      }
    }
  }
}

// Keeps the bytes of word w (at byte `pos` of the stage) inside bytes [vlo, vhi) of the stage.
__device__ __forceinline__ uint32_t mask_range(uint32_t w, int pos, int vlo, int vhi) {
  const int n_hi = vhi - pos, n_lo = vlo - pos;
  const uint32_t keep_below = n_hi >= 4 ? 0xFFFFFFFFu : n_hi <= 0 ? 0u : (1u << (8 * n_hi)) - 1u;
  const uint32_t keep_above = n_lo <= 0 ? 0xFFFFFFFFu : n_lo >= 4 ? 0u : 0xFFFFFFFFu << (8 * n_lo);
  return w & keep_below & keep_above;
}

// One m64n256k16 bf16 wgmma with A from registers (the accumulator of two side-by-side m64n128k16
// ones: d[64h + i] is acc[h][i], the same columns), B K-major 128-byte swizzled, D += A * B^T.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void wgmma_bf16_rs_n256(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
               "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
               "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
               "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
               "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
               ", {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
                 "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
                 "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
                 "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
                 "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                 "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
                 "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
                 "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
                 "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
                 "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
                 "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
                 "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
                 "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
                 "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]),
                 "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
                 "+f"(d[126]), "+f"(d[127])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
#endif

// The TMA-store epilogue of one math warpgroup (K-grouped instance with in-kernel B, tp.store_tma):
// its 64 x 256 accumulator block, times alpha and rounded once, goes box by box (64 rows x 128
// bytes: 32 fp32 or 64 bf16 columns, 128-byte swizzled, kGemmSm90TmaStoreBox bytes) into kNb staging
// boxes at `stage`, reused in turn, and one thread stores each box with TMA into D seen as 3D
// [groups, M, N]: rows past M and columns past N are clipped by the tensor map, so nothing is masked.
// The caller waits for the TMA unit's reads before the boxes are written again for anything else.
constexpr int kWgBarrier0 = 2;  // named barriers 2, 3: one math warpgroup's 128 threads
// kRowsMasked (M-grouped / dense tiles, D seen as [1, rows_total, N]): a warpgroup whose 64 rows
// run past its group's (or batch entry's) last row, `wg_rows` < 64, must not write the rows after
// them (the next group's), which the tensor map cannot clip: its 128 threads copy the valid rows
// of each staged box out with 16-byte stores instead (rows of whole 16-byte units: the launcher's
// condition), the box's buffer then free after the warpgroup's next barrier.
template <bool kOutF32, int kNb, bool kRowsMasked = false>
__device__ __forceinline__ void store_tile_tma(const GemmSm90TmaParams& tp, const TileInfo& ti, uint8_t* stage, int cw,
                                               int warp_in_wg, int lane, const float (&acc)[2][64],
                                               int wg_rows = 64) {
  constexpr int kBoxes = kOutF32 ? 8 : 4;
  constexpr int kBoxCols = kOutF32 ? 32 : 64;
  constexpr int kBlocks = kBoxCols / 8;  // 8-column accumulator blocks per box
  const int q = lane & 3;
  const int lr = warp_in_wg * 16 + (lane >> 2);  // this thread's rows lr, lr + 8 of the warpgroup's 64
  const bool issuer = warp_in_wg == 0 && lane == 0;
  const int bar = kWgBarrier0 + cw;
  const int32_t row0 = static_cast<int32_t>(ti.row_begin + 64 * cw);
  const float alpha = tp.g.alpha;
  // Boxes go out in groups of kG: the group's staging stores, one proxy fence and one barrier, then
  // its TMA stores (before: a fence and a barrier per box, 8 of each per fp32 block: 28% of the math
  // warps' samples at wgrad E128 were in this epilogue, ncu 2026-11-23). A group whose buffers held
  // boxes of an earlier group waits until the TMA unit has read those (kNb - kG newer may be pending).
  constexpr int kG = kBoxes <= kNb ? kBoxes : (kNb >= 4 ? 4 : kNb);
  static_assert(kBoxes % kG == 0 && kG <= kNb, "whole groups of boxes, each in its own buffer");
#pragma unroll
  for (int b0 = 0; b0 < kBoxes; b0 += kG) {
    if (b0 + kG > kNb) {  // the group reuses buffers: the boxes stored there have been read out
      if (issuer) ptx::bulk_wait_group_read<kNb - kG>();
      ptx::named_barrier_sync(bar, 128);
    }
#pragma unroll
    for (int bb = 0; bb < kG; ++bb) {
      const int b = b0 + bb;
      uint8_t* buf = stage + (b % kNb) * kGemmSm90TmaStoreBox;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t r = static_cast<uint32_t>(lr + 8 * h);  // 128-byte swizzled rows (ptx::sw128_offset)
#pragma unroll
        for (int jj = 0; jj < kBlocks; ++jj) {
          const int j = b * kBlocks + jj;  // accumulator columns 8j + 2q, + 1 (acc[j / 16][4 (j % 16) + 2h + {0, 1}])
          const float v0 = alpha * acc[j >> 4][(j & 15) * 4 + 2 * h];
          const float v1 = alpha * acc[j >> 4][(j & 15) * 4 + 2 * h + 1];
          if constexpr (kOutF32)
            *reinterpret_cast<float2*>(buf + ptx::sw128_offset(r, 2 * jj + (q >> 1)) + 8 * (q & 1)) = make_float2(v0, v1);
          else
            *reinterpret_cast<uint32_t*>(buf + ptx::sw128_offset(r, jj) + 4 * q) = dev::f32x2_to_bf16x2(v0, v1);
        }
      }
    }
    ptx::fence_proxy_async_shared();  // this thread's staging stores -> the TMA unit's reads
    ptx::named_barrier_sync(bar, 128);
#pragma unroll
    for (int bb = 0; bb < kG; ++bb) {
      const int b = b0 + bb;
      uint8_t* buf = stage + (b % kNb) * kGemmSm90TmaStoreBox;
      if (!kRowsMasked || wg_rows == 64) {
        if (issuer) {
          ptx::tma_store_3d(tp.tmap_d, ptx::smem_addr(buf), ti.n0 + b * kBoxCols, row0, kRowsMasked ? 0 : ti.group);
          ptx::bulk_commit_group();
        }
      } else {
        constexpr int kEsz = kOutF32 ? 4 : 2;
        const int64_t n = tp.g.n;
        uint8_t* d = static_cast<uint8_t*>(tp.g.d);
#pragma unroll
        for (int u = warp_in_wg * 32 + lane; u < 512; u += 128) {  // 16-byte unit u: row u / 8, chunk u % 8
          const int r = u >> 3, c = u & 7;
          const int64_t col = ti.n0 + b * kBoxCols + c * (16 / kEsz);
          if (r < wg_rows && col < n)
            *reinterpret_cast<uint4*>(d + ((row0 + r) * n + col) * kEsz) =
                *reinterpret_cast<const uint4*>(buf + ptx::sw128_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(c)));
        }
      }
    }
  }
}

// The kSwap epilogue: a thread's accumulator rows r0, r0 + 8 are weight rows n0 + r (D's columns) and
// its columns 8j + c0, + 1 tokens row_begin + ... (D's rows), so D is written transposed. Lanes l and
// l ^ 4 hold adjacent weight rows: each gives the other one value, after which every thread holds two
// adjacent D columns of one token and stores them as one pair (even lanes / 4: column 8j + c0, odd:
// 8j + c0 + 1).
template <bool kOutF32>
__device__ __forceinline__ void store_acc_tile_swap(const GemmSm90Params& p, const TileInfo& ti, int r0, int c0,
                                                    int lane, const float (&acc)[2][64]) {
  const bool pairs = (p.n & 1) == 0;
  const bool odd = ((lane >> 2) & 1) != 0;
  const int cb = c0 + (odd ? 1 : 0);  // the pair's token: column 8j + cb
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int rb = r0 + 8 * h - (odd ? 1 : 0);  // the pair's first weight row (even)
    // The pair of block j: D's columns n0 + rb, + 1 of token row_begin + 8j + cb.
    auto pair = [&](int j, float& x0, float& x1) {
      const float v0 = acc[j >> 4][(j & 15) * 4 + 2 * h], v1 = acc[j >> 4][(j & 15) * 4 + 2 * h + 1];
      const float got = __shfl_xor_sync(0xFFFFFFFFu, odd ? v0 : v1, 4);
      x0 = p.alpha * (odd ? got : v0);
      x1 = p.alpha * (odd ? v1 : got);
    };
    if (!p.accumulate && pairs && rb + 1 < ti.n_valid) {
      // The common case in its own loop (the general one below, inlined per block, made the executed
      // code ~2.5x longer): whole pairs written without reading D, one pointer step per block.
      using Pair = typename std::conditional<kOutF32, float2, uint32_t>::type;
      Pair* dst = static_cast<Pair*>(p.d) + ((ti.row_begin + cb) * p.n + ti.n0 + rb) / 2;
      const int64_t step = 4 * p.n;  // 8 tokens, in pairs
#pragma unroll
      for (int j = 0; j < 32; ++j, dst += step) {
        if (8 * j >= ti.rows_valid) break;  // (uniform: the tile's token count)
        float x0, x1;
        pair(j, x0, x1);
        if (8 * j + cb < ti.rows_valid) {
          if constexpr (kOutF32) *dst = make_float2(x0, x1);
          else *dst = dev::f32x2_to_bf16x2(x0, x1);
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < 32; ++j) {
        if (8 * j >= ti.rows_valid) break;
        float x0, x1;
        pair(j, x0, x1);
        const int cl = 8 * j + cb;
        if (cl >= ti.rows_valid || rb >= ti.n_valid) continue;
        store_d_pair<kOutF32>(p, (ti.row_begin + cl) * p.n + ti.n0 + rb, x0, x1, rb + 1 < ti.n_valid, pairs);
      }
    }
  }
}

// kKGroupedKernel: the K-grouped (wgrad) instance; M-grouped and dense plans launch the other one,
// whose registers the K-grouped masking and shifted-block paths would otherwise crowd.
// kBPre: B arrives dequantized (bf16 workspace, see bprep_staged_body) by TMA straight into the
// ring's bf16 slots; the consumers convert only A and release a stage once its wgmmas are done.
// kBpStore (kBPre only, the `_kgrouped_bpre_tma` and `_bpre_tma` entry points): the TMA-store epilogue
// from its own staging (kGemmSm90TmaBpStoreBoxes boxes after the A boxes), which the next tile's
// stages never touch, so only the warpgroup's own earlier stores are waited for (their reads).
template <Fp8Kind AK, Fp8Kind BK, bool kOutF32, bool kKGroupedKernel, bool kBPre = false, bool kBpStore = false,
          bool kSwap = false>
__device__ __forceinline__ void gemm_body(const GemmSm90TmaParams& tp) {
  static_assert(!kBpStore || kBPre, "the staged TMA store is a kBPre instance");
  static_assert(!kSwap || (kBPre && !kBpStore && !kKGroupedKernel), "the swapped instance is an M-grouped kBPre one");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  const GemmSm90Params& p = tp.g;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = ptx::smem_align1024(smem_raw);
  // In-kernel B: [kSlots] bf16 slots, then the FP8 ring [stage] A box (8 KiB), B box (16 KiB).
  // kBPre: [kStages] bf16 slots (the ring's B), then [kStages] A boxes.
  // kBpStore: then kGemmSm90TmaBpStoreBoxes staging boxes (half per math warpgroup).
  uint8_t* smem_fp8 = smem + (kBPre ? kStages : kSlots) * kSlotBytes;
  uint8_t* smem_stage = smem_fp8 + kStages * (kBPre ? kAStageBytes : kStageBytes);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_stage + (kBpStore ? kGemmSm90TmaBpStoreBoxes * kGemmSm90TmaStoreBox : 0));
  uint64_t* empty = full + kStages;
  int* table = reinterpret_cast<int*>(empty + kStages);  // ends[G+1], prefix[G+1]
  __shared__ int warp_buf[kThreads / 32];

  const int tid = threadIdx.x;
  // full: the producer's arrive.expect_tx (TMA completes the bytes); empty: every consumer thread,
  // once the stage is converted (kBPre: once its wgmmas are done).
  if (tid == 0) ptx::mbar_init_ring(full, empty, kStages, 1, 256);
  // kSwap: tiles of kSwapTokens tokens (the wgmmas' N side) x 128 weight rows (the converted side).
  constexpr int kTileNK = kSwap ? kBM : kBN, kUnitM = kSwap ? kSwapTokens : kBM;
  const TileSpace ts = build_tile_space<kThreads>(p, kTileNK, table, warp_buf, kUnitM);
  __syncthreads();  // barriers initialized, table visible

  const int64_t K = p.k, N = p.n;
  const int wg = tid >> 7;
  // The TMA-store epilogue (store_tile_tma): K-grouped tiles with in-kernel B (measured 2026-11-22:
  // wgrad E128 +41% with fp32 D, +62% with bf16 D), and the kBpStore instances with their own
  // staging. (Compiled into the _bpre instances beside the direct stores, staged in 32 KiB of its
  // own, it cost fprop E8 4% with the epilogue not even taken: PERFORMANCE.md, "Ninth session".)
  constexpr bool kTmaStore = (kKGroupedKernel && !kBPre) || kBpStore;

  if (wg == 0) {
    // ---- producer: one thread issues the TMA loads ---------------------------------------------------
    ptx::setmaxnreg_dec<kProducerRegs>();
    if (tid != 0) return;
    ptx::tma_prefetch_desc(tp.tmap_a);
    ptx::tma_prefetch_desc(tp.tmap_b);
    // kBPre, K-grouped: A's FP8 copy in the workspace (the groups whose t0 is not 16-byte aligned).
    constexpr bool kACopy = kBPre && kKGroupedKernel;
    if constexpr (kACopy) ptx::tma_prefetch_desc(tp.tmap_a2);
    uint32_t it = 0;
    for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
      const TileInfo ti = decode_tile(p, ts, t, kTileNK, kUnitM);
      const int64_t len = ts.kgrouped ? ti.len : K;
      // TMA's innermost box coordinate must be 16-byte aligned: in-kernel K-grouped tiles start at t0
      // rounded down (the shifted path); kACopy tiles read whole 32-blocks per stage, from A where t0
      // is aligned, else from A's copy at the group's workspace columns (bprep_table_body), where B's
      // stages are too.
      const int64_t a0 = kACopy ? ti.t0 : ti.t0 & ~int64_t(15);
      const int nk = static_cast<int>(layout::ceil_div(layout::ceil_div(len + (ti.t0 - a0), kBK), 2) * 2);
      // kSwap: the converted operand (tmap_a) is B's weight rows of the group, the bf16 one (tmap_b)
      // A's dequantized tokens.
      const int32_t wrow = static_cast<int32_t>(ts.kgrouped ? ti.n0 : static_cast<int64_t>(ti.group) * N + ti.n0);
      const int32_t arow = kSwap ? wrow : static_cast<int32_t>(ti.row_begin);
      const int32_t brow = kSwap ? static_cast<int32_t>(ti.row_begin) : wrow;
      const int32_t bcol0 = kACopy ? __ldg(p.bprep_cols + ti.group) : 0;
      const bool a_copy = kACopy && (ti.t0 & 15) != 0;
      const void* tmap_a = a_copy ? static_cast<const void*>(tp.tmap_a2) : static_cast<const void*>(tp.tmap_a);
      const int64_t acol0 = a_copy ? bcol0 : a0;
      for (int kt = 0; kt < nk; ++kt, ++it) {
        const uint32_t s = it % kStages, round = it / kStages;
        ptx::mbar_wait(&empty[s], (round & 1) ^ 1);
        const int32_t kc0 = static_cast<int32_t>(acol0 + int64_t(kt) * kBK);
        if constexpr (kBPre) {
          ptx::mbar_arrive_expect_tx(&full[s], kAStageBytes + kSlotBytes);
          ptx::tma_load_2d(ptx::smem_addr(smem_fp8 + s * kAStageBytes), tmap_a, kc0, arow, &full[s]);
          const int32_t bc = kKGroupedKernel ? bcol0 + kt * kBK : kc0;
          ptx::tma_load_2d(ptx::smem_addr(smem + s * kSlotBytes), tp.tmap_b, bc, brow, &full[s]);
        } else {
          ptx::mbar_arrive_expect_tx(&full[s], kStageBytes);
          uint8_t* st = smem_fp8 + s * kStageBytes;
          ptx::tma_load_2d(ptx::smem_addr(st), tp.tmap_a, kc0, arow, &full[s]);
          ptx::tma_load_2d(ptx::smem_addr(st + kAStageBytes), tp.tmap_b, kc0, brow, &full[s]);
        }
      }
    }
    return;
  }

  // ---- consumers ---------------------------------------------------------------------------------------
  ptx::setmaxnreg_inc<kConsumerRegs>();
  const bool swz = p.swizzled != 0;
  const int cw = wg - 1, ctid = tid - 128, lane = tid & 31, warp_in_wg = (tid >> 5) & 3;
  const int q = lane & 3;
  const int r0 = cw * 64 + warp_in_wg * 16 + (lane >> 2);  // A rows r0, r0 + 8
  const int c0 = q * 2;                                     // accumulator columns 8j + c0, + 1
  const int br = ctid;                                      // the B row this thread converts
  uint32_t it = 0;
  for (int64_t t = blockIdx.x; t < ts.total_tiles; t += gridDim.x) {
    const TileInfo ti = decode_tile(p, ts, t, kTileNK, kUnitM);
    // a tile's second half may be empty (kSwap: its weight rows, past N)
    const bool wg_active = cw * 64 < (kSwap ? ti.n_valid : ti.rows_valid);
    // The tile: accumulate, then store; nb_tag: its wgmmas' N in units of 64 (kSwap tiles of at most 128
    // tokens: 2, else 4). One instance per N, each with its own accumulators: one set shared by the
    // forms made ptxas serialize the wgmmas (C7511). (n64 and n192 forms as well, for less idle tensor
    // work in a group's last token tile, made it spill 44-48 bytes or serialize the wgmmas (C7512);
    // with these two, 16 bytes, values of the tile loop reloaded once per tile.)
    auto tile_body = [&](auto nb_tag) {
      float acc[2][64];
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[h][i] = 0.0f;

      // kKG: K-grouped tile; kShift: its range starts inside a 16-byte chunk (TMA boxes start 16-byte
      // aligned, so the stages cover [a0, ...) with a0 = t0 rounded down, and 32-blocks straddle chunks).
      auto run = [&](auto kg_tag, auto shift_tag) {
        constexpr bool kKG = decltype(kg_tag)::value;
        constexpr bool kShift = decltype(shift_tag)::value;
        const int64_t len = kKG ? ti.len : K;
        const int sh = kShift ? static_cast<int>(ti.t0 & 15) : 0;
        const int kc = static_cast<int>(layout::scale_cols(len));
        const int nk = static_cast<int>(layout::ceil_div(layout::ceil_div(len + sh, kBK), 2) * 2);
        // Byte b of a chunk that starts a 32-block boundary's chunk (even chunks when shifted) takes
        // the later block iff b >= sh: bit b of `selm`.
        const uint32_t selm = (0xFFFFu << sh) & 0xFFFFu;
        // Scale pointers: A rows r0, r0 + 8 (K-grouped: the data row; else the m-tile across groups /
        // batch entries when swizzled), and B row br of the tile's group.
        bool avalid[2];
        int64_t asrow[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int rl = r0 + 8 * h;
          if constexpr (kSwap) {  // the weight rows n0 + rl of the group's B scales
            avalid[h] = rl < ti.n_valid;
            asrow[h] = ti.n0 + rl;
          } else {
            avalid[h] = rl < ti.rows_valid;
            asrow[h] = swz ? (kKG ? ti.row_begin : ti.mt * kBM) + rl : ti.row_begin + rl;
          }
        }
        const bool bvalid = br < ti.n_valid;
        const int64_t bsrow = ti.n0 + br;
        const uint8_t* b_scales = p.b_scales + (kKG ? 0 : static_cast<int64_t>(ti.group) * p.b_scale_stride);
        // Each scale row's column-0 byte; column c adds (c / 4) * 512 + c % 4 (swizzled) or c.
        const uint8_t* a_srow[2];
#pragma unroll
        for (int h = 0; h < 2; ++h)
          a_srow[h] = (kSwap ? b_scales : p.a_scales) +
                      (swz ? layout::swizzled_offset(asrow[h], 0, p.scale_ld) : asrow[h] * p.scale_ld);
        const uint8_t* b_srow = b_scales + (swz ? layout::swizzled_offset(bsrow, 0, p.scale_ld) : bsrow * p.scale_ld);
        const int col_base = ti.col_base;
        // A scale byte, or kNoScale (multiplier 0) for rows / blocks outside the operand.
        auto scale_byte = [&](const uint8_t* row, bool valid, int kb) -> uint32_t {
          if (!valid || kb < 0 || kb >= kc) return kNoScale;
          const int col = col_base + kb;
          return __ldg(row + (swz ? (col >> 2) * layout::kTileBytes + (col & 3) : col));
        };
        // Scale bytes of stage kt: A rows' blocks 2kt + q/2 (and the one before, when shifted), B's
        // row blocks 2kt - 1 (shifted only), 2kt, 2kt + 1.
        auto load_e = [&](int kt, uint32_t (&ea)[2][2], uint32_t (&eb)[3]) {
          const int kba = 2 * kt + (q >> 1);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            ea[h][1] = scale_byte(a_srow[h], avalid[h], kba);
            ea[h][0] = kShift ? scale_byte(a_srow[h], avalid[h], kba - 1) : kNoScale;
          }
          eb[0] = kShift ? scale_byte(b_srow, bvalid, 2 * kt - 1) : kNoScale;
          eb[1] = scale_byte(b_srow, bvalid, 2 * kt);
          eb[2] = scale_byte(b_srow, bvalid, 2 * kt + 1);
        };
        // Unshifted ranges: the scales of a stage pair (blocks 4i..4i+3 of a row) as one packed word
        // per row, loaded a pair ahead -- one aligned 32-bit load when swizzled (column bases are
        // multiples of 4 there), byte loads in LINEAR rows.
        auto scale_word = [&](const uint8_t* row, bool valid, int i) -> uint32_t {
          if (!valid) return 0u;
          const int col = col_base + 4 * i;
          if (swz) return __ldg(reinterpret_cast<const uint32_t*>(row + (col >> 2) * layout::kTileBytes));
          uint32_t w = 0;
#pragma unroll
          for (int b = 0; b < 4; ++b)
            if (4 * i + b < kc) w |= static_cast<uint32_t>(__ldg(row + col + b)) << (8 * b);
          return w;
        };
        // The words of the current pair and of the two after it (loaded two pairs ahead: an L2 round
        // trip under the kernel's own TMA traffic outlasts one pair of stages).
        uint32_t wa[2], wb, wa_n1[2] = {0u, 0u}, wb_n1 = 0u, wa_n2[2] = {0u, 0u}, wb_n2 = 0u;
        auto load_words = [&](int i, uint32_t (&a)[2], uint32_t& b) {
          a[0] = scale_word(a_srow[0], avalid[0], i);
          a[1] = scale_word(a_srow[1], avalid[1], i);
          if constexpr (!kBPre) b = scale_word(b_srow, bvalid, i);
        };
        // The scale code of block kb from the packed word of its pair.
        auto code_of = [&](uint32_t w, bool valid, int kb) -> uint32_t {
          return valid && kb < kc ? (w >> (8 * (kb & 3))) & 0xFFu : kNoScale;
        };
        uint32_t ea[2][2], eb[3];
        if constexpr (kShift) {
          load_e(0, ea, eb);
        } else {
          load_words(0, wa, wb);
          if (nk > 2) load_words(1, wa_n1, wb_n1);
        }
        uint32_t xa[4][4], xb[4][4];  // A fragments of even / odd stages
        if constexpr (kBPre) {
          // B arrives as bf16 in the ring stage's slot; only A is converted here, into two fragment sets
          // (even / odd stages): stage kt's A once the wait after issuing stage kt - 1 shows stage kt - 2
          // done, so the conversion runs while stage kt - 1's wgmmas do. (Converting one stage further
          // ahead into a third set, while two stages are in flight, measured slower: PERFORMANCE.md.)
          const uint32_t it0 = it;
          // Converts stage kt's A rows (ring stage it0 + kt) into the fragments x.
          auto convert = [&](int kt, uint32_t (&x)[4][4]) {
            if constexpr (!kShift) {
              if ((kt & 1) == 0 && kt > 0) {  // a new stage pair: its words were loaded two pairs ahead
                wa[0] = wa_n1[0], wa[1] = wa_n1[1];
                wa_n1[0] = wa_n2[0], wa_n1[1] = wa_n2[1];
              }
              const int kba = 2 * kt + (q >> 1);
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                ea[h][1] = code_of(wa[h], avalid[h], kba);
                ea[h][0] = kNoScale;
              }
            }
            const uint32_t g = it0 + static_cast<uint32_t>(kt), s = g % kStages, round = g / kStages;
            const uint8_t* st = smem_fp8 + s * kAStageBytes;
            // K-grouped: the stage's bytes inside the range, [vlo, vhi); the rest is another group's.
            const int64_t rem = len + sh - int64_t(kt) * kBK;
            const int vlo = kt == 0 ? sh : 0;
            const int vhi = rem >= kBK ? kBK : rem <= 0 ? 0 : static_cast<int>(rem);
            const bool masked = kKG && (vlo > 0 || vhi < kBK);
            ptx::mbar_wait(&full[s], round & 1);
            uint32_t aw[2][4];  // aw[h][j] is word j of row r0 + 8h's chunk q
            {
              const uint4 raw0 = *reinterpret_cast<const uint4*>(st + sw64_offset(r0, q));
              const uint4 raw1 = *reinterpret_cast<const uint4*>(st + sw64_offset(r0 + 8, q));
              aw[0][0] = raw0.x, aw[0][1] = raw0.y, aw[0][2] = raw0.z, aw[0][3] = raw0.w;
              aw[1][0] = raw1.x, aw[1][1] = raw1.y, aw[1][2] = raw1.z, aw[1][3] = raw1.w;
            }
            if (masked) {
#pragma unroll
              for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < 4; ++j) aw[h][j] = mask_range(aw[h][j], 16 * q + 4 * j, vlo, vhi);
            }
            uint32_t spec_a = 0;
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int j = 0; j < 4; ++j) spec_a |= special_bits<AK>(aw[h][j]);
            const bool slow_a = code_slow<AK>(ea[0][0]) || code_slow<AK>(ea[0][1]) || code_slow<AK>(ea[1][0]) ||
                                code_slow<AK>(ea[1][1]) || (spec_a & 0x80808080u) != 0;
            const uint32_t qsel = (q & 1) ? 0xFFFFu : selm;
            auto emit_a = [&](auto slow_tag) { convert_a_frags<AK, kShift, decltype(slow_tag)::value>(aw, ea, qsel, x); };
            if (slow_a) emit_a(std::true_type{});
            else emit_a(std::false_type{});
          };
          // Issues stage kt's wgmmas (both warpgroups, rows past the tile included: a wgmma under a branch
          // the compiler cannot prove warp-uniform is serialized, ptxas C7518), then loads scales ahead
          // (after the issue, as in the in-kernel path, so nothing before it waits for them).
          // kNB: the wgmmas' N in units of 64 (4: all 256 columns; 2: kSwap tiles of at most 128 tokens).
          auto issue = [&](int kt, const uint32_t (&x)[4][4], auto nb_tag) {
            constexpr int kNB = decltype(nb_tag)::value;
            const uint32_t b_addr = ptx::smem_addr(smem + ((it0 + static_cast<uint32_t>(kt)) % kStages) * kSlotBytes);
            ptx::wgmma_fence();
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              static_assert(kNB == 4 || kNB == 2, "n256 or n128 wgmmas");
              if constexpr (kNB == 4)
                wgmma_bf16_rs_n256(reinterpret_cast<float(&)[128]>(acc), x[j], ptx::smem_desc_k128_sw128(b_addr + 32 * j));
              else
                ptx::wgmma_bf16_rs<128, 0>(acc[0], x[j], ptx::smem_desc_k128_sw128(b_addr + 32 * j), 1);
            }
            ptx::wgmma_commit();
            if constexpr (kShift) {
              if (kt + 1 < nk) load_e(kt + 1, ea, eb);
            } else {
              if ((kt & 1) == 0 && kt + 4 < nk) load_words((kt >> 1) + 2, wa_n2, wb_n2);
            }
          };
          // Stage kt's wgmmas are done: its ring stage (A box read before them, slot read by them) is free.
          auto release = [&](int kt) { ptx::mbar_arrive(&empty[(it0 + static_cast<uint32_t>(kt)) % kStages]); };
          auto kloop = [&](auto nb_tag) {
            for (int kt = 0; kt < nk; kt += 2) {
              convert(kt, xa);
              issue(kt, xa, nb_tag);
              ptx::wgmma_wait<1>();  // stage kt - 1 done (and its fragments, xb)
              if (kt > 0) release(kt - 1);
              convert(kt + 1, xb);
              issue(kt + 1, xb, nb_tag);
              ptx::wgmma_wait<1>();
              release(kt);
            }
          };
          kloop(nb_tag);
          ptx::wgmma_wait<0>();
          if (nk > 0) release(nk - 1);
          it += static_cast<uint32_t>(nk);
          ptx::fence_acc(acc[0]);
          ptx::fence_acc(acc[1]);
          return;
        } else {
          auto stage = [&](int kt, uint32_t (&x)[4][4]) {
            if constexpr (!kShift) {
              const int kba = 2 * kt + (q >> 1);
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                ea[h][1] = code_of(wa[h], avalid[h], kba);
                ea[h][0] = kNoScale;
              }
              eb[0] = kNoScale;
              eb[1] = code_of(wb, bvalid, 2 * kt);
              eb[2] = code_of(wb, bvalid, 2 * kt + 1);
            }
            const uint32_t s = it % kStages, round = it / kStages;
            // The stage's A box, B's FP8 box after it, and the bf16 slot B is converted into.
            const uint8_t* st = smem_fp8 + s * kStageBytes;
            uint8_t* slot = smem + (it % kSlots) * kSlotBytes;
            // K-grouped: the stage's bytes inside the range, [vlo, vhi); the rest is another group's.
            const int64_t rem = len + sh - int64_t(kt) * kBK;
            const int vlo = kt == 0 ? sh : 0;
            const int vhi = rem >= kBK ? kBK : rem <= 0 ? 0 : static_cast<int>(rem);
            const bool masked = kKG && (vlo > 0 || vhi < kBK);
            ptx::mbar_wait(&full[s], round & 1);
            // Load and screen B row br (-> bf16 slot row br; chunk c takes blocks 2kt - 1 + c/2 and
            // 2kt + c/2 when shifted, else 2kt + c/2) and A rows r0, r0 + 8 (-> the fragments
            // x[j] = {lo(r0), lo(r0+8), hi(r0), hi(r0+8)} of word j), then convert both in one block
            // when neither needs the exact path, so the scheduler can interleave them.
            uint32_t w[16];  // B: w[4c + j] is word j of chunk c
#pragma unroll
            for (int c = 0; c < 4; ++c) {
              const uint4 v = *reinterpret_cast<const uint4*>(st + kAStageBytes + sw64_offset(br, c));
              w[4 * c + 0] = v.x;
              w[4 * c + 1] = v.y;
              w[4 * c + 2] = v.z;
              w[4 * c + 3] = v.w;
            }
            uint32_t aw[2][4];  // A: aw[h][j] is word j of row r0 + 8h's chunk q
            {
              const uint4 raw0 = *reinterpret_cast<const uint4*>(st + sw64_offset(r0, q));
              const uint4 raw1 = *reinterpret_cast<const uint4*>(st + sw64_offset(r0 + 8, q));
              aw[0][0] = raw0.x, aw[0][1] = raw0.y, aw[0][2] = raw0.z, aw[0][3] = raw0.w;
              aw[1][0] = raw1.x, aw[1][1] = raw1.y, aw[1][2] = raw1.z, aw[1][3] = raw1.w;
            }
            if (masked) {
#pragma unroll
              for (int i = 0; i < 16; ++i) w[i] = mask_range(w[i], 4 * i, vlo, vhi);
#pragma unroll
              for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < 4; ++j) aw[h][j] = mask_range(aw[h][j], 16 * q + 4 * j, vlo, vhi);
            }
            uint32_t spec_b = 0, spec_a = 0;
#pragma unroll
            for (int i = 0; i < 16; ++i) spec_b |= special_bits<BK>(w[i]);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int j = 0; j < 4; ++j) spec_a |= special_bits<AK>(aw[h][j]);
            const bool slow_b = code_slow<BK>(eb[0]) || code_slow<BK>(eb[1]) || code_slow<BK>(eb[2]) ||
                                (spec_b & 0x80808080u) != 0;
            const bool slow_a = code_slow<AK>(ea[0][0]) || code_slow<AK>(ea[0][1]) || code_slow<AK>(ea[1][0]) ||
                                code_slow<AK>(ea[1][1]) || (spec_a & 0x80808080u) != 0;
            uint8_t* drow = slot + br * 128;
            auto emit_b = [&](auto slow_tag) {
              constexpr bool kSlow = decltype(slow_tag)::value;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                uint32_t lo[4], hi[4];
#pragma unroll
                for (int c = 0; c < 4; ++c) {
                  const uint32_t H = eb[c / 2 + 1];
                  if constexpr (kShift) {
                    const uint32_t L = eb[c / 2];
                    const uint32_t sel = (c & 1) ? 0xFu : (selm >> (4 * j)) & 0xFu;
                    if constexpr (kSlow) cvt_exact_sel<BK>(w[4 * c + j], code_exact(L), code_exact(H), sel, lo[c], hi[c]);
                    else cvt_fast_sel<BK>(w[4 * c + j], code_mult<BK>(L), code_mult<BK>(H), sel, lo[c], hi[c]);
                  } else {
                    if constexpr (kSlow) cvt_exact<BK>(w[4 * c + j], code_exact(H), lo[c], hi[c]);
                    else cvt_fast<BK>(w[4 * c + j], code_mult<BK>(H) * 0x00010001u, lo[c], hi[c]);
                  }
                }
                store_kstep(drow, br & 7, j, lo, hi);
              }
            };
            const uint32_t qsel = (q & 1) ? 0xFFFFu : selm;
            auto emit_a = [&](auto slow_tag) { convert_a_frags<AK, kShift, decltype(slow_tag)::value>(aw, ea, qsel, x); };
            if (!slow_a && !slow_b) {
              emit_b(std::false_type{});
              emit_a(std::false_type{});
            } else {
              if (slow_b) emit_b(std::true_type{});
              else emit_b(std::false_type{});
              if (slow_a) emit_a(std::true_type{});
              else emit_a(std::false_type{});
            }
            ptx::mbar_arrive(&empty[s]);  // the FP8 stage is consumed
            ptx::fence_proxy_async_shared();  // this thread's bf16 stores -> wgmma's async-proxy reads
            ptx::named_barrier_sync(kConsumerBarrier, 256);
            {  // issued by both warpgroups, rows past the tile included: a wgmma under a branch the
               // compiler cannot prove warp-uniform is serialized (ptxas C7518)
              const uint32_t b_addr = ptx::smem_addr(slot);
              ptx::wgmma_fence();
#pragma unroll
              for (int j = 0; j < 4; ++j)
                wgmma_bf16_rs_n256(reinterpret_cast<float(&)[128]>(acc), x[j],
                                   ptx::smem_desc_k128_sw128(b_addr + 32 * j));
              ptx::wgmma_commit();
              // Scales ahead: loaded here, not before the proxy fence above, which would wait for them
              // (it compiles to MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S).
              if constexpr (kShift) {
                if (kt + 1 < nk) load_e(kt + 1, ea, eb);
              } else {
                if ((kt & 1) == 0 && kt + 4 < nk) load_words((kt >> 1) + 2, wa_n2, wb_n2);
              }
              ptx::wgmma_wait<1>();  // the previous stage's wgmmas (and its A registers, slot) are done
            }
            ++it;
          };
          for (int kt = 0; kt < nk; kt += 2) {
            stage(kt, xa);
            stage(kt + 1, xb);
            wa[0] = wa_n1[0], wa[1] = wa_n1[1], wb = wb_n1;
            wa_n1[0] = wa_n2[0], wa_n1[1] = wa_n2[1], wb_n1 = wb_n2;
          }
          ptx::wgmma_wait<0>();
          ptx::fence_acc(acc[0]);
          ptx::fence_acc(acc[1]);
        }
      };
      // (kBPre K-grouped tiles are never shifted: their unaligned groups read A's copy, see the producer.)
      if constexpr (!kKGroupedKernel) run(std::false_type{}, std::false_type{});
      else if (kBPre || (ti.t0 & 15) == 0) run(std::true_type{}, std::false_type{});
      else if constexpr (!kBPre) run(std::true_type{}, std::true_type{});

      // ---- epilogue: alpha, optional accumulate, round once ------------------------------------------------
      if constexpr (kBpStore) {  // (the launcher runs the `_bpre` instance where D is not 16-byte aligned)
        // Own staging, per warpgroup: once the TMA unit has read its previous tile's boxes (issued a
        // whole tile ago), the block goes out box by box.
        if (wg_active) {
          constexpr int kNb = kGemmSm90TmaBpStoreBoxes / 2;
          if ((ctid & 127) == 0) ptx::bulk_wait_group_read<0>();
          ptx::named_barrier_sync(kWgBarrier0 + cw, 128);
          if constexpr (kKGroupedKernel) {
            store_tile_tma<kOutF32, kNb>(tp, ti, smem_stage + cw * kNb * kGemmSm90TmaStoreBox, cw, warp_in_wg, lane, acc);
          } else {
            const int wg_rows = ti.rows_valid - 64 * cw < 64 ? ti.rows_valid - 64 * cw : 64;
            store_tile_tma<kOutF32, kNb, true>(tp, ti, smem_stage + cw * kNb * kGemmSm90TmaStoreBox, cw, warp_in_wg,
                                               lane, acc, wg_rows);
          }
        }
      } else if (kTmaStore && tp.store_tma) {
        // Staged in the bf16 slots (each warpgroup in its half, 6 boxes), once both warpgroups' wgmmas
        // are done with them; free again for the next tile's B once the TMA unit has read them.
        constexpr int kNb = kSlots * kSlotBytes / 2 / kGemmSm90TmaStoreBox;
        ptx::named_barrier_sync(kConsumerBarrier, 256);
        if (wg_active) store_tile_tma<kOutF32, kNb>(tp, ti, smem + cw * kNb * kGemmSm90TmaStoreBox, cw, warp_in_wg, lane, acc);
        if ((ctid & 127) == 0) ptx::bulk_wait_group_read<0>();
        ptx::named_barrier_sync(kConsumerBarrier, 256);
      } else if (kSwap) {
        if (wg_active) store_acc_tile_swap<kOutF32>(p, ti, r0, c0, lane, acc);
      } else if (wg_active) {
        store_acc_tile<kOutF32>(p, ti, ts.kgrouped, r0, c0, acc);
      }
    };
    if constexpr (kSwap) {  // (uniform over the CTA: the tile's token count)
      if (ti.rows_valid > 128) tile_body(std::integral_constant<int, 4>{});
      else tile_body(std::integral_constant<int, 2>{});
    } else {
      tile_body(std::integral_constant<int, 4>{});
    }
  }
  if (kTmaStore && (kBpStore || tp.store_tma) && (ctid & 127) == 0) ptx::bulk_wait_group<0>();  // before the CTA exits
#else
  // Generic PTX build (compute_90 without 'a'): no wgmma, setmaxnreg or TMA; the launcher never
  // selects this kernel on such a device, and a stray launch fails loudly.
  __trap();
#endif
}

// The B pre-kernels of kBPre plans write each 64-wide K stage of a B row (64 FP8 bytes, two
// 32-blocks) as 128 bf16 bytes in the slot order of the in-kernel path: 16-byte unit 2j holds the
// `lo` halves of word j of the stage's four 16-byte chunks, unit 2j + 1 their `hi` halves (the K
// order of the A fragments), with the conversion the in-kernel path uses (cvt_fast, or cvt_exact for
// stages with an FP8 NaN/Inf or scales the fast multiply cannot reach). Stages past K are zeros, as
// are bytes past K inside the last stage (K is a multiple of 16).
// This thread's item of a K-grouped pre-kernel launch (one thread per item): the dequantized B's row
// and the first column of its 64-wide stage; false past the last item.
__device__ __forceinline__ bool bprep_item(const GemmSm90BPrepParams& p, int64_t& row, int& col) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.items) return false;
  const int64_t spr = p.kp / kBK;
  row = i / spr;
  col = static_cast<int>(i - row * spr) * kBK;
  return true;
}

// Zeroes every byte of w past its first `keep` (0 < keep < 4N): whole words past it, and the bytes
// past it of the one word that straddles it (the tail of a group's last 16 bytes in the A copy).
template <int N>
__device__ __forceinline__ void keep_first_bytes(uint32_t (&w)[N], int keep) {
  const uint32_t part = (1u << (8 * (keep & 3))) - 1u;
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = 4 * i + 4 <= keep ? w[i] : 4 * i < keep ? w[i] & part : 0u;
}

// Bytes [tc, tc + 16) of a row (`src`: its first byte, 16-byte aligned) as four words, those at or
// past t1 zero; tc need not be aligned (tc >= the group's first token: the bytes before it are
// shifted out). Reads the five 4-byte words around the window that start before t1 (so never past
// the row: t1 <= K, K % 16 == 0), then shifts by bytes. (The K-grouped A copy's chunks; the
// K-grouped B pre-kernel loads one window per 64-byte item instead.)
__device__ __forceinline__ void load_window16(const uint8_t* src, int tc, int t1, uint32_t (&w)[4]) {
  const int a0 = tc & ~3;
  uint32_t y[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    const int a = a0 + 4 * i;
    y[i] = a < t1 ? __ldg(reinterpret_cast<const uint32_t*>(src + a)) : 0u;
  }
  const uint32_t sh8 = static_cast<uint32_t>(tc & 3) * 8u;
#pragma unroll
  for (int j = 0; j < 4; ++j) w[j] = __funnelshift_r(y[j], y[j + 1], sh8);
  if (tc + 16 > t1) keep_first_bytes(w, t1 - tc);
}

// K-grouped B (wgrad): thread i converts columns [64s, 64s + 64) of row `row` of the dequantized B,
// i.e. the tokens tb + [0, 64) of the group g whose columns hold them (tb = t0 + 64s - cols[g]);
// bytes outside the group's [t0, t1) are 0. Its chunks start 16q bytes after t0, so each lies in one
// 32-block of the group (blocks restart at t0). The stage's lo / hi halves, indexed [4j + c].
// The K-grouped workspace header (bprep_table_body): ends[G + 1], scale column bases colb[G + 1], first
// columns in the dequantized B cols[G + 1] (cols[G]: the columns in use).
__device__ __forceinline__ const int32_t* bprep_colb(const GemmSm90BPrepParams& p) { return p.table + (p.groups + 1); }
__device__ __forceinline__ const int32_t* bprep_cols(const GemmSm90BPrepParams& p) {
  return p.table + 2 * (p.groups + 1);
}

// The words go out by word index through emit(j, lo[4], hi[4]) (word j of chunks 0..3: one staged
// 16-byte unit each), so the caller stores them at once (holding all 32 until the end spilled at the
// 48 registers of 5 blocks per SM: ncu, wgrad E8, 2.4 M local-memory requests, 65% of DRAM
// bandwidth). Items at or past the last group's columns emit nothing (the caller does not store them).
// The item's 64 bytes [tb, tb + 64) come from one window of 17 aligned words at tb rounded down to 4
// (words at or past t1 not read: t1 <= K and K % 16 == 0, so nothing past the row), each chunk's
// words funnel-shifted by tb % 4 bytes; only an item that reaches t1 is masked (tb >= t0, so no byte
// before the group is ever kept), and the item's two 32-blocks take one scale load each. (Before:
// aligned and unaligned groups took two code paths, divergent inside warps whose items span several
// groups, each chunk loaded five words and masked every word, and the scale was loaded per chunk:
// ~1,290 instructions per item, issue slots 67% busy, DRAM 48% at wgrad E128. With the one window,
// one conversion path per item and one 16-byte store per staged unit: the pre-kernel 131 -> 101 us
// at wgrad E128, 712 -> 538 us at E8 (DRAM 78%), ncu on the H100, 2026-11-23.)
template <Fp8Kind BK, typename Emit>
__device__ __forceinline__ void bprep_kgrouped_item(const GemmSm90BPrepParams& p, int64_t row, int c0, Emit&& emit) {
  const int G = p.groups;
  const int32_t* ends = p.table;
  const int32_t* colb = bprep_colb(p);
  const int32_t* cols = bprep_cols(p);
  if (c0 >= __ldg(cols + G)) return;
  int g = 0, top = G - 1;  // last g with cols[g] <= c0 (groups of width 0 share their successor's)
  while (g < top) {
    const int mid = (g + top + 1) >> 1;
    if (__ldg(cols + mid) <= c0) g = mid; else top = mid - 1;
  }
  const int t0 = __ldg(ends + g), t1 = __ldg(ends + g + 1);
  const int tb = t0 + (c0 - __ldg(cols + g));
  const int kcg = static_cast<int>(layout::scale_cols(t1 - t0));
  const int cb = __ldg(colb + g);
  const uint8_t* src = p.b + row * p.k;
  const int kb0 = (tb - t0) >> 5;  // (tb - t0 is a multiple of 64: the item's blocks are kb0, kb0 + 1)
  auto code = [&](int kb) -> uint32_t {
    if (kb >= kcg) return kNoScale;  // (past the group: the chunk's bytes are 0)
    const int64_t col = cb + kb;
    return __ldg(p.b_scales + (p.swizzled ? layout::swizzled_offset(row, col, p.scale_ld) : row * p.scale_ld + col));
  };
  const int a0 = tb & ~3;
  const uint32_t sh8 = static_cast<uint32_t>(tb & 3) * 8u;
  uint32_t w[16];  // w[4c + j]: word j of chunk c
  {
    uint32_t y[17];
#pragma unroll
    for (int i = 0; i < 17; ++i) {
      const int a = a0 + 4 * i;
      y[i] = a < t1 ? __ldg(reinterpret_cast<const uint32_t*>(src + a)) : 0u;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = __funnelshift_r(y[i], y[i + 1], sh8);
  }
  const uint32_t e2[2] = {code(kb0), code(kb0 + 1)};
  if (tb + 64 > t1) {  // (mask_range here, not keep_first_bytes: the latter measured 538 -> 640 us at wgrad E8)
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = mask_range(w[i], tb + 4 * i, t0, t1);
  }
  // One path for the whole item: the exact conversion where a block's scale is out of the fast
  // multiply's reach or a byte is NaN / Inf (both forms give the same bits where the fast one applies).
  uint32_t spec = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) spec |= special_bits<BK>(w[i]);
  const bool slow = code_slow<BK>(e2[0]) || code_slow<BK>(e2[1]) || (spec & 0x80808080u) != 0;
  // Word j of the four chunks together: the staged units are 16 bytes of one word index (emit(j, lo, hi)).
  auto convert = [&](auto slow_tag) {
    constexpr bool kSlow = decltype(slow_tag)::value;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t lo[4], hi[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const uint32_t e = e2[c >> 1];
        if constexpr (kSlow) cvt_exact<BK>(w[4 * c + j], code_exact(e), lo[c], hi[c]);
        else cvt_fast<BK>(w[4 * c + j], code_mult<BK>(e) * 0x00010001u, lo[c], hi[c]);
      }
      emit(j, lo, hi);
    }
  };
  if (slow) convert(std::true_type{});
  else convert(std::false_type{});
}

// K-grouped A copy (mxq_gemm_sm90_arelayout_kgrouped, after the group table): block (x, g) copies,
// if group g's first token t0 is not 16-byte aligned, its rows' tokens [t0, t1) to a_out's columns
// cols[g] + [0, width) (zeros past t1), 16-byte units in a grid-stride loop over the X blocks of the
// group; the blocks of aligned or empty groups return at once (the main kernel reads those from A).
__device__ __forceinline__ void arelayout_body(const GemmSm90BPrepParams& p) {
  const int g = static_cast<int>(blockIdx.y);
  const int32_t* ends = p.table;
  const int32_t* cols = bprep_cols(p);
  const int t0 = __ldg(ends + g), t1 = __ldg(ends + g + 1);
  if ((t0 & 15) == 0 || t1 <= t0) return;
  const int c0 = __ldg(cols + g);
  const uint32_t upr = static_cast<uint32_t>(__ldg(cols + g + 1) - c0) / 16u;  // units per row
  const uint64_t total = static_cast<uint64_t>(p.a_rows) * upr;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t u = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < total; u += stride) {
    uint64_t row;
    uint32_t c;
    if (total <= 0xFFFFFFFFull) {  // 32-bit division where it fits
      row = static_cast<uint32_t>(u) / upr;
      c = static_cast<uint32_t>(u) - static_cast<uint32_t>(row) * upr;
    } else {
      row = u / upr;
      c = static_cast<uint32_t>(u - row * upr);
    }
    const int tc = t0 + 16 * static_cast<int>(c);
    uint32_t w[4] = {0u, 0u, 0u, 0u};
    if (tc < t1) load_window16(p.a + row * p.k, tc, t1, w);
    *reinterpret_cast<uint4*>(p.a_out + row * p.kp + c0 + 16 * c) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// M-grouped / dense B (bprep_staged_body): row `row` of the [groups * N] rows, the stage at column
// c0, converted whole by one thread. (Until the fifth session eight threads shared a stage, each
// storing one 16-byte unit straight to global memory: issue-bound, ncu 2026-11-22 fprop E8 168.6 us
// at 1.57 GHz, DRAM 59% of peak; this form with staged stores: 119.7 us at 1.58 GHz, DRAM 83%.)
template <Fp8Kind BK>
__device__ __forceinline__ void bprep_mgrouped_item(const GemmSm90BPrepParams& p, int64_t row, int c0,
                                                    uint32_t (&lo)[16], uint32_t (&hi)[16]) {
  // (B's rows and N are below 2^31: sm90_tma_supports)
  const int64_t g = static_cast<uint32_t>(row) / static_cast<uint32_t>(p.n), nr = row - g * p.n;
  const uint8_t* src = p.b + row * p.k + c0;
  uint32_t w[16];  // w[4c + j]: word j of chunk c
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint4 v =
        c0 + 16 * c < p.k ? __ldg(reinterpret_cast<const uint4*>(src + 16 * c)) : make_uint4(0u, 0u, 0u, 0u);
    w[4 * c + 0] = v.x, w[4 * c + 1] = v.y, w[4 * c + 2] = v.z, w[4 * c + 3] = v.w;
  }
  const int64_t kc = layout::scale_cols(p.k);
  const uint8_t* sb = p.b_scales + g * p.b_scale_stride;
  // A dequantized ahead with swizzled scales (p.table): token rows -> the M-grouped scale layout's rows
  // (group bases padded to 128 rows): 128 * prefix[g] + (row - ends[g]) for the group g holding the row;
  // rows after the last group belong to none (no tile reads them): multiplier 0.
  int64_t srow = nr;
  bool in_group = true;
  if (p.table) {
    const int G = p.groups;
    const int32_t* ends = p.table;
    const int r = static_cast<int>(row);
    in_group = r < __ldg(ends + G);
    int lo = 0, hi = G - 1;  // last group with ends[lo] <= r (a non-empty one when r < ends[G])
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (__ldg(ends + mid) <= r) lo = mid; else hi = mid - 1;
    }
    srow = int64_t(kTileM) * __ldg(ends + G + 1 + lo) + (r - __ldg(ends + lo));
  }
  uint32_t e[2];
#pragma unroll
  for (int hh = 0; hh < 2; ++hh) {
    const int64_t kb = c0 / 32 + hh;
    e[hh] = kb < kc && in_group
                ? __ldg(sb + (p.swizzled ? layout::swizzled_offset(srow, kb, p.scale_ld) : srow * p.scale_ld + kb))
                : kNoScale;
  }
  uint32_t spec = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) spec |= special_bits<BK>(w[i]);
  if (code_slow<BK>(e[0]) || code_slow<BK>(e[1]) || (spec & 0x80808080u) != 0) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) cvt_exact<BK>(w[4 * c + j], code_exact(e[c / 2]), lo[4 * j + c], hi[4 * j + c]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c)
        cvt_fast<BK>(w[4 * c + j], code_mult<BK>(e[c / 2]) * 0x00010001u, lo[4 * j + c], hi[4 * j + c]);
  }
}

// One thread per item; the block's items are consecutive, and so are their 128-byte outputs (an
// item's row and stage index the workspace exactly as its number does), so the block stages its 32
// KiB in shared memory (16-byte units XOR-swizzled by item) and then writes them with consecutive
// threads on consecutive 16-byte units: whole sectors per warp store, where each thread storing
// its own 128 bytes wrote half a sector per request.
template <Fp8Kind BK, bool kKGrouped>
__device__ __forceinline__ void bprep_staged_body(const GemmSm90BPrepParams& p) {
  constexpr int kT = kGemmSm90BPrepThreads;

  __shared__ uint4 staged[kT * 8];
  // K-grouped: items at or past the last group's columns (cols[G]; the row bound leaves room for any
  // split, ~27% of it at wgrad E128) are read by no tile: not stored.
  __shared__ uint8_t unused[kKGrouped ? kT : 1];
  const int t = threadIdx.x;
  int64_t row;
  int c0;
  bool valid;
  if constexpr (kKGrouped) {
    valid = bprep_item(p, row, c0);
    if (valid) unused[t] = c0 >= __ldg(bprep_cols(p) + p.groups);
  } else {  // 32-bit division where it fits (2^32 items would be a 512 GiB workspace)
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kT + t;
    valid = i < p.items;
    const uint32_t spr = static_cast<uint32_t>(p.kp / kBK);
    uint32_t seg;
    if (i < (int64_t(1) << 32)) {
      row = static_cast<uint32_t>(i) / spr;
      seg = static_cast<uint32_t>(i) - static_cast<uint32_t>(row) * spr;
    } else {
      row = i / spr;
      seg = static_cast<uint32_t>(i - row * spr);
    }
    c0 = static_cast<int>(seg) * kBK;
  }
  if (valid) {
    if constexpr (kKGrouped) {
      // Unit 2j (lo) / 2j + 1 (hi) of this item's staged 128 bytes, as the stores below read them.
      bprep_kgrouped_item<BK>(p, row, c0, [&](int j, const uint32_t (&lo)[4], const uint32_t (&hi)[4]) {
        staged[t * 8 + ((2 * j) ^ (t & 7))] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
        staged[t * 8 + ((2 * j + 1) ^ (t & 7))] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
      });
    } else {
      uint32_t lo[16], hi[16];
      bprep_mgrouped_item<BK>(p, row, c0, lo, hi);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        staged[t * 8 + ((2 * j) ^ (t & 7))] = make_uint4(lo[4 * j], lo[4 * j + 1], lo[4 * j + 2], lo[4 * j + 3]);
        staged[t * 8 + ((2 * j + 1) ^ (t & 7))] = make_uint4(hi[4 * j], hi[4 * j + 1], hi[4 * j + 2], hi[4 * j + 3]);
      }
    }
  }
  __syncthreads();
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kT;
  const int n = static_cast<int>(p.items - first < kT ? p.items - first : kT);
  uint4* dst = reinterpret_cast<uint4*>(p.out + first * kBK);
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const int idx = r * kT + t, item = idx >> 3, unit = idx & 7;
    if (item < n && !(kKGrouped && unused[item])) dst[idx] = staged[item * 8 + (unit ^ (item & 7))];
  }
}

// The K-grouped workspace header (one block): the group table exactly as the GEMM kernel builds it
// (clamped ends, scale column bases), and each group's first column in the dequantized B (and A's
// copy), the exclusive scan of round_up(len, 128), the columns its even stage count covers.
__device__ __forceinline__ void bprep_table_body(const GemmSm90Params& p, int32_t* out) {
  constexpr int kT = kGemmSm90BPrepTableThreads;
  extern __shared__ int bp_table[];
  __shared__ int warp_buf[kT / 32];
  const TileSpace ts = build_tile_space<kT>(p, kBN, bp_table, warp_buf);
  const int G = p.groups, tid = threadIdx.x;
  const int chunk = (G + kT - 1) / kT;
  const int g0 = min(G, tid * chunk), g1 = min(G, g0 + chunk);
  auto width = [&](int g) {
    const int len = ts.ends[g + 1] - ts.ends[g];
    return ((len + 2 * kBK - 1) / (2 * kBK)) * (2 * kBK);
  };
  int mine = 0;
  for (int g = g0; g < g1; ++g) mine += width(g);
  int total;
  int run = block_exclusive_scan<kT>(mine, [](int a, int b) { return a + b; }, 0, warp_buf, total);
  for (int g = g0; g < g1; ++g) {
    out[2 * (G + 1) + g] = run;
    run += width(g);
  }
  for (int g = tid; g <= G; g += kT) {
    out[g] = ts.ends[g];
    out[G + 1 + g] = ts.prefix[g];
  }
  if (tid == 0) out[2 * (G + 1) + G] = total;
}

}  // namespace tmapath
}  // namespace sm90gemm
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_gemm.cpp):
// mxq_gemm_sm90_tma_<A>_<B>_<D>[_kgrouped][_bpre[_tma]] (KG: K-grouped, BP: kBPre, BS: kBpStore).
// (The M-grouped / dense `_bpre_tma` instances: the launcher takes them for K <= 4096.)
#define MXQ_GEMM_SM90_TMA_ENTRY_SW(NAME, AK, BK, F32, KG, BP, BS, SW)                                                \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90TmaThreads, 1)                                         \
      NAME(const __grid_constant__ mxq::GemmSm90TmaParams p) {                                                      \
    mxq::sm90gemm::tmapath::gemm_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32, KG, BP, BS, SW>(p);        \
  }
#define MXQ_GEMM_SM90_TMA_ENTRY(NAME, AK, BK, F32, KG, BP, BS) MXQ_GEMM_SM90_TMA_ENTRY_SW(NAME, AK, BK, F32, KG, BP, BS, false)
#define MXQ_GEMM_SM90_TMA_ENTRIES(A, B, AK, BK)                                                   \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16, AK, BK, false, false, false, false)       \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32, AK, BK, true, false, false, false)         \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16_kgrouped, AK, BK, false, true, false, false) \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32_kgrouped, AK, BK, true, true, false, false)   \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16_bpre, AK, BK, false, false, true, false)    \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32_bpre, AK, BK, true, false, true, false)    \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16_bpre_tma, AK, BK, false, false, true, true)    \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32_bpre_tma, AK, BK, true, false, true, true)    \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16_kgrouped_bpre, AK, BK, false, true, true, false) \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32_kgrouped_bpre, AK, BK, true, true, true, false)   \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_bf16_kgrouped_bpre_tma, AK, BK, false, true, true, true) \
  MXQ_GEMM_SM90_TMA_ENTRY(mxq_gemm_sm90_tma_##A##_##B##_f32_kgrouped_bpre_tma, AK, BK, true, true, true, true) \
  MXQ_GEMM_SM90_TMA_ENTRY_SW(mxq_gemm_sm90_tma_##A##_##B##_bf16_apre, BK, AK, false, false, true, false, true) \
  MXQ_GEMM_SM90_TMA_ENTRY_SW(mxq_gemm_sm90_tma_##A##_##B##_f32_apre, BK, AK, true, false, true, false, true)
// mxq_gemm_sm90_bprep_<B>: the B pre-kernel of the _bpre entry points.
#define MXQ_GEMM_SM90_BPREP_ENTRY(B, BK)                                                   \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90BPrepThreads)                 \
      mxq_gemm_sm90_bprep_##B(const __grid_constant__ mxq::GemmSm90BPrepParams p) {        \
    mxq::sm90gemm::tmapath::bprep_staged_body<mxq::ptx::Fp8Kind::BK, false>(p);             \
  }
// (K-grouped: 5 blocks per SM, i.e. <= 48 registers, as the M-grouped form; the unaligned-window
// loads took it to 54 and 4 blocks, ~8% slower at wgrad E8.)
#define MXQ_GEMM_SM90_BPREP_KG_ENTRY(B, BK)                                                   \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90BPrepThreads, 5)                 \
      mxq_gemm_sm90_bprep_##B##_kgrouped(const __grid_constant__ mxq::GemmSm90BPrepParams p) { \
    mxq::sm90gemm::tmapath::bprep_staged_body<mxq::ptx::Fp8Kind::BK, true>(p);                     \
  }
MXQ_GEMM_SM90_BPREP_ENTRY(e4m3, E4M3)
MXQ_GEMM_SM90_BPREP_ENTRY(e5m2, E5M2)
MXQ_GEMM_SM90_BPREP_KG_ENTRY(e4m3, E4M3)
MXQ_GEMM_SM90_BPREP_KG_ENTRY(e5m2, E5M2)
// mxq_gemm_sm90_arelayout_kgrouped: the K-grouped plans' copy of A (FP8, any format) for the groups
// whose first token is not 16-byte aligned, after the group table (arelayout_body).
extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90ARelayoutThreads)
    mxq_gemm_sm90_arelayout_kgrouped(const __grid_constant__ mxq::GemmSm90BPrepParams p) {
  mxq::sm90gemm::tmapath::arelayout_body(p);
}

// mxq_gemm_sm90_bprep_table: the K-grouped pre-kernels' group table (one block).
extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90BPrepTableThreads)
    mxq_gemm_sm90_bprep_table(const __grid_constant__ mxq::GemmSm90Params p, int32_t* out) {
  mxq::sm90gemm::tmapath::bprep_table_body(p, out);
}

MXQ_GEMM_SM90_TMA_ENTRIES(e4m3, e4m3, E4M3, E4M3)
MXQ_GEMM_SM90_TMA_ENTRIES(e4m3, e5m2, E4M3, E5M2)
MXQ_GEMM_SM90_TMA_ENTRIES(e5m2, e4m3, E5M2, E4M3)
