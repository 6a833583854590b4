// MXFP8 grouped GEMM for Hopper, decode shapes: M-grouped plans with a few rows (tokens) per group,
// D[tokens of g] (+)= alpha * A[tokens of g] * B[g]^T. There the GEMM is a stream over B (E64 x 16
// tokens, N 2048, K 7168: 0.94 GB of FP8 weights against 7 MB of tokens), so this kernel is built to
// keep HBM busy, with the BF16 path's numerics: every FP8 element times its UE8M0 scale converted
// *exactly* to bf16 (sm90/gemm_bf16_convert.cuh, the same fast and exact branches and NaN screen as
// the other kernels), bf16 tensor-core products, fp32 accumulation.
//
// Orientation. B's rows are the MMA's M: a tile is 128 rows of B[g] (n0 .. n0 + 127) against up to T
// tokens of group g (T = 8, 16 or 32, one kernel each; a group with more tokens takes several tiles,
// j fastest, so the later ones find the same B rows in L2). mma.sync m16n8k16: each of the 8 warps
// owns 16 B rows (register A operand, converted from its own shared-memory bytes) and the tile's
// tokens (register B operands of up to T / 8 n-tiles, shared by the warps through a bf16 token
// buffer; n-tiles past the chunk's tokens are skipped, so a tile costs what its tokens need). Its
// accumulator is T / 2 registers, twice: even and odd K steps go to separate accumulators, which
// halves the mma dependency chain of a stage.
//
// Ring, plain form (8 / CTAs-per-SM stages; 2 CTAs per SM when their shared memory fits, else 1). A
// stage is one 128-wide K step of a tile: one TMA load of B (128 rows x 128 bytes, 128-byte swizzle, L2
// evict_first: B is read once; each row's 128 bytes are one request), one of A (T rows x 128 bytes),
// and the stage's scales: SWIZZLED tensors at 16-byte aligned addresses by two bulk copies (B's
// 512-byte SWIZZLED_128x4 tile of the 128 rows and 4 blocks, and the A tile holding the chunk's
// tokens), otherwise by 4-byte cp.async (the same bytes, gathered from LINEAR rows; A one 4-block word
// per token, at its place in a 512-byte tile). Its `full` mbarrier counts the issuing lane's
// arrive.expect_tx (TMA and bulk bytes), plus 32 cp.async arrivals without the bulk copies. Warp 7
// walks the CTA's units with a cursor (no divisions per stage). Per stage, every thread: wait for
// `full`; convert 8 bytes of A per item (16 bytes per token and K step pair) into the token buffer of
// the stage's parity (mma B fragments, in fragment order; items laid out so that no item needs a
// division and neither the A reads nor the buffer writes conflict in banks: tok_item); __syncthreads;
// warp 7 issues the stage
// kStages - 1 ahead into the slot of the previous stage (every warp has left it: the barrier); each
// warp converts its 2 x 64 bytes of each of its rows into A fragments (the K permutation of
// gemm_bf16_convert.cuh, the same for the tokens; mma row g takes B row g / 2 + 4 (g % 2) of the warp's
// 8, so a quarter warp's 16-byte loads hit all 32 banks) and runs its mma.sync. There is no empty barrier:
// the one CTA barrier per stage orders both the token buffer (rewritten two stages later) and the
// slot reuse. (A dedicated producer warp, the first version, made the CTA 9 warps, which caps two
// CTAs per SM at 96 registers per thread; warps handing the token buffer over by an mbarrier with
// the last warp out of a slot refilling it, and warps converting their own token fragments, were
// measured slower: docs/PERFORMANCE.md, seventh session.)
//
// Pair form (`_x2_pair`, the default with two CTAs per SM when K % 128 == 0). A ring slot holds two
// K stages (2 slots of up to 42 KiB per CTA instead of 4 of up to 21 KiB): B comes as ONE 3D TMA box
// of 128 rows x 2 x 128 bytes of B viewed as [rows][K / 128][128], so each row's 256 contiguous bytes
// are requested together (row r's stage hp at r * 256 + 128 hp, the 128-byte swizzle keyed by segment
// 2r + hp; the warps' row order changes so that a quarter warp's loads still hit 32 banks), A as two
// T x 128-byte boxes, the scales per stage as above. The stream-K units are (tile, pair); per stage
// the loop is the plain one (token items, barrier, conversion and mma), the slot waited for at a
// pair's first stage and the freed slot refilled after that stage's barrier. B's access pattern alone
// (loads, ring and barriers only) ran 0.324 ms on E64 x 16 against 0.342 ms with one 128-byte box
// per stage, and the full kernel 0.362 against 0.386-0.388 ms; with one CTA per SM (4 slots) it was
// much slower (0.463 ms), so one CTA per SM and K % 128 != 0 (no [K / 128][128] view) keep the plain
// form (docs/PERFORMANCE.md, eleventh session).
//
// One body (decode_body), two forms of its stage loop: for T = 8, 16 it is compiled once per count of
// 8-token n-tiles a tile fills, so skipped n-tiles cost no branches and the token items' divisions
// are by constants; for T = 32 (kOneLoop) a chunk of up to 16 tokens runs a copy compiled for two
// n-tiles (a chunk of 1-8 tokens multiplies one n-tile of zeros), larger chunks one loop for every
// count. With T = 32 the per-count form for every count was as fast on even groups but slower on
// uneven ones (tiles of 17-24 tokens: a third loop copy), and so was a separate copy for one n-tile
// (docs/PERFORMANCE.md, tenth session), so each T keeps the forms measured faster.
//
// Masking. B rows past N and blocks past ceil(K/32) take scale code kNoScale (multiplier 0); TMA
// fills K past the tensor with zeros. Tokens past the chunk's group are written to the token buffer
// as zeros, whatever their bytes, and never stored; rows past N are never stored.
#include <cstdint>
#include <type_traits>

