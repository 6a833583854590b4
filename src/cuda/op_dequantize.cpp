// Dequantize on the GPU: registry entries and the launcher for kernels/generic/dequantize.cu.
// Finalize resolves every geometric quantity (scale extents from core/sizes.h, the grid) and looks
// the kernels up, so Execute only fills pointers, picks the 16-byte path from the actual pointer
// alignment, and enqueues one launch (two with row groups: the group table first).
#include <algorithm>
#include <climits>
#include <string>

#include "core/error.h"
#include "core/layout.h"
#include "core/sizes.h"
#include "cuda/group_table.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"
#include "generic/dequantize.h"

namespace mxq {
namespace cuda {
namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

size_t out_size(mxqDataType_t t) { return t == MXQ_DTYPE_FP32 ? 4 : 2; }

std::string kernel_name(const char* kind, const DequantizeDesc& d) {
  const char* in = d.in_dtype == MXQ_DTYPE_E5M2 ? "e5m2" : "e4m3";
  const char* out = d.out_dtype == MXQ_DTYPE_FP32 ? "f32" : d.out_dtype == MXQ_DTYPE_FP16 ? "f16" : "bf16";
  return std::string("mxq_dequantize_") + kind + "_" + in + "_" + out;
}

unsigned pow2_at_least(int64_t v, unsigned cap) {
  unsigned p = 1;
  while (p < cap && static_cast<int64_t>(p) < v) p <<= 1;
  return p;
}

unsigned grid_dim(int64_t n, int64_t cap) { return static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(n, 1), cap)); }

constexpr int64_t kMaxGridYZ = 65535;  // the kernels loop over y and z beyond this

class DequantizeOp final : public OpImpl {
 public:
  DequantizeOp(const DequantizeDesc& d, Device& dev, bool transposed)
      : d_(d), dev_(&dev), transposed_(transposed), kernel_(kernel_name(transposed ? "transposed" : "direct", d)),
        fn_(dev.kernel(kernel_.c_str())) {
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    const bool rowwise = d.direction == MXQ_QUANTIZE_ROWWISE;
    const ScaleExtent ext = rowwise ? rowwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups)
                                    : colwise_scale_extent(swz, d.rows, d.cols, d.grouping, d.num_groups);
    base_ = DequantizeParams{};
    base_.num_groups = d.grouping == MXQ_GROUPING_ROWS ? d.num_groups : 0;
    base_.rows = d.rows;
    base_.cols = d.cols;
    base_.batch = d.batch;
    base_.out_ld = d.out_ld;
    base_.scale_cols_extent = ext.cols;
    base_.scale_batch_stride = ext.rows * ext.cols;
    base_.swizzled = swz ? 1 : 0;
    base_.columnwise = rowwise ? 0 : 1;
    if (d.grouping == MXQ_GROUPING_ROWS) groups_ = std::make_unique<GroupTableBuilder>(dev);

