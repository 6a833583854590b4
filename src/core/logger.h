// The library's one private logger (spdlog, header-only, never exported). Level and destination
// come from MXQ_LOG_LEVEL / MXQ_LOG_FILE on first use and from the mxqLogger* API afterwards; a C
// callback, when installed, replaces the file/stderr sink. All setters are thread-safe.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

#include "mxq/mxq.h"

namespace mxq {
namespace log {

bool enabled(mxqLogLevel_t level);
void write(mxqLogLevel_t level, const std::string& message);

mxqLogLevel_t level();
void set_level(mxqLogLevel_t level);
bool set_file(const char* path);  // false if it cannot be opened
void set_callback(mxqLogCallback_t cb, void* user);

template <typename... Args>
void at(mxqLogLevel_t lvl, fmt::format_string<Args...> f, Args&&... args) {
  if (enabled(lvl)) write(lvl, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace log
}  // namespace mxq

#define MXQ_LOG_ERR(...) ::mxq::log::at(MXQ_LOG_ERROR, __VA_ARGS__)
#define MXQ_LOG_WRN(...) ::mxq::log::at(MXQ_LOG_WARN, __VA_ARGS__)
#define MXQ_LOG_INF(...) ::mxq::log::at(MXQ_LOG_INFO, __VA_ARGS__)
#define MXQ_LOG_DBG(...) ::mxq::log::at(MXQ_LOG_DEBUG, __VA_ARGS__)
#define MXQ_LOG_TRC(...) ::mxq::log::at(MXQ_LOG_TRACE, __VA_ARGS__)
