// MXFP8 dequantize: x = fp8(q) * 2^(E-127) in fp32, rounded once (RNE) to bf16 / fp16 / fp32.
// Pure bandwidth: 1 byte in, 2-4 bytes out per element, so everything is shaped around 16-byte
// accesses and keeping index math off the per-element path.
//
// Two kernels, both generic (no sm_90a feature; the embedded compute_90 PTX lets newer GPUs JIT
// them):
//   direct      data [L, R, K] -> x [L, R, K]. A thread owns 16 consecutive elements of one row:
//               one 16-byte load, 2-4 16-byte stores. Rowwise blocks need one scale per thread;
//               columnwise (not transposed) blocks need one scale per element, at a constant
//               stride in the scale tensor (16 bytes swizzled, the row stride LINEAR).
//   transposed  data [L, K, R] (the columnwise/K-major form) -> x [L, R, K]. A 128(K) x 64(R) tile
//               is staged in shared memory with coalesced 16-byte loads; each thread then reads
//               4 R x 8 K bytes as 32-bit words (row pitch 72 bytes: the two half-warps land on
//               disjoint banks), transposes them with byte_perm and writes 4 rows of 8 outputs.
// Both take a uniform fast path (vector loads/stores) when rows are 16-byte aligned and fall back to
// guarded scalar accesses for unaligned pointers, strides and ragged edges.
//
// Grouped (MoE) tensors read the group table built on the device by mxq_group_table; rows past the
// last (clamped) end offset belong to no group and are written as +0, as the CPU reference does.
// NaN results come out as the hardware's canonical NaNs (0x7FFF bf16/fp16, 0x7FFFFFFF fp32), which
// is also what the CPU reference stores, so the two backends agree bit for bit.
#include <cstdint>

#include "common/fp8.cuh"
#include "common/group_table.cuh"
#include "common/vec.cuh"
#include "core/layout.h"
#include "generic/dequantize.h"

