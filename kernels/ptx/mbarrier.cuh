// Raw PTX for shared-memory mbarriers (sm_90) and warpgroup register reallocation (setmaxnreg,
// sm_90a): what a producer / consumer pipeline inside one CTA is built from. Phases follow the
// usual convention: a barrier starts in phase 0; waiting for parity 1 on a fresh barrier returns
// at once (the "previous" phase counts as complete), so a producer waits on its empty barriers
// with parity (round & 1) ^ 1 and a consumer on its full barriers with parity (round & 1).
#pragma once

#include <cstdint>

#include "ptx/async_copy.cuh"  // smem_addr

namespace mxq {
namespace ptx {

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes initialized barriers visible to the async proxy (TMA) and the other threads; follow with a
// CTA barrier before any thread uses them.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One thread's set-up of a producer/consumer ring: `stages` full barriers expecting full_count
// arrivals per phase (1 for a TMA producer's arrive.expect_tx) and empty barriers expecting
// empty_count, then the init fence (a CTA barrier must still follow).
__device__ __forceinline__ void mbar_init_ring(uint64_t* full, uint64_t* empty, int stages, uint32_t full_count,
                                               uint32_t empty_count) {
#pragma unroll
  for (int s = 0; s < stages; ++s) {
    mbar_init(&full[s], full_count);
    mbar_init(&empty[s], empty_count);
  }
  mbar_fence_init();
}
// Arrive (release at CTA scope): this thread's earlier writes are visible to whoever waits for the phase.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// Arrive and add `bytes` to the phase's expected transaction count (a TMA load completes them).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
// Blocks until the phase with the given parity has completed (acquire at CTA scope).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P1;\nMXQ_MBAR_WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra MXQ_MBAR_DONE;\nbra MXQ_MBAR_WAIT;\nMXQ_MBAR_DONE:\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// mbar_wait with a suspend-time hint (ns): a thread whose phase is not complete is suspended until
// it completes (or the hint elapses) instead of retrying at once. For producer threads whose waits
// last about a tile: their retries would take issue slots from the math warps of the same SM
// sub-partition.
__device__ __forceinline__ void mbar_wait_suspend(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P1;\nMXQ_MBAR_WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], %1, %2;\n"
      "@P1 bra MXQ_MBAR_DONE;\nbra MXQ_MBAR_WAIT;\nMXQ_MBAR_DONE:\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity), "r"(10000000u)
      : "memory");
}

// The same on a barrier given by its 32-bit shared-memory address (fewer live registers).
__device__ __forceinline__ void mbar_arrive(uint32_t bar_addr) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar_addr) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar_addr, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar_addr), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar_addr, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P1;\nMXQ_MBAR_WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra MXQ_MBAR_DONE;\nbra MXQ_MBAR_WAIT;\nMXQ_MBAR_DONE:\n}\n" ::"r"(bar_addr),
      "r"(parity)
      : "memory");
}

// Warpgroup-wide register budget change; every thread of the warpgroup executes it.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace ptx
}  // namespace mxq
