// Parameters of the standalone scale (un)swizzle kernels (kernels/common/swizzle.cu), shared by the
// host launcher (src/cuda/op_swizzle.cpp) and the device.
#pragma once

#include <cstdint>

namespace mxq {

struct SwizzleParams {
  const uint8_t* src;
  uint8_t* dst;
  int64_t batch, rows, scale_cols;
  int64_t linear_ld;        // bytes between LINEAR rows (>= scale_cols); batches are rows*linear_ld apart
  int64_t rpad, cpad;       // padded extents of one swizzled batch entry
  int64_t lines;            // 16-byte lines of the whole swizzled tensor: batch * rpad * cpad / 16
  int32_t swizzled_aligned; // the swizzled pointer is 16-byte aligned
};

constexpr int kSwizzleThreads = 256;

}  // namespace mxq
