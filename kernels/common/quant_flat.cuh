// The flat rowwise kernel of the MXFP8 quantizer (instantiated by kernels/generic/quantize_flat_<in>.cu):
// small and medium ungrouped rowwise plans with 16-bit inputs, no fusion, contiguous rows and K a
// multiple of 128 (src/cuda/op_quantize.cpp, uses_flat).
//
// Why it exists. The persistent ring (common/quant_ring.cuh) wins on large tensors, where its blocks
// loop over many 128x128 tiles, but each of its ~400 blocks first fills 64 KB of shared memory and
// the launch ends with its last tiles' round trips: a fixed cost of a few microseconds that a tensor
// of a few MB cannot hide. Here a row-contiguous tensor is one flat array of 16-byte chunks (8
// elements), and the kernel is shaped like a streaming copy: block b, thread t loads chunks
// b * 256 * CPT + t + 256 i (i < CPT; a warp reads 512 contiguous bytes per load), all CPT loads in
// flight at once, one block per 256 * CPT chunks, no shared memory and no loop, so the hardware's
// block scheduler balances the end of the launch. Measured on an H100 against the ring
// (docs/PERFORMANCE.md, "Thirteenth round"): 128x7168 -31%, 512x4096 -24%, 2048x4096 -12%,
// 4096x4096 -3% time; behind from about 56 MB of input on, hence the launcher's size bound.
//
// Per chunk: the 4 lanes of a 32-block reduce its amax by two shuffles and compute its scale (the
// same branch-free math as the ring, quant_math.cuh), each lane converts its 8 elements and stores 8
// FP8 bytes; a half-warp covers 128 elements of one row (K % 128 == 0), whose 4 scale bytes are
// contiguous in both layouts and leave as one 4-byte store from lane 0 of the half-warp. With the
// swizzled layout, blocks past the data blocks zero the padding rows (rows .. round_up(rows, 128)).
#pragma once

#include <cstdint>

#include "common/quant_kernels.cuh"

