// Raw PTX for the warp-level tensor-core MMA (mma.sync, sm_80 and newer): the one place it is spelled.
// The decode GEMM (kernels/sm90/gemm_mxfp8_decode.cu) uses it where an M of 16 rows per warp and an N
// of 8 tokens fit the problem better than wgmma's 64-row warpgroup tiles.
#pragma once

#include <cstdint>

namespace mxq {
namespace ptx {

// D += A * B, m16n8k16, bf16 operands, fp32 accumulator. Fragments (lane l, g = l / 4, t = l % 4):
// a[0] = A(g, 2t..2t+1), a[1] = A(g+8, 2t..2t+1), a[2] = A(g, 2t+8..2t+9), a[3] = A(g+8, 2t+8..2t+9);
// b0 = B(2t..2t+1, g), b1 = B(2t+8..2t+9, g); d = {D(g, 2t), D(g, 2t+1), D(g+8, 2t), D(g+8, 2t+1)};
// the lower k / column of a pair in the low 16 bits.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace ptx
}  // namespace mxq
