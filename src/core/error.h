// Internal error propagation. Inside the library failures are C++ exceptions carrying an
// mxqStatus_t and a message; every C entry point (src/api/) catches them, stores the message in the
// thread-local last-error slot, logs it and returns the status. Nothing is thrown across the ABI.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "mxq/mxq.h"

namespace mxq {

class Error : public std::exception {
 public:
  Error(mxqStatus_t status, std::string message) : status_(status), message_(std::move(message)) {}
  mxqStatus_t status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  mxqStatus_t status_;
  std::string message_;
};

template <typename... Args>
[[noreturn]] void fail(mxqStatus_t status, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(status, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace mxq

// Check a condition; on failure throw mxq::Error(status, formatted message).
#define MXQ_REQUIRE(cond, status, ...)          \
  do {                                          \
    if (!(cond)) ::mxq::fail(status, __VA_ARGS__); \
  } while (0)