namespace mxq {
namespace dev {
namespace quant {


// Row and 128-column group of 128-element group g (g < 2^24, kg = cols / 128): a float division
// corrected by one step either way (the rounded quotient is off by at most one below 2^24).
__device__ __forceinline__ void flat_row_group(uint32_t g, uint32_t kg, float inv_kg, uint32_t& row, uint32_t& cg) {
  uint32_t q = __float2uint_rz(__fmul_rn(static_cast<float>(g), inv_kg));
  int32_t r = static_cast<int32_t>(g - q * kg);
  if (r < 0) {
    --q;
    r += static_cast<int32_t>(kg);
  } else if (r >= static_cast<int32_t>(kg)) {
    ++q;
    r -= static_cast<int32_t>(kg);
  }
  row = q;
  cg = static_cast<uint32_t>(r);
}

// Byte offset of the 4 scales of (row, column group cg) in the rowwise scale tensor.
__device__ __forceinline__ uint32_t flat_scale_offset(uint32_t row, uint32_t cg, uint32_t kg, bool swz,
                                                      uint32_t linear_ld) {
  if (swz) return ((row >> 7) * kg + cg) * 512u + (row & 31u) * 16u + ((row >> 5) & 3u) * 4u;
  return row * linear_ld + cg * 4u;
}

// Launcher contract (op_quantize.cpp): batch 1, ungrouped, in_ld == cols, cols % 128 == 0, x 16-byte,
// row_data 8-byte and row_scales 4-byte aligned, rows * cols / 8 < 2^24 chunks, scale tensor below
// 2^32 bytes; grid = data blocks + (swizzled) padding blocks.
template <In I, Fp8 F, bool kProp, int kCpt>
__device__ __forceinline__ void quantize_flat(const QuantizeParams& p) {
  static_assert(sizeof(typename InTraits<I>::T) == 2, "the flat kernel is for 16-bit inputs");
  constexpr uint32_t kPerBlock = kQuantThreads * kCpt;
  const uint32_t n = static_cast<uint32_t>(p.rows * p.cols / kChunk);  // chunks, a multiple of 16
  const uint32_t kg = static_cast<uint32_t>(p.cols / 128);
  const uint32_t rows = static_cast<uint32_t>(p.rows);
  const bool swz = (p.flags & kQuantSwizzled) != 0;
  const uint32_t data_blocks = (n + kPerBlock - 1) / kPerBlock;
  const uint32_t tid = threadIdx.x;

  if (blockIdx.x >= data_blocks) {
    // Padding rows of the last 128-row scale tile (swizzled only): one 4-byte word per (row, group).
    const uint32_t words = ((rows + 127u) / 128u * 128u - rows) * kg;
    const uint32_t w = (blockIdx.x - data_blocks) * kQuantThreads + tid;
    if (w < words) {
      const uint32_t row = rows + w / kg, cg = w % kg;
      *reinterpret_cast<uint32_t*>(p.row_scales + flat_scale_offset(row, cg, kg, true, 0)) = 0u;
    }
    return;
  }

  const uint32_t base = blockIdx.x * kPerBlock + tid;
  const uint4* in = static_cast<const uint4*>(p.x);
  uint4 v[kCpt];
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const uint32_t c = base + kQuantThreads * i;
    v[i] = c < n ? load16_stream(in + c) : make_uint4(0u, 0u, 0u, 0u);
  }
  const ExpRule er = exp_rule<F>(p.mode);
  const float inv_kg = __frcp_rn(static_cast<float>(kg));
  const uint32_t lane = tid & 31u;
  const uint32_t linear_ld = static_cast<uint32_t>(p.row_scale_ld);
  float amax_all = 0.0f;
  using Raw = RawChunk<I, false>;
#pragma unroll
  for (int i = 0; i < kCpt; ++i) {
    const uint32_t c = base + kQuantThreads * i;
    Raw rc;
    rc.g[0] = v[i].x;
    rc.g[1] = v[i].y;
    rc.g[2] = v[i].z;
    rc.g[3] = v[i].w;
    float val[kChunk];
    uint32_t bits[Raw::kWords];
    chunk_values<I, false>(rc, val, bits);
    float amax, pmax;
    chunk_max<kProp>(val, amax, pmax);
    amax_all = fmaxf(amax_all, amax);
    quad_max<kProp>(amax, pmax);
    const uint32_t e = block_exponent_bf<kProp>(amax, pmax, er);
    const float inv = scale_inverse_bf<kProp>(e);
    const uint32_t q0 = quantize4_bf<F>(val[0], val[1], val[2], val[3], inv);
    const uint32_t q1 = quantize4_bf<F>(val[4], val[5], val[6], val[7], inv);
    // The 4 scales of this half-warp's 128 elements, gathered in lane 0 of the half-warp.
    uint32_t s = e;
    s |= __shfl_down_sync(0xFFFFFFFFu, e, 4) << 8;
    s |= __shfl_down_sync(0xFFFFFFFFu, e, 8) << 16;
    s |= __shfl_down_sync(0xFFFFFFFFu, e, 12) << 24;
    if (c < n) {
      *reinterpret_cast<uint2*>(p.row_data + static_cast<size_t>(c) * kChunk) = make_uint2(q0, q1);
      if ((lane & 15u) == 0) {
        uint32_t row, cg;
        flat_row_group(c >> 4, kg, inv_kg, row, cg);
        *reinterpret_cast<uint32_t*>(p.row_scales + flat_scale_offset(row, cg, kg, swz, linear_ld)) = s;
      }
    }
  }
  if (p.amax) {
    // Warp-wide NaN-ignoring max, one atomic per warp (non-negative floats order like their bits).
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) amax_all = fmaxf(amax_all, __shfl_xor_sync(0xFFFFFFFFu, amax_all, d));
    if (lane == 0 && amax_all > 0.0f) atomicMax(reinterpret_cast<unsigned int*>(p.amax), __float_as_uint(amax_all));
  }
}

}  // namespace quant
}  // namespace dev
}  // namespace mxq

// One entry point per (input, FP8 format, policy, chunks per thread).
#define MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, F, F_NAME, PROP, PROP_NAME, CPT)                                  \
  extern "C" __global__ void __launch_bounds__(mxq::kQuantThreads, 8)                                        \
      mxq_quantize_flat##CPT##_##IN_NAME##_##F_NAME##PROP_NAME(const mxq::QuantizeParams p) {                \
    mxq::dev::quant::quantize_flat<mxq::dev::In::IN, mxq::dev::Fp8::F, PROP, CPT>(p);                        \
  }
#define MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, CPT)                 \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E4M3, e4m3, false, , CPT)        \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E4M3, e4m3, true, _prop, CPT)    \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E5M2, e5m2, false, , CPT)        \
  MXQ_QUANT_FLAT_ENTRY(IN, IN_NAME, E5M2, e5m2, true, _prop, CPT)
#define MXQ_QUANT_FLAT_ENTRIES_IN(IN, IN_NAME) \
  MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, 2)   \
  MXQ_QUANT_FLAT_ENTRIES_CPT(IN, IN_NAME, 4)
