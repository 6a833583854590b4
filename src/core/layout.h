// Scale-tensor layouts and output sizes: the one place where the LINEAR / SWIZZLED_128x4 formulas,
// per-batch padding and per-group bases are written down (docs/LAYOUTS.md). Host and device code
// (kernels/) both include this header, so the quantizer, the GEMM and the CPU reference agree by
// construction; the reference tests pin the formulas to hand-computed offsets.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MXQ_HD __host__ __device__ __forceinline__
#else
#define MXQ_HD inline
#endif

namespace mxq {
namespace layout {

constexpr int64_t kBlock = 32;        // elements per scale
constexpr int64_t kSwizzleRows = 128; // rows per swizzled tile
constexpr int64_t kSwizzleCols = 4;   // scale columns per swizzled tile
constexpr int64_t kTileBytes = 512;   // 128 x 4

MXQ_HD int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
MXQ_HD int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Number of 32-blocks along an axis of length k (a partial last block counts).
MXQ_HD int64_t scale_cols(int64_t k) { return ceil_div(k, kBlock); }

// Padded extents of a swizzled [rows, scols] scale tensor.
MXQ_HD int64_t swz_rows(int64_t rows) { return round_up(rows, kSwizzleRows); }
MXQ_HD int64_t swz_cols(int64_t scols) { return round_up(scols, kSwizzleCols); }

// Byte offset of scale (r, c) inside a swizzled tensor whose padded column count is cpad.
//   off(r, c) = ((r>>7)*(Cpad>>2) + (c>>2))*512 + (r&31)*16 + ((r>>5)&3)*4 + (c&3)
// I: the integer type to compute in (device code that knows its tensor is below 2^31 bytes uses
// uint32_t, which saves the 64-bit arithmetic).
template <typename I>
MXQ_HD I swizzled_offset_in(I r, I c, I cpad) {
  return ((r >> 7) * (cpad >> 2) + (c >> 2)) * static_cast<I>(kTileBytes) + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (c & 3);
}
MXQ_HD int64_t swizzled_offset(int64_t r, int64_t c, int64_t cpad) { return swizzled_offset_in<int64_t>(r, c, cpad); }

// Bytes of one (batch entry of a) scale tensor [rows, scols].
MXQ_HD int64_t scale_bytes(bool swizzled, int64_t rows, int64_t scols) {
  return swizzled ? swz_rows(rows) * swz_cols(scols) : rows * scols;
}

// ---- Row groups (MoE). Group g owns rows [o_{g-1}, o_g), o_{-1} = 0. -------------------------------
//
// Rowwise scales of a row-grouped tensor ("M-grouped" GEMM operand): in the swizzled layout each
// group starts at scale row base_g = sum_{h<g} round_up(M_h, 128); in LINEAR, row r keeps row r.
// The allocation bound, valid for every split of `rows` into `groups` groups, is below.
MXQ_HD int64_t mgroup_scale_rows_bound(int64_t rows, int64_t groups) {
  return round_up(rows + (kSwizzleRows - 1) * groups, kSwizzleRows);
}
MXQ_HD int64_t mgroup_row_pad(int64_t group_rows) { return round_up(group_rows, kSwizzleRows); }

// Columnwise scales of a row-grouped tensor ("K-grouped" wgrad operand): the token axis T (= rows of
// the input) is the scale axis; 32-blocks restart at each group start, so group g has
// ceil(T_g/32) scale columns starting at column base_g = sum_{h<g} cols_h with
//   cols_h = round_up(ceil(T_h/32), 4) (swizzled) or ceil(T_h/32) (LINEAR).
// The total column count depends on the (device-side) group sizes, so the tensor's column extent
// (the swizzle's Cpad, or the LINEAR row stride) is fixed to this bound, valid for every split:
//   sum_h ceil(T_h/32) <= ceil(T/32) + G - 1, and round_up(., 4) adds at most 3 per group.
MXQ_HD int64_t kgroup_scale_cols_bound(bool swizzled, int64_t tokens, int64_t groups) {
  return swizzled ? round_up(scale_cols(tokens) + 4 * groups - 1, kSwizzleCols) : scale_cols(tokens) + groups - 1;
}
MXQ_HD int64_t kgroup_col_pad(bool swizzled, int64_t group_tokens) {
  return swizzled ? round_up(scale_cols(group_tokens), kSwizzleCols) : scale_cols(group_tokens);
}

}  // namespace layout
}  // namespace mxq
