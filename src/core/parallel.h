// A tiny parallel-for for the CPU reference backend (CI machines have two cores). Work is split
// into contiguous chunks over std::thread; exceptions from workers are rethrown on the caller.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mxq {

// Number of worker threads: MXQ_CPU_THREADS if set (>= 1), else hardware_concurrency (max 16).
int cpu_threads();

// Calls fn(begin, end) on disjoint sub-ranges of [0, n). Runs inline when n < min_per_thread*2.
template <typename Fn>
void parallel_for(int64_t n, int64_t min_per_thread, Fn&& fn) {
  int64_t threads = std::min<int64_t>(cpu_threads(), std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_thread)));
  if (threads <= 1) {
    if (n > 0) fn(int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  std::exception_ptr err;
  std::mutex mu;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    pool.emplace_back([&, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!err) err = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (err) std::rethrow_exception(err);
}

}  // namespace mxq
