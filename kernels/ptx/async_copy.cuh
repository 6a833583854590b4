// Raw PTX for Ampere-style asynchronous global->shared copies (cp.async) and the async-proxy fence
// that makes their results visible to wgmma. The GEMM uses cp.async rather than TMA because the
// zero-fill form (src-size < 16) masks rows outside a group and K beyond the tensor at 16-byte
// granularity without a tensor map per group; the whole team reads these wrappers from here.
#pragma once

#include <cstdint>

namespace mxq {
namespace ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The first 1024-byte aligned byte of a dynamic shared-memory array (128-byte swizzled tiles need
// it). Computed as an offset from the array itself, so the compiler still knows the result points
// into shared memory and emits LDS/STS: rounding the generic address through an integer
// loses that, and every access then goes through generic 64-bit LD/ST.
__device__ __forceinline__ uint8_t* smem_align1024(uint8_t* raw) {
  return raw + ((1024u - (smem_addr(raw) & 1023u)) & 1023u);
}

// Copies 16 bytes, or zero-fills the destination when !valid (no global byte is read then; src
// must still be a mapped address, callers pass the tensor base).
__device__ __forceinline__ void cp_async_16_zfill(uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
// Copies 4 bytes (src 4-byte aligned), or zero-fills them when !valid.
__device__ __forceinline__ void cp_async_4_zfill(uint32_t dst, const void* src, bool valid) {
  const int n = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(n) : "memory");
}
// This thread's arrival on an mbarrier (shared address), made when all its earlier cp.async copies have
// landed; .noinc: the arrival counts against the barrier's expected count (init it to include it).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Generic-proxy writes to shared memory (cp.async, st.shared) become visible to async-proxy readers
// (wgmma operands) only after this fence and a barrier.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace ptx
}  // namespace mxq