#include "common/fp8.cuh"
#include "core/layout.h"
#include "ptx/async_copy.cuh"
#include "ptx/mbarrier.cuh"
#include "ptx/mma.cuh"
#include "ptx/tma.cuh"
#include "sm90/gemm_bf16_convert.cuh"
#include "sm90/gemm_params.cuh"
#include "sm90/gemm_tiles.cuh"

namespace mxq {
namespace sm90gemm {
namespace decode {

constexpr int kThreads = kGemmSm90DecodeThreads;
constexpr int kConsumerThreads = 256;
constexpr int kIssueWarp = 7;  // also issues the loads
constexpr int kBN = kGemmSm90DecodeTileN, kBK = kGemmSm90DecodeTileK;
static_assert(kConsumerThreads == 8 * 32 && kBN == 8 * 16, "8 consumer warps of 16 B rows");

// Word of row r (0..127) in a 512-byte SWIZZLED_128x4 scale tile (its 4 blocks, one byte each).
__device__ __forceinline__ uint32_t swz_row_word(uint32_t r) { return (r & 31u) * 16u + ((r >> 5) & 3u) * 4u; }

// Scale codes: a UE8M0 byte, or kNoScale for a row or block outside the operand (multiplier 0).
constexpr uint32_t kNoScale = 0x100u;
template <Fp8Kind K>
__device__ __forceinline__ uint32_t code_mult(uint32_t e) {
  return e == kNoScale ? 0u : ((e + Fp8Bits<K>::kBias) << 7) * 0x00010001u;
}
__device__ __forceinline__ float code_exact(uint32_t e) {
  return e == kNoScale ? 0.0f : dev::ue8m0_to_f32(static_cast<uint8_t>(e));
}
template <Fp8Kind K>
__device__ __forceinline__ bool code_slow(uint32_t e) {
  return e != kNoScale && static_cast<int>(e) > Fp8Bits<K>::kMaxFastE;
}

// The group table in shared memory: clamped ends[G+1], 128-row tile prefix mtp[G+1] (swizzled A
// scale rows of group g start at 128 * mtp[g]), decode tile prefix tp[G+1].
struct Space {
  const int* ends;
  const int* mtp;
  const int* tp;
  int total_tiles;
  int n_blocks;  // 128-row blocks of N
};

// Every thread of the block calls it (it synchronizes the block).
template <int T>
__device__ Space build_space(const GemmSm90Params& p, int* table, int* warp_buf) {
  const int tid = threadIdx.x, G = p.groups;
  const int nb = static_cast<int>(layout::ceil_div(p.n, kBN));
  int* ends = table;
  int* mtp = table + (G + 1);
  int* tp = table + 2 * (G + 1);
  const GroupEndsShare sh = load_group_ends<kThreads>(p, static_cast<int>(p.rows_total), ends, warp_buf);
  const int g0 = sh.g0, g1 = sh.g1, before = sh.before;
  int mts = 0, tls = 0;
  for (int g = g0; g < g1; ++g) {
    const int len = ends[g + 1] - (g == g0 ? before : ends[g]);
    mts += (len + 127) / 128;
    tls += (len + T - 1) / T * nb;
  }
  int mt_total, tl_total;
  int mrun = block_exclusive_scan<kThreads>(mts, [](int a, int b) { return a + b; }, 0, warp_buf, mt_total);
  int trun = block_exclusive_scan<kThreads>(tls, [](int a, int b) { return a + b; }, 0, warp_buf, tl_total);
  for (int g = g0; g < g1; ++g) {
    mtp[g] = mrun;
    tp[g] = trun;
    const int len = ends[g + 1] - (g == g0 ? before : ends[g]);
    mrun += (len + 127) / 128;
    trun += (len + T - 1) / T * nb;
  }
  if (tid == 0) {
    mtp[G] = mt_total;
    tp[G] = tl_total;
  }
  __syncthreads();
  return Space{ends, mtp, tp, tl_total, nb};
}

struct Tile {
  int g;
  int n0, n_valid;   // B rows n0 .. n0 + n_valid - 1 of group g
  int tok0;          // first token (row of A and D)
  int tok_valid;     // tokens of the chunk inside the group (1..T)
  int64_t a_srow0;   // A scale row of tok0 (swizzled: inside the group's 128-row padded tiles)
};

template <int T>
__device__ __forceinline__ Tile decode_tile(const GemmSm90Params& p, const Space& sp, int t) {
  int lo = 0, hi = p.groups - 1;  // last g with tp[g] <= t (empty groups share their successor's prefix)
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (sp.tp[mid] <= t) lo = mid; else hi = mid - 1;
  }
  Tile ti;
  ti.g = lo;
  const int e0 = sp.ends[lo], len = sp.ends[lo + 1] - e0;
  const int chunks = (len + T - 1) / T;
  const int local = t - sp.tp[lo];
  const int nb = local / chunks, j = local - nb * chunks;
  ti.tok0 = e0 + j * T;
  ti.tok_valid = min(T, len - j * T);
  ti.n0 = nb * kBN;
  ti.n_valid = static_cast<int>(p.n - ti.n0 < kBN ? p.n - ti.n0 : kBN);
  ti.a_srow0 = p.swizzled ? static_cast<int64_t>(sp.mtp[lo]) * 128 + j * T : ti.tok0;
  return ti;
}

// Byte offset of 16-byte chunk c (0..7) of 128-byte row r under TMA's 128-byte swizzle (1 KiB aligned box).
__device__ __forceinline__ uint32_t sw128_offset(uint32_t r, uint32_t c) { return r * 128u + ((c ^ (r & 7u)) << 4); }

// The token item of thread tid (j = tid % 128; n-tiles tid / 128, + 2, ...): K step pair pr =
// 2bb + hh, chunk 4bb + tg of token tl (0..7) of the n-tile, where a half warp holds two tokens tl,
// tl ^ 5 x 4 chunks x 2 halves (16 distinct 8-byte bank slots under the 128-byte swizzle) and a
// quarter warp writes 8 distinct 16-byte slots of the token buffer.
struct TokItem {
  uint32_t a_off;   // byte offset in the A box at n-tile 0 (n-tile nt: + 1024 nt)
  uint32_t tb_off;  // byte offset in the token buffer at n-tile 0 (+ 512 nt)
  int tl;           // token inside the n-tile
  int blk;          // scale block of the stage (0..3)
};
template <int NT>
__device__ __forceinline__ TokItem tok_item(int tid) {
  const int j = tid & 127, l = j & 31;
  const int bb = j >> 6, hh = (l >> 3) & 1, tg = l & 3;
  const int pair = 2 * ((j >> 5) & 1) + (l >> 4);
  const int tl = (l & 4) ? (pair ^ 5) : pair;
  TokItem it;
  it.a_off = static_cast<uint32_t>(kBN * 128 + tl * 128 + (((4 * bb + tg) ^ tl) << 4) + 8 * hh);
  it.tb_off = static_cast<uint32_t>(((2 * bb + hh) * NT * 32 + tl * 4 + tg) * 16);
  it.tl = tl;
  it.blk = 2 * bb + (tg >> 1);
  return it;
}
template <Fp8Kind AK>
__device__ __forceinline__ uint4 token_cvt(uint2 v, uint32_t e, bool ok) {
  uint32_t lo0 = 0u, hi0 = 0u, lo1 = 0u, hi1 = 0u;
  if (ok) {
    if (code_slow<AK>(e) || ((special_bits<AK>(v.x) | special_bits<AK>(v.y)) & 0x80808080u) != 0) {
      cvt_exact<AK>(v.x, code_exact(e), lo0, hi0);
      cvt_exact<AK>(v.y, code_exact(e), lo1, hi1);
    } else {
      cvt_fast<AK>(v.x, code_mult<AK>(e), lo0, hi0);
      cvt_fast<AK>(v.y, code_mult<AK>(e), lo1, hi1);
    }
  }
  return make_uint4(lo0, hi0, lo1, hi1);
}
// The items of n-tiles nt = tid / 128, + 2, .. below na of one stage (st: the stage, sc: its scales,
// tb: the token buffer), tokens of the chunk below tok_valid, blocks below kc.
template <Fp8Kind AK, int NTMAX>
__device__ __forceinline__ void token_items(const TokItem& ti, int tid, int na, const uint8_t* st, const uint8_t* sc,
                                            uint8_t* tb, uint32_t arow, int tok_valid, int kt, int kc) {
  const bool blk_ok = 4 * kt + ti.blk < kc;
#pragma unroll
  for (int i = 0; i < (NTMAX + 1) / 2; ++i) {
    const int nt = (tid >> 7) + 2 * i;
    if (nt >= na) break;
    const int tok = 8 * nt + ti.tl;
    const uint2 v = *reinterpret_cast<const uint2*>(st + ti.a_off + 1024 * nt);
    const uint32_t sw =
        *reinterpret_cast<const uint32_t*>(sc + 512 + swz_row_word(arow + tok));
    const uint32_t e = (sw >> (8 * ti.blk)) & 0xFFu;
    *reinterpret_cast<uint4*>(tb + ti.tb_off + 512 * nt) = token_cvt<AK>(v, e, blk_ok && tok < tok_valid);
  }
}

// The load side of a CTA's unit range: the next unit to load (tile t, K stage kt) and what its loads
// need, advanced one unit at a time (no divisions after the start).
struct LoadCursor {
  int64_t left;  // units still to load
  int t, kt, U;
  int32_t brow, tok0;  // TMA row coordinates of B and A
  int n0, n_valid, tok_valid;
  const uint8_t* bsc;  // B scales: swizzled, the tile's 512-byte block at kt = 0; LINEAR, the group's rows
  int64_t asc;         // swizzled: this lane's A scale word at kt = 0 (token a_srow0 + lane)
  int64_t atile;       // swizzled: the A scale tile holding the chunk's tokens, at kt = 0
  int arow;            // swizzled: a_srow0 % 128 (the chunk's first row inside that tile); LINEAR 0
};

template <int T>
__device__ __forceinline__ void cursor_tile(LoadCursor& c, const GemmSm90Params& p, const Space& sp, int lane) {
  const Tile ti = decode_tile<T>(p, sp, c.t);
  c.brow = static_cast<int32_t>(static_cast<int64_t>(ti.g) * p.n + ti.n0);
  c.tok0 = ti.tok0;
  c.n0 = ti.n0;
  c.n_valid = ti.n_valid;
  c.tok_valid = ti.tok_valid;
  c.bsc = p.b_scales + static_cast<int64_t>(ti.g) * p.b_scale_stride;
  c.asc = 0;
  c.atile = 0;
  c.arow = 0;
  if (p.swizzled) {
    c.bsc += static_cast<int64_t>(ti.n0 >> 7) * (p.scale_ld >> 2) * layout::kTileBytes;
    c.asc = layout::swizzled_offset(ti.a_srow0 + lane, 0, p.scale_ld);
    c.atile = layout::swizzled_offset(ti.a_srow0 & ~int64_t(127), 0, p.scale_ld);
    c.arow = static_cast<int>(ti.a_srow0 & 127);
  }
}

// Puts the cursor at unit u_begin of the range [u_begin, u_end) (its tile's fields: cursor_tile).
__device__ __forceinline__ void cursor_start(LoadCursor& c, int64_t u_begin, int64_t u_end, int U) {
  c.left = u_end - u_begin;
  c.U = U;
  c.t = static_cast<int>(u_begin / U);
  c.kt = static_cast<int>(u_begin - static_cast<int64_t>(c.t) * U);
}

// Moves the cursor one unit on (to the next tile's first K stage after the last).
template <int T>
__device__ __forceinline__ void cursor_advance(LoadCursor& c, const GemmSm90Params& p, const Space& sp, int lane) {
  --c.left;
  if (++c.kt == c.U) {
    c.kt = 0;
    ++c.t;
    if (c.left > 0) cursor_tile<T>(c, p, sp, lane);
  }
}

// K stage kt's scales into the scale area `sc` (B's 512-byte tile of the 128 rows, then the A tile
// holding the chunk's tokens) by the whole issuing warp: two bulk copies by lane 0 (SWIZZLED tensors at
// 16-byte aligned addresses), 4-byte cp.async (the same bytes, gathered from LINEAR rows; A one
// 4-block word per token, at its place in a 512-byte tile), or byte loads stored here. The mbarrier
// arrivals are the caller's (issue_stage: once per slot).
template <int T>
__device__ __forceinline__ void issue_scales(const GemmSm90DecodeParams& dp, const LoadCursor& lc, uint8_t* sc,
                                             uint64_t* full, int lane, int kc, bool swz, int kt) {
  const GemmSm90Params& p = dp.g;
  const uint32_t sc_addr = ptx::smem_addr(sc);
  if (dp.bulk_scales) {
    if (lane == 0) {
      ptx::bulk_load(sc_addr, lc.bsc + static_cast<int64_t>(kt) * layout::kTileBytes, 512, full);
      ptx::bulk_load(sc_addr + 512, p.a_scales + lc.atile + static_cast<int64_t>(kt) * layout::kTileBytes, 512, full);
    }
    return;
  }
  const uint32_t a_word = swz_row_word(static_cast<uint32_t>(lc.arow + lane));
  if (dp.scale_words) {
    if (swz) {
      // B: the 512-byte tile of rows n0 .. n0 + 127 (padding rows included: inside the tensor), blocks
      // 4kt .. 4kt + 3; A: each token's word (rows inside the group's padded 128-row tiles: T | 128).
      const uint8_t* src = lc.bsc + static_cast<int64_t>(kt) * layout::kTileBytes;
#pragma unroll
      for (int i = 0; i < 4; ++i) ptx::cp_async_4_zfill(sc_addr + 4 * (lane + 32 * i), src + 4 * (lane + 32 * i), true);
      if (lane < T)
        ptx::cp_async_4_zfill(sc_addr + 512 + a_word,
                              p.a_scales + lc.asc + static_cast<int64_t>(kt) * layout::kTileBytes, true);
    } else {
      // LINEAR rows whose 4-block words are aligned (4 | ceil(K/32)): gathered into the tile layout.
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = lane + 32 * i;
        const bool ok = r < lc.n_valid;
        ptx::cp_async_4_zfill(sc_addr + swz_row_word(r), ok ? lc.bsc + (lc.n0 + r) * p.scale_ld + 4 * kt : p.b_scales,
                              ok);
      }
      if (lane < T) {
        const bool ok = lane < lc.tok_valid;
        ptx::cp_async_4_zfill(sc_addr + 512 + a_word,
                              ok ? p.a_scales + (static_cast<int64_t>(lc.tok0) + lane) * p.scale_ld + 4 * kt
                                 : p.a_scales,
                              ok);
      }
    }
  } else {
    // LINEAR rows of ceil(K/32) % 4 != 0 blocks (or unaligned scale pointers): byte loads.
    auto word = [&](const uint8_t* row) {
      uint32_t w = 0;
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (4 * kt + c < kc) w |= static_cast<uint32_t>(__ldg(row + 4 * kt + c)) << (8 * c);
      return w;
    };
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = lane + 32 * i;
      *reinterpret_cast<uint32_t*>(sc + swz_row_word(r)) = r < lc.n_valid ? word(lc.bsc + (lc.n0 + r) * p.scale_ld) : 0u;
    }
    if (lane < T)
      *reinterpret_cast<uint32_t*>(sc + 512 + a_word) =
          lane < lc.tok_valid ? word(p.a_scales + (static_cast<int64_t>(lc.tok0) + lane) * p.scale_ld) : 0u;
  }
}

