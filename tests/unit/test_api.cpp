// The C API's contract through the public header only: lifecycle, every error path with its
// documented status and a message, nothing written on failure, logging, concurrency.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mxq/mxq.h"

namespace {

struct Handle {
  mxqHandle_t h = nullptr;
  Handle() { REQUIRE(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 0) == MXQ_STATUS_SUCCESS); }
  ~Handle() { mxqDestroy(h); }
};

template <typename T>
mxqStatus_t set_q(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, T v) {
  return mxqQuantizePlanSetAttribute(p, a, &v, sizeof(v));
}
template <typename T>
mxqStatus_t set_g(mxqGroupedGemmPlan_t p, mxqGroupedGemmAttribute_t a, T v) {
  return mxqGroupedGemmPlanSetAttribute(p, a, &v, sizeof(v));
}
template <typename T>
mxqStatus_t set_a(mxqAttentionPlan_t p, mxqAttentionAttribute_t a, T v) {
  return mxqAttentionPlanSetAttribute(p, a, &v, sizeof(v));
}

// Expect a status and a non-empty message naming the function.
#define CHECK_STATUS(expr, status)                                          \
  do {                                                                      \
    mxqStatus_t s_ = (expr);                                                \
    INFO(#expr << " -> " << mxqGetStatusName(s_) << ": " << mxqGetLastErrorMessage()); \
    CHECK(s_ == (status));                                                  \
    if ((status) != MXQ_STATUS_SUCCESS) CHECK(std::strlen(mxqGetLastErrorMessage()) > 0); \
  } while (0)

uint16_t bf16_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // truncation is fine for test inputs
}

std::vector<uint16_t> random_bf16(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 3.f);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = bf16_of(dist(rng));
  return v;
}

mxqQuantizePlan_t make_quant_plan(mxqHandle_t h, int64_t rows, int64_t cols, int32_t dir = MXQ_QUANTIZE_ROWWISE) {
  mxqQuantizePlan_t p = nullptr;
  REQUIRE(mxqQuantizePlanCreate(h, &p) == MXQ_STATUS_SUCCESS);
  REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_ROWS, rows) == MXQ_STATUS_SUCCESS);
  REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_COLS, cols) == MXQ_STATUS_SUCCESS);
  REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_DIRECTION, dir) == MXQ_STATUS_SUCCESS);
  return p;
}

}  // namespace

TEST_CASE("version and build info", "[api]") {
  CHECK(mxqGetVersion() == MXQ_VERSION);
  CHECK(MXQ_VERSION == MXQ_VERSION_MAJOR * 10000 + MXQ_VERSION_MINOR * 100 + MXQ_VERSION_PATCH);
  std::string info = mxqGetBuildInfo();
  CHECK(info.find(MXQ_VERSION_STRING) != std::string::npos);
}

TEST_CASE("status names and strings", "[api]") {
  CHECK(std::string(mxqGetStatusName(MXQ_STATUS_SUCCESS)) == "MXQ_STATUS_SUCCESS");
  CHECK(std::string(mxqGetStatusName(MXQ_STATUS_BAD_PARAM_SHAPE)) == "MXQ_STATUS_BAD_PARAM_SHAPE");
  CHECK(std::string(mxqGetStatusName(MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED)) == "MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED");
  CHECK(std::string(mxqGetStatusName(static_cast<mxqStatus_t>(12345))) == "MXQ_STATUS_UNKNOWN");
  for (int s : {0, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 2000, 2001, 2002,
                2003, 2004, 3000, 3001, 4000, 4001, 4002, 4003}) {
    INFO(s);
    CHECK(std::string(mxqGetStatusName(static_cast<mxqStatus_t>(s))) != "MXQ_STATUS_UNKNOWN");
    CHECK(std::strlen(mxqGetStatusString(static_cast<mxqStatus_t>(s))) > 0);
  }
}

