// Raw PTX for Hopper's warpgroup MMA (wgmma.mma_async, sm_90a only) and its shared-memory matrix
// descriptors: the one place that spells these instructions. The accumulator of an m64n128 fp32
// wgmma is 64 registers per thread, passed as "+f" operands; because the instruction is
// asynchronous, callers pin the registers with fence_acc() after wgmma_wait so the compiler
// cannot move reads of them above the wait. Only the 128-byte-swizzled, K-major operand form is
// exposed: it is the only one FP8 wgmma accepts (both operands K-major) and the one the GEMM uses.
#pragma once

#include <cstdint>

namespace mxq {
namespace ptx {

enum class Fp8Kind { E4M3, E5M2 };

// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format") for a K-major operand stored
// as rows of 128 bytes with the 128-byte swizzle: 8-row core groups are 1024 bytes apart (stride
// byte offset), the leading byte offset is ignored for swizzled K-major layouts (set to 1 as the ISA
// suggests), and the base offset is 0 because every tile starts 1024-byte aligned. Stepping along K
// inside the 128-byte row is done by adding the byte offset to the start address (the hardware
// applies the swizzle to the final address).
__device__ __forceinline__ uint64_t smem_desc_k128_sw128(uint32_t smem_addr) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_addr & 0x3FFFFu) >> 4);
  desc |= static_cast<uint64_t>(1) << 16;
  desc |= static_cast<uint64_t>(1024 >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;  // 128B swizzle
  return desc;
}

// Orders this warpgroup's earlier register and shared-memory accesses before the next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keep the compiler from moving accesses of an in-flight accumulator (or A-fragment registers of
// an in-flight wgmma) across this point: call after wgmma_wait.
template <int N>
__device__ __forceinline__ void fence_acc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_regs(uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// Ends the live range of an accumulator's old values without an instruction, before a wgmma that
// overwrites it (scale-d = 0): the "+f" operands would otherwise keep the previous contents (e.g.
// a P tile already consumed) alive until that wgmma issues.
template <int N>
__device__ __forceinline__ void undef_acc(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "=f"(d[i]));
}

// The accumulator operand lists of the m64nN wgmma forms (N/2 fp32 registers per thread), spelled
// once for every wrapper: the register list inside the instruction string and the "+f" operands.
#define MXQ_WGMMA_ACC32_REGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define MXQ_WGMMA_ACC64_REGS \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define MXQ_WGMMA_ACC32_OPS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
  "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), \
  "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
  "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define MXQ_WGMMA_ACC64_OPS(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
  "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), \
  "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
  "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
  "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), \
  "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
  "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
  "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// D = A * B^T over one k32 step, fresh accumulator (scale-d = 0): D[64x128] fp32, A 64x32 and
// B 128x32 fp8, both K-major in shared memory behind the descriptors.
template <Fp8Kind A, Fp8Kind B>
__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], uint64_t desc_a, uint64_t desc_b);

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MXQ_WGMMA_FP8(AK, BK, AS, BS)                                                                    \
  template <>                                                                                           \
  __device__ __forceinline__ void wgmma_m64n128k32<Fp8Kind::AK, Fp8Kind::BK>(float (&d)[64], uint64_t desc_a, \
                                                                            uint64_t desc_b) {          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                         \
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32." AS "." BS " " MXQ_WGMMA_ACC64_REGS         \
                 ", %64, %65, p, 1, 1;\n}\n"                                                           \
                 : MXQ_WGMMA_ACC64_OPS(d)                                                               \
                 : "l"(desc_a), "l"(desc_b), "r"(0));                                                   \
  }
MXQ_WGMMA_FP8(E4M3, E4M3, "e4m3", "e4m3")
MXQ_WGMMA_FP8(E4M3, E5M2, "e4m3", "e5m2")
MXQ_WGMMA_FP8(E5M2, E4M3, "e5m2", "e4m3")
MXQ_WGMMA_FP8(E5M2, E5M2, "e5m2", "e5m2")
#undef MXQ_WGMMA_FP8

// D (+)= A * B^T over one k32 step, N = 64: D[64x64] fp32, A 64x32 and B 64x32 E4M3, both K-major in
// shared memory behind the descriptors; scale_d = 0 overwrites d (the attention backward's S^T, dP^T).
__device__ __forceinline__ void wgmma_e4m3_ss_n64(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " MXQ_WGMMA_ACC32_REGS ", %32, %33, p, 1, 1;\n}\n"
               : MXQ_WGMMA_ACC32_OPS(d)
               : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (+)= A * B^T over one k32 step with A (64x32 E4M3) from registers: the m64nNk32 8-bit A
// fragment (per warp the mma.m16n8k32 layout: a[0] rows lane/4, columns 4 (lane % 4) + 0..3; a[1]
// rows + 8; a[2], a[3] the same 16 columns on) and B (128x32 E4M3) K-major behind the descriptor;
// scale_d = 0 overwrites d.
__device__ __forceinline__ void wgmma_e4m3_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                                   int scale_d) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " MXQ_WGMMA_ACC64_REGS
               ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
               : MXQ_WGMMA_ACC64_OPS(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
#endif

}  // namespace ptx
}  // namespace mxq
