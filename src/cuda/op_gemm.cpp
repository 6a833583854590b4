// Host side of the GPU grouped GEMM: which plans each sm_90a MXFP8 kernel (kernels/sm90/gemm_mxfp8*.cu:
// the decode kernel, the TMA kernel, the cp.async BF16 path, the FP8-wgmma kernel) can run and why not
// otherwise, the launch geometry, and the registry entries. Everything the kernel
// needs is resolved here from the immutable plan (scale extents and strides through core/layout.h)
// so Execute only fills pointers and launches: no allocation, no host synchronization, so a plan
// can be captured into a CUDA graph.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

// Whether the TMA kernel takes B dequantized ahead into a bf16 workspace (kernels/sm90/gemm_mxfp8_tma.cu,
// bprep_staged_body): plans whose B tiles are used by enough m-tiles (groups of >= 512
// rows on average; K-grouped: M >= 512) that converting each B element once (5 bytes of traffic
// instead of 1) beats converting it in every m-tile (measured: see docs/PERFORMANCE.md).
// MXQ_GEMM_SM90_BPREP=0 / 1 overrides the rule.
constexpr int64_t kBPrepMinRowsPerGroup = 512;
constexpr int64_t kBPrepMinTokensPerGroup = 1024;  // K-grouped: shorter K ranges are prologue-bound
size_t bprep_bytes(const GemmDesc& d);
bool use_bprep(const GemmDesc& d) {
  if (static_cast<int64_t>(bprep_bytes(d)) > d.workspace_limit) return false;  // MXQ_GEMM_ATTR_WORKSPACE_LIMIT
  if (const char* env = std::getenv("MXQ_GEMM_SM90_BPREP"); env && *env) return std::string(env) != "0";
  if (grouped_k(d))
    return d.m >= kBPrepMinRowsPerGroup && d.k / std::max<int64_t>(1, d.num_groups) >= kBPrepMinTokensPerGroup;
  const int64_t rows_per_group = grouped_m(d) ? d.m / std::max<int64_t>(1, d.num_groups) : d.m;
  return rows_per_group >= kBPrepMinRowsPerGroup;
}
// K-grouped plans with M >= 512 and groups of fewer than kBpStoreMaxTokensPerGroup tokens on average
// (wgrad E128: ~256, E32: 2048) dequantize B ahead and store D by TMA from the kernel's own staging
// when they can (the `_kgrouped_bpre_tma` entry points): with B converted in the kernel each of the
// M / 128 m-tiles converts the same B stages again, and with direct stores the epilogue of these
// few-stage tiles outweighed the saving. Longer groups (E8: 8192) keep the direct stores of the
// `_kgrouped_bpre` instance (the TMA store measured 1-3% slower there: docs/PERFORMANCE.md, "Tenth
// session"). D written whole (no accumulate), rows of whole 16-byte units, and the staging must fit
// beside the group table (G <= 239 with an H100's 227 KiB).
// MXQ_GEMM_SM90_BPREP_TMA=0 / 1 overrides the rule (MXQ_GEMM_SM90_BPREP=0 turns it off as well).
constexpr int64_t kBpStoreMaxTokensPerGroup = 4096;
// Whether a plan's D can go out by TMA stores: written whole (no accumulate), not empty, its rows whole
// 16-byte units (the tensor map's strides; M-grouped / dense tiles that end inside a group copy whole
// 16-byte units out of the staging). Execute still checks D's pointer.
bool tma_store_shape(const GemmDesc& d) {
  const int64_t d_esz = d.d_dtype == MXQ_DTYPE_FP32 ? 4 : 2;
  return !d.accumulate && d.m > 0 && d.n > 0 && kernel_groups(d) > 0 && (d.n * d_esz) % 16 == 0;
}
bool kgrouped_tma_store_shape(const GemmDesc& d) { return grouped_k(d) && tma_store_shape(d); }
bool bp_store_possible(const GemmDesc& d, int64_t smem_optin) {
  return tma_store_shape(d) && gemm_sm90_tma_bp_store_smem_bytes(grouped(d) ? d.num_groups : 0) + 64 <= smem_optin &&
         static_cast<int64_t>(bprep_bytes(d)) <= d.workspace_limit;
}
// M-grouped and dense plans that dequantize B ahead store D by TMA the same way (the `_bpre_tma` entry
// points) when K <= kBpStoreMaxK: measured 2026-11-22, fprop E32 (K 4096: 64 stages per tile) +2.7%,
// fprop E8 (K 7168) -1.3% and dense 8192^3 -0.7% (docs/PERFORMANCE.md, "Eleventh session"); longer
// tiles keep the direct stores of the `_bpre` instance.
constexpr int64_t kBpStoreMaxK = 4096;
bool use_bp_store(const GemmDesc& d, int64_t smem_optin) {
  if (!bp_store_possible(d, smem_optin)) return false;
  if (const char* env = std::getenv("MXQ_GEMM_SM90_BPREP"); env && std::string(env) == "0") return false;
  if (!grouped_k(d) && !use_bprep(d)) return false;  // M-grouped / dense: only on the B-ahead path
  if (const char* env = std::getenv("MXQ_GEMM_SM90_BPREP_TMA"); env && *env) return std::string(env) != "0";
  if (!grouped_k(d)) return d.k <= kBpStoreMaxK;
  return d.m >= kBPrepMinRowsPerGroup && d.k / std::max<int64_t>(1, d.num_groups) < kBpStoreMaxTokensPerGroup;
}
// Row length of the dequantized B (kernels/sm90/gemm_params.cuh).
int64_t bprep_row(const GemmDesc& d) {
  return grouped_k(d) ? gemm_sm90_bprep_row_kgrouped(d.k, d.num_groups) : gemm_sm90_bprep_row(d.k);
}
// Workspace of the dequantized B: (K-grouped: the group-table header, then) [rows, bprep_row] bf16
// (K-grouped: then, 256-byte aligned, A's FP8 copy [M, bprep_row] for the groups that start unaligned).
int64_t bprep_b_bytes(const GemmDesc& d) {
  const int64_t rows = grouped_k(d) ? d.n : kernel_groups(d) * d.n;
  return (rows * bprep_row(d) * 2 + 255) / 256 * 256;
}
size_t bprep_bytes(const GemmDesc& d) {
  if (!grouped_k(d)) return static_cast<size_t>(bprep_b_bytes(d));
  return static_cast<size_t>(gemm_sm90_bprep_header_bytes(d.num_groups) + bprep_b_bytes(d) +
                             gemm_sm90_arelayout_bytes(d.m, bprep_row(d)));
}

