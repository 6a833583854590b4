// Exhaustive device check of the attention forward's P conversion (attn::p_e4m3_bf16x2, bit
// placement + one bf16x2 multiply) against the exact form (attn::e4m3_round_bf16x2: E4M3 -> f16 ->
// f32 -> bf16) over every float in [0, 512) (P * p_scale is in [0, 256] or NaN), and of the bf16x2
// multiply (sm90gemm::mul_bf16x2) on every bf16 input, subnormals included, against the fp32
// product rounded to bf16. Prints the NaN / Inf / negative cases side by side. Not part of the
// build; on the device machine, from the repository root with a configured build directory B:
//   nvcc -std=c++17 -arch=sm_90a -O3 --expt-relaxed-constexpr -I kernels -I src -I include -I $B/include \
//     -o /tmp/pcheck tools/device/attention_p_convert_check.cu && /tmp/pcheck
#include <cstdint>
#include <cstdio>

#include "sm90/attention_common.cuh"

using namespace mxq;

__device__ unsigned long long bad_p, bad_mul;

__global__ void check_p(uint32_t n) {
  for (uint32_t u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) {
    const float a = __uint_as_float(u), b = __uint_as_float((u * 2654435761u) % n);
    if (attn::e4m3_round_bf16x2(a, b) != attn::p_e4m3_bf16x2(a, b)) atomicAdd(&bad_p, 1ull);
  }
}

__global__ void check_mul() {
  for (uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < 65536; x += gridDim.x * blockDim.x) {
    for (uint32_t e : {239u, 247u, 127u}) {  // multipliers 2^112, 2^120, 1
      const uint32_t w = x | (((x * 7919u) & 0xFFFFu) << 16);
      const uint32_t r = sm90gemm::mul_bf16x2(w, (e << 7) * 0x00010001u);
      const float f0 = __uint_as_float(w << 16) * __uint_as_float(e << 23);
      const float f1 = __uint_as_float(w & 0xFFFF0000u) * __uint_as_float(e << 23);
      const uint32_t ref = dev::f32x2_to_bf16x2(f0, f1);
      const uint32_t keep = (f0 != f0 ? 0u : 0xFFFFu) | (f1 != f1 ? 0u : 0xFFFF0000u);  // NaN payloads aside
      if ((r & keep) != (ref & keep)) atomicAdd(&bad_mul, 1ull);
    }
  }
}

__global__ void show_specials() {
  const float v[] = {__uint_as_float(0x7FC00000u), 1.0f, 0.0f, 300.0f, __uint_as_float(0x7F800000u), -1.0f};
  for (float a : v)
    for (float b : v)
      printf("a=%08x b=%08x exact=%08x fast=%08x\n", __float_as_uint(a), __float_as_uint(b),
             attn::e4m3_round_bf16x2(a, b), attn::p_e4m3_bf16x2(a, b));
}

int main() {
  const uint32_t n = 0x44000000u;  // the bit patterns of [0, 512)
  check_p<<<132 * 16, 256>>>(n);
  check_mul<<<256, 256>>>();
  show_specials<<<1, 1>>>();
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("CUDA error\n");
    return 2;
  }
  unsigned long long hp = 0, hm = 0;
  if (cudaMemcpyFromSymbol(&hp, bad_p, sizeof hp) != cudaSuccess ||
      cudaMemcpyFromSymbol(&hm, bad_mul, sizeof hm) != cudaSuccess) {
    std::printf("CUDA error\n");
    return 2;
  }
  std::printf("P conversion: %llu mismatches over %u floats in [0, 512); bf16x2 multiply: %llu mismatches\n", hp, n,
              hm);
  return hp || hm ? 1 : 0;
}
