// Handles and plans. A plan is a descriptor (desc.h) filled through a typed attribute table,
// validated and bound to an OpImpl by finalize(), immutable afterwards. The four plan families
// share PlanT and differ only in their Ops traits (attribute table, validation, argument rules);
// see src/core/plan_*.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/desc.h"

struct mxqContext {
  std::unique_ptr<mxq::Backend> backend;
  std::atomic<int> live_plans{0};
};

namespace mxq {

enum class AttrType { I32, I64, F32 };

inline size_t attr_size(AttrType t) { return t == AttrType::I64 ? 8 : 4; }

// One attribute: its C type, and setter/getter that convert between the C value and the desc.
// The setter validates the value's domain and throws mxq::Error (INVALID_VALUE or
// NOT_SUPPORTED_DTYPE) without modifying the desc on failure.
template <typename Desc>
struct AttrDef {
  int id;
  const char* name;
  AttrType type;
  void (*set)(Desc&, const void* value);
  void (*get)(const Desc&, void* value);
};

// An execution-argument rule: which slots a finalized plan reads/writes, which are optional, and
// the element alignment each pointer needs.
struct SlotRule {
  mxqArgSlot_t slot;
  bool required;
  size_t elem_align;  // bytes: pointer must be a multiple of this
  const char* what;   // for messages
};

template <typename Desc>
struct PlanT {
  mxqContext* handle = nullptr;
  Desc desc;
  std::vector<int> set_attrs;  // ids set explicitly
  bool finalized = false;
  std::unique_ptr<OpImpl> impl;
  std::vector<SlotRule> slots;  // resolved at finalize

  bool was_set(int id) const {
    for (int a : set_attrs)
      if (a == id) return true;
    return false;
  }
};

// Binds (slot, ptr) pairs against a plan's rules: unknown / duplicate / foreign slots, NULL
// pointers, reserved fields and alignment are errors. Returns the bound arguments.
ExecArgs bind_args(const std::vector<SlotRule>& rules, const mxqExecArg_t* args, int num_args,
                   const OpImpl& impl);
// Checks the workspace against the impl's needs.
void check_workspace(const OpImpl& impl, const void* workspace, size_t bytes);

// int64 multiply that throws BAD_PARAM_SHAPE on overflow.
int64_t checked_mul(int64_t a, int64_t b, const char* what);

size_t dtype_size(mxqDataType_t t);
const char* dtype_name(mxqDataType_t t);

}  // namespace mxq
