// The CUDA backend's plumbing on a real GPU, through the public API: handle creation and device
// queries, the kernel choice that Finalize logs, operations without a GPU kernel, bad ordinals,
// concurrent execution of one plan from several threads (which also proves the library makes its
// own context current and restores the caller's), workspace checks, and capture of a grouped
// dequantize (group table kernel + main kernel) into a CUDA graph: no host synchronization or
// allocation happens inside Execute.
#include <mutex>
#include <thread>

#include "gpu/test_gpu_common.h"

using namespace mxq_test::gpu;

namespace {

std::mutex g_log_mu;
std::vector<std::string> g_log;

void capture_log(mxqLogLevel_t, const char* msg, void*) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log.emplace_back(msg);
}

// Installs the capturing callback at INFO for the scope of a test; restores stderr logging after.
struct LogCapture {
  mxqLogLevel_t old = MXQ_LOG_OFF;
  LogCapture() {
    mxqLoggerGetLevel(&old);
    {
      std::lock_guard<std::mutex> lock(g_log_mu);
      g_log.clear();
    }
    REQUIRE(mxqLoggerSetCallback(capture_log, nullptr) == MXQ_STATUS_SUCCESS);
    REQUIRE(mxqLoggerSetLevel(MXQ_LOG_INFO) == MXQ_STATUS_SUCCESS);
  }
  ~LogCapture() {
    mxqLoggerSetCallback(nullptr, nullptr);
    mxqLoggerSetLevel(old);
  }
  bool contains(const std::string& needle) const {
    std::lock_guard<std::mutex> lock(g_log_mu);
    for (const auto& m : g_log)
      if (m.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string all() const {
    std::lock_guard<std::mutex> lock(g_log_mu);
    std::string s;
    for (const auto& m : g_log) s += m + "\n";
    return s;
  }
};

template <typename T>
void set_dq(mxqDequantizePlan_t p, mxqDequantizeAttribute_t a, T v) {
  MXQ_REQUIRE_OK(mxqDequantizePlanSetAttribute(p, a, &v, sizeof v));
}

// A grouped rowwise dequantize of raw random bytes (swizzled scales): the smallest plan that uses
// both GPU kernels (group table + dequantize) and a workspace.
struct GroupedProblem {
  int64_t rows = 1000, cols = 256, groups = 7;
  std::vector<uint8_t> data, scales, offsets;
  explicit GroupedProblem(std::mt19937_64& rng) {
    data.resize(static_cast<size_t>(rows * cols));
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    const size_t scale_bytes = static_cast<size_t>(((rows + 127 * groups + 127) / 128 * 128) * ((cols / 32 + 3) / 4 * 4));
    scales.resize(scale_bytes);
    for (auto& b : scales) b = static_cast<uint8_t>(100 + rng() % 50);
    offsets = offsets_bytes(random_group_ends(rows, groups, rng, false), MXQ_DTYPE_INT32);
  }
  mxqDequantizePlan_t plan(mxqHandle_t h) const {
    mxqDequantizePlan_t p = nullptr;
    MXQ_REQUIRE_OK(mxqDequantizePlanCreate(h, &p));
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_ROWS, rows);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_COLS, cols);
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, groups);
    MXQ_REQUIRE_OK(mxqDequantizePlanFinalize(p));
    return p;
  }
  std::vector<uint8_t> reference(mxqHandle_t cpu) const {
    mxqDequantizePlan_t p = plan(cpu);
    std::vector<uint8_t> out(static_cast<size_t>(rows * cols * 2), 0x11);
    std::vector<uint8_t> d = data, s = scales, o = offsets;
    mxqExecArg_t args[] = {{MXQ_ARG_ROWWISE_DATA, 0, d.data()},
                           {MXQ_ARG_ROWWISE_SCALES, 0, s.data()},
                           {MXQ_ARG_GROUP_OFFSETS, 0, o.data()},
                           {MXQ_ARG_X, 0, out.data()}};
    MXQ_REQUIRE_OK(mxqDequantizeExecute(cpu, p, args, 4, nullptr, 0, nullptr));
    MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(p));
    return out;
  }
};

}  // namespace

TEST_CASE("gpu backend: handle, device and build queries", "[gpu][backend]") {
  mxqHandle_t h = nullptr;
  MXQ_REQUIRE_OK(mxqCreate(&h));
  mxqBackend_t b = MXQ_BACKEND_CPU;
  MXQ_REQUIRE_OK(mxqGetBackend(h, &b));
  CHECK(b == MXQ_BACKEND_CUDA);
  int ordinal = -7, cc = 0;
  MXQ_REQUIRE_OK(mxqGetDevice(h, &ordinal, &cc));
  CHECK(ordinal == 0);
  CHECK(cc >= 90);
  MXQ_REQUIRE_OK(mxqDestroy(h));
  CHECK(std::string(mxqGetBuildInfo()).find("cuda-kernels=yes") != std::string::npos);

  mxqHandle_t bad = nullptr;
  MXQ_REQUIRE_STATUS(mxqCreateWithBackend(&bad, MXQ_BACKEND_CUDA, 4096), MXQ_STATUS_CUDA_NO_DEVICE);
  CHECK(bad == nullptr);
  CHECK(std::string(mxqGetLastErrorMessage()).find("out of range") != std::string::npos);
}

