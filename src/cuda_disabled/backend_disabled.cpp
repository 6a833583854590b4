// make_cuda_backend() of a build without GPU kernels (MXQ_ENABLE_CUDA_KERNELS=OFF, or no nvcc at
// configure time): src/cuda/ is left out entirely, so this build has no driver loader either, and
// every CUDA handle request is answered with NOT_SUPPORTED_BACKEND. The CPU backend is unaffected.
#include "core/backend.h"
#include "core/error.h"

namespace mxq {

std::unique_ptr<Backend> make_cuda_backend(int /*device_ordinal*/) {
  fail(MXQ_STATUS_NOT_SUPPORTED_BACKEND,
       "this build of mxq has no CUDA backend: it was configured without GPU kernels (MXQ_ENABLE_CUDA_KERNELS=OFF or "
       "no nvcc found); use MXQ_BACKEND_CPU or rebuild with the CUDA toolkit");
}

}  // namespace mxq