// The cursor's unit into the slot at `st` with mbarrier `full` (the whole issuing warp; lane 0 issues
// the TMA loads and the bulk copies). Plain form: one K stage kt, B's 128 x 128-byte box, A's T x
// 128-byte box, the scales. Pair form (kPair): K stages 2kt and 2kt + 1 (the second only below ks, the
// tile's K stages), B as ONE 3D box of 128 rows x 2 x 128 bytes (tmap_b views B as [rows][K / 128][128]:
// each row's 256 contiguous bytes are requested together; row r's half h lands at r * 256 + h * 128,
// the 128-byte swizzle keyed by 128-byte segment 2r + h), A as two T x 128-byte boxes (the second past
// K, zeros, when there is no second stage), and each K stage's scales at scale offset + 1024 h. The
// mbarrier counts lane 0's arrive.expect_tx (TMA and bulk bytes), plus the warp's 32 arrivals (cp.async
// completion or release of the byte loads' stores) without the bulk copies.
template <int T, bool kPair>
__device__ __forceinline__ void issue_stage(const GemmSm90DecodeParams& dp, const LoadCursor& lc, uint8_t* st,
                                            uint64_t* full, int lane, int kc, bool swz, uint64_t b_policy, int ks) {
  constexpr int kABoxOff = static_cast<int>(kPair ? gemm_sm90_decode_pair_b_bytes() : kBN * 128);
  constexpr int kScaleOff = static_cast<int>(kPair ? gemm_sm90_decode_pair_data(T) : gemm_sm90_decode_stage_data(T));
  constexpr uint32_t kTx = static_cast<uint32_t>(kScaleOff);  // the TMA boxes' bytes
  const int kt0 = kPair ? 2 * lc.kt : lc.kt;
  const int nh = kPair && kt0 + 1 < ks ? 2 : 1;
  if (lane == 0) {
    ptx::mbar_arrive_expect_tx(full, kTx + (dp.bulk_scales ? 1024u * nh : 0u));
    if constexpr (kPair) {
      ptx::tma_load_3d_hint(ptx::smem_addr(st), dp.tmap_b, 0, kt0, lc.brow, full, b_policy);
      ptx::tma_load_2d(ptx::smem_addr(st + kABoxOff), dp.tmap_a, kt0 * kBK, lc.tok0, full);
      ptx::tma_load_2d(ptx::smem_addr(st + kABoxOff + T * 128), dp.tmap_a, (kt0 + 1) * kBK, lc.tok0, full);
    } else {
      ptx::tma_load_2d_hint(ptx::smem_addr(st), dp.tmap_b, kt0 * kBK, lc.brow, full, b_policy);
      ptx::tma_load_2d(ptx::smem_addr(st + kABoxOff), dp.tmap_a, kt0 * kBK, lc.tok0, full);
    }
  }
  for (int h = 0; h < nh; ++h) issue_scales<T>(dp, lc, st + kScaleOff + 1024 * h, full, lane, kc, swz, kt0 + h);
  if (dp.bulk_scales) return;
  if (dp.scale_words) ptx::cp_async_mbar_arrive_noinc(ptx::smem_addr(full));
  else ptx::mbar_arrive(full);  // release: the stores above are visible to the waiting warps
}