TEST_CASE("handle lifecycle and errors", "[api]") {
  CHECK_STATUS(mxqCreateWithBackend(nullptr, MXQ_BACKEND_CPU, 0), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  mxqHandle_t h = nullptr;
  CHECK_STATUS(mxqCreateWithBackend(&h, static_cast<mxqBackend_t>(7), 0), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  CHECK(h == nullptr);
  CHECK_STATUS(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 3), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  CHECK(h == nullptr);
  CHECK_STATUS(mxqDestroy(nullptr), MXQ_STATUS_SUCCESS);

  REQUIRE(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 0) == MXQ_STATUS_SUCCESS);
  mxqBackend_t b = MXQ_BACKEND_CUDA;
  CHECK_STATUS(mxqGetBackend(h, &b), MXQ_STATUS_SUCCESS);
  CHECK(b == MXQ_BACKEND_CPU);
  CHECK_STATUS(mxqGetBackend(nullptr, &b), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqGetBackend(h, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  int ord = 5, cc = 5;
  CHECK_STATUS(mxqGetDevice(h, &ord, &cc), MXQ_STATUS_SUCCESS);
  CHECK(ord == -1);
  CHECK(cc == 0);

  // A handle with a live plan cannot be destroyed.
  mxqQuantizePlan_t p = nullptr;
  REQUIRE(mxqQuantizePlanCreate(h, &p) == MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqDestroy(h), MXQ_STATUS_BAD_PARAM);
  CHECK_STATUS(mxqQuantizePlanDestroy(p), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqQuantizePlanDestroy(nullptr), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqDestroy(h), MXQ_STATUS_SUCCESS);
}

TEST_CASE("plan attribute errors", "[api]") {
  Handle H;
  mxqQuantizePlan_t p = nullptr;
  CHECK_STATUS(mxqQuantizePlanCreate(nullptr, &p), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizePlanCreate(H.h, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  REQUIRE(mxqQuantizePlanCreate(H.h, &p) == MXQ_STATUS_SUCCESS);

  int64_t rows = 64;
  int32_t small = 64;
  CHECK_STATUS(mxqQuantizePlanSetAttribute(nullptr, MXQ_QUANTIZE_ATTR_ROWS, &rows, 8), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizePlanSetAttribute(p, MXQ_QUANTIZE_ATTR_ROWS, nullptr, 8), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizePlanSetAttribute(p, MXQ_QUANTIZE_ATTR_ROWS, &small, 4), MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE);
  CHECK_STATUS(mxqQuantizePlanSetAttribute(p, static_cast<mxqQuantizeAttribute_t>(999), &rows, 8),
               MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_ROWS, int64_t(0)), MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_COLS, int64_t(-5)), MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_SCALE_MODE, int32_t(9)), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, int32_t(MXQ_DTYPE_E4M3)), MXQ_STATUS_NOT_SUPPORTED_DTYPE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, int32_t(42)), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE, int32_t(MXQ_DTYPE_BF16)), MXQ_STATUS_NOT_SUPPORTED_DTYPE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_BLOCK_2D, int32_t(2)), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);

  // Defaults are readable, with a size query.
  size_t sz = 0;
  CHECK_STATUS(mxqQuantizePlanGetAttribute(p, MXQ_QUANTIZE_ATTR_SCALE_MODE, nullptr, 0, &sz), MXQ_STATUS_SUCCESS);
  CHECK(sz == 4);
  int32_t mode = -1;
  CHECK_STATUS(mxqQuantizePlanGetAttribute(p, MXQ_QUANTIZE_ATTR_SCALE_MODE, &mode, 4, &sz), MXQ_STATUS_SUCCESS);
  CHECK(mode == MXQ_SCALE_MODE_RCEIL);
  int32_t layout = -1;
  CHECK_STATUS(mxqQuantizePlanGetAttribute(p, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, &layout, 4, nullptr), MXQ_STATUS_SUCCESS);
  CHECK(layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4);
  CHECK_STATUS(mxqQuantizePlanGetAttribute(p, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, &layout, 8, nullptr),
               MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE);
  CHECK_STATUS(mxqQuantizePlanGetAttribute(p, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, nullptr, 0, nullptr),
               MXQ_STATUS_BAD_PARAM_NULL_POINTER);

  // Workspace query and execute before finalize.
  size_t ws = 0;
  CHECK_STATUS(mxqQuantizePlanGetWorkspaceSize(p, &ws), MXQ_STATUS_BAD_PARAM_NOT_FINALIZED);
  CHECK_STATUS(mxqQuantizeExecute(H.h, p, nullptr, 0, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_NOT_FINALIZED);
  // Finalize without the required dimensions fails and leaves the plan editable.
  CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_ROWS, int64_t(64)), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_COLS, int64_t(96)), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_INPUT_LD, int64_t(95)), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_BAD_PARAM_SHAPE);  // ld < cols
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_INPUT_LD, int64_t(100)), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED);
  CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_ROWS, int64_t(32)), MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED);
  CHECK_STATUS(mxqQuantizePlanGetWorkspaceSize(p, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizePlanGetWorkspaceSize(p, &ws), MXQ_STATUS_SUCCESS);
  CHECK(ws == 0);
  CHECK_STATUS(mxqQuantizePlanDestroy(p), MXQ_STATUS_SUCCESS);
}

