// The dispatcher's contract. A handle owns one Backend. At Finalize a plan asks its backend for an
// OpImpl (the chosen kernel + its workspace need); the backend throws mxq::Error with a
// NOT_SUPPORTED_* status when it has nothing for the descriptor. Execute validates arguments
// (src/core/exec.cpp) and then calls OpImpl::run, which must not allocate device memory.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/desc.h"

namespace mxq {

class OpImpl {
 public:
  virtual ~OpImpl() = default;
  // Name of the kernel / routine and why it was chosen (logged at Finalize).
  virtual std::string name() const = 0;
  virtual std::string reason() const = 0;
  virtual size_t workspace_bytes() const { return 0; }
  // Required alignment in bytes of each argument pointer (checked before run()).
  virtual size_t required_alignment(mxqArgSlot_t /*slot*/) const { return 1; }
  // Enqueue (CUDA) or perform (CPU) the operation. Throws mxq::Error on failure.
  virtual void run(const ExecArgs& args, void* workspace, size_t workspace_bytes, mxqStream_t stream) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual mxqBackend_t kind() const = 0;
  virtual int device_ordinal() const { return -1; }
  virtual int compute_capability() const { return 0; }
  virtual std::string describe() const = 0;

  virtual std::unique_ptr<OpImpl> plan_quantize(const QuantizeDesc& d) = 0;
  virtual std::unique_ptr<OpImpl> plan_dequantize(const DequantizeDesc& d) = 0;
  virtual std::unique_ptr<OpImpl> plan_gemm(const GemmDesc& d) = 0;
  virtual std::unique_ptr<OpImpl> plan_attention(const AttentionDesc& d) = 0;
  // Standalone scale (un)swizzle.
  virtual void swizzle_scales(bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols,
                              int64_t linear_ld, const void* src, void* dst, mxqStream_t stream) = 0;
};

std::unique_ptr<Backend> make_cpu_backend();
// Throws mxq::Error (CUDA_DRIVER_NOT_FOUND, CUDA_NO_DEVICE, CUDA_ERROR) when unavailable.
std::unique_ptr<Backend> make_cuda_backend(int device_ordinal);

}  // namespace mxq
