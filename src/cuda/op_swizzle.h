// Standalone scale (un)swizzle on the GPU (Backend::swizzle_scales): not a plan, so it has no
// registry entry; the backend calls this launcher directly.
#pragma once

#include <cstdint>

#include "cuda/runtime.h"

namespace mxq {
namespace cuda {

// Enqueues kernels/common/swizzle.cu on `stream`. Shapes were validated by the API layer.
void swizzle_scales(Device& dev, bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols,
                    int64_t linear_ld, const void* src, void* dst, mxqStream_t stream);

}  // namespace cuda
}  // namespace mxq
