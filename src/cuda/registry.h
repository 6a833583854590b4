// The CUDA dispatcher's registry: every GPU implementation of an operation is one entry keyed by
// (operation, architecture range, data types, variant), with a supports() predicate that says why it
// cannot run a plan and a factory that builds the OpImpl. Finalize walks the entries of the
// operation in priority order and takes the first that supports the plan; the chosen entry's name
// and the reason (including why better-ranked entries were skipped) are what the API logs at INFO.
//
// Each src/cuda/op_<op>.cpp contributes a register_<op>_kernels(Registry&) function; registry()
// calls them all once. Adding a kernel never touches the backend or the API layer.
//
// Failure statuses of select(), most specific first:
//   NOT_SUPPORTED          the operation has no GPU implementation at all yet
//   NOT_SUPPORTED_ARCH     no entry covers the device's compute capability
//   NOT_SUPPORTED_DTYPE    entries exist for the device but none for the plan's data types
//   NOT_SUPPORTED_COMBINATION  every matching entry's supports() declined (reasons listed)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/desc.h"
#include "cuda/runtime.h"

namespace mxq {
namespace cuda {

enum class Op { Quantize, Dequantize, Gemm, Attention };
const char* op_name(Op op);

// Inclusive range of compute capabilities (major*10+minor). Kernels built from generic code (the
// compute_90 PTX is embedded) use {90, kAnyNewer}; kernels using sm_90a-only features
// (wgmma, setmaxnreg) use {90, 90}.
struct ArchRange {
  int min_cc = 90;
  int max_cc = 90;
  bool contains(int cc) const { return cc >= min_cc && cc <= max_cc; }
};
constexpr int kAnyNewer = 1000;

// The data types an entry is keyed by: input and output element types of the operation
// (quantize: X -> FP8; dequantize: FP8 -> X; GEMM: A -> D; attention: QKV -> O).
struct DtypeKey {
  mxqDataType_t in;
  mxqDataType_t out;
};
DtypeKey dtype_key(const QuantizeDesc& d);
DtypeKey dtype_key(const DequantizeDesc& d);
DtypeKey dtype_key(const GemmDesc& d);
DtypeKey dtype_key(const AttentionDesc& d);

template <typename Desc>
struct KernelEntry {
  std::string name;                      // e.g. "generic.dequantize.transposed"
  ArchRange arch;
  std::vector<mxqDataType_t> in_dtypes;  // empty: any
  std::vector<mxqDataType_t> out_dtypes; // empty: any
  std::string variant;                   // what distinguishes it from its siblings, for the log
  int priority = 0;                      // higher is tried first; ties keep registration order
  // Empty string: this entry can run the plan on the device. Otherwise the reason it cannot.
  std::function<std::string(const Desc&, const DeviceInfo&)> supports;
  // Builds the implementation (looks up its kernels; may throw CUDA_KERNEL_LOAD_FAILED).
  std::function<std::unique_ptr<OpImpl>(const Desc&, Device&)> make;
};

// Outcome of choosing an entry, before anything touches a GPU.
template <typename Desc>
struct Choice {
  const KernelEntry<Desc>* entry = nullptr;
  std::string reason;  // why this entry (and why the ones ranked above it were skipped)
};

class Registry {
 public:
  void add(KernelEntry<QuantizeDesc> e);
  void add(KernelEntry<DequantizeDesc> e);
  void add(KernelEntry<GemmDesc> e);
  void add(KernelEntry<AttentionDesc> e);

  template <typename Desc>
  const std::vector<KernelEntry<Desc>>& entries() const;

  // Picks the entry for a plan on a device; throws mxq::Error with a NOT_SUPPORTED_* status (see
  // the file comment) when none fits. No GPU needed.
  template <typename Desc>
  Choice<Desc> choose(const Desc& d, const DeviceInfo& dev) const;

  // choose() + the entry's factory; the returned OpImpl reports the entry's name and the reason.
  template <typename Desc>
  std::unique_ptr<OpImpl> select(const Desc& d, Device& dev) const;

 private:
  std::vector<KernelEntry<QuantizeDesc>> quantize_;
  std::vector<KernelEntry<DequantizeDesc>> dequantize_;
  std::vector<KernelEntry<GemmDesc>> gemm_;
  std::vector<KernelEntry<AttentionDesc>> attention_;
};

template <>
const std::vector<KernelEntry<QuantizeDesc>>& Registry::entries<QuantizeDesc>() const;
template <>
const std::vector<KernelEntry<DequantizeDesc>>& Registry::entries<DequantizeDesc>() const;
template <>
const std::vector<KernelEntry<GemmDesc>>& Registry::entries<GemmDesc>() const;
template <>
const std::vector<KernelEntry<AttentionDesc>>& Registry::entries<AttentionDesc>() const;

// The process-wide registry, built on first use from every register_*_kernels below; immutable.
const Registry& registry();

// One per src/cuda/op_<op>.cpp.
void register_quantize_kernels(Registry& r);    // src/cuda/op_quantize.cpp
void register_dequantize_kernels(Registry& r);  // src/cuda/op_dequantize.cpp
void register_gemm_kernels(Registry& r);        // src/cuda/op_gemm.cpp
void register_attention_fwd_kernels(Registry& r);  // src/cuda/op_attention_fwd.cpp
void register_attention_bwd_kernels(Registry& r);  // src/cuda/op_attention_bwd.cpp

}  // namespace cuda
}  // namespace mxq
