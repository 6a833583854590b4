// Raw PTX for Hopper's asynchronous data movement and warp specialization (sm_90): shared-memory
// mbarriers (init, arrive, arrive with an expected transaction count, parity wait), TMA tiled
// loads (cp.async.bulk.tensor.2d, completing on an mbarrier), and setmaxnreg (sm_90a), which lets a
// producer warpgroup give registers to the math warpgroups. The one place these are spelled.
//
// mbarrier protocol used by the pipelined kernels: a "full" barrier per stage (count 1: the
// producer's arrive.expect_tx, completed by the TMA bytes) and an "empty" barrier per stage (count:
// the consumer threads, each arriving once it no longer reads the stage). Stage s of round r waits
// for parity r & 1; a producer's first wait on a fresh empty barrier uses parity 1, which a
// just-initialized barrier reports complete, so the first round needs no special case.
#pragma once

#include <cstdint>

namespace mxq {
namespace ptx {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes initialized barriers visible to the async proxy (TMA) and other threads; follow with a barrier.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// 2D TMA load of one box of the tensor map at tmap (a __grid_constant__ parameter's address) at
// coordinates (c0 innermost, c1) into shared memory at dst, completing `bytes` on bar.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tmap, int32_t c0, int32_t c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}

// Register reallocation between warpgroups (sm_90a): every warp of the warpgroup must execute it.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

// Named barrier over `threads` threads (a multiple of 32) with id 1..15 (0 is __syncthreads):
// sync waits for `threads` arrivals (its own warp's included); arrive only signals.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace ptx
}  // namespace mxq
