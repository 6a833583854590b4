// The CUDA backend: a device (primary context, lazily loaded kernel images) plus the registry.
// It owns no policy of its own: plan_* asks the registry, which says which kernel runs and why,
// and reports GEMM and attention as not implemented on the GPU until their kernels land.
#include <memory>
#include <string>

#include "core/backend.h"
#include "core/error.h"
#include "core/logger.h"
#include "cuda/op_swizzle.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"

namespace mxq {
namespace cuda {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int ordinal) : dev_(ordinal) {
    if (dev_.cc() < 90) {
      MXQ_LOG_WRN("{} is sm_{}: mxq's GPU kernels need sm_90 or newer, so plans on this handle will fail with "
                  "MXQ_STATUS_NOT_SUPPORTED_ARCH",
                  dev_.name(), dev_.cc());
    }
  }

  mxqBackend_t kind() const override { return MXQ_BACKEND_CUDA; }
  int device_ordinal() const override { return dev_.ordinal(); }
  int compute_capability() const override { return dev_.cc(); }
  std::string describe() const override {
    const DeviceInfo& i = dev_.info();
    return fmt::format("CUDA device {} ({}, sm_{}, {} SMs, driver CUDA {}.{})", i.ordinal, i.name, i.cc, i.sm_count,
                       i.driver_version / 1000, (i.driver_version % 1000) / 10);
  }

  std::unique_ptr<OpImpl> plan_quantize(const QuantizeDesc& d) override { return registry().select(d, dev_); }
  std::unique_ptr<OpImpl> plan_dequantize(const DequantizeDesc& d) override { return registry().select(d, dev_); }
  std::unique_ptr<OpImpl> plan_gemm(const GemmDesc& d) override {
    MXQ_REQUIRE(!registry().entries<GemmDesc>().empty(), MXQ_STATUS_NOT_SUPPORTED,
                "no GPU kernel exists yet for grouped GEMM (planned: issue 4); the CPU backend (MXQ_BACKEND_CPU) "
                "implements it");
    return registry().select(d, dev_);
  }
  std::unique_ptr<OpImpl> plan_attention(const AttentionDesc& d) override {
    MXQ_REQUIRE(!registry().entries<AttentionDesc>().empty(), MXQ_STATUS_NOT_SUPPORTED,
                "no GPU kernel exists yet for attention (planned: issue 5); the CPU backend (MXQ_BACKEND_CPU) "
                "implements it");
    return registry().select(d, dev_);
  }
  void swizzle_scales(bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols, int64_t linear_ld,
                      const void* src, void* dst, mxqStream_t stream) override {
    cuda::swizzle_scales(dev_, to_swizzled, batch, rows, scale_cols, linear_ld, src, dst, stream);
  }

 private:
  Device dev_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(int device_ordinal) {
  return std::make_unique<cuda::CudaBackend>(device_ordinal);
}

}  // namespace mxq
