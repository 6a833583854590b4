// The C entry points of the four plan families, written once as templates over PlanOps<Desc> and
// stamped out per family. Order of checks on Execute: pointers, handle match, finalized, arguments
// (slots, NULLs, alignment), workspace — all before any work is enqueued.
#include <algorithm>
#include <new>

#include "api/guard.h"
#include "core/plan_ops.h"
#include "core/sizes.h"

struct mxqQuantizePlan : mxq::PlanT<mxq::QuantizeDesc> {};
struct mxqDequantizePlan : mxq::PlanT<mxq::DequantizeDesc> {};
struct mxqGroupedGemmPlan : mxq::PlanT<mxq::GemmDesc> {};
struct mxqAttentionPlan : mxq::PlanT<mxq::AttentionDesc> {};

namespace mxq {
namespace {

template <typename Desc>
const AttrDef<Desc>& find_attr(int id) {
  for (const auto& a : PlanOps<Desc>::attrs())
    if (a.id == id) return a;
  fail(MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE, "attribute {} is not an attribute of a {} plan", id, PlanOps<Desc>::kName);
}

template <typename Plan>
void plan_create(mxqHandle_t handle, Plan** out) {
  MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle is NULL");
  MXQ_REQUIRE(out, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan out-pointer is NULL");
  Plan* p = new Plan();
  p->handle = handle;
  handle->live_plans.fetch_add(1);
  *out = p;
}

template <typename Plan>
void plan_set(Plan* plan, int attr, const void* buf, size_t size) {
  using Desc = decltype(plan->desc);
  MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
  MXQ_REQUIRE(!plan->finalized, MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED,
              "{} plan is finalized; attributes cannot change (create a new plan)", PlanOps<Desc>::kName);
  const auto& a = find_attr<Desc>(attr);
  MXQ_REQUIRE(buf, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "{}: buf is NULL", a.name);
  MXQ_REQUIRE(size == attr_size(a.type), MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE, "{}: sizeInBytes is {}, expected {}",
              a.name, size, attr_size(a.type));
  a.set(plan->desc, buf);  // validates; leaves desc unchanged on failure
  if (!plan->was_set(attr)) plan->set_attrs.push_back(attr);
  MXQ_LOG_TRC("{} set", a.name);
}

template <typename Plan>
void plan_get(const Plan* plan, int attr, void* buf, size_t size, size_t* written) {
  using Desc = decltype(plan->desc);
  MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
  const auto& a = find_attr<Desc>(attr);
  const size_t need = attr_size(a.type);
  if (!buf) {
    MXQ_REQUIRE(written, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "{}: buf and sizeWritten are both NULL", a.name);
    *written = need;
    return;
  }
  MXQ_REQUIRE(size == need, MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE, "{}: sizeInBytes is {}, expected {}", a.name, size,
              need);
  a.get(plan->desc, buf);
  if (written) *written = need;
}

template <typename Plan>
void plan_finalize(Plan* plan) {
  using Desc = decltype(plan->desc);
  MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
  MXQ_REQUIRE(!plan->finalized, MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED, "{} plan is already finalized",
              PlanOps<Desc>::kName);
  Desc d = plan->desc;  // validate a copy: a failed finalize leaves the plan editable and unchanged
  PlanOps<Desc>::finalize(d, *plan);
  std::unique_ptr<OpImpl> impl = PlanOps<Desc>::select(*plan->handle->backend, d);
  std::vector<SlotRule> slots = PlanOps<Desc>::slots(d);
  MXQ_LOG_INF("{} plan finalized on {}: kernel '{}' ({}); workspace {} bytes", PlanOps<Desc>::kName,
              plan->handle->backend->describe(), impl->name(), impl->reason(), impl->workspace_bytes());
  plan->desc = d;
  plan->slots = std::move(slots);
  plan->impl = std::move(impl);
  plan->finalized = true;
}

template <typename Plan>
void plan_workspace(const Plan* plan, size_t* bytes) {
  MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
  MXQ_REQUIRE(bytes, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "bytes is NULL");
  MXQ_REQUIRE(plan->finalized, MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, "plan is not finalized");
  *bytes = plan->impl->workspace_bytes();
}

template <typename Plan>
void plan_execute(mxqHandle_t handle, const Plan* plan, const mxqExecArg_t* args, int num_args, void* ws,
                  size_t ws_bytes, mxqStream_t stream) {
  MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle is NULL");
  MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
  MXQ_REQUIRE(plan->handle == handle, MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH,
              "the plan was created from handle {}, not {}", static_cast<void*>(plan->handle),
              static_cast<void*>(handle));
  MXQ_REQUIRE(plan->finalized, MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, "plan is not finalized");
  ExecArgs bound = bind_args(plan->slots, args, num_args, *plan->impl);
  check_workspace(*plan->impl, ws, ws_bytes);
  plan->impl->run(bound, ws, ws_bytes, stream);
}

template <typename Plan>
void plan_destroy(Plan* plan) {
  if (!plan) return;
  plan->handle->live_plans.fetch_sub(1);
  delete plan;
}

}  // namespace
}  // namespace mxq

// Stamp out the C functions of one plan family.
#define MXQ_PLAN_API(OP, PLAN_T, ATTR_T)                                                                     \
  MXQ_API mxqStatus_t mxq##OP##PlanCreate(mxqHandle_t handle, PLAN_T* plan) {                               \
    return mxq::guarded(__func__, [&] { mxq::plan_create(handle, plan); });                                  \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##PlanSetAttribute(PLAN_T plan, ATTR_T attr, const void* buf, size_t size) {   \
    return mxq::guarded(__func__, [&] { mxq::plan_set(plan, static_cast<int>(attr), buf, size); });          \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##PlanGetAttribute(PLAN_T plan, ATTR_T attr, void* buf, size_t size,           \
                                                size_t* written) {                                          \
    return mxq::guarded(__func__, [&] { mxq::plan_get(plan, static_cast<int>(attr), buf, size, written); }); \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##PlanFinalize(PLAN_T plan) {                                                  \
    return mxq::guarded(__func__, [&] { mxq::plan_finalize(plan); });                                        \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##PlanGetWorkspaceSize(PLAN_T plan, size_t* bytes) {                          \
    return mxq::guarded(__func__, [&] { mxq::plan_workspace(plan, bytes); });                                \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##Execute(mxqHandle_t handle, PLAN_T plan, const mxqExecArg_t* args,           \
                                       int numArgs, void* workspace, size_t workspaceBytes,                 \
                                       mxqStream_t stream) {                                                \
    return mxq::guarded(__func__, [&] {                                                                      \
      mxq::plan_execute(handle, plan, args, numArgs, workspace, workspaceBytes, stream);                     \
    });                                                                                                     \
  }                                                                                                         \
  MXQ_API mxqStatus_t mxq##OP##PlanDestroy(PLAN_T plan) {                                                   \
    return mxq::guarded(__func__, [&] { mxq::plan_destroy(plan); });                                         \
  }

extern "C" {

MXQ_PLAN_API(Quantize, mxqQuantizePlan_t, mxqQuantizeAttribute_t)
MXQ_PLAN_API(Dequantize, mxqDequantizePlan_t, mxqDequantizeAttribute_t)
MXQ_PLAN_API(GroupedGemm, mxqGroupedGemmPlan_t, mxqGroupedGemmAttribute_t)
MXQ_PLAN_API(Attention, mxqAttentionPlan_t, mxqAttentionAttribute_t)

MXQ_API mxqStatus_t mxqQuantizePlanGetOutputSize(mxqQuantizePlan_t plan, mxqArgSlot_t slot, size_t* bytes) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(plan, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "plan is NULL");
    MXQ_REQUIRE(bytes, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "bytes is NULL");
    MXQ_REQUIRE(plan->finalized, MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, "plan is not finalized");
    *bytes = mxq::quantize_output_bytes(plan->desc, slot);
  });
}

}  // extern "C"
