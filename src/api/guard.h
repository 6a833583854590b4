// Every C entry point runs its body through guarded(): mxq::Error becomes its status, bad_alloc
// becomes ALLOC_FAILED, anything else INTERNAL_ERROR; the message is stored as the calling thread's
// last error and logged. This is the only place exceptions are converted, so no C++ exception can
// cross the ABI.
#pragma once

#include <new>
#include <string>

#include "core/error.h"
#include "core/logger.h"

namespace mxq {

void set_last_error(const std::string& message);
void clear_last_error();

template <typename Fn>
mxqStatus_t guarded(const char* function, Fn&& fn) noexcept {
  try {
    MXQ_LOG_TRC("{}", function);
    fn();
    return MXQ_STATUS_SUCCESS;
  } catch (const Error& e) {
    std::string msg = std::string(function) + ": " + e.what();
    set_last_error(msg);
    try {
      MXQ_LOG_ERR("{} ({})", msg, mxqGetStatusName(e.status()));
    } catch (...) {
    }
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error(std::string(function) + ": host memory allocation failed");
    return MXQ_STATUS_ALLOC_FAILED;
  } catch (const std::exception& e) {
    set_last_error(std::string(function) + ": internal error: " + e.what());
    return MXQ_STATUS_INTERNAL_ERROR;
  } catch (...) {
    set_last_error(std::string(function) + ": internal error: unknown exception");
    return MXQ_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace mxq
