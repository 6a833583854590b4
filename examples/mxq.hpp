// mxq.hpp: a small RAII layer over the C API, for the C++ examples (not a public API of mxq).
//
// It shows the shape a C++ caller usually gives the C API: handles and plans owned by objects
// (destroyed in the right order by scope), failures as exceptions carrying the status and the
// library's message, and one class template for the four plan families instead of four copies.
// Everything else (attribute ids, slots, the header's documentation) is the C API unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mxq/mxq.h>

namespace mxqx {

// A failed call: what() is "<call>: <status name>: <message>".
class Error : public std::runtime_error {
 public:
  Error(mxqStatus_t status, const char *call)
      : std::runtime_error(std::string(call) + ": " + mxqGetStatusName(status) + ": " + mxqGetLastErrorMessage()),
        status_(status) {}
  mxqStatus_t status() const noexcept { return status_; }

 private:
  mxqStatus_t status_;
};

inline void check(mxqStatus_t status, const char *call) {
  if (status != MXQ_STATUS_SUCCESS) throw Error(status, call);
}

class Handle {
 public:
  explicit Handle(mxqBackend_t backend = MXQ_BACKEND_CUDA, int device = -1) {
    check(mxqCreateWithBackend(&h_, backend, device), "mxqCreateWithBackend");
  }
  ~Handle() { mxqDestroy(h_); }
  Handle(Handle &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  Handle &operator=(Handle &&) = delete;
  mxqHandle_t get() const noexcept { return h_; }

 private:
  mxqHandle_t h_ = nullptr;
};

// The C entry points of each plan family.
#define MXQX_PLAN_OPS(Name, Op)                                                                   \
  struct Name {                                                                                  \
    using Raw = mxq##Op##Plan_t;                                                                 \
    using Attr = mxq##Op##Attribute_t;                                                           \
    static constexpr const char *name = #Op;                                                     \
    static mxqStatus_t create(mxqHandle_t h, Raw *p) { return mxq##Op##PlanCreate(h, p); }       \
    static mxqStatus_t set(Raw p, Attr a, const void *b, size_t n) {                             \
      return mxq##Op##PlanSetAttribute(p, a, b, n);                                              \
    }                                                                                            \
    static mxqStatus_t get(Raw p, Attr a, void *b, size_t n, size_t *w) {                        \
      return mxq##Op##PlanGetAttribute(p, a, b, n, w);                                           \
    }                                                                                            \
    static mxqStatus_t finalize(Raw p) { return mxq##Op##PlanFinalize(p); }                      \
    static mxqStatus_t workspace(Raw p, size_t *n) { return mxq##Op##PlanGetWorkspaceSize(p, n); } \
    static mxqStatus_t execute(mxqHandle_t h, Raw p, const mxqExecArg_t *a, int n, void *w,      \
                               size_t wb, mxqStream_t s) {                                       \
      return mxq##Op##Execute(h, p, a, n, w, wb, s);                                             \
    }                                                                                            \
    static mxqStatus_t destroy(Raw p) { return mxq##Op##PlanDestroy(p); }                        \
  }
MXQX_PLAN_OPS(QuantizeOps, Quantize);
MXQX_PLAN_OPS(DequantizeOps, Dequantize);
MXQX_PLAN_OPS(GroupedGemmOps, GroupedGemm);
MXQX_PLAN_OPS(AttentionOps, Attention);
#undef MXQX_PLAN_OPS

// 256-byte aligned host workspace (on a GPU, allocate device memory instead).
class Workspace {
 public:
  explicit Workspace(size_t bytes) : buf_(bytes ? bytes + 255 : 0), bytes_(bytes) {}
  void *data() noexcept {
    if (!bytes_) return nullptr;
    auto p = reinterpret_cast<std::uintptr_t>(buf_.data());
    return buf_.data() + ((256 - p % 256) % 256);
  }
  size_t size() const noexcept { return bytes_; }

 private:
  std::vector<unsigned char> buf_;
  size_t bytes_;
};

inline mxqExecArg_t arg(mxqArgSlot_t slot, const void *ptr) { return {slot, 0, const_cast<void *>(ptr)}; }

// One plan: set attributes (enums and bools travel as int32_t, as the header says), finalize, run.
template <class Ops>
class Plan {
 public:
  explicit Plan(const Handle &handle) : handle_(handle.get()) { check(Ops::create(handle_, &p_), "PlanCreate"); }
  ~Plan() { Ops::destroy(p_); }
  Plan(Plan &&o) noexcept : handle_(o.handle_), p_(std::exchange(o.p_, nullptr)) {}
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;
  Plan &operator=(Plan &&) = delete;

  template <class T>
  Plan &set(typename Ops::Attr attr, T value) {
    if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool>) {
      return set(attr, static_cast<int32_t>(value));
    } else {
      static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, float>,
                    "attribute values are int32_t, int64_t or float");
      check(Ops::set(p_, attr, &value, sizeof value), "PlanSetAttribute");
      return *this;
    }
  }

  template <class T>
  T get(typename Ops::Attr attr) const {
    T value{};
    size_t written = 0;
    check(Ops::get(p_, attr, &value, sizeof value, &written), "PlanGetAttribute");
    return value;
  }

  Plan &finalize() {
    check(Ops::finalize(p_), "PlanFinalize");
    return *this;
  }

  size_t workspace_size() const {
    size_t n = 0;
    check(Ops::workspace(p_, &n), "PlanGetWorkspaceSize");
    return n;
  }

  void execute(const std::vector<mxqExecArg_t> &args, void *workspace, size_t workspace_bytes,
               mxqStream_t stream = nullptr) const {
    check(Ops::execute(handle_, p_, args.data(), static_cast<int>(args.size()), workspace, workspace_bytes, stream),
          "Execute");
  }

  // Host execution (CPU handle) with a workspace allocated for the call.
  void run(const std::vector<mxqExecArg_t> &args) const {
    Workspace ws(workspace_size());
    execute(args, ws.data(), ws.size());
  }

  typename Ops::Raw get() const noexcept { return p_; }

 private:
  mxqHandle_t handle_;
  typename Ops::Raw p_ = nullptr;
};

using QuantizePlan = Plan<QuantizeOps>;
using DequantizePlan = Plan<DequantizeOps>;
using GroupedGemmPlan = Plan<GroupedGemmOps>;
using AttentionPlan = Plan<AttentionOps>;

inline size_t output_size(const QuantizePlan &plan, mxqArgSlot_t slot) {
  size_t n = 0;
  check(mxqQuantizePlanGetOutputSize(plan.get(), slot, &n), "mxqQuantizePlanGetOutputSize");
  return n;
}

// ---- host helpers for the examples (CPU handle): quantize into vectors and back -------------------

// The shape attributes a quantize plan and its inverse share.
struct Shape {
  int64_t batch, rows, cols;
  mxqQuantizeDirection_t direction = MXQ_QUANTIZE_ROWWISE;
  bool colwise_transposed = true;
  const std::vector<int32_t> *group_offsets = nullptr;  // rows grouped (MoE) when set
};

struct HostFp8 {
  std::vector<uint8_t> data, scales;
};
struct HostQuantized {
  HostFp8 row, col;  // empty when that direction was not asked for
};

// Quantize x [batch, rows, cols] (bf16 unless input_dtype says otherwise). Outputs start poisoned
// (0xA5), so a byte the library did not write shows up in any check.
inline HostQuantized quantize_host(const Handle &h, const void *x, const Shape &s,
                                   mxqDataType_t input_dtype = MXQ_DTYPE_BF16) {
  QuantizePlan plan(h);
  plan.set(MXQ_QUANTIZE_ATTR_INPUT_DTYPE, input_dtype).set(MXQ_QUANTIZE_ATTR_BATCH, s.batch);
  plan.set(MXQ_QUANTIZE_ATTR_ROWS, s.rows).set(MXQ_QUANTIZE_ATTR_COLS, s.cols);
  plan.set(MXQ_QUANTIZE_ATTR_DIRECTION, s.direction).set(MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, s.colwise_transposed);
  if (s.group_offsets) {
    plan.set(MXQ_QUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    plan.set(MXQ_QUANTIZE_ATTR_NUM_GROUPS, static_cast<int64_t>(s.group_offsets->size()));
  }
  plan.finalize();
  HostQuantized q;
  std::vector<mxqExecArg_t> args = {arg(MXQ_ARG_X, x)};
  auto out = [&](std::vector<uint8_t> &buf, mxqArgSlot_t slot) {
    if (size_t n = output_size(plan, slot)) {
      buf.assign(n, 0xA5);
      args.push_back(arg(slot, buf.data()));
    }
  };
  out(q.row.data, MXQ_ARG_ROWWISE_DATA);
  out(q.row.scales, MXQ_ARG_ROWWISE_SCALES);
  out(q.col.data, MXQ_ARG_COLWISE_DATA);
  out(q.col.scales, MXQ_ARG_COLWISE_SCALES);
  if (s.group_offsets) args.push_back(arg(MXQ_ARG_GROUP_OFFSETS, s.group_offsets->data()));
  plan.run(args);
  return q;
}

// Dequantize one direction of what quantize_host wrote back to fp32 [batch, rows, cols].
inline std::vector<float> dequantize_host(const Handle &h, const HostFp8 &q, const Shape &s, bool colwise) {
  DequantizePlan plan(h);
  plan.set(MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, MXQ_DTYPE_FP32).set(MXQ_DEQUANTIZE_ATTR_BATCH, s.batch);
  plan.set(MXQ_DEQUANTIZE_ATTR_ROWS, s.rows).set(MXQ_DEQUANTIZE_ATTR_COLS, s.cols);
  plan.set(MXQ_DEQUANTIZE_ATTR_DIRECTION, colwise ? MXQ_QUANTIZE_COLUMNWISE : MXQ_QUANTIZE_ROWWISE);
  plan.set(MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, s.colwise_transposed);
  if (s.group_offsets) {
    plan.set(MXQ_DEQUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    plan.set(MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, static_cast<int64_t>(s.group_offsets->size()));
  }
  plan.finalize();
  std::vector<float> x(static_cast<size_t>(s.batch * s.rows * s.cols), std::numeric_limits<float>::quiet_NaN());
  std::vector<mxqExecArg_t> args = {arg(colwise ? MXQ_ARG_COLWISE_DATA : MXQ_ARG_ROWWISE_DATA, q.data.data()),
                                    arg(colwise ? MXQ_ARG_COLWISE_SCALES : MXQ_ARG_ROWWISE_SCALES, q.scales.data()),
                                    arg(MXQ_ARG_X, x.data())};
  if (s.group_offsets) args.push_back(arg(MXQ_ARG_GROUP_OFFSETS, s.group_offsets->data()));
  plan.run(args);
  return x;
}

}  // namespace mxqx
