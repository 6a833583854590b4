// spdlog behind a small facade. Why not spdlog's default registry: the library must not touch a
// host application's spdlog state (the application may use another spdlog version), so the logger
// is a private object, never registered, and the callback sink is our own.
#include "core/logger.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace mxq {
namespace log {
namespace {

struct State {
  std::mutex mu;
  std::atomic<int> level{MXQ_LOG_OFF};  // silent unless asked (MXQ_LOG_LEVEL or mxqLoggerSetLevel)
  std::shared_ptr<spdlog::logger> logger;  // file or stderr
  mxqLogCallback_t callback = nullptr;
  void* user = nullptr;

  State() {
    const char* lv = std::getenv("MXQ_LOG_LEVEL");
    if (lv && *lv) {
      char* end = nullptr;
      long v = std::strtol(lv, &end, 10);
      if (end != lv && v >= MXQ_LOG_OFF && v <= MXQ_LOG_TRACE) level = static_cast<int>(v);
    }
    const char* file = std::getenv("MXQ_LOG_FILE");
    if (file && *file) {
      try {
        logger = std::make_shared<spdlog::logger>("mxq", std::make_shared<spdlog::sinks::basic_file_sink_mt>(file));
      } catch (...) {
        logger.reset();
      }
    }
    if (!logger) logger = std::make_shared<spdlog::logger>("mxq", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    configure(*logger);
  }
  static void configure(spdlog::logger& l) {
    l.set_pattern("[mxq %Y-%m-%d %H:%M:%S.%e %^%l%$ t%t] %v");
    l.set_level(spdlog::level::trace);
    l.flush_on(spdlog::level::trace);
  }
};

State& state() {
  static State* s = new State();  // leaked on purpose: usable during static destruction
  return *s;
}

spdlog::level::level_enum to_spd(mxqLogLevel_t l) {
  switch (l) {
    case MXQ_LOG_ERROR: return spdlog::level::err;
    case MXQ_LOG_WARN: return spdlog::level::warn;
    case MXQ_LOG_INFO: return spdlog::level::info;
    case MXQ_LOG_DEBUG: return spdlog::level::debug;
    default: return spdlog::level::trace;
  }
}

}  // namespace

bool enabled(mxqLogLevel_t lvl) { return lvl != MXQ_LOG_OFF && static_cast<int>(lvl) <= state().level.load(std::memory_order_relaxed); }

void write(mxqLogLevel_t lvl, const std::string& message) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.callback) {
    s.callback(lvl, message.c_str(), s.user);
    return;
  }
  s.logger->log(to_spd(lvl), message);
}

mxqLogLevel_t level() { return static_cast<mxqLogLevel_t>(state().level.load()); }
void set_level(mxqLogLevel_t l) { state().level = static_cast<int>(l); }

bool set_file(const char* path) {
  State& s = state();
  std::shared_ptr<spdlog::logger> next;
  try {
    if (path)
      next = std::make_shared<spdlog::logger>("mxq", std::make_shared<spdlog::sinks::basic_file_sink_mt>(path));
    else
      next = std::make_shared<spdlog::logger>("mxq", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } catch (...) {
    return false;
  }
  State::configure(*next);
  std::lock_guard<std::mutex> lock(s.mu);
  s.logger = std::move(next);
  return true;
}

void set_callback(mxqLogCallback_t cb, void* user) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.callback = cb;
  s.user = user;
}

}  // namespace log
}  // namespace mxq
