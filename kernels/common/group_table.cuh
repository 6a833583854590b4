// Device-side lookups into the group table (kernels/common/group_table.h): which group a row belongs
// to, and where the group starts. The table lives in L2 after the first CTA touches it; a binary
// search costs log2(G) cached loads, paid once per row (or per tile row), never per element.
#pragma once

#include <cstdint>

#include "common/group_table.h"

namespace mxq {
namespace dev {

struct RowGroup {
  int64_t g;      // group index, or -1 when the row lies past the last end offset
  int64_t start;  // first row of the group
};

// First g with ends[g] > r (ends is non-decreasing), i.e. the group owning row r.
__device__ __forceinline__ RowGroup find_row_group(const int64_t* __restrict__ ends, int64_t groups, int64_t r) {
  int64_t lo = 0, hi = groups;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (__ldg(ends + mid) > r) hi = mid;
    else lo = mid + 1;
  }
  if (lo == groups) return {-1, 0};
  return {lo, lo == 0 ? 0 : __ldg(ends + lo - 1)};
}

}  // namespace dev
}  // namespace mxq