// M-grouped plans whose A is the smaller operand (M < G * N: many experts with wide weights) and whose
// groups hold >= kAPrepMinRowsPerGroup rows on average (>= kAPrepMinRowsLongK when K >= kAPrepLongK)
// dequantize A ahead and run the TMA kernel with the operands swapped (the `_apre` entry points,
// kernels/sm90/gemm_mxfp8_tma.cu): D^T tiles of 128 weight rows (B's FP8 rows, converted in the kernel,
// once per 256-token tile) x 256 tokens (bf16 from the workspace). The smaller operand takes the 5
// bytes of traffic per element of the pre-kernel, and B is not converted once per 128-row m-tile as
// on the in-kernel path. Measured (docs/PERFORMANCE.md, "Twenty-seventh session"): fprop E128 (256
// rows) +5% over the in-kernel path, E64 N2048 K7168 at 192-512 rows +13-25%; 128 rows at K 2048 -2%,
// 192 rows there even. MXQ_GEMM_SM90_APRE=0 / 1 overrides the rule.
constexpr int64_t kAPrepMinRowsPerGroup = 256;
constexpr int64_t kAPrepMinRowsLongK = 192;
constexpr int64_t kAPrepLongK = 4096;
size_t apre_bytes(const GemmDesc& d) {
  return static_cast<size_t>(gemm_sm90_bprep_header_bytes(d.num_groups) +
                             (d.m * gemm_sm90_bprep_row(d.k) * 2 + 255) / 256 * 256);
}
bool use_apre(const GemmDesc& d) {
  if (!grouped_m(d) || d.m <= 0 || d.num_groups <= 0) return false;
  if (static_cast<int64_t>(apre_bytes(d)) > d.workspace_limit) return false;  // MXQ_GEMM_ATTR_WORKSPACE_LIMIT
  if (const char* env = std::getenv("MXQ_GEMM_SM90_APRE"); env && *env) return std::string(env) != "0";
  if (const char* env = std::getenv("MXQ_GEMM_SM90_BPREP"); env && *env) return false;  // B ahead forced on / off
  const int64_t rows_per_group = d.m / d.num_groups;
  return d.m < d.num_groups * d.n &&
         (rows_per_group >= kAPrepMinRowsPerGroup || (rows_per_group >= kAPrepMinRowsLongK && d.k >= kAPrepLongK));
}

