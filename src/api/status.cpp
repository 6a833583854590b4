// Status names and descriptions (one table), the thread-local last-error message, and the logger API.
#include <cstring>
#include <string>

#include "api/guard.h"

namespace mxq {
namespace {

struct StatusInfo {
  mxqStatus_t code;
  const char* name;
  const char* text;
};

#define MXQ_STATUS_ROW(code, text) {code, #code, text}
constexpr StatusInfo kStatus[] = {
    MXQ_STATUS_ROW(MXQ_STATUS_SUCCESS, "success"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM, "invalid argument"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_NULL_POINTER, "a required pointer is NULL"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_UNKNOWN_ATTRIBUTE, "unknown attribute for this plan type"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_ATTRIBUTE_SIZE, "attribute buffer size does not match the attribute's type"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "value out of range"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_SHAPE, "invalid or inconsistent dimensions"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_MISALIGNED, "pointer not aligned as required"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_WORKSPACE, "workspace too small or misaligned"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_GROUP_OFFSETS, "group offsets decrease, are negative or overrun"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_ARGUMENT, "missing, duplicate or unexpected execution argument"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_NOT_FINALIZED, "plan is not finalized"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_ALREADY_FINALIZED, "plan is already finalized and immutable"),
    MXQ_STATUS_ROW(MXQ_STATUS_BAD_PARAM_HANDLE_MISMATCH, "plan belongs to another handle"),
    MXQ_STATUS_ROW(MXQ_STATUS_NOT_SUPPORTED, "not supported"),
    MXQ_STATUS_ROW(MXQ_STATUS_NOT_SUPPORTED_DTYPE, "data type not supported"),
    MXQ_STATUS_ROW(MXQ_STATUS_NOT_SUPPORTED_ARCH, "no kernel for this GPU architecture"),
    MXQ_STATUS_ROW(MXQ_STATUS_NOT_SUPPORTED_COMBINATION, "combination of attributes not supported"),
    MXQ_STATUS_ROW(MXQ_STATUS_NOT_SUPPORTED_BACKEND, "backend not available in this build"),
    MXQ_STATUS_ROW(MXQ_STATUS_INTERNAL_ERROR, "internal error"),
    MXQ_STATUS_ROW(MXQ_STATUS_ALLOC_FAILED, "host memory allocation failed"),
    MXQ_STATUS_ROW(MXQ_STATUS_CUDA_DRIVER_NOT_FOUND, "CUDA driver (libcuda.so.1) not found or too old"),
    MXQ_STATUS_ROW(MXQ_STATUS_CUDA_NO_DEVICE, "no CUDA device"),
    MXQ_STATUS_ROW(MXQ_STATUS_CUDA_ERROR, "CUDA driver call failed"),
    MXQ_STATUS_ROW(MXQ_STATUS_CUDA_KERNEL_LOAD_FAILED, "embedded GPU kernels could not be loaded"),
};
#undef MXQ_STATUS_ROW

const StatusInfo* find(mxqStatus_t s) {
  for (const auto& row : kStatus)
    if (row.code == s) return &row;
  return nullptr;
}

thread_local std::string t_last_error;

}  // namespace

void set_last_error(const std::string& message) {
  try {
    t_last_error = message;
  } catch (...) {
    t_last_error.clear();
  }
}
void clear_last_error() { t_last_error.clear(); }

}  // namespace mxq

extern "C" {

MXQ_API const char* mxqGetStatusName(mxqStatus_t status) {
  const auto* row = mxq::find(status);
  return row ? row->name : "MXQ_STATUS_UNKNOWN";
}

MXQ_API const char* mxqGetStatusString(mxqStatus_t status) {
  const auto* row = mxq::find(status);
  return row ? row->text : "unknown status code";
}

MXQ_API const char* mxqGetLastErrorMessage(void) { return mxq::t_last_error.c_str(); }

MXQ_API mxqStatus_t mxqLoggerSetLevel(mxqLogLevel_t level) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(level >= MXQ_LOG_OFF && level <= MXQ_LOG_TRACE, MXQ_STATUS_BAD_PARAM_INVALID_VALUE,
                "log level {} is outside 0..5", static_cast<int>(level));
    mxq::log::set_level(level);
  });
}

MXQ_API mxqStatus_t mxqLoggerGetLevel(mxqLogLevel_t* level) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(level, MXQ_STATUS_BAD_PARAM_NULL_POINTER, "level is NULL");
    *level = mxq::log::level();
  });
}

MXQ_API mxqStatus_t mxqLoggerSetFile(const char* path) {
  return mxq::guarded(__func__, [&] {
    MXQ_REQUIRE(mxq::log::set_file(path), MXQ_STATUS_BAD_PARAM_INVALID_VALUE, "cannot open log file '{}'",
                path ? path : "(null)");
  });
}

MXQ_API mxqStatus_t mxqLoggerSetCallback(mxqLogCallback_t callback, void* userData) {
  return mxq::guarded(__func__, [&] { mxq::log::set_callback(callback, userData); });
}

}  // extern "C"
