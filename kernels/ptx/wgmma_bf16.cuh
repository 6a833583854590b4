// Raw PTX for Hopper's BF16 warpgroup MMA (wgmma.mma_async m64nNk16 .f32.bf16.bf16, sm_90a only):
// the one place these instructions are spelled. Attention uses them on exactly dequantized MXFP8
// operands: an E4M3/E5M2 value times its UE8M0 scale is a bf16 value (3 or 2 mantissa bits, bf16's
// 8-bit exponent) unless it leaves bf16's range, so products are exact and accumulate in fp32 at
// the BF16 tensor-core rate, with no per-32-block promotion on the CUDA cores.
//
// Forms:
//   wgmma_bf16_ss<N, TransB>(d, desc_a, desc_b, scale_d)   A [64 x 16] and B from shared memory
//   wgmma_bf16_rs<N, TransB>(d, a, desc_b, scale_d)        A from registers (4 x bf16x2 per thread)
// computing D[64 x N] = A * B^T (+ D when scale_d != 0), B being [N x 16] of the K=16 step.
// TransB = 0: B is K-major (rows of B contiguous along K); TransB = 1: B is N-major (the K x N
// matrix stored with N contiguous, e.g. V [S_kv, D] used as the B of P * V). A is always K-major.
//
// Fragment layouts (PTX ISA "Register Fragments", m64nNk16), thread t of the warpgroup, w = t / 32,
// l = t % 32, r0 = 16 w + l / 4:
//   accumulator d[N/2]: d[4j + 0/1] = D[r0][8j + 2(l%4) + 0/1], d[4j + 2/3] = D[r0 + 8][same cols]
//   A registers a[4] (bf16x2, low half first): a[0] = A[r0][2(l%4) + 0/1], a[1] = A[r0 + 8][same],
//                                              a[2] = A[r0][8 + 2(l%4) + 0/1], a[3] = A[r0 + 8][same]
// so the accumulator columns 16k..16k+15 of one wgmma are, packed pairwise, exactly the A fragment
// of K step k of the next one (d[8k + 0..7] -> a[0..3]).
//
// Shared-memory layout both forms' descriptors describe (smem_desc_sw128): 128-byte rows with the
// 128-byte swizzle, 8-row core groups 1024 bytes apart, tiles 1024-byte aligned. K-major operands
// with K > 64 (bf16) are split into 64-column panels; a K step inside a panel adds 32 bytes to the
// start address. For N-major B the panel is 64 N-columns wide; a K step of 16 rows adds 2048 bytes.
// N-major B is only used with N = 64 (one panel), so the descriptor's two offsets are set so that
// either reading of "leading" and "stride" byte offset gives 1024 between 8-row groups.
#pragma once

#include <cstdint>

#include "ptx/wgmma.cuh"  // wgmma_fence / wgmma_commit / wgmma_wait