TEST_CASE("overflowing and inconsistent shapes are rejected at finalize", "[api]") {
  Handle H;
  {
    mxqQuantizePlan_t p = make_quant_plan(H.h, int64_t(1) << 40, int64_t(1) << 40);
    CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_BAD_PARAM_SHAPE);
    mxqQuantizePlanDestroy(p);
  }
  {
    mxqQuantizePlan_t p = make_quant_plan(H.h, 256, 64);
    CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_GROUPING, int32_t(MXQ_GROUPING_ROWS)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_BAD_PARAM_SHAPE);  // NUM_GROUPS missing
    CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_NUM_GROUPS, int64_t(4)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_q(p, MXQ_QUANTIZE_ATTR_BATCH, int64_t(2)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqQuantizePlanFinalize(p), MXQ_STATUS_NOT_SUPPORTED_COMBINATION);
    mxqQuantizePlanDestroy(p);
  }
  {
    mxqGroupedGemmPlan_t g = nullptr;
    REQUIRE(mxqGroupedGemmPlanCreate(H.h, &g) == MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_M, int64_t(128)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_N, int64_t(128)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqGroupedGemmPlanFinalize(g), MXQ_STATUS_BAD_PARAM_SHAPE);  // K missing
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_K, int64_t(64)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_A_DTYPE, int32_t(MXQ_DTYPE_E5M2)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_B_DTYPE, int32_t(MXQ_DTYPE_E5M2)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqGroupedGemmPlanFinalize(g), MXQ_STATUS_NOT_SUPPORTED_DTYPE);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_B_DTYPE, int32_t(MXQ_DTYPE_E4M3)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_ALPHA, std::numeric_limits<float>::quiet_NaN()),
                 MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_GROUPING, int32_t(MXQ_GEMM_GROUPING_M)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqGroupedGemmPlanFinalize(g), MXQ_STATUS_BAD_PARAM_SHAPE);  // groups missing
    CHECK_STATUS(set_g(g, MXQ_GEMM_ATTR_NUM_GROUPS, int64_t(3)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqGroupedGemmPlanFinalize(g), MXQ_STATUS_SUCCESS);
    mxqGroupedGemmPlanDestroy(g);
  }
  {
    mxqAttentionPlan_t a = nullptr;
    REQUIRE(mxqAttentionPlanCreate(H.h, &a) == MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_BATCH, int64_t(1)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_HEADS_Q, int64_t(6)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_HEADS_KV, int64_t(4)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_SEQLEN_Q, int64_t(10)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_SEQLEN_KV, int64_t(12)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_HEAD_DIM, int64_t(64)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqAttentionPlanFinalize(a), MXQ_STATUS_BAD_PARAM_SHAPE);  // 6 % 4 != 0
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_HEADS_KV, int64_t(3)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_P_SCALE, -1.0f), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_VARLEN, int32_t(1)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqAttentionPlanFinalize(a), MXQ_STATUS_NOT_SUPPORTED_COMBINATION);  // varlen needs BSHD
    CHECK_STATUS(set_a(a, MXQ_ATTN_ATTR_VARLEN, int32_t(0)), MXQ_STATUS_SUCCESS);
    CHECK_STATUS(mxqAttentionPlanFinalize(a), MXQ_STATUS_SUCCESS);
    float scale = 0;
    CHECK_STATUS(mxqAttentionPlanGetAttribute(a, MXQ_ATTN_ATTR_SOFTMAX_SCALE, &scale, 4, nullptr), MXQ_STATUS_SUCCESS);
    CHECK(scale == Approx(0.125f));
    mxqAttentionPlanDestroy(a);
  }
}

