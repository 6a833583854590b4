// Per-operation plan traits. PlanOps<Desc> supplies the attribute table, the finalize-time
// validation that resolves defaults, the execution-argument rules, and kernel selection. The C API
// (src/api/plans.cpp) is written once over these traits.
#pragma once

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "core/plan.h"

namespace mxq {

template <typename Desc>
struct PlanOps;  // specialised in plan_<op>.cpp

template <>
struct PlanOps<QuantizeDesc> {
  static constexpr const char* kName = "Quantize";
  static const std::vector<AttrDef<QuantizeDesc>>& attrs();
  static void finalize(QuantizeDesc& d, const PlanT<QuantizeDesc>& p);
  static std::vector<SlotRule> slots(const QuantizeDesc& d);
  static std::unique_ptr<OpImpl> select(Backend& b, const QuantizeDesc& d) { return b.plan_quantize(d); }
};
template <>
struct PlanOps<DequantizeDesc> {
  static constexpr const char* kName = "Dequantize";
  static const std::vector<AttrDef<DequantizeDesc>>& attrs();
  static void finalize(DequantizeDesc& d, const PlanT<DequantizeDesc>& p);
  static std::vector<SlotRule> slots(const DequantizeDesc& d);
  static std::unique_ptr<OpImpl> select(Backend& b, const DequantizeDesc& d) { return b.plan_dequantize(d); }
};
template <>
struct PlanOps<GemmDesc> {
  static constexpr const char* kName = "GroupedGemm";
  static const std::vector<AttrDef<GemmDesc>>& attrs();
  static void finalize(GemmDesc& d, const PlanT<GemmDesc>& p);
  static std::vector<SlotRule> slots(const GemmDesc& d);
  static std::unique_ptr<OpImpl> select(Backend& b, const GemmDesc& d) { return b.plan_gemm(d); }
};
template <>
struct PlanOps<AttentionDesc> {
  static constexpr const char* kName = "Attention";
  static const std::vector<AttrDef<AttentionDesc>>& attrs();
  static void finalize(AttentionDesc& d, const PlanT<AttentionDesc>& p);
  static std::vector<SlotRule> slots(const AttentionDesc& d);
  static std::unique_ptr<OpImpl> select(Backend& b, const AttentionDesc& d) { return b.plan_attention(d); }
};

// ---- value checks used by the attribute tables --------------------------------------------------
inline int32_t read_i32(const void* v) {
  int32_t x;
  std::memcpy(&x, v, 4);
  return x;
}
inline int64_t read_i64(const void* v) {
  int64_t x;
  std::memcpy(&x, v, 8);
  return x;
}
inline float read_f32(const void* v) {
  float x;
  std::memcpy(&x, v, 4);
  return x;
}
inline void write_i32(void* v, int32_t x) { std::memcpy(v, &x, 4); }
inline void write_i64(void* v, int64_t x) { std::memcpy(v, &x, 8); }
inline void write_f32(void* v, float x) { std::memcpy(v, &x, 4); }

inline int32_t check_enum(const char* name, int32_t x, std::initializer_list<int32_t> allowed) {
  for (int32_t a : allowed)
    if (a == x) return x;
  fail(MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "{}: value {} is not one of the allowed enum values", name, x);
}
// A data-type attribute: not a dtype at all -> INVALID_VALUE; a dtype not allowed here -> NOT_SUPPORTED_DTYPE.
inline mxqDataType_t check_dtype(const char* name, int32_t x, std::initializer_list<mxqDataType_t> allowed) {
  MXQ_REQUIRE(x >= MXQ_DTYPE_FP32 && x <= MXQ_DTYPE_INT64, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
              "{}: {} is not an mxqDataType_t", name, x);
  for (auto a : allowed)
    if (a == x) return a;
  fail(MXQ_STATUS_NOT_SUPPORTED_DTYPE, "{}: data type {} is not supported for this attribute", name,
       dtype_name(static_cast<mxqDataType_t>(x)));
}
inline bool check_bool(const char* name, int32_t x) {
  MXQ_REQUIRE(x == 0 || x == 1, MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "{}: boolean must be 0 or 1 (is {})", name, x);
  return x != 0;
}
inline int64_t check_dim(const char* name, int64_t x, int64_t min) {
  MXQ_REQUIRE(x >= min, MXQ_STATUS_BAD_PARAM_SHAPE, "{}: {} is below the minimum {}", name, x, min);
  return x;
}

}  // namespace mxq

// Attribute-table rows. Each expands to an AttrDef with capture-free lambdas.
#define MXQ_ATTR_ENUM(DESC, ID, FIELD, TYPE, ...)                                                  \
  AttrDef<DESC> {                                                                                  \
    ID, #ID, AttrType::I32,                                                                        \
        [](DESC& d, const void* v) { d.FIELD = static_cast<TYPE>(check_enum(#ID, read_i32(v), {__VA_ARGS__})); }, \
        [](const DESC& d, void* v) { write_i32(v, static_cast<int32_t>(d.FIELD)); }                \
  }
#define MXQ_ATTR_DTYPE(DESC, ID, FIELD, ...)                                                        \
  AttrDef<DESC> {                                                                                  \
    ID, #ID, AttrType::I32, [](DESC& d, const void* v) { d.FIELD = check_dtype(#ID, read_i32(v), {__VA_ARGS__}); }, \
        [](const DESC& d, void* v) { write_i32(v, static_cast<int32_t>(d.FIELD)); }                \
  }
#define MXQ_ATTR_BOOL(DESC, ID, FIELD)                                                              \
  AttrDef<DESC> {                                                                                  \
    ID, #ID, AttrType::I32, [](DESC& d, const void* v) { d.FIELD = check_bool(#ID, read_i32(v)); }, \
        [](const DESC& d, void* v) { write_i32(v, d.FIELD ? 1 : 0); }                              \
  }
#define MXQ_ATTR_DIM(DESC, ID, FIELD, MIN)                                                          \
  AttrDef<DESC> {                                                                                  \
    ID, #ID, AttrType::I64, [](DESC& d, const void* v) { d.FIELD = check_dim(#ID, read_i64(v), MIN); }, \
        [](const DESC& d, void* v) { write_i64(v, d.FIELD); }                                      \
  }
