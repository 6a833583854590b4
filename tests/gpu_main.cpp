// Entry point of mxq_gpu_tests. Before Catch runs, it asks the library itself for a CUDA handle:
// when there is no driver, no device, or a build without the CUDA backend, the whole executable
// exits with 77, which ctest reports as "skipped" (SKIP_RETURN_CODE) together with the reason
// printed here. Any other failure to create a handle is a real failure. Every GPU test file can then
// assume a working device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "gpu/test_gpu_common.h"
#include "mxq/mxq.h"

int main(int argc, char** argv) {
  mxqHandle_t h = nullptr;
  const mxqStatus_t s = mxqCreate(&h);
  if (s == MXQ_STATUS_CUDA_DRIVER_NOT_FOUND || s == MXQ_STATUS_CUDA_NO_DEVICE || s == MXQ_STATUS_NOT_SUPPORTED_BACKEND) {
    std::fprintf(stderr, "mxq_gpu_tests: SKIPPED, no usable GPU: %s: %s\n", mxqGetStatusName(s), mxqGetLastErrorMessage());
    return 77;
  }
  if (s != MXQ_STATUS_SUCCESS) {
    std::fprintf(stderr, "mxq_gpu_tests: mxqCreate failed: %s: %s\n", mxqGetStatusName(s), mxqGetLastErrorMessage());
    return 1;
  }
  int ordinal = -1, cc = 0;
  mxqGetDevice(h, &ordinal, &cc);
  mxqDestroy(h);
  if (!mxq_test::gpu::driver().ok) {
    std::fprintf(stderr, "mxq_gpu_tests: mxq has a GPU but the test harness cannot use the driver: %s\n",
                 mxq_test::gpu::driver().error.c_str());
    return 1;
  }
  std::fprintf(stderr, "mxq_gpu_tests: device %d (sm_%d); %s\n", ordinal, cc, mxqGetBuildInfo());
  return Catch::Session().run(argc, argv);
}
