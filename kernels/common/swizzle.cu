// Standalone UE8M0 scale swizzle (LINEAR -> SWIZZLED_128x4) and unswizzle, for scales produced
// outside mxq. The unit of work is one 16-byte line of a swizzled 512-byte tile: the 16 bytes for
// row-in-subtile i of a 128x4 tile hold rows i, i+32, i+64, i+96 times 4 scale columns
// (core/layout.h: off = tile*512 + (r&31)*16 + ((r>>5)&3)*4 + (c&3)). A thread therefore moves one
// line with a single 16-byte access on the swizzled side and up to four 4-byte row pieces on the
// LINEAR side (bytewise: linear_ld is arbitrary). Swizzling writes every byte of the padded tensor,
// padding as 0; unswizzling writes only the [rows, scale_cols] entries of each LINEAR row.
#include <cstdint>

#include "common/swizzle.h"
#include "common/vec.cuh"
#include "core/layout.h"

namespace {

struct Line {
  int64_t batch, r0, c0;  // the line covers rows r0 + 32*s (s = 0..3) and columns c0 .. c0+3
  int64_t offset;         // byte offset of the line in the swizzled tensor
};

__device__ __forceinline__ Line locate(const mxq::SwizzleParams& p, int64_t line) {
  const int64_t per_batch = p.rpad * p.cpad / 16;
  const int64_t tiles_per_row = p.cpad / 4;
  Line x;
  x.batch = line / per_batch;
  const int64_t in_batch = line - x.batch * per_batch;
  const int64_t tile = in_batch / 32, i = in_batch % 32;
  x.r0 = (tile / tiles_per_row) * 128 + i;
  x.c0 = (tile % tiles_per_row) * 4;
  x.offset = line * 16;
  return x;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(mxq::kSwizzleThreads) mxq_swizzle_scales(const mxq::SwizzleParams p) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < p.lines; line += stride) {
    const Line x = locate(p, line);
    const uint8_t* src = p.src + x.batch * p.rows * p.linear_ld;
    uint32_t w[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int64_t r = x.r0 + 32 * s;
      uint32_t word = 0;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t c = x.c0 + j;
        if (r < p.rows && c < p.scale_cols) word |= static_cast<uint32_t>(src[r * p.linear_ld + c]) << (8 * j);
      }
      w[s] = word;
    }
    uint8_t* dst = p.dst + x.offset;
    if (p.swizzled_aligned) {
      mxq::dev::store16(dst, make_uint4(w[0], w[1], w[2], w[3]));
    } else {
#pragma unroll
      for (int b = 0; b < 16; ++b) dst[b] = static_cast<uint8_t>(w[b >> 2] >> (8 * (b & 3)));
    }
  }
}

extern "C" __global__ void __launch_bounds__(mxq::kSwizzleThreads) mxq_unswizzle_scales(const mxq::SwizzleParams p) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < p.lines; line += stride) {
    const Line x = locate(p, line);
    if (x.r0 >= p.rows) continue;  // the line's rows r0 + 32s are all padding
    const uint8_t* src = p.src + x.offset;
    uint4 v;
    if (p.swizzled_aligned) {
      v = mxq::dev::load16(src);
    } else {
      uint32_t b[4] = {0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < 16; ++k) b[k >> 2] |= static_cast<uint32_t>(src[k]) << (8 * (k & 3));
      v = make_uint4(b[0], b[1], b[2], b[3]);
    }
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint8_t* dst = p.dst + x.batch * p.rows * p.linear_ld;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int64_t r = x.r0 + 32 * s;
      if (r >= p.rows) break;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t c = x.c0 + j;
        if (c < p.scale_cols) dst[r * p.linear_ld + c] = static_cast<uint8_t>(w[s] >> (8 * j));
      }
    }
  }
}