// The TMA BF16-path kernel: the BF16 path's plans whose coordinates fit TMA's int32 box origins.
std::string sm90_tma_supports(const GemmDesc& d, const DeviceInfo& dev) {
  if (d.b_block_2d) return "B_BLOCK_2D hint set: the FP8-wgmma promotion kernel takes 32x32-block weights";
  if (const char* env = std::getenv("MXQ_GEMM_SM90_TMA"); env && std::string(env) == "0")
    return "disabled by MXQ_GEMM_SM90_TMA=0";
  std::string why = sm90_supports(d, dev);
  if (!why.empty()) return why;
  const int64_t a_rows = grouped(d) ? d.m : d.batch * d.m;
  const int64_t b_rows = grouped_k(d) ? d.n : kernel_groups(d) * d.n;
  if (a_rows >= (int64_t(1) << 31) || b_rows >= (int64_t(1) << 31) || d.k >= (int64_t(1) << 31))
    return fmt::format("A rows {} / B rows {} / K {} exceed TMA's 32-bit coordinates", a_rows, b_rows, d.k);
  const int64_t groups_in_table = grouped(d) ? d.num_groups : 0;
  const int64_t smem = (use_bp_store(d, dev.smem_optin) ? gemm_sm90_tma_bp_store_smem_bytes(groups_in_table)
                       : use_bprep(d) || use_apre(d)     ? gemm_sm90_tma_bp_smem_bytes(groups_in_table)
                                                         : gemm_sm90_tma_smem_bytes(groups_in_table)) +
                       64;  // + static (scan buffer)
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

// The 32x32-weight kernel (kernels/sm90/gemm_mxfp8_fp8b2d.cu): M-grouped and dense plans with the
// B_BLOCK_2D hint (one FFMA per element and 32-block; it reads B's scale from the first row of each
// 32-row block, so B's scales must repeat over 32 rows: the hint's contract). K-grouped plans, and
// group tables too large for its shared memory, keep the first FP8-wgmma kernel.
// MXQ_GEMM_SM90_FP8B2D=0 declines every plan (measurements).
std::string sm90_fp8b2d_supports(const GemmDesc& d, const DeviceInfo& dev) {
  if (!d.b_block_2d) return "no B_BLOCK_2D hint: B's scales may differ row by row";
  if (grouped_k(d)) return "K-grouped (wgrad): the FP8-wgmma kernel with per-element promotion takes it";
  if (const char* env = std::getenv("MXQ_GEMM_SM90_FP8B2D"); env && std::string(env) == "0")
    return "disabled by MXQ_GEMM_SM90_FP8B2D=0";
  std::string why = sm90_supports(d, dev);
  if (!why.empty()) return why;
  const int64_t a_rows = grouped(d) ? d.m : d.batch * d.m;
  const int64_t b_rows = kernel_groups(d) * d.n;
  if (a_rows >= (int64_t(1) << 31) || b_rows >= (int64_t(1) << 31) || d.k >= (int64_t(1) << 31))
    return fmt::format("A rows {} / B rows {} / K {} exceed TMA's 32-bit coordinates", a_rows, b_rows, d.k);
  const int64_t smem = gemm_sm90_fp8b2d_smem_bytes(grouped(d) ? d.num_groups : 0) + 64;  // + static (scan buffer)
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

// The decode kernel (kernels/sm90/gemm_mxfp8_decode.cu): M-grouped plans with at most 32 rows per
// group on average (M <= 32 G), where the GEMM is a stream over B and the 128 x 256 tiles of the TMA
// kernel leave most of each tile empty. T (tokens per tile) leaves room above the average, since
// routed groups are uneven and a group above T takes a second pass over its B rows: 8 up to 4 rows
// per group on average, 16 up to 8, else 32 (a tile only converts and multiplies the 8-token n-tiles
// its chunk fills, so a larger T costs little). MXQ_GEMM_SM90_DECODE=0 declines every plan, =1 takes
// every M-grouped plan it can run whatever its group sizes (measurements, tests).
constexpr int64_t kDecodeMaxRowsPerGroup = 32;
int decode_tokens(const GemmDesc& d) {
  if (const char* env = std::getenv("MXQ_GEMM_SM90_DECODE_TOKENS"); env && *env) {
    const std::string v(env);
    if (v == "8" || v == "16" || v == "32") return std::atoi(env);
  }
  const int64_t avg = layout::ceil_div(d.m, std::max<int64_t>(1, d.num_groups));
  return avg <= 4 ? 8 : avg <= 8 ? 16 : 32;
}
// Two CTAs per SM (4-deep rings) when two fit in shared memory, else one (8-deep ring). (The pair
// form below needs at most this shared memory, so the count holds for it too.)
int decode_ctas_per_sm(const GemmDesc& d, const DeviceInfo& dev) {
  if (const char* env = std::getenv("MXQ_GEMM_SM90_DECODE_CTAS"); env && (std::string(env) == "1" || std::string(env) == "2"))
    return std::atoi(env);
  const int64_t per_sm = dev.smem_optin + 1024;  // one CTA may take all but the 1 KiB the SM reserves per CTA
  return 2 * (gemm_sm90_decode_smem_bytes(decode_tokens(d), 2, d.num_groups) + 64 + 1024) <= per_sm ? 2 : 1;
}
// The pair form (a ring slot of two K stages, each B row's 256 bytes one TMA request; E64 x 16 0.386
// -> 0.362 ms, docs/PERFORMANCE.md, eleventh session): two CTAs per SM (measured slower with one) and
// B viewed as [rows][K / 128][128] (K % 128 == 0). Its shared memory is at most the plain form's.
bool decode_pair(const GemmDesc& d, int ctas) { return ctas == 2 && d.k % 128 == 0; }
int64_t decode_smem(const GemmDesc& d, int t, int ctas) {
  return decode_pair(d, ctas) ? gemm_sm90_decode_pair_smem_bytes(t, ctas, d.num_groups)
                              : gemm_sm90_decode_smem_bytes(t, ctas, d.num_groups);
}
// Tiles of any split of M rows into G groups: each group adds at most one partial token chunk.
int64_t decode_max_tiles(const GemmDesc& d, int t) {
  return layout::ceil_div(d.n, static_cast<int64_t>(kGemmSm90DecodeTileN)) * (d.num_groups + layout::ceil_div(d.m, t));
}
// kernels/sm90/gemm_params.cuh: counters, then two partial tiles per CTA (one launch of `ctas`).
size_t decode_workspace(const GemmDesc& d, int t, int64_t ctas) {
  return static_cast<size_t>(gemm_sm90_decode_counter_bytes(decode_max_tiles(d, t)) +
                             gemm_sm90_decode_partial_bytes(t, ctas));
}
std::string sm90_decode_supports(const GemmDesc& d, const DeviceInfo& dev) {
  if (d.b_block_2d) return "B_BLOCK_2D hint set: the FP8-wgmma promotion kernel takes 32x32-block weights";
  if (!grouped_m(d)) return "not M-grouped";
  const char* env = std::getenv("MXQ_GEMM_SM90_DECODE");
  if (env && std::string(env) == "0") return "disabled by MXQ_GEMM_SM90_DECODE=0";
  const bool forced = env && std::string(env) == "1";
  if (!forced && d.m > kDecodeMaxRowsPerGroup * d.num_groups)
    return fmt::format("{} rows for {} groups: more than {} per group on average", d.m, d.num_groups,
                       kDecodeMaxRowsPerGroup);
  std::string why = sm90_supports(d, dev);
  if (!why.empty()) return why;
  if (d.m >= (int64_t(1) << 31) || d.num_groups * d.n >= (int64_t(1) << 31) || d.k >= (int64_t(1) << 31))
    return fmt::format("A rows {} / B rows {} / K {} exceed TMA's 32-bit coordinates", d.m, d.num_groups * d.n, d.k);
  const int t = decode_tokens(d);
  if (decode_max_tiles(d, t) * 8 >= (int64_t(1) << 31))
    return fmt::format("{} tiles exceed the kernel's 32-bit tile indices", decode_max_tiles(d, t));
  const int ctas = decode_ctas_per_sm(d, dev);
  const int64_t smem = decode_smem(d, t, ctas) + 64;  // + static (scan buffer)
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  const size_t ws = decode_workspace(d, t, int64_t(ctas) * dev.sm_count);
  if (static_cast<int64_t>(ws) > d.workspace_limit)
    return fmt::format("needs {} bytes of workspace, above the plan's limit {}", ws, d.workspace_limit);
  return {};
}

// The kernel parameters every sm_90a GEMM entry fills the same way from the plan (K-major operands,
// per-group B scale tensors, row-major D); each entry adds its own grouping fields.
GemmSm90Params sm90_base_params(const GemmDesc& d, int64_t groups) {
  GemmSm90Params p{};
  const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const int64_t kc = layout::scale_cols(d.k);
  p.n = d.n;
  p.k = d.k;
  p.scale_ld = swz ? layout::swz_cols(kc) : kc;
  p.b_scale_stride = layout::scale_bytes(swz, d.n, kc);
  p.groups = static_cast<int32_t>(groups);
  p.offsets_i64 = d.offsets_dtype == MXQ_DTYPE_INT64;
  p.swizzled = swz;
  p.accumulate = d.accumulate;
  p.alpha = d.alpha;
  return p;
}

enum class Sm90Kernel { Fp8Promotion, Bf16Path, Bf16Tma, Fp8B2d };

class GemmSm90 final : public OpImpl {
 public:
  // bf16path: kernels/sm90/gemm_mxfp8_bf16.cu (exact conversion to bf16, bf16 wgmma); else
  // kernels/sm90/gemm_mxfp8.cu (FP8 wgmma, per-32-block promotion on the CUDA cores).
  GemmSm90(const GemmDesc& d, Device& dev, Sm90Kernel kind) : d_(d), dev_(dev), kind_(kind) {
    const char* tag = kind == Sm90Kernel::Bf16Tma    ? "tma_"
                      : kind == Sm90Kernel::Bf16Path ? "bf16path_"
                      : kind == Sm90Kernel::Fp8B2d   ? "fp8b2d_"
                                                     : "";
    apre_ = kind == Sm90Kernel::Bf16Tma && use_apre(d);
    bp_store_ = kind == Sm90Kernel::Bf16Tma && !apre_ && use_bp_store(d, dev.info().smem_optin);
    bprep_ = kind == Sm90Kernel::Bf16Tma && !apre_ && (bp_store_ || use_bprep(d));
    const std::string kname =
        fmt::format("mxq_gemm_sm90_{}{}_{}_{}{}{}", tag, fp8_tag(d.a_dtype), fp8_tag(d.b_dtype),
                    d.d_dtype == MXQ_DTYPE_FP32 ? "f32" : "bf16",
                    kind == Sm90Kernel::Bf16Tma && grouped_k(d) ? "_kgrouped" : "",
                    apre_ ? "_apre" : bp_store_ ? "_bpre_tma" : bprep_ ? "_bpre" : "");
    fn_ = dev.kernel(kname.c_str());
    kname_ = kname;
    if (bp_store_) {  // where D is not 16-byte aligned at Execute: the same plan with direct stores
      fn_direct_name_ = kname.substr(0, kname.rfind("_tma"));  // "..._bpre"
      fn_direct_ = dev.kernel(fn_direct_name_.c_str());
    }
    if (apre_) {  // A's dtype: the same pre-kernel, on A's rows (b = A, one group of M rows)
      const std::string pname = fmt::format("mxq_gemm_sm90_bprep_{}", fp8_tag(d.a_dtype));
      fn_prep_ = dev.kernel(pname.c_str());
      fn_table_ = dev.kernel("mxq_gemm_sm90_bprep_table");
      kname_ += " + " + pname;
    }
    if (bprep_) {
      const std::string pname =
          fmt::format("mxq_gemm_sm90_bprep_{}{}", fp8_tag(d.b_dtype), grouped_k(d) ? "_kgrouped" : "");
      fn_prep_ = dev.kernel(pname.c_str());
      kname_ += " + " + pname;
      if (grouped_k(d)) {
        fn_table_ = dev.kernel("mxq_gemm_sm90_bprep_table");
        fn_acopy_ = dev.kernel("mxq_gemm_sm90_arelayout_kgrouped");
        kname_ += " + mxq_gemm_sm90_arelayout_kgrouped";
      }
    }
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    base_ = sm90_base_params(d, kernel_groups(d));
    if (grouped_k(d)) {
      // One A [M, K], one B [N, K]; both scale tensors span the column bound of any token split.
      base_.kgrouped = 1;
      base_.scale_ld = layout::kgroup_scale_cols_bound(swz, d.k, d.num_groups);
      base_.b_scale_stride = 0;
      base_.rows_total = d.m;
      base_.rows_per_group = 0;
      // TMA kernel: walk a group's m-tiles fastest when its B slice (N rows; bf16 when dequantized
      // ahead) outweighs its A slice (M rows of FP8), so the smaller one stays in L2.
      base_.m_inner = kind == Sm90Kernel::Bf16Tma && d.n * (bprep_ ? 2 : 1) > d.m;
      max_m_tiles_ = layout::ceil_div(d.m, kGemmSm90TileM) * d.num_groups;
      smem_ = smem_bytes(d.num_groups);
    } else if (grouped_m(d)) {
      base_.rows_total = d.m;
      base_.rows_per_group = 0;
      // Every group adds at most one partial m-tile to the full ones (apre: token tiles).
      max_m_tiles_ = layout::ceil_div(d.m, apre_ ? kGemmSm90TmaSwapTokens : kGemmSm90TileM) + d.num_groups;
      smem_ = smem_bytes(d.num_groups);
    } else {
      base_.rows_total = d.batch * d.m;
      base_.rows_per_group = d.m;
      max_m_tiles_ = layout::ceil_div(d.m, kGemmSm90TileM) * d.batch;
      smem_ = smem_bytes(0);
    }
    // TMA-store epilogue: the K-grouped entry points with B converted in the kernel, and the
    // `_kgrouped_bpre_tma` / `_bpre_tma` ones.
    store_tma_ = kind == Sm90Kernel::Bf16Tma && (grouped_k(d) ? (!bprep_ || bp_store_) && kgrouped_tma_store_shape(d)
                                                                : bp_store_);
    if (bprep_) {
      prep_.n = d.n;
      prep_.k = d.k;
      prep_.kp = bprep_row(d);
      prep_.scale_ld = base_.scale_ld;
      prep_.b_scale_stride = base_.b_scale_stride;
      prep_.items = (grouped_k(d) ? d.n : kernel_groups(d) * d.n) * (prep_.kp / kGemmSm90TmaTileK);
      prep_.swizzled = swz;
      prep_.groups = static_cast<int32_t>(grouped_k(d) ? d.num_groups : 0);
      prep_.a_rows = grouped_k(d) ? d.m : 0;  // K-grouped: A's copy
    }
    if (apre_) {  // A's M rows as one group of the M-grouped pre-kernel
      prep_.n = d.m;
      prep_.k = d.k;
      prep_.kp = gemm_sm90_bprep_row(d.k);
      prep_.scale_ld = base_.scale_ld;
      prep_.b_scale_stride = 0;
      prep_.items = d.m * (prep_.kp / kGemmSm90TmaTileK);
      prep_.swizzled = swz;
      prep_.groups = static_cast<int32_t>(d.num_groups);
    }
  }

  size_t workspace_bytes() const override { return apre_ ? apre_bytes(d_) : bprep_ ? bprep_bytes(d_) : 0; }

  std::string name() const override { return kname_; }
  std::string reason() const override {
    switch (kind_) {
      case Sm90Kernel::Bf16Tma:
        if (apre_)
          return "sm_90a TMA-fed bf16 wgmma with the operands swapped (D^T tiles); A dequantized exactly to bf16 "
                 "once into the workspace, B converted in the kernel (A the smaller operand; groups of >= 256 rows, or "
                 ">= 192 with K >= 4096)";
        return bp_store_ ? std::string("sm_90a TMA-fed bf16 wgmma; B dequantized exactly to bf16 once into the "
                                       "workspace, A in the kernel, D stored by TMA (") +
                               (grouped_k(d_) ? "K-grouped, M >= 512, short groups)" : "groups of >= 512 rows, K <= 4096)")
               : bprep_  ? "sm_90a TMA-fed bf16 wgmma; B dequantized exactly to bf16 once into the workspace, A in the "
                           "kernel (groups of >= 512 rows)"
                         : "sm_90a TMA-fed bf16 wgmma on MXFP8 operands converted exactly to bf16 in the kernel";
      case Sm90Kernel::Bf16Path:
        return "sm_90a bf16 wgmma on MXFP8 operands converted exactly to bf16 in the kernel";
      case Sm90Kernel::Fp8B2d:
        return "sm_90a FP8 wgmma on TMA-fed tiles, 32x32-block B (B_BLOCK_2D hint): one FFMA per element and 32-block";
      default:
        return "sm_90a FP8 wgmma MXFP8 kernel with per-32-block promotion";
    }
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

  void run(const ExecArgs& args, void* workspace, size_t, mxqStream_t stream) const override {
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
    const int tile_n = kind_ == Sm90Kernel::Bf16Tma    ? (apre_ ? kGemmSm90TileM : kGemmSm90TmaTileN)
                       : kind_ == Sm90Kernel::Bf16Path ? kGemmSm90Bf16TileN
                       : kind_ == Sm90Kernel::Fp8B2d   ? kGemmSm90Fp8B2dTileN
                                                       : kGemmSm90TileN;
    const int64_t tiles = max_m_tiles_ * layout::ceil_div(d_.n, static_cast<int64_t>(tile_n));
    const int64_t grid = std::max<int64_t>(1, std::min<int64_t>(tiles, dev_.sm_count()));
    Dim3 g, b;
    g.x = static_cast<unsigned>(grid);
    b.x = kind_ == Sm90Kernel::Bf16Tma    ? kGemmSm90TmaThreads
          : kind_ == Sm90Kernel::Bf16Path ? kGemmSm90Bf16Threads
          : kind_ == Sm90Kernel::Fp8B2d   ? kGemmSm90Fp8B2dThreads
                                          : kGemmSm90Threads;
    if (kind_ == Sm90Kernel::Fp8B2d) {
      // A [rows_total, K] and B [groups * N, K] FP8: boxes of 128 bytes (one K stage) x 128 rows with the
      // 128-byte swizzle (the layout of wgmma's K-major descriptors); reads past either tensor fill zeros.
      GemmSm90TmaParams tp{};
      tp.g = p;
      encode_tma_2d(tp.tmap_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.a, d_.k, p.rows_total, kGemmSm90TileK,
                    kGemmSm90TileM, CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM A (32x32-weight kernel)");
      encode_tma_2d(tp.tmap_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.b, d_.k, kernel_groups(d_) * d_.n, kGemmSm90TileK,
                    kGemmSm90Fp8B2dTileN, CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM B (32x32-weight kernel)");
      void* params[] = {&tp};
      dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
      return;
    }
    if (kind_ == Sm90Kernel::Bf16Tma) {
      GemmSm90TmaParams tp{};
      tp.g = p;
      const int64_t a_rows = p.rows_total;
      const int64_t b_rows = grouped_k(d_) ? d_.n : kernel_groups(d_) * d_.n;
      if (apre_) {
        // A -> bf16 workspace (after the group table, which maps token rows to swizzled scale rows);
        // the kernel converts B's 128-row boxes (tmap_a) and reads 256-token bf16 boxes (tmap_b).
        MXQ_REQUIRE(workspace, MXQ_STATUS_BAD_PARAM_WORKSPACE, "grouped GEMM: the workspace is required");
        int32_t* header = static_cast<int32_t*>(workspace);
        GemmSm90BPrepParams pp = prep_;
        pp.b = p.a;
        pp.b_scales = p.a_scales;
        pp.out = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(workspace) +
                                             gemm_sm90_bprep_header_bytes(d_.num_groups));
        pp.table = nullptr;
        if (d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4) {
          pp.table = header;
          launch_table(p, header, stream, "grouped GEMM A pre-kernel group table");
        }
        launch_prep(pp, stream, "grouped GEMM A pre-kernel");
        encode(p.b, b_rows, kGemmSm90TileM, tp.tmap_a, "B (operands swapped)");
        encode_bf16(pp.out, a_rows, prep_.kp, tp.tmap_b);
        tp.store_tma = false;
        void* params[] = {&tp};
        dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
        return;
      }
      encode(p.a, a_rows, kGemmSm90TileM, tp.tmap_a, "A");
      if (bprep_) {
        // B -> bf16 workspace, then the main kernel reads it through a bf16 tensor map.
        MXQ_REQUIRE(workspace, MXQ_STATUS_BAD_PARAM_WORKSPACE, "grouped GEMM: the workspace is required");
        GemmSm90BPrepParams pp = prep_;
        pp.b = p.b;
        pp.b_scales = p.b_scales;
        pp.out = static_cast<uint16_t*>(workspace);
        if (grouped_k(d_)) {
          // The group table (ends, scale column bases, workspace columns) into the header first.
          int32_t* header = static_cast<int32_t*>(workspace);
          pp.table = header;
          pp.out = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(workspace) +
                                               gemm_sm90_bprep_header_bytes(d_.num_groups));
          tp.g.bprep_cols = header + 2 * (d_.num_groups + 1);
          launch_table(p, header, stream, "grouped GEMM B pre-kernel group table");
          // A's copy for the groups whose first token is not 16-byte aligned (by the table's columns).
          pp.a = p.a;
          pp.a_out = static_cast<uint8_t*>(workspace) + gemm_sm90_bprep_header_bytes(d_.num_groups) + bprep_b_bytes(d_);
          // Blocks (x, g): about kGemmSm90ARelayoutBlocksPerSm per SM over all groups. (G is far below
          // the grid's 65535 rows here: the kernel's shared-memory group table bounds it.)
          MXQ_REQUIRE(d_.num_groups <= 65535, MXQ_STATUS_INTERNAL_ERROR,
                      "grouped GEMM: {} groups exceed the K-grouped A copy's grid", d_.num_groups);
          Dim3 ag, ab;
          ab.x = kGemmSm90ARelayoutThreads;
          ag.x = static_cast<unsigned>(std::max<int64_t>(
              1, layout::ceil_div(int64_t(dev_.sm_count()) * kGemmSm90ARelayoutBlocksPerSm, d_.num_groups)));
          ag.y = static_cast<unsigned>(d_.num_groups);
          void* aparams[] = {&pp};
          dev_.launch(fn_acopy_, ag, ab, 0, stream, aparams, "grouped GEMM K-grouped A copy");
          encode_tma_2d(tp.tmap_a2, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, pp.a_out, prep_.kp, a_rows, kGemmSm90TmaTileK,
                        kGemmSm90TileM, CU_TENSOR_MAP_SWIZZLE_64B, "grouped GEMM A copy");
        }
        launch_prep(pp, stream, "grouped GEMM B pre-kernel");
        encode_bf16(pp.out, b_rows, prep_.kp, tp.tmap_b);
      } else {
        encode(p.b, b_rows, kGemmSm90TmaTileN, tp.tmap_b, "B");
      }
      // TMA stores need a 16-byte aligned D (the plan asks only for element-pair alignment).
      tp.store_tma = store_tma_ && (reinterpret_cast<uintptr_t>(p.d) & 15u) == 0;
      if (tp.store_tma) {  // D [G, M, N] (else [1, rows_total, N]): boxes of 128 bytes x 64 rows, the staging layout
        const bool f32 = d_.d_dtype == MXQ_DTYPE_FP32;
        const bool kg = grouped_k(d_);
        encode_tma_3d(tp.tmap_d, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, f32 ? 4 : 2,
                      p.d, d_.n, kg ? d_.m : p.rows_total, kg ? d_.num_groups : 1, f32 ? 32u : 64u, 64u,
                      CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM D");
      }
      void* params[] = {&tp};
      if (bp_store_ && !tp.store_tma) {
        dev_.launch(fn_direct_, g, b, static_cast<size_t>(smem_), stream, params, fn_direct_name_.c_str());
        return;
      }
      dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
      return;
    }
    void* params[] = {&p};
    dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
  }

 private:
  // The one-block group-table kernel (mxq_gemm_sm90_bprep_table) into the workspace header: the clamped
  // group ends, the m-tile (M-grouped) or scale-column (K-grouped) prefixes and the K-grouped columns.
  void launch_table(GemmSm90Params& p, int32_t* header, mxqStream_t stream, const char* what) const {
    Dim3 tg, tb;
    tb.x = kGemmSm90BPrepTableThreads;
    void* tparams[] = {&p, &header};
    dev_.launch(fn_table_, tg, tb, static_cast<size_t>(8 * (d_.num_groups + 1)), stream, tparams, what);
  }
  // The B pre-kernel (or, apre, the same kernel on A's rows): one thread per item.
  void launch_prep(GemmSm90BPrepParams& pp, mxqStream_t stream, const char* what) const {
    Dim3 pg, pb;
    pb.x = kGemmSm90BPrepThreads;
    pg.x = static_cast<unsigned>(layout::ceil_div(pp.items, static_cast<int64_t>(kGemmSm90BPrepThreads)));
    void* pparams[] = {&pp};
    dev_.launch(fn_prep_, pg, pb, 0, stream, pparams, what);
  }

  int64_t smem_bytes(int64_t groups) const {
    switch (kind_) {
      case Sm90Kernel::Bf16Tma:
        return bp_store_ ? gemm_sm90_tma_bp_store_smem_bytes(groups)
               : bprep_ || apre_ ? gemm_sm90_tma_bp_smem_bytes(groups)
                         : gemm_sm90_tma_smem_bytes(groups);
      case Sm90Kernel::Bf16Path:
        return gemm_sm90_bf16_smem_bytes(groups);
      case Sm90Kernel::Fp8B2d:
        return gemm_sm90_fp8b2d_smem_bytes(groups);
      default:
        return gemm_sm90_smem_bytes(groups);
    }
  }

  // TMA descriptor of an FP8 operand seen as 2D [rows, K] bytes: boxes of 64 bytes (one K stage) x
  // box_rows rows with the 64-byte swizzle; reads past the tensor fill zeros.
  void encode(const uint8_t* base, int64_t rows, int box_rows, uint8_t (&out)[128], const char* what) const {
    encode_tma_2d(out, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, base, d_.k, rows, kGemmSm90TmaTileK,
                  static_cast<uint32_t>(box_rows), CU_TENSOR_MAP_SWIZZLE_64B,
                  fmt::format("grouped GEMM {}", what).c_str());
  }

  // The dequantized B [rows, kp] bf16: boxes of 64 elements (128 bytes, one K stage) x 256 rows with
  // the 128-byte swizzle -- the bf16 slot layout the kernel's wgmmas read.
  void encode_bf16(uint16_t* base, int64_t rows, int64_t kp, uint8_t (&out)[128]) const {
    encode_tma_2d(out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, kp, rows, kGemmSm90TmaTileK, kGemmSm90TmaTileN,
                  CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM dequantized B");
  }

  GemmDesc d_;
  Device& dev_;
  Sm90Kernel kind_;
  CUfunction fn_ = nullptr;
  CUfunction fn_prep_ = nullptr;
  CUfunction fn_direct_ = nullptr;  // bp_store_: the `[_kgrouped]_bpre` instance, for a D not 16-byte aligned
  std::string fn_direct_name_;
  CUfunction fn_table_ = nullptr;
  CUfunction fn_acopy_ = nullptr;  // K-grouped B-ahead plans: A's copy (mxq_gemm_sm90_arelayout_kgrouped)
  bool bprep_ = false;
  bool apre_ = false;  // A dequantized ahead, operands swapped (the `_apre` entry points)
  bool bp_store_ = false;  // B dequantized ahead, D stored by TMA from the kernel's own staging
  bool store_tma_ = false;  // the TMA-store epilogue, when D is 16-byte aligned at Execute
  GemmSm90BPrepParams prep_{};
  std::string kname_;
  GemmSm90Params base_{};
  int64_t max_m_tiles_ = 0;
  int64_t smem_ = 0;
};

// The decode kernel: one or two CTAs per SM over a stream-K split of the (tile, K stage) units; the
// workspace holds the counters of shared tiles (cleared before every launch) and the CTAs' partial tiles.
class GemmSm90Decode final : public OpImpl {
 public:
  GemmSm90Decode(const GemmDesc& d, Device& dev)
      : d_(d), dev_(dev), tokens_(decode_tokens(d)), ctas_(decode_ctas_per_sm(d, dev.info())) {
    pair_ = decode_pair(d, ctas_);
    kname_ = fmt::format("mxq_gemm_sm90_decode_{}_{}_{}_t{}_x{}{}", fp8_tag(d.a_dtype), fp8_tag(d.b_dtype),
                         d.d_dtype == MXQ_DTYPE_FP32 ? "f32" : "bf16", tokens_, ctas_, pair_ ? "_pair" : "");
    fn_ = dev.kernel(kname_.c_str());
    base_ = sm90_base_params(d, d.num_groups);
    base_.rows_total = d.m;
    grid_ = ctas_ * dev.sm_count();
    counter_bytes_ = static_cast<size_t>(gemm_sm90_decode_counter_bytes(decode_max_tiles(d, tokens_)));
    smem_ = decode_smem(d, tokens_, ctas_);
  }

  size_t workspace_bytes() const override { return decode_workspace(d_, tokens_, grid_); }
  std::string name() const override { return kname_; }
  std::string reason() const override {
    return fmt::format("kernel {}: B streamed by TMA through a {}-deep ring{}, converted exactly to bf16, mma.sync "
                       "against up to {} tokens per tile, stream-K over {} CTAs ({} per SM)",
                       kname_, kGemmSm90DecodeStages / ctas_ / (pair_ ? 2 : 1),
                       pair_ ? " of K-stage pairs (256 bytes of each B row per request)" : "", tokens_, grid_, ctas_);
  }

  size_t required_alignment(mxqArgSlot_t slot) const override {
    switch (slot) {
      case MXQ_ARG_A_DATA:
      case MXQ_ARG_B_DATA:
        return 16;  // TMA
      case MXQ_ARG_A_SCALES:
      case MXQ_ARG_B_SCALES:
        return d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4 ? 4 : 1;  // 4-byte words of a swizzled tile
      case MXQ_ARG_D:
        return d_.d_dtype == MXQ_DTYPE_FP32 ? 4 : 2;  // element stores
      case MXQ_ARG_GROUP_OFFSETS:
        return d_.offsets_dtype == MXQ_DTYPE_INT64 ? 8 : 4;
      default:
        return 1;
    }
  }

  void run(const ExecArgs& args, void* workspace, size_t, mxqStream_t stream) const override {
    GemmSm90DecodeParams dp{};
    GemmSm90Params& p = dp.g;
    p = base_;
    p.a = args.as<const uint8_t>(MXQ_ARG_A_DATA);
    p.b = args.as<const uint8_t>(MXQ_ARG_B_DATA);
    p.a_scales = args.as<const uint8_t>(MXQ_ARG_A_SCALES);
    p.b_scales = args.as<const uint8_t>(MXQ_ARG_B_SCALES);
    p.d = args.get(MXQ_ARG_D);
    p.group_ends = args.get(MXQ_ARG_GROUP_OFFSETS);
    MXQ_REQUIRE(p.a && p.b && p.a_scales && p.b_scales && p.d && p.group_ends, MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "grouped GEMM: A_DATA, A_SCALES, B_DATA, B_SCALES, D and GROUP_OFFSETS are required");
    MXQ_REQUIRE(workspace, MXQ_STATUS_BAD_PARAM_WORKSPACE, "grouped GEMM: the workspace is required");
    // Scales as aligned 4-byte words (one cp.async per word): always when swizzled (the plan asks for
    // 4-byte aligned scale tensors); LINEAR when each row's 4-block words are aligned.
    const auto aligned4 = [](const void* q) { return (reinterpret_cast<uintptr_t>(q) & 3u) == 0; };
    dp.scale_words = p.swizzled || (layout::scale_cols(d_.k) % 4 == 0 && aligned4(p.a_scales) && aligned4(p.b_scales));
    // Swizzled scale tiles by bulk copies (16-byte aligned sources).
    const auto aligned16 = [](const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
    dp.bulk_scales = p.swizzled && aligned16(p.a_scales) && aligned16(p.b_scales) && p.b_scale_stride % 16 == 0;
    dp.counters = static_cast<uint32_t*>(workspace);
    dp.partials = reinterpret_cast<float*>(static_cast<uint8_t*>(workspace) + counter_bytes_);
    // One 128-byte box per operand and stage (128-byte swizzle: each row's 128 bytes are one request).
    encode_tma_2d(dp.tmap_a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.a, d_.k, d_.m, 128, static_cast<uint32_t>(tokens_),
                  CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM decode A");
    // B's L2 promotion: at T = 32, 128 bytes (one box row): 256 bytes fetched lines that B's evict_first
    // policy evicted before the next stage used them (E64 x 16: DRAM reads 1.13 GB for 0.98 GB of data,
    // 0.98 GB with 128). At T <= 16 the 256-byte promotion measured faster (docs/PERFORMANCE.md).
    if (pair_) {
      // The pair form: B as [rows][K / 128][128] (encode_tma_3d's depth x rows x cols), boxes of 128
      // rows x 2 x 128 bytes (each row's 256 contiguous bytes together); L2 promotion 256 bytes (128
      // measured the same).
      encode_tma_3d(dp.tmap_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.b, 128, d_.k / 128, d_.num_groups * d_.n, 128, 2,
                    CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM decode B (pairs of K stages)",
                    static_cast<uint32_t>(kGemmSm90DecodeTileN), CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    } else {
      encode_tma_2d(dp.tmap_b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.b, d_.k, d_.num_groups * d_.n, 128,
                    kGemmSm90DecodeTileN, CU_TENSOR_MAP_SWIZZLE_128B, "grouped GEMM decode B",
                    tokens_ == 32 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    }
    // Shared tiles count their contributors from zero on this stream in every launch.
    check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(dp.counters), 0, counter_bytes_,
                                   reinterpret_cast<CUstream>(stream)),
          "grouped GEMM decode: clearing the tile counters");
    Dim3 g, b;
    g.x = static_cast<unsigned>(grid_);
    b.x = kGemmSm90DecodeThreads;
    void* params[] = {&dp};
    dev_.launch(fn_, g, b, static_cast<size_t>(smem_), stream, params, kname_.c_str());
  }

 private:
  GemmDesc d_;
  Device& dev_;
  int tokens_;
  int ctas_;
  bool pair_ = false;  // the pair form (decode_pair)
  CUfunction fn_ = nullptr;
  std::string kname_;
  GemmSm90Params base_{};
  int grid_ = 0;
  size_t counter_bytes_ = 0;
  int64_t smem_ = 0;
};

}  // namespace

void register_gemm_kernels(Registry& r) {
  auto add = [&r](const char* name, const char* variant, int priority,
                  std::string (*supports)(const GemmDesc&, const DeviceInfo&), Sm90Kernel kind) {
    KernelEntry<GemmDesc> e;
    e.name = name;
    e.arch = {90, 90};
    e.in_dtypes = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
    e.out_dtypes = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP32};
    e.variant = variant;
    e.priority = priority;
    e.supports = supports;
    e.make = [kind](const GemmDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
      return std::make_unique<GemmSm90>(d, dev, kind);
    };
    r.add(std::move(e));
  };
  {
    KernelEntry<GemmDesc> e;
    e.name = "sm90.gemm.mxfp8.decode";
    e.arch = {90, 90};
    e.in_dtypes = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
    e.out_dtypes = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP32};
    e.variant =
        "M-grouped decode shapes (<= 32 rows per group on average): B streamed by TMA, converted exactly to bf16, "
        "mma.sync m16n8k16 with B rows as M, stream-K over one CTA per SM";
    e.priority = 3;
    e.supports = sm90_decode_supports;
    e.make = [](const GemmDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
      return std::make_unique<GemmSm90Decode>(d, dev);
    };
    r.add(std::move(e));
  }
  add("sm90.gemm.mxfp8.fp8b2d",
      "32x32-block B (B_BLOCK_2D hint): FP8 tiles by TMA, FP8 wgmma m64n128k32 per 32-block into a fresh partial, "
      "one FFMA per element with the producer's scale products, 128x128 tiles, persistent over M groups / batch",
      4, sm90_fp8b2d_supports, Sm90Kernel::Fp8B2d);
  add("sm90.gemm.mxfp8.bf16tma",
      "FP8 tiles by TMA, converted exactly to bf16 by the math warpgroups, bf16 wgmma m64n256k16 (A from "
      "registers), 128x256 tiles, persistent over M groups / K groups / batch",
      2, sm90_tma_supports, Sm90Kernel::Bf16Tma);
  add("sm90.gemm.mxfp8.bf16path",
      "FP8 x 2^k converted exactly to bf16 in the kernel, bf16 wgmma m64n128k16 (A from registers), 128x256 tiles, "
      "producer warpgroup + 2 consumers, persistent over M groups / K groups / batch",
      1, sm90_bf16_supports, Sm90Kernel::Bf16Path);
  add("sm90.gemm.mxfp8.wgmma",
      "wgmma m64n128k32, 128x128 tiles, persistent over M groups / K groups / batch, per-32-block promotion", 0,
      sm90_supports, Sm90Kernel::Fp8Promotion);
}

}  // namespace cuda
}  // namespace mxq
