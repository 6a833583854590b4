// Kernel selection (registry.h). Selection is deterministic and explained: the error for a plan
// nothing can run lists every candidate with its reason, and the chosen OpImpl carries the same
// explanation for the Finalize log line.
#include "cuda/registry.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "core/plan.h"

namespace mxq {
namespace cuda {

const char* op_name(Op op) {
  switch (op) {
    case Op::Quantize: return "quantize";
    case Op::Dequantize: return "dequantize";
    case Op::Gemm: return "grouped GEMM";
    case Op::Attention: return "attention";
  }
  return "unknown op";
}

DtypeKey dtype_key(const QuantizeDesc& d) { return {d.in_dtype, d.out_dtype}; }
DtypeKey dtype_key(const DequantizeDesc& d) { return {d.in_dtype, d.out_dtype}; }
DtypeKey dtype_key(const GemmDesc& d) { return {d.a_dtype, d.d_dtype}; }
DtypeKey dtype_key(const AttentionDesc& d) { return {d.qkv_dtype, MXQ_DTYPE_BF16}; }

namespace {

template <typename Desc>
struct OpOf;
template <>
struct OpOf<QuantizeDesc> {
  static constexpr Op value = Op::Quantize;
};
template <>
struct OpOf<DequantizeDesc> {
  static constexpr Op value = Op::Dequantize;
};
template <>
struct OpOf<GemmDesc> {
  static constexpr Op value = Op::Gemm;
};
template <>
struct OpOf<AttentionDesc> {
  static constexpr Op value = Op::Attention;
};

bool dtype_matches(const std::vector<mxqDataType_t>& allowed, mxqDataType_t t) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}

std::string arch_text(const ArchRange& a) {
  if (a.max_cc >= kAnyNewer) return fmt::format("sm_{}+", a.min_cc);
  if (a.min_cc == a.max_cc) return fmt::format("sm_{}", a.min_cc);
  return fmt::format("sm_{}..sm_{}", a.min_cc, a.max_cc);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// The OpImpl handed to the plan: the entry's implementation, named after the entry and carrying
// the selection reason.
class Chosen final : public OpImpl {
 public:
  Chosen(std::string name, std::string reason, std::unique_ptr<OpImpl> impl)
      : name_(std::move(name)), reason_(std::move(reason)), impl_(std::move(impl)) {}
  std::string name() const override { return name_; }
  std::string reason() const override {
    const std::string detail = impl_->reason();
    return detail.empty() ? reason_ : reason_ + "; " + detail;
  }
  size_t workspace_bytes() const override { return impl_->workspace_bytes(); }
  size_t required_alignment(mxqArgSlot_t slot) const override { return impl_->required_alignment(slot); }
  void run(const ExecArgs& args, void* workspace, size_t workspace_bytes, mxqStream_t stream) const override {
    impl_->run(args, workspace, workspace_bytes, stream);
  }

 private:
  std::string name_, reason_;
  std::unique_ptr<OpImpl> impl_;
};

template <typename Desc>
void insert_by_priority(std::vector<KernelEntry<Desc>>& list, KernelEntry<Desc> e) {
  MXQ_REQUIRE(e.make, MXQ_STATUS_INTERNAL_ERROR, "kernel entry '{}' has no factory", e.name);
  // After every entry of higher or equal priority: ties keep registration order.
  auto pos = std::find_if(list.begin(), list.end(), [&](const KernelEntry<Desc>& x) { return x.priority < e.priority; });
  list.insert(pos, std::move(e));
}

}  // namespace

void Registry::add(KernelEntry<QuantizeDesc> e) { insert_by_priority(quantize_, std::move(e)); }
void Registry::add(KernelEntry<DequantizeDesc> e) { insert_by_priority(dequantize_, std::move(e)); }
void Registry::add(KernelEntry<GemmDesc> e) { insert_by_priority(gemm_, std::move(e)); }
void Registry::add(KernelEntry<AttentionDesc> e) { insert_by_priority(attention_, std::move(e)); }

template <>
const std::vector<KernelEntry<QuantizeDesc>>& Registry::entries<QuantizeDesc>() const {
  return quantize_;
}
template <>
const std::vector<KernelEntry<DequantizeDesc>>& Registry::entries<DequantizeDesc>() const {
  return dequantize_;
}
template <>
const std::vector<KernelEntry<GemmDesc>>& Registry::entries<GemmDesc>() const {
  return gemm_;
}
template <>
const std::vector<KernelEntry<AttentionDesc>>& Registry::entries<AttentionDesc>() const {
  return attention_;
}

template <typename Desc>
Choice<Desc> Registry::choose(const Desc& d, const DeviceInfo& dev) const {
  const char* op = op_name(OpOf<Desc>::value);
  const auto& list = entries<Desc>();
  MXQ_REQUIRE(!list.empty(), MXQ_STATUS_NOT_SUPPORTED, "no GPU kernel exists yet for {}; use the CPU backend", op);

  std::vector<const KernelEntry<Desc>*> for_arch;
  std::vector<std::string> ranges;
  for (const auto& e : list) {
    if (e.arch.contains(dev.cc)) for_arch.push_back(&e);
    const std::string t = arch_text(e.arch);
    if (std::find(ranges.begin(), ranges.end(), t) == ranges.end()) ranges.push_back(t);
  }
  MXQ_REQUIRE(!for_arch.empty(), MXQ_STATUS_NOT_SUPPORTED_ARCH,
              "no {} kernel for sm_{} ({}); this build has {} kernels for {}", op, dev.cc, dev.name, op,
              join(ranges, ", "));

  const DtypeKey key = dtype_key(d);
  std::vector<const KernelEntry<Desc>*> candidates;
  for (const auto* e : for_arch)
    if (dtype_matches(e->in_dtypes, key.in) && dtype_matches(e->out_dtypes, key.out)) candidates.push_back(e);
  MXQ_REQUIRE(!candidates.empty(), MXQ_STATUS_NOT_SUPPORTED_DTYPE, "no {} kernel on sm_{} for {} -> {}", op, dev.cc,
              dtype_name(key.in), dtype_name(key.out));

  std::vector<std::string> skipped;
  for (const auto* e : candidates) {
    std::string why = e->supports ? e->supports(d, dev) : std::string();
    if (why.empty()) {
      Choice<Desc> c;
      c.entry = e;
      c.reason = fmt::format("{}; first of {} candidate(s) for sm_{} {} -> {} that supports the plan", e->variant,
                             candidates.size(), dev.cc, dtype_name(key.in), dtype_name(key.out));
      if (!skipped.empty()) c.reason += " (skipped " + join(skipped, "; ") + ")";
      return c;
    }
    skipped.push_back(e->name + ": " + why);
  }
  fail(MXQ_STATUS_NOT_SUPPORTED_COMBINATION, "no {} kernel on sm_{} supports this plan: {}", op, dev.cc,
       join(skipped, "; "));
}

template <typename Desc>
std::unique_ptr<OpImpl> Registry::select(const Desc& d, Device& dev) const {
  Choice<Desc> c = choose(d, dev.info());
  std::unique_ptr<OpImpl> impl = c.entry->make(d, dev);
  MXQ_REQUIRE(impl, MXQ_STATUS_INTERNAL_ERROR, "kernel entry '{}' returned no implementation", c.entry->name);
  return std::make_unique<Chosen>(c.entry->name, std::move(c.reason), std::move(impl));
}

template Choice<QuantizeDesc> Registry::choose(const QuantizeDesc&, const DeviceInfo&) const;
template Choice<DequantizeDesc> Registry::choose(const DequantizeDesc&, const DeviceInfo&) const;
template Choice<GemmDesc> Registry::choose(const GemmDesc&, const DeviceInfo&) const;
template Choice<AttentionDesc> Registry::choose(const AttentionDesc&, const DeviceInfo&) const;
template std::unique_ptr<OpImpl> Registry::select(const QuantizeDesc&, Device&) const;
template std::unique_ptr<OpImpl> Registry::select(const DequantizeDesc&, Device&) const;
template std::unique_ptr<OpImpl> Registry::select(const GemmDesc&, Device&) const;
template std::unique_ptr<OpImpl> Registry::select(const AttentionDesc&, Device&) const;

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_quantize_kernels(reg);
    register_dequantize_kernels(reg);
    register_gemm_kernels(reg);
    register_attention_fwd_kernels(reg);
    register_attention_bwd_kernels(reg);
    return reg;
  }();
  return r;
}

}  // namespace cuda
}  // namespace mxq
