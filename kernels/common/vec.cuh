// Vectorized global-memory access for the memory-bound kernels (quantize, dequantize, swizzle).
// A 16-byte access per thread is what saturates HBM on Hopper; the helpers below are the only place
// that spells the PTX, so the cache hints are chosen once: streamed inputs are read through the
// non-coherent path without L1 allocation (each byte is read once), outputs use plain stores so a
// consumer kernel that runs next can still hit them in L2.
#pragma once

#include <cstdint>

namespace mxq {
namespace dev {

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// 16 bytes that are read once. p must be 16-byte aligned and not written by this kernel.
__device__ __forceinline__ uint4 load16_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 16 bytes through the ordinary cached path (data a block reads more than once, e.g. scales).
__device__ __forceinline__ uint4 load16(const void* p) { return *reinterpret_cast<const uint4*>(p); }

__device__ __forceinline__ void store16(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// Asynchronous 16-byte global -> shared copy (cp.async, sm_80+; no sm_90a feature): the first
// `src_bytes` (0..16) bytes come from `src`, the rest of the 16 are zero-filled. Both addresses must be
// 16-byte aligned; with src_bytes == 0 nothing is read. Completion is per thread, in commit groups.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* src, uint32_t src_bytes) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}
// The same for a whole 16-byte chunk (no zero fill): the plain form, no source-size operand.
__device__ __forceinline__ void cp_async16_full(void* smem_dst, const void* src) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
// The same with the L2::256B prefetch hint, for a thread group that reads whole aligned 256-byte
// segments: the L2 fetches the segment at the first chunk's miss.
__device__ __forceinline__ void cp_async16_full_l2_256(void* smem_dst, const void* src) {
  const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's most recent commit groups are still pending.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// One read-only byte through the non-coherent cache (scales: many threads read the same bytes).
__device__ __forceinline__ uint8_t load_u8_ro(const uint8_t* p) { return __ldg(p); }

// Byte j (0..15) of a 16-byte vector.
__device__ __forceinline__ uint32_t byte_of(const uint4& v, int j) {
  const uint32_t w = j < 4 ? v.x : j < 8 ? v.y : j < 12 ? v.z : v.w;
  return (w >> ((j & 3) * 8)) & 0xFFu;
}

// Two consecutive bytes (2i, 2i+1) of a 16-byte vector as a 16-bit pair, low byte first.
__device__ __forceinline__ uint16_t pair_of(const uint4& v, int i) {
  const uint32_t w = i < 2 ? v.x : i < 4 ? v.y : i < 6 ? v.z : v.w;
  return static_cast<uint16_t>((w >> ((i & 1) * 16)) & 0xFFFFu);
}

}  // namespace dev
}  // namespace mxq
