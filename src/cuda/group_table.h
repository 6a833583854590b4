// Host side of the device-built group table (kernels/common/group_table.h): grouped launchers
// reserve group_table_bytes(G) of their plan's workspace and enqueue mxq_group_table ahead of their
// main kernel on the same stream, so group offsets never travel to the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/group_table.h"
#include "cuda/runtime.h"

namespace mxq {
namespace cuda {

struct GroupTableView {
  const int64_t* ends = nullptr;
  const int64_t* row_base = nullptr;
  const int64_t* col_base = nullptr;
};

class GroupTableBuilder {
 public:
  // Looks the kernel up now (at Finalize), so Execute cannot fail on a missing image.
  explicit GroupTableBuilder(Device& dev);

  static size_t workspace_bytes(int64_t groups) { return group_table_bytes(groups); }

  // Enqueues the table build for `groups` end offsets (INT32 or INT64) partitioning `total` rows
  // into the first workspace_bytes(groups) bytes of `workspace` (256-byte aligned).
  GroupTableView enqueue(const void* offsets, mxqDataType_t offsets_dtype, int64_t groups, int64_t total,
                         bool col_swizzled, void* workspace, mxqStream_t stream) const;

 private:
  const Device* dev_;
  CUfunction fn_;
};

}  // namespace cuda
}  // namespace mxq
