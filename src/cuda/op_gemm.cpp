// Host side of the GPU grouped GEMM: which plans the sm_90a MXFP8 kernel (kernels/sm90/gemm_mxfp8.cu)
// can run and why not otherwise, the launch geometry, and the registry entry. Everything the kernel
// needs is resolved here from the immutable plan (scale extents and strides through core/layout.h)
// so Execute only fills pointers and launches: no allocation, no host synchronization, so a plan
// can be captured into a CUDA graph.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/layout.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"
#include "sm90/gemm_params.cuh"

namespace mxq {
namespace cuda {
namespace {

const char* fp8_tag(mxqDataType_t t) { return t == MXQ_DTYPE_E5M2 ? "e5m2" : "e4m3"; }

bool grouped_m(const GemmDesc& d) { return d.grouping == MXQ_GEMM_GROUPING_M; }
bool grouped_k(const GemmDesc& d) { return d.grouping == MXQ_GEMM_GROUPING_K; }
// M- or K-grouped: the kernel reads device-side group ends into its shared-memory table.
bool grouped(const GemmDesc& d) { return grouped_m(d) || grouped_k(d); }
int64_t kernel_groups(const GemmDesc& d) { return grouped(d) ? d.num_groups : d.batch; }

// Why the sm_90a kernel cannot run this plan, or "" when it can.
std::string sm90_supports(const GemmDesc& d, const DeviceInfo& dev) {
  if (d.a_dtype == MXQ_DTYPE_E5M2 && d.b_dtype == MXQ_DTYPE_E5M2) return "A and B both E5M2 is not a valid MXFP8 GEMM";
  if (d.b_dtype != MXQ_DTYPE_E4M3 && d.b_dtype != MXQ_DTYPE_E5M2) return "B must be E4M3 or E5M2";
  if (d.d_dtype != MXQ_DTYPE_BF16 && d.d_dtype != MXQ_DTYPE_FP32) return "D must be BF16 or FP32";
  if (d.k % 16 != 0)
    return fmt::format("K = {} is not a multiple of 16 (FP8 rows must be 16-byte aligned for the async copies)", d.k);
  if (grouped(d)) {
    if (d.num_groups > kGemmSm90MaxGroups)
      return fmt::format("{} groups exceed the kernel's shared-memory group table ({})", d.num_groups,
                         kGemmSm90MaxGroups);
    if (grouped_m(d) && d.m >= (int64_t(1) << 31))
      return fmt::format("M = {} rows exceeds the 32-bit group table", d.m);
    // The table holds token ends and scale column bases (< K/32 + 4G) as int32.
    if (grouped_k(d) && d.k >= (int64_t(1) << 31))
      return fmt::format("K = {} tokens exceeds the 32-bit group table", d.k);
  } else if (d.batch >= (int64_t(1) << 31)) {
    return fmt::format("batch = {} exceeds 2^31", d.batch);
  }
  const int64_t smem = gemm_sm90_smem_bytes(grouped(d) ? d.num_groups : 0);
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

// The BF16-path kernel: the same plans, unless the caller hinted 32x32 B blocks (the FP8-wgmma
// kernel's one-FFMA promotion is meant for those).
std::string sm90_bf16_supports(const GemmDesc& d, const DeviceInfo& dev) {
  if (d.b_block_2d) return "B_BLOCK_2D hint set: the FP8-wgmma promotion kernel takes 32x32-block weights";
  std::string why = sm90_supports(d, dev);
  if (!why.empty()) return why;
  const int64_t smem = gemm_sm90_bf16_smem_bytes(grouped(d) ? d.num_groups : 0) + 64;  // + static (scan buffer)
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

class GemmSm90 final : public OpImpl {
 public:
  // bf16path: kernels/sm90/gemm_mxfp8_bf16.cu (exact conversion to bf16, bf16 wgmma); else
  // kernels/sm90/gemm_mxfp8.cu (FP8 wgmma, per-32-block promotion on the CUDA cores).
  GemmSm90(const GemmDesc& d, Device& dev, bool bf16path) : d_(d), dev_(dev), bf16path_(bf16path) {
    const std::string kname = fmt::format("mxq_gemm_sm90_{}{}_{}_{}", bf16path ? "bf16path_" : "", fp8_tag(d.a_dtype),
                                          fp8_tag(d.b_dtype), d.d_dtype == MXQ_DTYPE_FP32 ? "f32" : "bf16");
    fn_ = dev.kernel(kname.c_str());
    kname_ = kname;
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    const int64_t kc = layout::scale_cols(d.k);
    base_.n = d.n;
    base_.k = d.k;
    base_.scale_ld = swz ? layout::swz_cols(kc) : kc;
    base_.b_scale_stride = layout::scale_bytes(swz, d.n, kc);
    base_.groups = static_cast<int32_t>(kernel_groups(d));
    base_.offsets_i64 = d.offsets_dtype == MXQ_DTYPE_INT64;
    base_.swizzled = swz;
    base_.accumulate = d.accumulate;
    base_.alpha = d.alpha;
    if (grouped_k(d)) {
      // One A [M, K], one B [N, K]; both scale tensors span the column bound of any token split.
      base_.kgrouped = 1;
      base_.scale_ld = layout::kgroup_scale_cols_bound(swz, d.k, d.num_groups);
      base_.b_scale_stride = 0;
      base_.rows_total = d.m;
      base_.rows_per_group = 0;
      max_m_tiles_ = layout::ceil_div(d.m, kGemmSm90TileM) * d.num_groups;
      smem_ = smem_bytes(d.num_groups);
    } else if (grouped_m(d)) {
      base_.rows_total = d.m;
      base_.rows_per_group = 0;
      // Every group adds at most one partial m-tile to the full ones.
      max_m_tiles_ = layout::ceil_div(d.m, kGemmSm90TileM) + d.num_groups;
      smem_ = smem_bytes(d.num_groups);
    } else {
      base_.rows_total = d.batch * d.m;
      base_.rows_per_group = d.m;
      max_m_tiles_ = layout::ceil_div(d.m, kGemmSm90TileM) * d.batch;
      smem_ = smem_bytes(0);
    }
  }

  std::string name() const override { return kname_; }
  std::string reason() const override {
    return bf16path_ ? "sm_90a bf16 wgmma on MXFP8 operands converted exactly to bf16 in the kernel"
                     : "sm_90a FP8 wgmma MXFP8 kernel with per-32-block promotion";
  }

  size_t required_alignment(mxqArgSlot_t slot) const override {
    switch (slot) {
      case MXQ_ARG_A_DATA:
      case MXQ_ARG_B_DATA:
        return 16;  // 16-byte async copies
      case MXQ_ARG_A_SCALES:
      case MXQ_ARG_B_SCALES:
        return d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4 ? 4 : 1;  // one word per row and stage
      case MXQ_ARG_D: {
        const size_t elem = d_.d_dtype == MXQ_DTYPE_FP32 ? 4 : 2;
        return d_.n % 2 == 0 ? 2 * elem : elem;  // element pairs when rows keep pair alignment
      }
      case MXQ_ARG_GROUP_OFFSETS:
        return d_.offsets_dtype == MXQ_DTYPE_INT64 ? 8 : 4;
      default:
        return 1;
    }
  }

  void run(const ExecArgs& args, void*, size_t, mxqStream_t stream) const override {
    GemmSm90Params p = base_;
    p.a = args.as<const uint8_t>(MXQ_ARG_A_DATA);
    p.b = args.as<const uint8_t>(MXQ_ARG_B_DATA);
    p.a_scales = args.as<const uint8_t>(MXQ_ARG_A_SCALES);
    p.b_scales = args.as<const uint8_t>(MXQ_ARG_B_SCALES);
    p.d = args.get(MXQ_ARG_D);
    p.group_ends = grouped(d_) ? args.get(MXQ_ARG_GROUP_OFFSETS) : nullptr;
    MXQ_REQUIRE(p.a && p.b && p.a_scales && p.b_scales && p.d, MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "grouped GEMM: A_DATA, A_SCALES, B_DATA, B_SCALES and D are required");
    MXQ_REQUIRE(!grouped(d_) || p.group_ends, MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "grouped GEMM: GROUP_OFFSETS is required when grouped");
    // Persistent launch: one CTA per SM at most, never more than the tile count can use.
    const int64_t tiles = max_m_tiles_ * layout::ceil_div(d_.n, bf16path_ ? kGemmSm90Bf16TileN : kGemmSm90TileN);
    const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(tiles, dev_.sm_count()));
    Dim3 g, b;
    g.x = static_cast<unsigned>(grid);
    b.x = bf16path_ ? kGemmSm90Bf16Threads : kGemmSm90Threads;
    void* params[] = {&p};
    dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
  }

 private:
  int64_t smem_bytes(int64_t groups) const {
    return bf16path_ ? gemm_sm90_bf16_smem_bytes(groups) : gemm_sm90_smem_bytes(groups);
  }

  GemmDesc d_;
  Device& dev_;
  bool bf16path_;
  CUfunction fn_ = nullptr;
  std::string kname_;
  GemmSm90Params base_{};
  int64_t max_m_tiles_ = 0;
  int64_t smem_ = 0;
};

}  // namespace

void register_gemm_kernels(Registry& r) {
  {
    KernelEntry<GemmDesc> e;
    e.name = "sm90.gemm.mxfp8.bf16path";
    e.arch = {90, 90};
    e.in_dtypes = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
    e.out_dtypes = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP32};
    e.variant = "FP8 x 2^k converted exactly to bf16 in the kernel, bf16 wgmma m64n128k16 (A from registers), "
                "128x256 tiles, producer warpgroup + 2 consumers, persistent over M groups / K groups / batch";
    e.priority = 1;
    e.supports = sm90_bf16_supports;
    e.make = [](const GemmDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
      return std::make_unique<GemmSm90>(d, dev, true);
    };
    r.add(std::move(e));
  }
  KernelEntry<GemmDesc> e;
  e.name = "sm90.gemm.mxfp8.wgmma";
  e.arch = {90, 90};
  e.in_dtypes = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
  e.out_dtypes = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP32};
  e.variant = "wgmma m64n128k32, 128x128 tiles, persistent over M groups / K groups / batch, per-32-block promotion";
  e.priority = 0;
  e.supports = sm90_supports;
  e.make = [](const GemmDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<GemmSm90>(d, dev, false);
  };
  r.add(std::move(e));
}

}  // namespace cuda
}  // namespace mxq