    if (transposed_) {
      block_ = Dim3{static_cast<unsigned>(kDequantThreads), 1, 1};
      grid_ = Dim3{static_cast<unsigned>(layout::ceil_div(d.rows, kDequantTileR)),
                   grid_dim(layout::ceil_div(d.cols, kDequantTileK), kMaxGridYZ), grid_dim(d.batch, kMaxGridYZ)};
    } else {
      // A row's 16-element chunks across x, as many rows as fit in 256 threads across y. (Capping
      // x at a warp to waste fewer idle threads on ragged rows measured ~8% slower on H100 for
      // 8192x7168 -> fp32: fewer, longer rows per block keep more bytes in flight.)
      const int64_t chunks = layout::ceil_div(d.cols, 16);
      const unsigned tx = pow2_at_least(chunks, kDequantThreads);
      const unsigned ty = kDequantThreads / tx;
      block_ = Dim3{tx, ty, 1};
      grid_ = Dim3{static_cast<unsigned>(layout::ceil_div(chunks, tx)), grid_dim(layout::ceil_div(d.rows, ty), kMaxGridYZ),
                   grid_dim(d.batch, kMaxGridYZ)};
    }
  }

  std::string name() const override { return kernel_; }
  std::string reason() const override {
    return fmt::format("kernel {}, grid {}x{}x{}, block {}x{}{}", kernel_, grid_.x, grid_.y, grid_.z, block_.x, block_.y,
                       groups_ ? ", group table built on the device" : "");
  }
  size_t workspace_bytes() const override {
    return groups_ ? GroupTableBuilder::workspace_bytes(d_.num_groups) : 0;
  }

  void run(const ExecArgs& args, void* workspace, size_t, mxqStream_t stream) const override {
    const bool rowwise = d_.direction == MXQ_QUANTIZE_ROWWISE;
    DequantizeParams p = base_;
    p.data = args.as<const uint8_t>(rowwise ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA);
    p.scales = args.as<const uint8_t>(rowwise ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES);
    p.out = args.get(MXQ_ARG_X);
    MXQ_REQUIRE(p.data && p.scales && p.out, MXQ_STATUS_BAD_PARAM_ARGUMENT, "dequantize: data, scales and X are required");
    const int64_t data_row = transposed_ ? d_.rows : d_.cols;
    p.vec_in = aligned16(p.data) && data_row % 16 == 0;
    p.vec_out = aligned16(p.out) && (d_.out_ld * static_cast<int64_t>(out_size(d_.out_dtype))) % 16 == 0;
    if (groups_) {
      const void* offsets = args.get(MXQ_ARG_GROUP_OFFSETS);
      MXQ_REQUIRE(offsets, MXQ_STATUS_BAD_PARAM_ARGUMENT, "dequantize: group offsets are required with GROUPING_ROWS");
      const GroupTableView t = groups_->enqueue(offsets, d_.offsets_dtype, d_.num_groups, d_.rows,
                                                d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4, workspace, stream);
      p.group_ends = t.ends;
      p.group_base = rowwise ? t.row_base : t.col_base;
    }
    void* params[] = {&p};
    dev_->launch(fn_, grid_, block_, 0, stream, params, kernel_.c_str());
  }

 private:
  DequantizeDesc d_;
  Device* dev_;
  bool transposed_;
  std::string kernel_;
  CUfunction fn_;
  DequantizeParams base_;
  std::unique_ptr<GroupTableBuilder> groups_;
  Dim3 grid_, block_;
};

// Grid x counts tiles (transposed) or chunk columns (direct) and has no loop behind it.
std::string grid_fits(const DequantizeDesc& d, bool transposed) {
  const int64_t x = transposed ? layout::ceil_div(d.rows, kDequantTileR) : layout::ceil_div(d.cols, 16);
  if (x > INT_MAX) return fmt::format("{} {} exceed the grid", transposed ? "rows" : "columns", transposed ? d.rows : d.cols);
  return {};
}

}  // namespace

void register_dequantize_kernels(Registry& r) {
  const std::vector<mxqDataType_t> fp8 = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
  const std::vector<mxqDataType_t> hp = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32};

  KernelEntry<DequantizeDesc> transposed;
  transposed.name = "generic.dequantize.transposed";
  transposed.arch = ArchRange{90, kAnyNewer};
  transposed.in_dtypes = fp8;
  transposed.out_dtypes = hp;
  transposed.variant = "columnwise K-major input: 128x64 tiles transposed through shared memory, 16-byte accesses";
  transposed.priority = 10;
  transposed.supports = [](const DequantizeDesc& d, const DeviceInfo&) -> std::string {
    if (d.direction != MXQ_QUANTIZE_COLUMNWISE || !d.colwise_transposed) return "reads only transposed columnwise data";
    return grid_fits(d, true);
  };
  transposed.make = [](const DequantizeDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<DequantizeOp>(d, dev, true);
  };
  r.add(std::move(transposed));

  KernelEntry<DequantizeDesc> direct;
  direct.name = "generic.dequantize.direct";
  direct.arch = ArchRange{90, kAnyNewer};
  direct.in_dtypes = fp8;
  direct.out_dtypes = hp;
  direct.variant = "row-major input (rowwise, or columnwise not transposed): 16 elements per thread, 16-byte accesses";
  direct.priority = 0;
  direct.supports = [](const DequantizeDesc& d, const DeviceInfo&) -> std::string {
    if (d.direction == MXQ_QUANTIZE_COLUMNWISE && d.colwise_transposed) return "needs row-major data";
    return grid_fits(d, false);
  };
  direct.make = [](const DequantizeDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<DequantizeOp>(d, dev, false);
  };
  r.add(std::move(direct));
}

}  // namespace cuda
}  // namespace mxq