namespace mxq {
namespace ptx {

// Descriptor of a 128-byte-swizzled operand at smem_addr (see the file comment).
__device__ __forceinline__ uint64_t smem_desc_sw128(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4);
  desc |= static_cast<uint64_t>(1024 >> 4) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;  // 128B swizzle
  return desc;
}

// The same descriptor split into its words: the low word (start address, leading byte offset)
// computed once per tile, the high word a constant. Offsets inside a tile are added to the low word
// as (bytes >> 4): shared addresses stay below 2^18, so the 14-bit address field never carries.
constexpr uint32_t kSw128DescHi = (1024u >> 4) | (1u << 30);  // stride byte offset, 128B swizzle
__device__ __forceinline__ uint32_t smem_desc_sw128_lo(uint32_t smem_addr) {
  return ((smem_addr & 0x3FFFFu) >> 4) | ((1024u >> 4) << 16);
}
__device__ __forceinline__ uint64_t smem_desc_sw128_at(uint32_t desc_lo, uint32_t byte_offset) {
  return (static_cast<uint64_t>(kSw128DescHi) << 32) | (desc_lo + (byte_offset >> 4));
}

// Byte offset of element (row, col16) of a 128-byte-swizzled tile of 128-byte rows, col16 being the
// 16-byte chunk (0..7) within the row: the layout wgmma reads and TMA's SWIZZLE_128B writes.
__device__ __forceinline__ uint32_t sw128_offset(uint32_t row, uint32_t chunk16) {
  return row * 128u + ((chunk16 ^ (row & 7u)) << 4);
}

// The register A fragment of k16 step ks of an m64nNk16 wgmma, read from a K-major bf16 tile in the
// 128-byte-swizzled 64-column panel layout (panel: the panel holding step ks, i.e. columns 64 (ks / 4)
// on): rows row and row + 8 (row: the warp's 16-row slice + lane / 4), columns 16 (ks % 4) +
// 2 (lane % 4) + {0, 1} and the same + 8.
__device__ __forceinline__ void lds_a_frag_sw128(const uint8_t* panel, uint32_t row, int ks, int lane, uint32_t (&a)[4]) {
  const uint8_t* p = panel + 4 * (lane & 3);
  const uint32_t j0 = static_cast<uint32_t>((ks & 3) * 2);
  a[0] = *reinterpret_cast<const uint32_t*>(p + sw128_offset(row, j0));
  a[1] = *reinterpret_cast<const uint32_t*>(p + sw128_offset(row + 8, j0));
  a[2] = *reinterpret_cast<const uint32_t*>(p + sw128_offset(row, j0 + 1));
  a[3] = *reinterpret_cast<const uint32_t*>(p + sw128_offset(row + 8, j0 + 1));
}

template <int N, int TransB>
__device__ __forceinline__ void wgmma_bf16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d);
template <int N, int TransB>
__device__ __forceinline__ void wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, int scale_d);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// N, the accumulator's register count NA (= N/2), its operand macros, and the operand numbers of
// what follows the accumulator: descriptors / A registers and the scale-d predicate source.
#define MXQ_WGMMA_BF16_SS(N, NA, TB, REGS, OPS, DA, DB, PRED)                                            \
  template <>                                                                                           \
  __device__ __forceinline__ void wgmma_bf16_ss<N, TB>(float (&d)[NA], uint64_t desc_a, uint64_t desc_b,   \
                                                       int scale_d) {                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n"                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " REGS ", " DA ", " DB           \
                 ", p, 1, 1, 0, " #TB ";\n}\n"                                                         \
                 : OPS(d)                                                                               \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                             \
  }
#define MXQ_WGMMA_BF16_RS(N, NA, TB, REGS, OPS, AREGS, DB, PRED)                                         \
  template <>                                                                                           \
  __device__ __forceinline__ void wgmma_bf16_rs<N, TB>(float (&d)[NA], const uint32_t (&a)[4], uint64_t desc_b, \
                                                       int scale_d) {                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n"                                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " REGS ", " AREGS ", " DB        \
                 ", p, 1, 1, " #TB ";\n}\n"                                                            \
                 : OPS(d)                                                                               \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));              \
  }
MXQ_WGMMA_BF16_SS(64, 32, 0, MXQ_WGMMA_ACC32_REGS, MXQ_WGMMA_ACC32_OPS, "%32", "%33", "%34")
MXQ_WGMMA_BF16_SS(64, 32, 1, MXQ_WGMMA_ACC32_REGS, MXQ_WGMMA_ACC32_OPS, "%32", "%33", "%34")
MXQ_WGMMA_BF16_SS(128, 64, 0, MXQ_WGMMA_ACC64_REGS, MXQ_WGMMA_ACC64_OPS, "%64", "%65", "%66")
MXQ_WGMMA_BF16_SS(128, 64, 1, MXQ_WGMMA_ACC64_REGS, MXQ_WGMMA_ACC64_OPS, "%64", "%65", "%66")
MXQ_WGMMA_BF16_RS(64, 32, 0, MXQ_WGMMA_ACC32_REGS, MXQ_WGMMA_ACC32_OPS, "{%32, %33, %34, %35}", "%36", "%37")
MXQ_WGMMA_BF16_RS(64, 32, 1, MXQ_WGMMA_ACC32_REGS, MXQ_WGMMA_ACC32_OPS, "{%32, %33, %34, %35}", "%36", "%37")
MXQ_WGMMA_BF16_RS(128, 64, 0, MXQ_WGMMA_ACC64_REGS, MXQ_WGMMA_ACC64_OPS, "{%64, %65, %66, %67}", "%68", "%69")
MXQ_WGMMA_BF16_RS(128, 64, 1, MXQ_WGMMA_ACC64_REGS, MXQ_WGMMA_ACC64_OPS, "{%64, %65, %66, %67}", "%68", "%69")
#undef MXQ_WGMMA_BF16_SS
#undef MXQ_WGMMA_BF16_RS
#endif

}  // namespace ptx
}  // namespace mxq