// One stage's B rows against the tokens: this thread's rows r0 and r0 + 8 of the stage at `st`
// (scale tile `sc`), K steps 4b .. 4b + 3 (bytes 64b .. 64b + 63 of each row), converted into A
// fragments (fast or exact branch per chunk) and multiplied with the na n-tiles of the token buffer
// `tf` into acc2 (even / odd K steps).
// Pair form (kPair): B row r's 128 bytes of this K stage at r * 256 + hp * 128 of the slot `st`,
// swizzled by 128-byte segment 2r + hp (hp: the stage's half of the pair).
template <Fp8Kind BK, int NT, bool kPair>
__device__ __forceinline__ void stage_mma(const uint8_t* st, const uint8_t* sc, const uint4* tf, int r0, int tig,
                                          int lane, const bool (&row_ok)[2], int kt, int kc, int na,
                                          float (&acc2)[2][NT][4], int hp) {
  const uint32_t sw[2] = {*reinterpret_cast<const uint32_t*>(sc + swz_row_word(r0)),
                          *reinterpret_cast<const uint32_t*>(sc + swz_row_word(r0 + 8))};
#pragma unroll
  for (int b = 0; b < 2; ++b) {
    uint32_t wb[2][4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t r = static_cast<uint32_t>(r0 + 8 * h), c = static_cast<uint32_t>(4 * b + tig);
      const uint32_t off = kPair ? r * 256u + hp * 128u + ((c ^ ((2u * r + hp) & 7u)) << 4) : sw128_offset(r, c);
      const uint4 v = *reinterpret_cast<const uint4*>(st + off);
      wb[h][0] = v.x, wb[h][1] = v.y, wb[h][2] = v.z, wb[h][3] = v.w;
    }
    const int blk = 2 * b + (tig >> 1);  // this chunk's block of the stage
    const bool blk_ok = 4 * kt + blk < kc;
    uint32_t e[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) e[h] = row_ok[h] && blk_ok ? (sw[h] >> (8 * blk)) & 0xFFu : kNoScale;
    uint32_t spec = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < 4; ++j) spec |= special_bits<BK>(wb[h][j]);
    const bool slow = code_slow<BK>(e[0]) || code_slow<BK>(e[1]) || (spec & 0x80808080u) != 0;
    uint32_t x[4][4];  // A fragments of K steps 4b + j: {lo(r0), lo(r0 + 8), hi(r0), hi(r0 + 8)}
    auto emit = [&](auto slow_tag) {
      constexpr bool kSlow = decltype(slow_tag)::value;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if constexpr (kSlow) cvt_exact<BK>(wb[h][j], code_exact(e[h]), x[j][h], x[j][h + 2]);
          else cvt_fast<BK>(wb[h][j], code_mult<BK>(e[h]), x[j][h], x[j][h + 2]);
        }
    };
    if (slow) emit(std::true_type{});
    else emit(std::false_type{});
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const int pr = 2 * b + q;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        if (nt >= na) continue;  // uniform (static when na is)
        const uint4 f = tf[(pr * NT + nt) * 32 + lane];
        ptx::mma_bf16_16816(acc2[0][nt], x[2 * q], f.x, f.y);
        ptx::mma_bf16_16816(acc2[1][nt], x[2 * q + 1], f.z, f.w);
      }
    }
  }
}

