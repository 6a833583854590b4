// The CPU reference backend: every operation on host memory, synchronously. Each OpImpl simply
// forwards to the reference routine in src/cpu/; the stream is ignored.
#include <functional>
#include <string>

#include "core/backend.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/reference.h"

#include <cstdlib>

namespace mxq {

int cpu_threads() {
  static const int n = [] {
    const char* env = std::getenv("MXQ_CPU_THREADS");
    if (env && *env) {
      int v = std::atoi(env);
      if (v >= 1) return v;
    }
    unsigned hc = std::thread::hardware_concurrency();
    return static_cast<int>(hc == 0 ? 1 : (hc > 16 ? 16 : hc));
  }();
  return n;
}

namespace {

template <typename Desc>
class CpuOp final : public OpImpl {
 public:
  using Fn = void (*)(const Desc&, const ExecArgs&);
  CpuOp(std::string name, Desc d, Fn fn) : name_(std::move(name)), d_(d), fn_(fn) {}
  std::string name() const override { return name_; }
  std::string reason() const override { return "CPU reference backend (the oracle: exact numerics, fp64 accumulation)"; }
  void run(const ExecArgs& args, void*, size_t, mxqStream_t) const override { fn_(d_, args); }

 private:
  std::string name_;
  Desc d_;
  Fn fn_;
};

class CpuBackend final : public Backend {
 public:
  mxqBackend_t kind() const override { return MXQ_BACKEND_CPU; }
  std::string describe() const override { return "CPU reference backend"; }
  std::unique_ptr<OpImpl> plan_quantize(const QuantizeDesc& d) override {
    return std::make_unique<CpuOp<QuantizeDesc>>("cpu.quantize", d, &cpu::quantize);
  }
  std::unique_ptr<OpImpl> plan_dequantize(const DequantizeDesc& d) override {
    return std::make_unique<CpuOp<DequantizeDesc>>("cpu.dequantize", d, &cpu::dequantize);
  }
  std::unique_ptr<OpImpl> plan_gemm(const GemmDesc& d) override {
    return std::make_unique<CpuOp<GemmDesc>>("cpu.grouped_gemm", d, &cpu::grouped_gemm);
  }
  std::unique_ptr<OpImpl> plan_attention(const AttentionDesc& d) override {
    if (d.direction == MXQ_ATTN_BACKWARD)
      return std::make_unique<CpuOp<AttentionDesc>>("cpu.attention_backward", d, &cpu::attention_backward);
    return std::make_unique<CpuOp<AttentionDesc>>("cpu.attention_forward", d, &cpu::attention_forward);
  }
  void swizzle_scales(bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols, int64_t linear_ld,
                      const void* src, void* dst, mxqStream_t) override {
    cpu::swizzle_scales(to_swizzled, batch, rows, scale_cols, linear_ld, static_cast<const uint8_t*>(src),
                        static_cast<uint8_t*>(dst));
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace mxq
