// Only built when the CUDA headers exist: mxqStream_t is the very type CUDA uses for streams in the
// runtime (cudaStream_t) and the driver (CUstream), so callers pass theirs without a cast and mxq
// never needs CUDA headers in its public interface.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <type_traits>

#include <mxq/mxq.h>

static_assert(std::is_same<mxqStream_t, cudaStream_t>::value, "mxqStream_t != cudaStream_t");
static_assert(std::is_same<mxqStream_t, CUstream>::value, "mxqStream_t != CUstream");

int mxq_abi_stream_cuda_probe();
int mxq_abi_stream_cuda_probe() { return 0; }
