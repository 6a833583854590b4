// The Execute-time checks that no CPU-reference plan reaches through the public API (the CPU ops
// need no workspace and no alignment beyond the element size): exercised on a test OpImpl.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>

#include "core/error.h"
#include "core/plan.h"

namespace {

class NeedyOp final : public mxq::OpImpl {
 public:
  std::string name() const override { return "test.needy"; }
  std::string reason() const override { return "test"; }
  size_t workspace_bytes() const override { return 4096; }
  size_t required_alignment(mxqArgSlot_t slot) const override { return slot == MXQ_ARG_A_DATA ? 16 : 1; }
  void run(const mxq::ExecArgs&, void*, size_t, mxqStream_t) const override {}
};

mxqStatus_t status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mxq::Error& e) {
    return e.status();
  }
  return MXQ_STATUS_SUCCESS;
}

}  // namespace

TEST_CASE("workspace: NULL, too small, misaligned, enough", "[internal][exec]") {
  NeedyOp op;
  alignas(256) static uint8_t ws[8192];
  CHECK(status_of([&] { mxq::check_workspace(op, nullptr, 0); }) == MXQ_STATUS_BAD_PARAM_WORKSPACE);
  CHECK(status_of([&] { mxq::check_workspace(op, ws, 4095); }) == MXQ_STATUS_BAD_PARAM_WORKSPACE);
  CHECK(status_of([&] { mxq::check_workspace(op, ws + 16, 5000); }) == MXQ_STATUS_BAD_PARAM_WORKSPACE);
  CHECK(status_of([&] { mxq::check_workspace(op, ws, 4096); }) == MXQ_STATUS_SUCCESS);
}

TEST_CASE("argument binding: impl alignment on top of element alignment", "[internal][exec]") {
  NeedyOp op;
  alignas(64) static uint8_t buf[256];
  std::vector<mxq::SlotRule> rules = {{MXQ_ARG_A_DATA, true, 1, "A"}, {MXQ_ARG_D, true, 4, "D"},
                                      {MXQ_ARG_AMAX, false, 4, "amax"}};
  mxqExecArg_t ok[2] = {{MXQ_ARG_A_DATA, 0, buf}, {MXQ_ARG_D, 0, buf + 4}};
  mxq::ExecArgs a;
  CHECK(status_of([&] { a = mxq::bind_args(rules, ok, 2, op); }) == MXQ_STATUS_SUCCESS);
  CHECK(a.get(MXQ_ARG_A_DATA) == buf);
  CHECK(a.get(MXQ_ARG_AMAX) == nullptr);
  mxqExecArg_t mis_a[2] = {{MXQ_ARG_A_DATA, 0, buf + 8}, {MXQ_ARG_D, 0, buf + 4}};
  CHECK(status_of([&] { mxq::bind_args(rules, mis_a, 2, op); }) == MXQ_STATUS_BAD_PARAM_MISALIGNED);
  mxqExecArg_t mis_d[2] = {{MXQ_ARG_A_DATA, 0, buf}, {MXQ_ARG_D, 0, buf + 2}};
  CHECK(status_of([&] { mxq::bind_args(rules, mis_d, 2, op); }) == MXQ_STATUS_BAD_PARAM_MISALIGNED);
  mxqExecArg_t unknown[3] = {{MXQ_ARG_A_DATA, 0, buf}, {MXQ_ARG_D, 0, buf + 4}, {99, 0, buf}};
  CHECK(status_of([&] { mxq::bind_args(rules, unknown, 3, op); }) == MXQ_STATUS_BAD_PARAM_ARGUMENT);
}