// The CTA's unit range and where a tile's partial sums go: stream-K over W = tiles x U units split
// evenly among P CTAs (this one `me`); a tile shared by CTAs is summed through the workspace.
struct StreamK {
  int64_t W, P, me, u_begin, u_end;
  int U;
  __device__ __forceinline__ int64_t owner(int64_t u) const { return ((u + 1) * P - 1) / W; }  // CTA of unit u
  __device__ __forceinline__ int64_t start_of(int64_t c) const { return c * W / P; }        // CTA c's first unit
};

// Epilogue of tile t (units u .. of this CTA): alpha, and the store rounded once; a tile shared by
// CTAs goes through fp32 partials (slot 0: a CTA's first segment, 1: its last), and the last
// contributor sums them all in CTA order (bitwise reproducible: the order does not depend on who is last).
template <bool kOutF32, int NT>
__device__ __forceinline__ void finish_tile(const GemmSm90DecodeParams& dp, const StreamK& sk, const Tile& ti, int t,
                                            int64_t u, int warp, int lane, int tig, int r0, const bool (&row_ok)[2],
                                            const float (&acc2)[2][NT][4]) {
  constexpr int kPartialFloats = NT * 4 * 32;  // one warp's partial tile
  const GemmSm90Params& p = dp.g;
  const int64_t N = p.n;
  auto slot = [&](int64_t c, int which) {
    return dp.partials + ((c * 2 + which) * 8 + warp) * static_cast<int64_t>(kPartialFloats);
  };
  float acc[NT][4];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[nt][i] = acc2[0][nt][i] + acc2[1][nt][i];
  auto store = [&](const float (&v)[NT][4]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (!row_ok[h]) continue;
      const int64_t n = ti.n0 + r0 + 8 * h;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const int tk = 8 * nt + 2 * tig + c;
          if (tk >= ti.tok_valid) continue;
          store_d_pair<kOutF32>(p, (static_cast<int64_t>(ti.tok0) + tk) * N + n, p.alpha * v[nt][2 * h + c], 0.0f,
                                false, false);
        }
    }
  };
  const int64_t t_first = static_cast<int64_t>(t) * sk.U;
  const int64_t c_first = sk.owner(t_first), c_last = sk.owner(t_first + sk.U - 1);
  if (c_first == c_last) {
    store(acc);
    return;
  }
  // Shared tile: this CTA's first partial segment goes to slot 0, its last to slot 1.
  float* mine = slot(sk.me, u == sk.u_begin ? 0 : 1);
