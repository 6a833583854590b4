// Enqueues mxq_group_table (group_table.h): one block of kGroupTableThreads threads.
#include "cuda/group_table.h"

#include "core/error.h"

namespace mxq {
namespace cuda {

GroupTableBuilder::GroupTableBuilder(Device& dev) : dev_(&dev), fn_(dev.kernel("mxq_group_table")) {}

GroupTableView GroupTableBuilder::enqueue(const void* offsets, mxqDataType_t offsets_dtype, int64_t groups,
                                          int64_t total, bool col_swizzled, void* workspace,
                                          mxqStream_t stream) const {
  MXQ_REQUIRE(groups >= 1, MXQ_STATUS_INTERNAL_ERROR, "group table for {} groups", groups);
  MXQ_REQUIRE(offsets_dtype == MXQ_DTYPE_INT32 || offsets_dtype == MXQ_DTYPE_INT64, MXQ_STATUS_INTERNAL_ERROR,
              "group offsets dtype {}", static_cast<int>(offsets_dtype));
  auto* base = static_cast<uint8_t*>(workspace);
  const size_t array = group_table_array_bytes(groups);
  GroupTableParams p{};
  p.offsets = offsets;
  p.offsets_are_i64 = offsets_dtype == MXQ_DTYPE_INT64 ? 1 : 0;
  p.col_swizzled = col_swizzled ? 1 : 0;
  p.num_groups = groups;
  p.total = total;
  p.ends = reinterpret_cast<int64_t*>(base);
  p.row_base = reinterpret_cast<int64_t*>(base + array);
  p.col_base = reinterpret_cast<int64_t*>(base + 2 * array);
  void* params[] = {&p};
  dev_->launch(fn_, Dim3{1, 1, 1}, Dim3{static_cast<unsigned>(kGroupTableThreads), 1, 1}, 0, stream, params,
               "mxq_group_table");
  return GroupTableView{p.ends, p.row_base, p.col_base};
}

}  // namespace cuda
}  // namespace mxq
