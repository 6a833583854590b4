// Parameters of the sm_90a MXFP8 grouped-GEMM kernels (kernels/sm90/gemm_mxfp8.cu): a plain struct
// that crosses from the host launcher (src/cuda/op_gemm.cpp, compiled by the host compiler, so this
// header holds no CUDA constructs) to the device by value. The launcher resolves every extent and
// stride from the plan; the kernel only indexes, with the scale formulas of core/layout.h.
#pragma once

#include <cstdint>

namespace mxq {

struct GemmSm90Params {
  const uint8_t* a;         // FP8 [rows_total, K] row-major (rows of every group/batch entry)
  const uint8_t* b;         // FP8 [groups, N, K] row-major ([N, K] when K-grouped)
  const uint8_t* a_scales;  // UE8M0, rowwise along K (M- or K-grouped layout when grouped)
  const uint8_t* b_scales;  // UE8M0, batched [groups, N, ceil(K/32)] (K-grouped: one tensor)
  void* d;                  // bf16 or fp32 [rows_total, N] ([groups, M, N] when K-grouped)
  const void* group_ends;   // int32/int64 [groups] end rows / end tokens (device), or null: dense
  int64_t rows_total;       // rows of A: M (grouped) or batch*M (dense)
  int64_t rows_per_group;   // dense: M (each batch entry is one group); grouped: unused
  int64_t n, k;
  int64_t scale_ld;         // swizzled: Cpad = round_up(ceil(K/32), 4); LINEAR: ceil(K/32);
                            // K-grouped: layout::kgroup_scale_cols_bound (both layouts)
  int64_t b_scale_stride;   // bytes between the scale tensors of consecutive B groups (0: K-grouped)
  int32_t groups;           // G, or the batch count when dense
  int32_t offsets_i64;      // group_ends holds int64 (else int32)
  int32_t swizzled;         // scale layout SWIZZLED_128x4 (else LINEAR)
  int32_t accumulate;       // D += alpha*AB^T
  int32_t kgrouped;         // group_ends split K (wgrad): G dense problems over token ranges
  float alpha;
  const int32_t* bprep_cols;  // TMA kernel, K-grouped with B dequantized ahead: each group's first
                              // column in the workspace (GemmSm90BPrepParams::cols); else null
  int32_t m_inner;            // K-grouped: tiles of a group walk m fastest (A's group slice stays in
                              // L2 while B streams once); else n fastest
};

// Kernel geometry, shared with the launcher: a 128x128 output tile per CTA iteration, 128-wide K
// stages (one 128-byte swizzle row, four 32-blocks), two math warpgroups of 64 rows each.
constexpr int kGemmSm90Threads = 256;
constexpr int kGemmSm90TileM = 128;
constexpr int kGemmSm90TileN = 128;
constexpr int kGemmSm90TileK = 128;
constexpr int kGemmSm90Stages = 4;
// Groups whose row table fits in shared memory; larger G is refused at plan time.
constexpr int kGemmSm90MaxGroups = 8192;

constexpr int64_t gemm_sm90_stage_bytes() { return (kGemmSm90TileM + kGemmSm90TileN) * kGemmSm90TileK; }
constexpr int64_t gemm_sm90_scale_stage_bytes() { return (kGemmSm90TileM + kGemmSm90TileN) * 4 * 4; }
// Dynamic shared memory: 1 KiB alignment slack, the data and scale stages, and the group table
// (ends and tile prefix -- scale column bases when K-grouped -- G+1 int32 each, only when grouped).
constexpr int64_t gemm_sm90_smem_bytes(int64_t groups_in_table) {
  return 1024 + kGemmSm90Stages * (gemm_sm90_stage_bytes() + gemm_sm90_scale_stage_bytes()) +
         2 * 4 * (groups_in_table + 1);
}

// The BF16-path kernel (kernels/sm90/gemm_mxfp8_bf16.cu): one producer warpgroup that stages B's
// FP8 tiles with cp.async and converts them with their scales to bf16 in shared memory, and two
// consumer warpgroups (64 rows each, A converted in registers) running bf16 wgmma on 128x256 output
// tiles, 64-wide K stages.
constexpr int kGemmSm90Bf16Threads = 384;
constexpr int kGemmSm90Bf16TileN = 256;
constexpr int kGemmSm90Bf16TileK = 64;
constexpr int kGemmSm90Bf16Stages = 3;     // bf16 B slots the consumers read
constexpr int kGemmSm90Bf16Fp8Stages = 4;  // FP8 staging depth of the producer's async copies (B)
constexpr int kGemmSm90Bf16AStages = 4;    // FP8 staging depth of the consumers' async copies (A)
constexpr int64_t gemm_sm90_bf16_slot_bytes() { return int64_t(kGemmSm90Bf16TileN) * kGemmSm90Bf16TileK * 2; }
// 1 KiB alignment slack, the bf16 B slots, the FP8 staging rings of B and A, 2 mbarriers per slot,
// the group table (with the largest tables the plan falls back to the FP8-wgmma kernel).
constexpr int64_t gemm_sm90_bf16_smem_bytes(int64_t groups_in_table) {
  return 1024 + kGemmSm90Bf16Stages * (gemm_sm90_bf16_slot_bytes() + 16) +
         int64_t(kGemmSm90Bf16Fp8Stages) * kGemmSm90Bf16TileN * kGemmSm90Bf16TileK +
         int64_t(kGemmSm90Bf16AStages) * kGemmSm90TileM * kGemmSm90Bf16TileK + 2 * 4 * (groups_in_table + 1);
}

// The TMA BF16-path kernel (kernels/sm90/gemm_mxfp8_tma.cu): one producer thread loads A's and B's
// FP8 tiles with TMA into a ring of shared-memory stages; the two consumer warpgroups (64 rows each)
// convert them -- B, split between them, into 128-byte-swizzled bf16 slots, A into the registers of
// register-sourced wgmma -- and run bf16 wgmma on 128x256 output tiles, 64-wide K stages.
constexpr int kGemmSm90TmaThreads = 384;
constexpr int kGemmSm90TmaTileN = 256;
constexpr int kGemmSm90TmaTileK = 64;
constexpr int kGemmSm90TmaFp8Stages = 4;  // TMA ring depth (A and B FP8 tiles of one K stage each)
constexpr int kGemmSm90TmaSlots = 3;      // bf16 B slots (3: see the kernel's slot-reuse argument)
constexpr int64_t gemm_sm90_tma_fp8_stage_bytes() {
  return int64_t(kGemmSm90TileM + kGemmSm90TmaTileN) * kGemmSm90TmaTileK;
}
constexpr int64_t gemm_sm90_tma_slot_bytes() { return int64_t(kGemmSm90TmaTileN) * kGemmSm90TmaTileK * 2; }
// 1 KiB alignment slack, the bf16 B slots, the FP8 ring, 2 mbarriers per ring stage, the group table.
constexpr int64_t gemm_sm90_tma_smem_bytes(int64_t groups_in_table) {
  return 1024 + kGemmSm90TmaSlots * gemm_sm90_tma_slot_bytes() +
         kGemmSm90TmaFp8Stages * (gemm_sm90_tma_fp8_stage_bytes() + 16) + 2 * 4 * (groups_in_table + 1);
}

// The TMA kernel with B dequantized ahead ("bprep"): a pre-kernel converts B once per Execute into
// a bf16 workspace [groups * N, Kp] (Kp = round_up(K, 64), zeros past K, each 64-wide K stage in the
// K order the kernel's A fragments use), and the main kernel TMA-loads it straight into
// 128-byte-swizzled slots, so its math warpgroups convert only A. Ring of 4 stages, each B's 256 x 64
// bf16 slot plus A's 128 x 64 FP8 box.
constexpr int kGemmSm90TmaBpStages = 4;
constexpr int64_t gemm_sm90_tma_bp_smem_bytes(int64_t groups_in_table) {
  return 1024 + kGemmSm90TmaBpStages * (gemm_sm90_tma_slot_bytes() + int64_t(kGemmSm90TileM) * kGemmSm90TmaTileK + 16) +
         2 * 4 * (groups_in_table + 1);
}
// The same kernel with the operands swapped ("apre", M-grouped plans whose A is the smaller operand, of
// >= 256 rows per group: use_apre in src/cuda/op_gemm.cpp): the pre-kernel dequantizes A's tokens once into a bf16 workspace [M, Kp] (the
// header of gemm_sm90_bprep_header_bytes first: the group table, for A's swizzled scale rows), and the
// main kernel computes D^T tiles of 128 weight rows (B's FP8 rows, converted in its math warps, the
// register operand) x kGemmSm90TmaSwapTokens tokens of one group (the bf16 slot), so each weight
// element is converted once per token tile, in registers, instead of into a bf16 slot once per 128-row
// m-tile. Same shared memory as the B-ahead instance.
constexpr int kGemmSm90TmaSwapTokens = 256;
// Workspace row length (bf16 elements) of the dequantized B. M-grouped / dense: K rounded up to the
// 64-wide stage. K-grouped: group g's tokens [t0, t1) sit at columns cols[g] + (t - t0), so its
// 64-wide stages and its 32-blocks (which restart at t0) line up, and each group spans a whole number
// of stage pairs (the kernel runs an even stage count; every column no token of the group maps to is
// 0). A's rows of the groups whose t0 is not a multiple of 16 (TMA's innermost box coordinate must be
// 16-byte aligned) are copied by the same column map into an FP8 workspace [M, kp] after the bf16 B
// (gemm_sm90_arelayout_bytes), so every tile reads whole 32-blocks per stage.
constexpr int64_t gemm_sm90_bprep_row(int64_t k) { return (k + kGemmSm90TmaTileK - 1) / kGemmSm90TmaTileK * kGemmSm90TmaTileK; }
// (A group takes round_up(len, 128) <= len + 127 columns; the bound keeps rows a whole number of
// 64-wide stages, which also keeps them 16-byte aligned for TMA and the pre-kernels' stores.)
constexpr int64_t gemm_sm90_bprep_row_kgrouped(int64_t tokens, int64_t groups) {
  return (tokens + 2 * kGemmSm90TmaTileK - 1) / (2 * kGemmSm90TmaTileK) * (2 * kGemmSm90TmaTileK) +
         groups * 3 * kGemmSm90TmaTileK;
}
// K-grouped workspace header: int32 ends[G+1] (clamped as the kernels clamp them), scale column
// bases[G+1], cols[G+1], then the bf16 rows 256-byte aligned.
constexpr int64_t gemm_sm90_bprep_header_bytes(int64_t groups) { return (12 * (groups + 1) + 255) / 256 * 256; }
// K-grouped: the FP8 copy of A [M, kp] by the column map above (after the bf16 B, 256-byte aligned).
constexpr int64_t gemm_sm90_arelayout_bytes(int64_t m, int64_t kp) { return (m * kp + 255) / 256 * 256; }
constexpr int kGemmSm90ARelayoutThreads = 256;
constexpr int kGemmSm90ARelayoutBlocksPerSm = 8;  // the copy's grid: about this many blocks per SM, over all groups

// Parameters of the B pre-kernels: one thread per (row, 64-wide K stage) of the dequantized B.
struct GemmSm90BPrepParams {
  const uint8_t* b;         // FP8 [groups, N, K] ([N, K] when K-grouped)
  const uint8_t* b_scales;  // UE8M0 [groups] x (N, ceil(K/32)) in the plan's layout (K-grouped: one tensor)
  uint16_t* out;            // bf16 [groups * N, kp] ([N, kp] when K-grouped)
  const int32_t* table;     // K-grouped: the workspace header (ends, scale column bases, cols); M-grouped
                            // A dequantized ahead ("apre", b = A, n = M, one group) with SWIZZLED_128x4
                            // scales: the header's ends[G+1], m-tile prefix[G+1] (row -> scale row); else null
  int64_t n, k, kp;
  int64_t scale_ld;         // as GemmSm90Params::scale_ld
  int64_t b_scale_stride;   // bytes between consecutive groups' scale tensors
  int64_t items;            // rows * (kp / 64)
  int32_t swizzled;
  int32_t groups;           // K-grouped: G
  // K-grouped A copy (mxq_gemm_sm90_arelayout_kgrouped, one block row per group): A [a_rows, k] FP8
  // -> a_out [a_rows, kp]; groups with 16-byte aligned t0 are not written (the main kernel reads
  // those groups from A).
  const uint8_t* a;
  uint8_t* a_out;
  int64_t a_rows;
};
constexpr int kGemmSm90BPrepThreads = 256;
constexpr int kGemmSm90BPrepTableThreads = 256;

// The decode kernel (kernels/sm90/gemm_mxfp8_decode.cu): M-grouped plans with few rows (tokens) per
// group, where the GEMM is a stream over B. A CTA holds 8 warps (16 B rows each; one also issues the
// loads); its work is a contiguous range of (tile, 128-wide K stage) units, a tile being 128 rows of
// B[g] against up to T tokens of group g (T = 8, 16 or 32, one kernel each). Tiles whose K stages
// two or more CTAs share are summed through the workspace (fp32 partials, a counter per tile and
// warp), in CTA order. Built for 1 or 2 CTAs per SM (`_x1` / `_x2`), the ring 8 / CTAs deep; with two
// CTAs per SM and K % 128 == 0 the pair form (`_x2_pair`: a slot of two K stages, see below).
constexpr int kGemmSm90DecodeThreads = 256;
constexpr int kGemmSm90DecodeTileN = 128;    // B rows per tile
constexpr int kGemmSm90DecodeTileK = 128;    // K per ring stage: one 128-byte TMA box per operand
constexpr int kGemmSm90DecodeStages = 8;     // ring stages per SM (per CTA: 8 / CTAs per SM)
constexpr int kGemmSm90DecodeMinStages = 4;  // K stages per CTA at least (smaller problems use fewer CTAs)
// One ring stage: B's 128 x 128-byte box, A's T x 128-byte box, then the stage's scales (B: 128 rows
// x 4 blocks as one SWIZZLED_128x4 tile, 512 bytes; A: one word of 4 blocks per token), 1 KiB aligned.
constexpr int64_t gemm_sm90_decode_stage_data(int t) { return 128 * 128 + int64_t(t) * 128; }
constexpr int64_t gemm_sm90_decode_stage_bytes(int t) {
  return (gemm_sm90_decode_stage_data(t) + 512 + 4 * t + 1023) / 1024 * 1024;
}
// 1 KiB alignment slack, the ring, two bf16 token buffers (T x 128 each, in mma fragment order), the
// ring's mbarriers, the group table (ends, 128-row tile prefix, decode tile prefix: G+1 int32 each).
constexpr int64_t gemm_sm90_decode_smem_bytes(int t, int ctas_per_sm, int64_t groups) {
  return 1024 + (kGemmSm90DecodeStages / ctas_per_sm) * (gemm_sm90_decode_stage_bytes(t) + 8) +
         2 * 256 * int64_t(t) + 3 * 4 * (groups + 1);
}
// The pair form (`_x2_pair`, K % 128 == 0): a ring slot of two K stages, B's 128 rows x 256 bytes (one
// 3D box), A's two T x 128-byte boxes, then each K stage's scales (B tile 512 bytes, A tile 512 bytes);
// half as many slots (8 / CTAs per SM / 2), at most the plain form's shared memory.
constexpr int64_t gemm_sm90_decode_pair_b_bytes() { return 128 * 256; }
constexpr int64_t gemm_sm90_decode_pair_data(int t) { return gemm_sm90_decode_pair_b_bytes() + 2 * int64_t(t) * 128; }
constexpr int64_t gemm_sm90_decode_pair_bytes(int t) { return (gemm_sm90_decode_pair_data(t) + 2048 + 1023) / 1024 * 1024; }
constexpr int64_t gemm_sm90_decode_pair_smem_bytes(int t, int ctas_per_sm, int64_t groups) {
  return 1024 + (kGemmSm90DecodeStages / ctas_per_sm / 2) * (gemm_sm90_decode_pair_bytes(t) + 8) +
         2 * 256 * int64_t(t) + 3 * 4 * (groups + 1);
}
// Workspace: a counter per (tile, consumer warp), then two fp32 partial tiles (128 x T) per CTA.
constexpr int64_t gemm_sm90_decode_counter_bytes(int64_t max_tiles) { return (max_tiles * 8 * 4 + 255) / 256 * 256; }
constexpr int64_t gemm_sm90_decode_partial_bytes(int t, int64_t ctas) { return ctas * 2 * 128 * int64_t(t) * 4; }

struct alignas(64) GemmSm90DecodeParams {
  alignas(64) uint8_t tmap_a[128];  // A [rows_total, K] FP8: boxes of 128 bytes x T rows, 128-byte swizzle
  alignas(64) uint8_t tmap_b[128];  // B [groups * N, K] FP8: boxes of 128 bytes x 128 rows, 128-byte swizzle
  GemmSm90Params g;
  uint32_t* counters;   // workspace, [max_tiles * 8], zeroed by the launcher before every launch
  float* partials;      // workspace, [gridDim.x][2][8 warps][T/2 registers][32 lanes]
  int32_t scale_words;  // scales readable as aligned 4-byte words (SWIZZLED, or LINEAR with 4 | ceil(K/32))
  int32_t bulk_scales;  // SWIZZLED with 16-byte aligned scale tensors: a stage's scale tiles by bulk copies
};

// The 32x32-weight kernel (kernels/sm90/gemm_mxfp8_fp8b2d.cu, plans with MXQ_GEMM_ATTR_B_BLOCK_2D):
// FP8 wgmma m64n128k32 on TMA-loaded FP8 tiles, one FFMA per accumulator element per 32-block. 384
// threads: warpgroup 0 is the producer (one TMA thread; three warps that turn the stage's A and B
// scales into the products sa[row] * sb[32-column block], one fp32 per (k32, row, column block)),
// warpgroups 1 and 2 the math (64 rows x 128 columns each). 128x128 tiles, 128-wide K stages.
// Parameters: GemmSm90TmaParams (tmap_a, tmap_b; 128 x 128-byte boxes, 128-byte swizzle).
constexpr int kGemmSm90Fp8B2dThreads = 384;
constexpr int kGemmSm90Fp8B2dTileN = 128;
constexpr int kGemmSm90Fp8B2dStages = 5;
constexpr int64_t gemm_sm90_fp8b2d_stage_bytes() { return int64_t(kGemmSm90TileM + kGemmSm90Fp8B2dTileN) * kGemmSm90TileK; }
// Scale products of one stage: 4 k32 blocks x 128 rows x 4 column blocks, fp32.
constexpr int64_t gemm_sm90_fp8b2d_scale_bytes() { return 4 * int64_t(kGemmSm90TileM) * (kGemmSm90Fp8B2dTileN / 32) * 4; }
// 1 KiB alignment slack, the ring (data, scale products, 2 mbarriers per stage), the group table.
constexpr int64_t gemm_sm90_fp8b2d_smem_bytes(int64_t groups_in_table) {
  return 1024 + kGemmSm90Fp8B2dStages * (gemm_sm90_fp8b2d_stage_bytes() + gemm_sm90_fp8b2d_scale_bytes() + 16) +
         2 * 4 * (groups_in_table + 1);
}

// Kernel parameters of the TMA kernel: the TMA descriptors (CUtensorMap, 128 bytes each, encoded
// by the launcher per Execute) of A as a 2D FP8 tensor [rows_total, K] and B as [groups * N, K]
// ([N, K] when K-grouped), boxes of 64 bytes x (128 | 256) rows with the 64-byte swizzle, then the
// common parameters.
struct alignas(64) GemmSm90TmaParams {
  alignas(64) uint8_t tmap_a[128];
  alignas(64) uint8_t tmap_b[128];
  GemmSm90Params g;
  alignas(64) uint8_t tmap_d[128];  // store_tma: D as 3D [groups, M, N] (M-grouped / dense: [1, rows_total, N]), boxes of 128 bytes x 64 rows, 128-byte swizzle
  int32_t store_tma;  // the epilogue stages tiles in shared memory for TMA stores (K-grouped with B converted in the kernel; the _bpre_tma instances)
  alignas(64) uint8_t tmap_a2[128];  // K-grouped with B dequantized ahead: A's FP8 copy [M, kp] (same boxes as tmap_a)
};
// The TMA-store epilogue's staging box: 64 rows x 128 bytes (fp32: 32 columns, bf16: 64), 128-byte
// swizzled. Each math warpgroup stages its 64 x 256 block in half of the bf16 slots (6 boxes).
constexpr int kGemmSm90TmaStoreBox = 8192;
// B dequantized ahead and TMA stores (the `_kgrouped_bpre_tma` and `_bpre_tma` entry points): the
// ring's slots are being refilled with the next tile's stages, so the epilogue has its own staging
// after the A boxes, 4 boxes per math warpgroup (a bf16 block in one pass, fp32 in two).
constexpr int kGemmSm90TmaBpStoreBoxes = 8;
constexpr int64_t gemm_sm90_tma_bp_store_smem_bytes(int64_t groups_in_table) {
  return gemm_sm90_tma_bp_smem_bytes(groups_in_table) + int64_t(kGemmSm90TmaBpStoreBoxes) * kGemmSm90TmaStoreBox;
}

}  // namespace mxq