#pragma unroll
  for (int i = 0; i < NT * 4; ++i) mine[i * 32 + lane] = acc[i / 4][i % 4];
  __threadfence();
  __syncwarp();
  uint32_t old = 0;
  if (lane == 0) {
    old = atomicAdd(&dp.counters[static_cast<int64_t>(t) * 8 + warp], 1u);
    __threadfence();  // with the atomic: acquire of the other contributors' partials
  }
  old = __shfl_sync(0xFFFFFFFFu, old, 0);
  __syncwarp();
  if (old == static_cast<uint32_t>(c_last - c_first)) {  // the last contributor: sum all in CTA order
    __threadfence();
    // (its own partial too, as written: the sum's order does not depend on who is last)
    for (int64_t c = c_first; c <= c_last; ++c) {
      const float* src = slot(c, sk.start_of(c) / sk.U == t ? 0 : 1);
#pragma unroll
      for (int i = 0; i < NT * 4; ++i) {
        const float v = __ldcg(src + i * 32 + lane);
        acc[i / 4][i % 4] = c == c_first ? v : acc[i / 4][i % 4] + v;
      }
    }
    store(acc);
  }
}

// What both bodies set up before their loads: the dynamic shared memory (the ring of kStages stages,
// two token buffers, the `full` mbarriers, the group table), the mbarriers (each counts the issuing
// lane's arrive.expect_tx, plus its warp's 32 scale cp.async arrivals without the bulk copies), the
// group space, and the stream-K range's sizes (units W of U K stages, P CTAs taking part).
template <int T, int kCtas, bool kPair>
struct Frame {
  // pair form: a slot holds two K stages (half as many slots, twice the bytes)
  static constexpr int kStages = kGemmSm90DecodeStages / kCtas / (kPair ? 2 : 1);
  static constexpr int kABoxOff = kPair ? static_cast<int>(gemm_sm90_decode_pair_b_bytes()) : kBN * 128;
  static constexpr int kStageBytes =
      static_cast<int>(kPair ? gemm_sm90_decode_pair_bytes(T) : gemm_sm90_decode_stage_bytes(T));
  static constexpr int kScaleOff =
      static_cast<int>(kPair ? gemm_sm90_decode_pair_data(T) : gemm_sm90_decode_stage_data(T));
  static constexpr int kTokBytes = 256 * T;
  static_assert(T == 8 || T == 16 || T == 32, "tokens per tile");
  static_assert(kABoxOff % 1024 == 0 && (T * 128) % 1024 == 0, "128-byte swizzled boxes start 1 KiB aligned");
  uint8_t* smem;
  uint8_t* tokbuf;
  uint64_t* full;
  Space sp;
  int kc, U;
  int64_t W, P;
  int KS;  // K stages per tile (U: stream-K units per tile, pairs of K stages in the pair form)
};

template <int T, int kCtas, bool kPair>
__device__ __forceinline__ Frame<T, kCtas, kPair> frame_setup(const GemmSm90DecodeParams& dp, int tid) {
  using F = Frame<T, kCtas, kPair>;
  const GemmSm90Params& p = dp.g;
  extern __shared__ uint8_t smem_raw[];
  __shared__ int warp_buf[kThreads / 32];
  F f;
  f.smem = ptx::smem_align1024(smem_raw);
  f.tokbuf = f.smem + F::kStages * F::kStageBytes;
  f.full = reinterpret_cast<uint64_t*>(f.tokbuf + 2 * F::kTokBytes);
  int* table = reinterpret_cast<int*>(f.full + F::kStages);
  if (tid == 0) {
#pragma unroll
    for (int i = 0; i < F::kStages; ++i) ptx::mbar_init(&f.full[i], dp.bulk_scales ? 1 : 1 + 32);
    ptx::mbar_fence_init();
  }
  f.sp = build_space<T>(p, table, warp_buf);
  __syncthreads();
  const int64_t K = p.k;
  f.kc = static_cast<int>(layout::scale_cols(K));
  f.KS = static_cast<int>(layout::ceil_div(K, kBK));  // K stages per tile (K < 2^31)
  f.U = kPair ? (f.KS + 1) / 2 : f.KS;
  f.W = static_cast<int64_t>(f.sp.total_tiles) * f.U;
  f.P = min(static_cast<int64_t>(gridDim.x), max(int64_t(1), f.W * (kPair ? 2 : 1) / kGemmSm90DecodeMinStages));
  return f;
}