namespace mxq {
namespace dev {
namespace {

__device__ __forceinline__ int64_t scale_offset(const DequantizeParams& p, int64_t srow, int64_t scol) {
  return p.swizzled ? layout::swizzled_offset(srow, scol, p.scale_cols_extent) : srow * p.scale_cols_extent + scol;
}

// Stores n (<= 16) consecutive dequantized values; vector stores when the caller proved alignment.
template <Out O>
__device__ __forceinline__ void store_run(typename OutTraits<O>::Storage* dst, const float* v, int n, bool vec) {
  if (vec) {
    if constexpr (O == Out::F32) {
#pragma unroll
      for (int i = 0; i < 16; i += 4) {
        if (i < n)
          store16(dst + i, make_uint4(__float_as_uint(v[i]), __float_as_uint(v[i + 1]), __float_as_uint(v[i + 2]),
                                      __float_as_uint(v[i + 3])));
      }
    } else {
#pragma unroll
      for (int i = 0; i < 16; i += 8) {
        if (i < n)
          store16(dst + i, make_uint4(pack2<O>(v[i], v[i + 1]), pack2<O>(v[i + 2], v[i + 3]),
                                      pack2<O>(v[i + 4], v[i + 5]), pack2<O>(v[i + 6], v[i + 7])));
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (i < n) store_one<O>(dst + i, v[i]);
  }
}

template <Fp8 F, Out O>
__device__ __forceinline__ void dequantize_direct(const DequantizeParams& p) {
  using S = typename OutTraits<O>::Storage;
  const int64_t k0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 16;
  if (k0 >= p.cols) return;  // no barriers below
  const int n = p.cols - k0 < 16 ? static_cast<int>(p.cols - k0) : 16;
  const bool full = n == 16;
  const int64_t row_tiles = layout::ceil_div(p.rows, blockDim.y);

  for (int64_t l = blockIdx.z; l < p.batch; l += gridDim.z) {
    const uint8_t* scales = p.scales + l * p.scale_batch_stride;
    for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
      const int64_t r = rt * blockDim.y + threadIdx.y;
      if (r >= p.rows) continue;
      // Position of row r in the scale tensor: its scale row (rowwise) or scale column (columnwise).
      int64_t srow = r, scol = r / layout::kBlock;
      if (p.group_ends) {
        const RowGroup grp = find_row_group(p.group_ends, p.num_groups, r);
        if (grp.g < 0) {  // past the last group: part of no group, written as +0 (as the CPU reference)
          float zero[16] = {};
          store_run<O>(static_cast<S*>(p.out) + (l * p.rows + r) * p.out_ld + k0, zero, n, full && p.vec_out);
          continue;
        }
        if (p.columnwise) scol = __ldg(p.group_base + grp.g) + (r - grp.start) / layout::kBlock;
        else if (p.swizzled) srow = __ldg(p.group_base + grp.g) + (r - grp.start);
      }
      const int64_t row = l * p.rows + r;
      const uint8_t* src = p.data + row * p.cols + k0;

      float v[16];
      if (full && p.vec_in) {
        const uint4 q = load16_stream(src);
#pragma unroll
        for (int i = 0; i < 8; ++i) fp8x2_to_f32x2<F>(pair_of(q, i), v[2 * i], v[2 * i + 1]);
      } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] = i < n ? fp8_to_f32<F>(src[i]) : 0.0f;
      }

      if (!p.columnwise) {
        const float s = ue8m0_to_f32(load_u8_ro(scales + scale_offset(p, srow, k0 / layout::kBlock)));
#pragma unroll
        for (int i = 0; i < 16; ++i) v[i] *= s;
      } else {
        // Scale rows k0..k0+15 share their 32-row group in the swizzled layout (k0 % 16 == 0), so
        // consecutive elements are 16 bytes apart there and one row stride apart in LINEAR.
        const uint8_t* sp = scales + scale_offset(p, k0, scol);
        const int64_t stride = p.swizzled ? 16 : p.scale_cols_extent;
#pragma unroll
        for (int i = 0; i < 16; ++i)
          if (i < n) v[i] *= ue8m0_to_f32(load_u8_ro(sp + i * stride));
      }
      S* dst = static_cast<S*>(p.out) + row * p.out_ld + k0;
      store_run<O>(dst, v, n, full && p.vec_out);
    }
  }
}

template <Fp8 F, Out O>
__device__ __forceinline__ void dequantize_transposed(const DequantizeParams& p) {
  using S = typename OutTraits<O>::Storage;
  constexpr int kPitch = kDequantTileR + 8;  // 72 bytes = 18 words: half-warps 16 banks apart
  __shared__ __align__(16) uint8_t tile[kDequantTileK * kPitch];
  // Scale column of each tile row r; kOutside: r >= rows (not written), kNoGroup: past the last
  // group (written as +0).
  constexpr int64_t kOutside = -1, kNoGroup = -2;
  __shared__ int64_t tile_scol[kDequantTileR];

  const int tid = threadIdx.x;
  const int64_t r_t = static_cast<int64_t>(blockIdx.x) * kDequantTileR;
  const int64_t k_tiles = layout::ceil_div(p.cols, kDequantTileK);
  // Writer role: 4 consecutive r (a 32-bit word of the tile) by 8 consecutive k.
  const int lane = tid & 31, warp = tid >> 5;
  const int rq = (lane & 15) * 4;
  const int kk0 = warp * 16 + (lane >> 4) * 8;

  if (tid < kDequantTileR) {
    const int64_t r = r_t + tid;
    int64_t scol = kOutside;
    if (r < p.rows) {
      scol = r / layout::kBlock;
      if (p.group_ends) {
        const RowGroup grp = find_row_group(p.group_ends, p.num_groups, r);
        scol = grp.g < 0 ? kNoGroup : __ldg(p.group_base + grp.g) + (r - grp.start) / layout::kBlock;
      }
    }
    tile_scol[tid] = scol;
  }

  for (int64_t l = blockIdx.z; l < p.batch; l += gridDim.z) {
    const uint8_t* data = p.data + l * p.cols * p.rows;
    const uint8_t* scales = p.scales + l * p.scale_batch_stride;
    S* out = static_cast<S*>(p.out) + l * p.rows * p.out_ld;
    for (int64_t kt = blockIdx.y; kt < k_tiles; kt += gridDim.y) {
      const int64_t k_t = kt * kDequantTileK;
      // ---- stage data[k_t : k_t+128, r_t : r_t+64] (zero outside the tensor) ----
#pragma unroll
      for (int it = 0; it < 2; ++it) {
        const int idx = tid + it * kDequantThreads;
        const int kk = idx >> 2, rr = (idx & 3) * 16;
        const int64_t k = k_t + kk, r = r_t + rr;
        uint8_t* dst = tile + kk * kPitch + rr;
        if (k < p.cols && r + 16 <= p.rows && p.vec_in) {
          const uint4 q = load16_stream(data + k * p.rows + r);
          reinterpret_cast<uint2*>(dst)[0] = make_uint2(q.x, q.y);
          reinterpret_cast<uint2*>(dst)[1] = make_uint2(q.z, q.w);
        } else {
#pragma unroll
          for (int j = 0; j < 16; ++j) dst[j] = (k < p.cols && r + j < p.rows) ? data[k * p.rows + r + j] : 0;
        }
      }
      __syncthreads();

      // ---- write x[r_t+rq .. +4, k_t+kk0 .. +8] ----
      const int64_t k0 = k_t + kk0;
      if (k0 < p.cols) {
        const int nk = p.cols - k0 < 8 ? static_cast<int>(p.cols - k0) : 8;
        uint32_t w[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) w[j] = *reinterpret_cast<const uint32_t*>(tile + (kk0 + j) * kPitch + rq);
        const int64_t stride = p.swizzled ? 16 : p.scale_cols_extent;  // k0 % 8 == 0: see direct
        float sc[8];
        int64_t loaded_scol = -1;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t scol = tile_scol[rq + i];
          S* dst = out + (r_t + rq + i) * p.out_ld + k0;
          if (scol == kOutside) continue;
          if (scol == kNoGroup) {
            float zero[16] = {};
            store_run<O>(dst, zero, nk, nk == 8 && p.vec_out);
            continue;
          }
          if (scol != loaded_scol) {
            const uint8_t* sp = scales + scale_offset(p, k0, scol);
#pragma unroll
            for (int j = 0; j < 8; ++j) sc[j] = j < nk ? ue8m0_to_f32(load_u8_ro(sp + j * stride)) : 0.0f;
            loaded_scol = scol;
          }
          float v[16];
#pragma unroll
          for (int j = 0; j < 8; j += 2) {
            const uint32_t sel = static_cast<uint32_t>(i) | (static_cast<uint32_t>(4 + i) << 4);
            const uint16_t pair = static_cast<uint16_t>(__byte_perm(w[j], w[j + 1], sel));
            fp8x2_to_f32x2<F>(pair, v[j], v[j + 1]);
            v[j] *= sc[j];
            v[j + 1] *= sc[j + 1];
          }
          store_run<O>(dst, v, nk, nk == 8 && p.vec_out);
        }
      }
      __syncthreads();
    }
  }
}

}  // namespace
}  // namespace dev
}  // namespace mxq

