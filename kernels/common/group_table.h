// The group table: what a grouped (MoE) kernel needs to know about group g, computed on the device
// from the caller's end offsets so that no kernel ever synchronizes with the host (graph capture).
// One tiny kernel (mxq_group_table, kernels/common/group_table.cu) writes it into the plan's
// workspace; the main kernel reads it. Shared by host launchers (plain C++) and device code.
//
// Offsets that are not a valid partition (negative, decreasing, past `total`) are clamped as the C
// header promises: ends[g] = min(total, max(0, o_0, ..., o_g)), a non-decreasing sequence in
// [0, total]; rows at or past ends[G-1] belong to no group.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mxq {

struct GroupTableParams {
  const void* offsets;      // caller's end offsets [G], int32 or int64
  int32_t offsets_are_i64;  // 1: int64, 0: int32
  int32_t col_swizzled;     // column bases padded to 4 scale columns per group (SWIZZLED_128x4)
  int64_t num_groups;       // G >= 1
  int64_t total;            // rows (or tokens) the groups partition
  int64_t* ends;            // out [G]: clamped end offsets
  int64_t* row_base;        // out [G]: first scale row of group g, row-grouped swizzled layout
                            //          (sum over h < g of round_up(size_h, 128))
  int64_t* col_base;        // out [G]: first scale column of group g, K-grouped columnwise layout
                            //          (sum over h < g of ceil(size_h/32), rounded up to 4 if swizzled)
};

// The three int64 arrays, each padded to 256 bytes so every array keeps the workspace's alignment.
inline size_t group_table_array_bytes(int64_t groups) {
  return (static_cast<size_t>(groups) * sizeof(int64_t) + 255) / 256 * 256;
}
inline size_t group_table_bytes(int64_t groups) { return 3 * group_table_array_bytes(groups); }

// Threads of the single block that builds the table.
constexpr int kGroupTableThreads = 1024;

}  // namespace mxq