TEST_CASE("execute argument errors write nothing", "[api]") {
  Handle H, Other;
  const int64_t R = 64, K = 96;
  std::mt19937 rng(std::random_device{}());
  auto x = random_bf16(R * K, rng);
  mxqQuantizePlan_t p = make_quant_plan(H.h, R, K);
  REQUIRE(mxqQuantizePlanFinalize(p) == MXQ_STATUS_SUCCESS);
  size_t data_bytes = 0, scale_bytes = 0, none = 1;
  REQUIRE(mxqQuantizePlanGetOutputSize(p, MXQ_ARG_ROWWISE_DATA, &data_bytes) == MXQ_STATUS_SUCCESS);
  REQUIRE(mxqQuantizePlanGetOutputSize(p, MXQ_ARG_ROWWISE_SCALES, &scale_bytes) == MXQ_STATUS_SUCCESS);
  REQUIRE(mxqQuantizePlanGetOutputSize(p, MXQ_ARG_COLWISE_DATA, &none) == MXQ_STATUS_SUCCESS);
  CHECK(data_bytes == size_t(R * K));
  CHECK(scale_bytes == 128 * 4);  // rows padded to 128, 3 scale columns padded to 4
  CHECK(none == 0);
  std::vector<uint8_t> q(data_bytes + 16, 0xA5), s(scale_bytes + 16, 0xA5);
  const std::vector<uint8_t> q0 = q, s0 = s;

  std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, x.data()}, {MXQ_ARG_ROWWISE_DATA, 0, q.data()},
                                    {MXQ_ARG_ROWWISE_SCALES, 0, s.data()}};
  auto run = [&](std::vector<mxqExecArg_t> a) {
    return mxqQuantizeExecute(H.h, p, a.data(), static_cast<int>(a.size()), nullptr, 0, nullptr);
  };
  CHECK_STATUS(mxqQuantizeExecute(nullptr, p, args.data(), 3, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizeExecute(H.h, nullptr, args.data(), 3, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizeExecute(Other.h, p, args.data(), 3, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH);
  CHECK_STATUS(mxqQuantizeExecute(H.h, p, nullptr, 3, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqQuantizeExecute(H.h, p, args.data(), -1, nullptr, 0, nullptr), MXQ_STATUS_BAD_PARAM_ARGUMENT);
  CHECK_STATUS(run({args[0], args[1]}), MXQ_STATUS_BAD_PARAM_ARGUMENT);                     // missing scales
  CHECK_STATUS(run({args[0], args[1], args[2], args[2]}), MXQ_STATUS_BAD_PARAM_ARGUMENT);   // duplicate
  CHECK_STATUS(run({args[0], args[1], args[2], {MXQ_ARG_COLWISE_DATA, 0, q.data()}}), MXQ_STATUS_BAD_PARAM_ARGUMENT);
  CHECK_STATUS(run({args[0], args[1], {MXQ_ARG_ROWWISE_SCALES, 1, s.data()}}), MXQ_STATUS_BAD_PARAM_ARGUMENT);
  CHECK_STATUS(run({args[0], args[1], {MXQ_ARG_ROWWISE_SCALES, 0, nullptr}}), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(run({{MXQ_ARG_X, 0, reinterpret_cast<uint8_t*>(x.data()) + 1}, args[1], args[2]}),
               MXQ_STATUS_BAD_PARAM_MISALIGNED);
  CHECK(q == q0);
  CHECK(s == s0);

  // Success writes every byte of both outputs and nothing beyond.
  CHECK_STATUS(run(args), MXQ_STATUS_SUCCESS);
  size_t changed = 0;
  for (size_t i = 0; i < data_bytes; ++i) changed += q[i] != 0xA5;
  CHECK(changed > data_bytes / 2);
  for (size_t i = data_bytes; i < q.size(); ++i) CHECK(q[i] == 0xA5);
  for (size_t i = 0; i < scale_bytes; ++i) CHECK(s[i] != 0xA5);
  for (size_t i = scale_bytes; i < s.size(); ++i) CHECK(s[i] == 0xA5);
  mxqQuantizePlanDestroy(p);
}

TEST_CASE("group offsets that decrease or overrun are rejected before writing", "[api]") {
  Handle H;
  const int64_t R = 100, K = 64;
  std::mt19937 rng(std::random_device{}());
  auto x = random_bf16(R * K, rng);
  for (int32_t dtype : {int32_t(MXQ_DTYPE_INT32), int32_t(MXQ_DTYPE_INT64)}) {
    mxqQuantizePlan_t p = make_quant_plan(H.h, R, K, MXQ_QUANTIZE_BOTH);
    REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_GROUPING, int32_t(MXQ_GROUPING_ROWS)) == MXQ_STATUS_SUCCESS);
    REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_NUM_GROUPS, int64_t(3)) == MXQ_STATUS_SUCCESS);
    REQUIRE(set_q(p, MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, dtype) == MXQ_STATUS_SUCCESS);
    REQUIRE(mxqQuantizePlanFinalize(p) == MXQ_STATUS_SUCCESS);
    size_t b[4];
    const mxqArgSlot_t slots[4] = {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA,
                                   MXQ_ARG_COLWISE_SCALES};
    std::vector<std::vector<uint8_t>> out(4);
    for (int i = 0; i < 4; ++i) {
      REQUIRE(mxqQuantizePlanGetOutputSize(p, slots[i], &b[i]) == MXQ_STATUS_SUCCESS);
      out[i].assign(b[i], 0x5A);
    }
    auto run_with = [&](std::vector<int64_t> offs) {
      std::vector<int32_t> o32(offs.begin(), offs.end());
      void* o = dtype == MXQ_DTYPE_INT32 ? static_cast<void*>(o32.data()) : static_cast<void*>(offs.data());
      std::vector<mxqExecArg_t> a = {{MXQ_ARG_X, 0, x.data()},           {slots[0], 0, out[0].data()},
                                     {slots[1], 0, out[1].data()},       {slots[2], 0, out[2].data()},
                                     {slots[3], 0, out[3].data()},       {MXQ_ARG_GROUP_OFFSETS, 0, o}};
      return mxqQuantizeExecute(H.h, p, a.data(), 6, nullptr, 0, nullptr);
    };
    CHECK_STATUS(run_with({40, 30, 100}), MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
    CHECK_STATUS(run_with({-1, 30, 100}), MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
    CHECK_STATUS(run_with({10, 30, 101}), MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS);
    for (int i = 0; i < 4; ++i)
      for (uint8_t v : out[i]) REQUIRE(v == 0x5A);
    CHECK_STATUS(run_with({0, 33, 100}), MXQ_STATUS_SUCCESS);
    mxqQuantizePlanDestroy(p);
  }
}

TEST_CASE("logger: level, callback with user data, finalize names the kernel", "[api]") {
  mxqLogLevel_t old = MXQ_LOG_OFF;
  REQUIRE(mxqLoggerGetLevel(&old) == MXQ_STATUS_SUCCESS);
  CHECK_STATUS(mxqLoggerSetLevel(static_cast<mxqLogLevel_t>(9)), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  CHECK_STATUS(mxqLoggerGetLevel(nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  struct Sink {
    std::mutex mu;
    std::vector<std::string> lines;
  } sink;
  auto cb = [](mxqLogLevel_t, const char* msg, void* user) {
    auto* s = static_cast<Sink*>(user);
    std::lock_guard<std::mutex> lock(s->mu);
    s->lines.emplace_back(msg);
  };
  REQUIRE(mxqLoggerSetCallback(cb, &sink) == MXQ_STATUS_SUCCESS);
  REQUIRE(mxqLoggerSetLevel(MXQ_LOG_INFO) == MXQ_STATUS_SUCCESS);
  {
    Handle H;
    mxqQuantizePlan_t p = make_quant_plan(H.h, 32, 32);
    REQUIRE(mxqQuantizePlanFinalize(p) == MXQ_STATUS_SUCCESS);
    mxqQuantizePlanDestroy(p);
  }
  REQUIRE(mxqLoggerSetCallback(nullptr, nullptr) == MXQ_STATUS_SUCCESS);
  REQUIRE(mxqLoggerSetLevel(old) == MXQ_STATUS_SUCCESS);
  bool found = false;
  for (const auto& l : sink.lines) found = found || (l.find("cpu.quantize") != std::string::npos);
  CHECK(found);
  // A path below a regular file can be neither created nor opened.
  std::string blocker = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/mxq_log_blocker_" +
                        std::to_string(std::random_device{}());
  std::fclose(std::fopen(blocker.c_str(), "w"));
  CHECK_STATUS(mxqLoggerSetFile((blocker + "/sub/y.log").c_str()), MXQ_STATUS_BAD_PARAM_INVALID_VALUE);
  std::remove(blocker.c_str());
  CHECK_STATUS(mxqLoggerSetFile(nullptr), MXQ_STATUS_SUCCESS);
}

TEST_CASE("last error message is thread-local", "[api]") {
  CHECK(mxqCreateWithBackend(nullptr, MXQ_BACKEND_CPU, 0) == MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  std::string here = mxqGetLastErrorMessage();
  CHECK(!here.empty());
  std::string there = "unset";
  std::thread t([&] { there = mxqGetLastErrorMessage(); });
  t.join();
  CHECK(there.empty());
}

TEST_CASE("one finalized plan executed from several threads gives identical results", "[api][threads]") {
  Handle H;
  const int64_t R = 300, K = 200;  // odd shapes: partial blocks and row padding
  std::mt19937 rng(std::random_device{}());
  auto x = random_bf16(R * K, rng);
  mxqQuantizePlan_t p = make_quant_plan(H.h, R, K, MXQ_QUANTIZE_BOTH);
  REQUIRE(mxqQuantizePlanFinalize(p) == MXQ_STATUS_SUCCESS);
  const mxqArgSlot_t slots[4] = {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA,
                                 MXQ_ARG_COLWISE_SCALES};
  size_t b[4];
  for (int i = 0; i < 4; ++i) REQUIRE(mxqQuantizePlanGetOutputSize(p, slots[i], &b[i]) == MXQ_STATUS_SUCCESS);
  const int T = 6;
  std::vector<std::vector<std::vector<uint8_t>>> outs(T, std::vector<std::vector<uint8_t>>(4));
  std::vector<mxqStatus_t> st(T, MXQ_STATUS_INTERNAL_ERROR);
  std::vector<std::thread> threads;
  for (int t = 0; t < T; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) outs[t][i].assign(b[i], static_cast<uint8_t>(0x11 * (t + 1)));
      std::vector<mxqExecArg_t> a = {{MXQ_ARG_X, 0, x.data()}};
      for (int i = 0; i < 4; ++i) a.push_back({slots[i], 0, outs[t][i].data()});
      st[t] = mxqQuantizeExecute(H.h, p, a.data(), 5, nullptr, 0, nullptr);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < T; ++t) {
    CHECK(st[t] == MXQ_STATUS_SUCCESS);
    for (int i = 0; i < 4; ++i) CHECK(outs[t][i] == outs[0][i]);
  }
  mxqQuantizePlanDestroy(p);
}

TEST_CASE("standalone swizzle: argument errors and round trip", "[api]") {
  Handle H;
  std::mt19937 rng(std::random_device{}());
  const int64_t L = 2, R = 130, C = 5, ld = 7;
  std::vector<uint8_t> lin(L * R * ld), back(L * R * ld, 0xEE);
  for (auto& v : lin) v = static_cast<uint8_t>(rng() % 0xE0);  // never the 0xEE marker
  size_t bytes = mxqSwizzledScaleBytes(L, R, C);
  CHECK(bytes == size_t(L * 256 * 8));
  CHECK(mxqSwizzledScaleBytes(0, R, C) == 0);
  CHECK(mxqSwizzledScaleBytes(int64_t(1) << 62, R, C) == 0);
  std::vector<uint8_t> swz(bytes, 0xEE);
  CHECK_STATUS(mxqSwizzleScales(nullptr, 1, L, R, C, ld, lin.data(), swz.data(), nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqSwizzleScales(H.h, 1, L, R, C, ld, nullptr, swz.data(), nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK_STATUS(mxqSwizzleScales(H.h, 1, L, R, C, C - 1, lin.data(), swz.data(), nullptr), MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK_STATUS(mxqSwizzleScales(H.h, 1, 0, R, C, ld, lin.data(), swz.data(), nullptr), MXQ_STATUS_BAD_PARAM_SHAPE);
  CHECK_STATUS(mxqSwizzleScales(H.h, 1, L, R, C, ld, lin.data(), swz.data(), nullptr), MXQ_STATUS_SUCCESS);
  // Every byte of the swizzled tensor is written (padding 0), and values land at the documented offset.
  for (uint8_t v : swz) CHECK(v != 0xEE);
  const int64_t r = 77, c = 3, l = 1;
  const int64_t off = l * 256 * 8 + ((r >> 7) * (8 >> 2) + (c >> 2)) * 512 + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (c & 3);
  CHECK(swz[off] == lin[(l * R + r) * ld + c]);
  CHECK_STATUS(mxqSwizzleScales(H.h, 0, L, R, C, ld, swz.data(), back.data(), nullptr), MXQ_STATUS_SUCCESS);
  for (int64_t b = 0; b < L; ++b)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) REQUIRE(back[(b * R + i) * ld + j] == lin[(b * R + i) * ld + j]);
}