TEST_CASE("gpu backend: Finalize logs which kernel was chosen and why", "[gpu][backend]") {
  Handle gpu(MXQ_BACKEND_CUDA);
  LogCapture log;
  for (int transposed = 0; transposed < 2; ++transposed) {
    mxqDequantizePlan_t p = nullptr;
    MXQ_REQUIRE_OK(mxqDequantizePlanCreate(gpu, &p));
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_ROWS, 64);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_COLS, 64);
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_DIRECTION, transposed ? MXQ_QUANTIZE_COLUMNWISE : MXQ_QUANTIZE_ROWWISE);
    MXQ_REQUIRE_OK(mxqDequantizePlanFinalize(p));
    MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(p));
  }
  INFO(log.all());
  CHECK(log.contains("generic.dequantize.direct"));
  CHECK(log.contains("generic.dequantize.transposed"));
  CHECK(log.contains("first of"));  // the reason, not just the name
  // The transposed kernel ranks first; the rowwise plan says why it was skipped.
  CHECK(log.contains("skipped generic.dequantize.transposed"));
}

TEST_CASE("gpu backend: one plan, four threads, four streams; caller contexts are left alone", "[gpu][backend]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  INFO("seed: " << seed);
  std::mt19937_64 rng(seed);
  const GroupedProblem prob(rng);
  const std::vector<uint8_t> expected = prob.reference(cpu);

  mxqDequantizePlan_t p = prob.plan(gpu);
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqDequantizePlanGetWorkspaceSize(p, &ws));
  REQUIRE(ws > 0);
  DeviceBuffer d_data(prob.data), d_scales(prob.scales), d_offs(prob.offsets);
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<DeviceBuffer>> outs, wss;
  std::vector<CUstream> streams(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    outs.push_back(std::make_unique<DeviceBuffer>(expected.size()));
    outs.back()->poison(0x11 ^ 0xFF);
    wss.push_back(std::make_unique<DeviceBuffer>(ws));
    MXQ_CU_CHECK(driver().cuStreamCreate(&streams[t], CU_STREAM_NON_BLOCKING));
  }
  std::vector<mxqStatus_t> status(kThreads, MXQ_STATUS_INTERNAL_ERROR);
  std::vector<int> ctx_unchanged(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // A fresh thread has no current context; mxq must use its own and not leave it current.
      mxqExecArg_t args[] = {{MXQ_ARG_ROWWISE_DATA, 0, d_data.ptr()},
                             {MXQ_ARG_ROWWISE_SCALES, 0, d_scales.ptr()},
                             {MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()},
                             {MXQ_ARG_X, 0, outs[t]->ptr()}};
      mxqStatus_t s = MXQ_STATUS_SUCCESS;
      for (int rep = 0; rep < 20 && s == MXQ_STATUS_SUCCESS; ++rep)
        s = mxqDequantizeExecute(gpu, p, args, 4, wss[t]->ptr(), ws, reinterpret_cast<mxqStream_t>(streams[t]));
      status[t] = s;
      CUcontext cur = reinterpret_cast<CUcontext>(0x1);
      ctx_unchanged[t] = driver().cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == nullptr;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(status[t] == MXQ_STATUS_SUCCESS);
    CHECK(ctx_unchanged[t] == 1);
    MXQ_CU_CHECK(driver().cuStreamSynchronize(streams[t]));
    CHECK(outs[t]->download() == expected);
    MXQ_CU_CHECK(driver().cuStreamDestroy(streams[t]));
  }

  // Too small a workspace is refused before anything is enqueued.
  mxqExecArg_t args[] = {{MXQ_ARG_ROWWISE_DATA, 0, d_data.ptr()},
                         {MXQ_ARG_ROWWISE_SCALES, 0, d_scales.ptr()},
                         {MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()},
                         {MXQ_ARG_X, 0, outs[0]->ptr()}};
  MXQ_REQUIRE_STATUS(mxqDequantizeExecute(gpu, p, args, 4, wss[0]->ptr(), ws - 1, nullptr), MXQ_STATUS_BAD_PARAM_WORKSPACE);
  MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(p));
}

TEST_CASE("gpu backend: a grouped dequantize is capturable into a CUDA graph", "[gpu][backend][graph]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  INFO("seed: " << seed);
  std::mt19937_64 rng(seed);
  const GroupedProblem prob(rng);
  const std::vector<uint8_t> expected = prob.reference(cpu);
  mxqDequantizePlan_t p = prob.plan(gpu);
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqDequantizePlanGetWorkspaceSize(p, &ws));
  DeviceBuffer d_data(prob.data), d_scales(prob.scales), d_offs(prob.offsets), d_out(expected.size()), d_ws(ws);
  d_out.poison(0xEE);

  mxqExecArg_t args[] = {{MXQ_ARG_ROWWISE_DATA, 0, d_data.ptr()},
                         {MXQ_ARG_ROWWISE_SCALES, 0, d_scales.ptr()},
                         {MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()},
                         {MXQ_ARG_X, 0, d_out.ptr()}};
  CapturedGraph graph([&](mxqStream_t s) { return mxqDequantizeExecute(gpu, p, args, 4, d_ws.ptr(), ws, s); });
  MXQ_REQUIRE_STATUS(graph.status, MXQ_STATUS_SUCCESS);
  // Nothing ran yet: capture only records.
  CHECK(d_out.download() != expected);
  graph.launch();
  CHECK(d_out.download() == expected);
  MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(p));
}
