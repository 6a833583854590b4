// Handle lifecycle and the standalone scale (un)swizzle entry points.
#include "api/guard.h"
#include "core/layout.h"
#include "core/plan.h"

extern "C" {

MXQ_API mxqStatus_t mxqCreateWithBackend(mxqHandle_t* handle, mxqBackend_t backend, int deviceOrdinal) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle out-pointer is NULL");
    std::unique_ptr<mxq::Backend> be;
    if (backend == MXQ_BACKEND_CPU) {
      MXQ_REQUIRE(deviceOrdinal == 0 || deviceOrdinal == -1, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
                  "the CPU backend takes device ordinal 0 or -1 (got {})", deviceOrdinal);
      be = mxq::make_cpu_backend();
    } else if (backend == MXQ_BACKEND_CUDA) {
      MXQ_REQUIRE(deviceOrdinal >= -1, MXQ_STATUS_CUDA_NO_DEVICE, "device ordinal {} is invalid", deviceOrdinal);
      be = mxq::make_cuda_backend(deviceOrdinal);
    } else {
      mxq::fail(MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "unknown backend {}", static_cast<int>(backend));
    }
    auto* ctx = new mxqContext();
    ctx->backend = std::move(be);
    MXQ_LOG_INF("handle created: {}", ctx->backend->describe());
    *handle = ctx;
  });
}

MXQ_API mxqStatus_t mxqCreate(mxqHandle_t* handle) {
  return mxqCreateWithBackend(handle, MXQ_BACKEND_CUDA, -1);
}

MXQ_API mxqStatus_t mxqDestroy(mxqHandle_t handle) {
  return mxq::guarded(__func__, [&] {
    if (!handle) return;
    const int live = handle->live_plans.load();
    MXQ_REQUIRE(live == 0, MXQ_STATUS_BAD_PARAM, "the handle still has {} live plan(s); destroy them first", live);
    delete handle;
  });
}

MXQ_API mxqStatus_t mxqGetBackend(mxqHandle_t handle, mxqBackend_t* backend) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle is NULL");
    MXQ_REQUIRE(backend, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "backend is NULL");
    *backend = handle->backend->kind();
  });
}

MXQ_API mxqStatus_t mxqGetDevice(mxqHandle_t handle, int* deviceOrdinal, int* computeCapability) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle is NULL");
    if (deviceOrdinal) *deviceOrdinal = handle->backend->device_ordinal();
    if (computeCapability) *computeCapability = handle->backend->compute_capability();
  });
}

MXQ_API size_t mxqSwizzledScaleBytes(int64_t batch, int64_t rows, int64_t scaleCols) {
  if (batch <= 0 || rows <= 0 || scaleCols <= 0) return 0;
  if (rows > (int64_t(1) << 40) || scaleCols > (int64_t(1) << 40)) return 0;
  int64_t per = 0, total = 0;
  if (__builtin_mul_overflow(mxq::layout::swz_rows(rows), mxq::layout::swz_cols(scaleCols), &per)) return 0;
  if (__builtin_mul_overflow(per, batch, &total)) return 0;
  return static_cast<size_t>(total);
}

MXQ_API mxqStatus_t mxqSwizzleScales(mxqHandle_t handle, int toSwizzled, int64_t batch, int64_t rows, int64_t scaleCols,
                                     int64_t linearLd, const void* src, void* dst, mxqStream_t stream) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(handle, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "handle is NULL");
    MXQ_REQUIRE(src && dst, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "src or dst is NULL");
    MXQ_REQUIRE(batch > 0 && rows > 0 && scaleCols > 0, MXQ_STATUS_BAD_PARAM_SHAPE,
                "batch ({}), rows ({}) and scaleCols ({}) must be > 0", batch, rows, scaleCols);
    MXQ_REQUIRE(linearLd >= scaleCols, MXQ_STATUS_BAD_PARAM_SHAPE, "linearLd ({}) is smaller than scaleCols ({})",
                linearLd, scaleCols);
    MXQ_REQUIRE(mxqSwizzledScaleBytes(batch, rows, scaleCols) != 0, MXQ_STATUS_BAD_PARAM_SHAPE,
                "scale tensor [{}, {}, {}] overflows", batch, rows, scaleCols);
    mxq::checked_mul(mxq::checked_mul(batch, rows, "batch x rows"), linearLd, "linear scale bytes");
    handle->backend->swizzle_scales(toSwizzled != 0, batch, rows, scaleCols, linearLd, src, dst, stream);
  });
}

}  // extern "C"
