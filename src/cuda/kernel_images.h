// The fatbins embedded into libmxq: one per kernels/**/*.cu, generated at build time by
// kernels/cmake/embed_fatbins.cmake (build/kernels/mxq_kernel_images.cpp). Each holds SASS for the
// configured architectures and compute_90 PTX; src/cuda/runtime.cpp loads them with
// cuLibraryLoadData the first time a device needs a kernel.
#pragma once

#include <cstddef>

namespace mxq {
namespace cuda {

struct EmbeddedImage {
  const char* name;            // source stem, e.g. "generic/dequantize"
  const unsigned char* data;   // fatbin bytes, 64-byte aligned
  size_t size;
};

extern const EmbeddedImage kEmbeddedImages[];
extern const size_t kNumEmbeddedImages;

}  // namespace cuda
}  // namespace mxq
