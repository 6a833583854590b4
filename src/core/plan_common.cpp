// Shared plan machinery: execution-argument binding, workspace checks, dtype facts.
#include <string>

#include "core/error.h"
#include "core/plan.h"

namespace mxq {

size_t dtype_size(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_FP32: return 4;
    case MXQ_DTYPE_FP16: return 2;
    case MXQ_DTYPE_BF16: return 2;
    case MXQ_DTYPE_E4M3: return 1;
    case MXQ_DTYPE_E5M2: return 1;
    case MXQ_DTYPE_UE8M0: return 1;
    case MXQ_DTYPE_INT32: return 4;
    case MXQ_DTYPE_INT64: return 8;
  }
  return 0;
}

const char* dtype_name(mxqDataType_t t) {
  switch (t) {
    case MXQ_DTYPE_FP32: return "FP32";
    case MXQ_DTYPE_FP16: return "FP16";
    case MXQ_DTYPE_BF16: return "BF16";
    case MXQ_DTYPE_E4M3: return "E4M3";
    case MXQ_DTYPE_E5M2: return "E5M2";
    case MXQ_DTYPE_UE8M0: return "UE8M0";
    case MXQ_DTYPE_INT32: return "INT32";
    case MXQ_DTYPE_INT64: return "INT64";
  }
  return "unknown";
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  MXQ_REQUIRE(a >= 0 && b >= 0 && !__builtin_mul_overflow(a, b, &r), MXQ_STATUS_BAD_PARAM_SHAPE,
              "{} overflows int64 ({} x {})", what, a, b);
  return r;
}

ExecArgs bind_args(const std::vector<SlotRule>& rules, const mxqExecArg_t* args, int num_args,
                   const OpImpl& impl) {
  MXQ_REQUIRE(num_args >= 0, MXQ_STATUS_BAD_PARAM_ARGUMENT, "numArgs is negative ({})", num_args);
  MXQ_REQUIRE(num_args == 0 || args, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "args is NULL with numArgs = {}", num_args);
  ExecArgs bound;
  for (int i = 0; i < num_args; ++i) {
    const mxqExecArg_t& a = args[i];
    MXQ_REQUIRE(a.reserved == 0, MXQ_STATUS_BAD_PARAM_ARGUMENT, "args[{}].reserved must be 0 (is {})", i, a.reserved);
    const SlotRule* rule = nullptr;
    for (const auto& r : rules)
      if (r.slot == a.slot) rule = &r;
    MXQ_REQUIRE(rule, MXQ_STATUS_BAD_PARAM_ARGUMENT, "args[{}]: slot {} is not used by this plan", i, a.slot);
    MXQ_REQUIRE(bound.ptr[a.slot] == nullptr, MXQ_STATUS_BAD_PARAM_ARGUMENT, "args[{}]: slot {} ({}) given twice", i,
                a.slot, rule->what);
    MXQ_REQUIRE(a.ptr, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "args[{}]: pointer for slot {} ({}) is NULL", i, a.slot,
                rule->what);
    size_t align = rule->elem_align;
    size_t impl_align = impl.required_alignment(static_cast<mxqArgSlot_t>(a.slot));
    if (impl_align > align) align = impl_align;
    MXQ_REQUIRE(reinterpret_cast<uintptr_t>(a.ptr) % align == 0, MXQ_STATUS_BAD_PARAM_MISALIGNED,
                "args[{}]: pointer {} for slot {} ({}) must be {}-byte aligned", i, a.ptr, a.slot, rule->what, align);
    bound.ptr[a.slot] = a.ptr;
  }
  for (const auto& r : rules)
    MXQ_REQUIRE(!r.required || bound.ptr[r.slot], MXQ_STATUS_BAD_PARAM_ARGUMENT,
                "required argument slot {} ({}) is missing", static_cast<int>(r.slot), r.what);
  return bound;
}

void check_workspace(const OpImpl& impl, const void* workspace, size_t bytes) {
  size_t need = impl.workspace_bytes();
  if (need == 0) return;
  MXQ_REQUIRE(workspace, MXQ_STATUS_BAD_PARAM_WORKSPACE, "workspace is NULL but the plan needs {} bytes", need);
  MXQ_REQUIRE(bytes >= need, MXQ_STATUS_BAD_PARAM_WORKSPACE, "workspace of {} bytes is smaller than the {} bytes needed",
              bytes, need);
  MXQ_REQUIRE(reinterpret_cast<uintptr_t>(workspace) % 256 == 0, MXQ_STATUS_BAD_PARAM_WORKSPACE,
              "workspace {} must be 256-byte aligned", workspace);
}

}  // namespace mxq