// kCtas: CTAs per SM the kernel is built for (launch bounds; the ring is 8 / kCtas stages deep).
// kOneLoop = false (T = 8, 16): the stage loop is compiled once per count of 8-token n-tiles a tile
// fills (1, 2; more, as T = 32 would have, at run time), so the skipped n-tiles cost no branches.
// kOneLoop = true (T = 32): a copy for two n-tiles (chunks of up to 16 tokens) and one stage loop for
// every n-tile count (see the header).
// kPair: the pair form (a ring slot of two K stages, B's rows 256 bytes per TMA request: issue_stage);
// the stream-K units are then (tile, pair of K stages).
template <Fp8Kind AK, Fp8Kind BK, bool kOutF32, int T, int kCtas, bool kOneLoop, bool kPair>
__device__ __forceinline__ void decode_body(const GemmSm90DecodeParams& dp) {
  constexpr int NT = T / 8;
  using F = Frame<T, kCtas, kPair>;
  constexpr int kStages = F::kStages, kStageBytes = F::kStageBytes, kScaleOff = F::kScaleOff, kTokBytes = F::kTokBytes;
  const GemmSm90Params& p = dp.g;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const F f = frame_setup<T, kCtas, kPair>(dp, tid);
  uint8_t* const smem = f.smem;
  uint8_t* const tokbuf = f.tokbuf;
  uint64_t* const full = f.full;
  const Space& sp = f.sp;
  const int kc = f.kc, U = f.U;
  const int64_t W = f.W, P = f.P, me = blockIdx.x;
  if (me >= P) return;
  const int64_t u_begin = me * W / P, u_end = (me + 1) * W / P;

  // ---- loads: warp kIssueWarp fills the ring -----------------------------------------------------------------
  // The li-th unit of this CTA's range goes to slot li % kStages. The first kStages - 1 are issued up
  // front; then, right after the barrier of stage it, stage it + kStages - 1 goes to the slot of stage
  // it - 1, which every warp has finished reading before arriving at that barrier (pair form: units and
  // slots are pairs of K stages, refilled after the barrier of a pair's first stage). The cursor walks the
  // units one at a time (no divisions per stage). (kOneLoop: every warp walks the cursor through the
  // first kStages - 1 units, only warp kIssueWarp after that; the measured form.)
  const bool issuer = warp == kIssueWarp;
  bool swz;
  uint64_t b_policy;
  if constexpr (kOneLoop) {  // each body's order as measured (its PTX is unchanged by the merge)
    b_policy = ptx::l2_policy_evict_first();
    swz = p.swizzled != 0;
  } else {
    swz = p.swizzled != 0;
    b_policy = ptx::l2_policy_evict_first();
  }
  LoadCursor lc;
  cursor_start(lc, u_begin, u_end, U);
  if (kOneLoop || issuer) cursor_tile<T>(lc, p, sp, lane);
  // The cursor's unit into slot s (the whole warp; lane 0 issues the TMA loads).
  auto issue = [&](uint32_t s) {
    issue_stage<T, kPair>(dp, lc, smem + s * kStageBytes, &full[s], lane, kc, swz, b_policy, f.KS);
  };
  auto advance = [&]() { cursor_advance<T>(lc, p, sp, lane); };
  // The same, then the cursor moves on; nothing past the CTA's range (warp kIssueWarp).
  auto issue_next = [&](uint32_t s) {
    if (lc.left <= 0) return;
    issue(s);
    advance();
  };
  if constexpr (kOneLoop) {
    if (issuer && lane == 0) {
      ptx::tma_prefetch_desc(dp.tmap_a);
      ptx::tma_prefetch_desc(dp.tmap_b);
    }
    for (int i = 0; i < kStages - 1 && lc.left > 0; ++i) {
      if (issuer) issue(static_cast<uint32_t>(i));
      advance();
    }
  } else if (issuer) {
    if (lane == 0) {
      ptx::tma_prefetch_desc(dp.tmap_a);
      ptx::tma_prefetch_desc(dp.tmap_b);
    }
    for (int i = 0; i + 1 < kStages; ++i) issue_next(static_cast<uint32_t>(i));
  }

  // ---- the stages ----------------------------------------------------------------------------------------------
  const int g8 = lane >> 2, tig = lane & 3;
  // this thread's B rows r0, r0 + 8 of the tile: mma row g8 takes B row g8 / 2 + 4 (g8 % 2), so a
  // quarter warp's rows differ in bit 2 and its 16-byte loads under the 128-byte swizzle hit 32 banks
  // (pair form: segment 2r + hp keys the swizzle, so a quarter warp's rows differ in bit 1 instead:
  // mma row g8 takes B row ((g8 >> 1) & 1) | 2 (g8 & 1) | (g8 & 4))
  const int r0 = kPair ? 16 * warp + (((g8 >> 1) & 1) | ((g8 & 1) << 1) | (g8 & 4))
                       : 16 * warp + ((g8 >> 1) | ((g8 & 1) << 2));
  const TokItem tki = tok_item<NT>(tid);
  const StreamK sk{W, P, me, u_begin, u_end, U};
  uint32_t it = 0;
  const int KS = f.KS;
  int64_t u = u_begin;
  int t = static_cast<int>(u_begin / U);
  int k0 = static_cast<int>(u_begin - static_cast<int64_t>(t) * U);
  while (u < u_end) {
    const int k1 = static_cast<int>(min(static_cast<int64_t>(U), u_end - static_cast<int64_t>(t) * U));
    const Tile ti = decode_tile<T>(p, sp, t);
    const uint32_t arow = p.swizzled ? static_cast<uint32_t>(ti.a_srow0 & 127) : 0u;
    float acc2[2][NT][4];  // even and odd K steps: two dependency chains of mma per stage, not one
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc2[q][nt][i] = 0.0f;
    const bool row_ok[2] = {r0 < ti.n_valid, r0 + 8 < ti.n_valid};
    // 8-token n-tiles holding a token of the chunk (uniform over the CTA): the rest is neither
    // converted nor multiplied, so a tile costs what its tokens need, not what T allows.
    const int nta = (ti.tok_valid + 7) >> 3;

    // The K stages k0 .. k1 - 1 of the tile with NTA n-tiles (0: nta, not known at compile time).
    // After a stage's barrier: the issuing warp refills the slot every warp has just left (that of
    // slot it - 1) with the stage kStages - 1 ahead.
    auto refill = [&](uint32_t it_now) {
      if constexpr (kOneLoop) {
        if (issuer && lc.left > 0) {
          issue((it_now + kStages - 1) % kStages);
          advance();
        }
      } else if (issuer) {
        issue_next((it_now + kStages - 1) % kStages);
      }
    };
    auto stages = [&](auto nta_c) {
      constexpr int NTA = decltype(nta_c)::value;
      const int na = NTA ? NTA : nta;
      if constexpr (kPair) {  // the K stages of pairs k0 .. k1 - 1; a pair's slot waited for at its first stage
        for (int kt = 2 * k0; kt < 2 * k1 && kt < KS; ++kt) {
          const int hp = kt & 1;
          const uint32_t s = it % kStages;
          const uint8_t* st = smem + s * kStageBytes;
          if (hp == 0) ptx::mbar_wait(&full[s], (it / kStages) & 1);
          const uint8_t* sc = st + kScaleOff + 1024 * hp;
          // the token buffer's parity alternates over the CTA's K stages (t KS + kt counts them)
          uint8_t* tb = tokbuf + ((t * KS + kt) & 1) * kTokBytes;
          // token_items reads A at st + kBN * 128 + ...: the pair slot's A box of this K stage
          token_items<AK, (NTA ? NTA : NT)>(tki, tid, na, st + F::kABoxOff + hp * T * 128 - kBN * 128, sc, tb, arow,
                                            ti.tok_valid, kt, kc);
          __syncthreads();  // the token buffer is whole; every warp is done with pair it - 1's slot
          if (hp == 0) refill(it);
          stage_mma<BK, NT, true>(st, sc, reinterpret_cast<const uint4*>(tb), r0, tig, lane, row_ok, kt, kc, na, acc2,
                                  hp);
          if (hp == 1 || kt + 1 == KS) ++it;  // the pair's last K stage
        }
      } else {  // one K stage per slot
        for (int kt = k0; kt < k1; ++kt, ++it) {
          const uint32_t s = it % kStages, round = it / kStages;
          const uint8_t* st = smem + s * kStageBytes;
          const uint8_t* sc = st + kScaleOff;
          uint8_t* tb = tokbuf + (it & 1) * kTokBytes;
          ptx::mbar_wait(&full[s], round & 1);
          // Token items (consumer thread i, and i + 256 when na = 4): item i < 128 na is bytes [8h, 8h + 8)
          // of 16-byte chunk 4b + tig of token tok, i.e. K steps 2pr and 2pr + 1 (pr = 2b + h), converted into
          // mma B fragments {lo, hi} of lane (tok % 8) * 4 + tig of n-tile tok / 8, stored as one 16-byte
          // entry [pr][n-tile][lane] of the token buffer (a warp's items fill 512 contiguous bytes). Tokens
          // outside the chunk and blocks past K give zeros. (With NTA > 0 the divisions are by constants.)
          token_items<AK, (NTA ? NTA : NT)>(tki, tid, na, st, sc, tb, arow, ti.tok_valid, kt, kc);
          __syncthreads();  // the token buffer is whole; every warp is done with stage it - 1's slot
          refill(it);
          stage_mma<BK, NT, false>(st, sc, reinterpret_cast<const uint4*>(tb), r0, tig, lane, row_ok, kt, kc, na, acc2,
                                   0);
        }
      }
    };
    if (kOneLoop && nta <= 2) stages(std::integral_constant<int, 2>{});  // T = 32, chunks of up to 16 tokens
    else if (kOneLoop) stages(std::integral_constant<int, 0>{});
    else if (nta <= 1) stages(std::integral_constant<int, 1>{});
    else if (nta == 2) stages(std::integral_constant<int, (NT >= 2 ? 2 : 1)>{});
    else stages(std::integral_constant<int, 0>{});

    finish_tile<kOutF32, NT>(dp, sk, ti, t, u, warp, lane, tig, r0, row_ok, acc2);
    u = static_cast<int64_t>(t) * U + k1;
    ++t;
    k0 = 0;
  }
}

}  // namespace decode
}  // namespace sm90gemm
}  // namespace mxq


// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_gemm.cpp):
// mxq_gemm_sm90_decode_<A>_<B>_<D>_t<T>_x<CTAs per SM> (one K stage per slot) and
// mxq_gemm_sm90_decode_<A>_<B>_<D>_t<T>_x2_pair (the pair form, two CTAs per SM, K % 128 == 0).
#define MXQ_GEMM_SM90_DECODE_ENTRY(NAME, ONE, AK, BK, F32, T, C, PAIR)                                        \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90DecodeThreads, C)                                \
      NAME(const __grid_constant__ mxq::GemmSm90DecodeParams p) {                                            \
    mxq::sm90gemm::decode::decode_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32, T, C, ONE, PAIR>(p); \
  }
#define MXQ_GEMM_SM90_DECODE_T(A, B, AK, BK, T, ONE)                                                                \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_bf16_t##T##_x1, ONE, AK, BK, false, T, 1, false)     \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_f32_t##T##_x1, ONE, AK, BK, true, T, 1, false)       \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_bf16_t##T##_x2, ONE, AK, BK, false, T, 2, false)     \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_f32_t##T##_x2, ONE, AK, BK, true, T, 2, false)       \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_bf16_t##T##_x2_pair, ONE, AK, BK, false, T, 2, true) \
  MXQ_GEMM_SM90_DECODE_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_f32_t##T##_x2_pair, ONE, AK, BK, true, T, 2, true)
#define MXQ_GEMM_SM90_DECODE_ENTRIES(A, B, AK, BK)  \
  MXQ_GEMM_SM90_DECODE_T(A, B, AK, BK, 8, false)  \
  MXQ_GEMM_SM90_DECODE_T(A, B, AK, BK, 16, false) \
  MXQ_GEMM_SM90_DECODE_T(A, B, AK, BK, 32, true)

MXQ_GEMM_SM90_DECODE_ENTRIES(e4m3, e4m3, E4M3, E4M3)
MXQ_GEMM_SM90_DECODE_ENTRIES(e4m3, e5m2, E4M3, E5M2)
MXQ_GEMM_SM90_DECODE_ENTRIES(e5m2, e4m3, E5M2, E4M3)