// extern "C" entry points, looked up by name from the embedded image (src/cuda/op_dequantize.cpp).
#define MXQ_DEQUANT_KERNELS(IN, OUT, F, O)                                                             \
  extern "C" __global__ void __launch_bounds__(mxq::kDequantThreads)                                  \
      mxq_dequantize_direct_##IN##_##OUT(const mxq::DequantizeParams p) {                             \
    mxq::dev::dequantize_direct<mxq::dev::Fp8::F, mxq::dev::Out::O>(p);                               \
  }                                                                                                    \
  extern "C" __global__ void __launch_bounds__(mxq::kDequantThreads)                                  \
      mxq_dequantize_transposed_##IN##_##OUT(const mxq::DequantizeParams p) {                         \
    mxq::dev::dequantize_transposed<mxq::dev::Fp8::F, mxq::dev::Out::O>(p);                           \
  }

MXQ_DEQUANT_KERNELS(e4m3, bf16, E4M3, BF16)
MXQ_DEQUANT_KERNELS(e4m3, f16, E4M3, F16)
MXQ_DEQUANT_KERNELS(e4m3, f32, E4M3, F32)
MXQ_DEQUANT_KERNELS(e5m2, bf16, E5M2, BF16)
MXQ_DEQUANT_KERNELS(e5m2, f16, E5M2, F16)
MXQ_DEQUANT_KERNELS(e5m2, f32, E5M2, F32)
