// Host side of the GPU attention forward: which plans the sm_90a kernel
// (kernels/sm90/attention_fwd.cu) can run and why not otherwise, the launch geometry, and the
// registry entry. Everything is resolved from the immutable plan at Finalize; Execute fills pointers
// and launches (no allocation, no host synchronization: capturable in a CUDA graph).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/layout.h"
#include "cuda/registry.h"
#include "cuda/runtime.h"
#include "sm90/attention_params.cuh"

namespace mxq {
namespace cuda {
namespace {

// Why the sm_90a forward kernel cannot run this plan, or "" when it can.
std::string attn_fwd_supports(const AttentionDesc& d, const DeviceInfo& dev) {
  if (d.direction != MXQ_ATTN_FORWARD) return "the sm_90a kernel is the forward pass";
  if (!attn_sm90_fwd_head_dim(d.head_dim))
    return fmt::format("head dim {} (the sm_90a forward kernels are built for 64, 128, 192 and 256)", d.head_dim);
  if (d.qkv_dtype != MXQ_DTYPE_E4M3) return "Q, K, V must be E4M3 (the recipe's operand type)";
  if (d.batch > 65535) return fmt::format("batch {} exceeds the grid's 65535", d.batch);
  if (d.heads_q > 65535) return fmt::format("{} query heads exceed the grid's 65535", d.heads_q);
  if (d.seqlen_q >= (int64_t(1) << 31) || d.seqlen_kv >= (int64_t(1) << 31))
    return "sequence lengths must be below 2^31";
  const int64_t kv_rows = d.batch * d.heads_kv * attn_sm90_kv_pad(d.seqlen_kv);
  if (kv_rows >= (int64_t(1) << 31))
    return fmt::format("B x Hkv x padded Skv = {} rows exceed the TMA coordinate range (2^31)", kv_rows);
  const int64_t items = (d.seqlen_q + kAttnSm90TileQ - 1) / kAttnSm90TileQ * d.heads_q * d.batch;
  if (items >= (int64_t(1) << 31))
    return fmt::format("{} blocks of 128 queries (B x Hq x ceil(Sq/128)) exceed the kernel's 2^31 - 1", items);
  // The largest of the kernels the plan may run (D = 128: the in-kernel conversion, or the prepass
  // variant under MXQ_ATTN_SM90_PINGPONG=0; D = 64: 192 query rows per CTA).
  int64_t smem = attn_sm90_smem_bytes(d.head_dim, d.head_dim == 64 ? kAttnSm90TileQ3 : kAttnSm90TileQ);
  if (d.head_dim == 128) smem = std::max(smem, attn_sm90_smem_bytes_inl(d.head_dim));
  if (smem > dev.smem_optin)
    return fmt::format("needs {} bytes of shared memory per block, the device allows {}", smem, dev.smem_optin);
  return {};
}

class AttnFwdSm90 final : public OpImpl {
 public:
  AttnFwdSm90(const AttentionDesc& d, Device& dev) : d_(d), dev_(dev) {
    // MXQ_ATTN_SM90_PINGPONG=0 selects the variant whose math warpgroups do not take turns
    // (docs/ENVIRONMENT.md; for measurements; after the prepass at both head dims). Otherwise D = 128
    // converts K and V inside the main kernel (mxq_attn_zero_sm90 clears the units' state words and
    // the item counter), persistent: one CTA per SM, and D = 64 runs the prepass and three math
    // warpgroups (192 query rows per CTA): PERFORMANCE.md "Attention forward", seventh, eighth and
    // tenth sessions. D = 192 and 256 run the prepass and 64-key tiles.
    const char* pp = std::getenv("MXQ_ATTN_SM90_PINGPONG");
    const bool nopp = pp && pp[0] == '0';
    inline_ = !nopp && d.head_dim == 128;
    persist_ = inline_;
    w3_ = !nopp && d.head_dim == 64;  // three math warpgroups, 192 query rows per CTA
    // D = 128 runs S and P V on FP8 wgmma by default (mxq_attn_fwd_sm90_d128_f8; docs/NUMERICS.md):
    // the exact kernel redoes a call whose operands exceed the rescale's error bound.
    // MXQ_ATTN_SM90_F8=0: the exact kernel only; 2: the FP8 kernel without that fallback (tests).
    const char* f8 = std::getenv("MXQ_ATTN_SM90_F8");
    const char f8m = f8 && f8[0] ? f8[0] : '1';
    f8_ = inline_ && (f8m == '1' || f8m == '2');
    f8_fallback_ = f8_ && f8m == '1';
    kname_ = fmt::format("mxq_attn_fwd_sm90_d{}{}", d.head_dim, nopp ? "_nopp" : f8_ ? "_f8" : inline_ ? "_inl" : "");
    prep_name_ = f8_        ? std::string("mxq_attn_zero_f8_sm90")
                 : inline_ ? std::string("mxq_attn_zero_sm90")
                           : fmt::format("mxq_attn_prep_sm90_d{}", d.head_dim);
    fn_ = dev.kernel(kname_.c_str());
    if (f8_) {
      exact_ = dev.kernel("mxq_attn_fwd_sm90_d128_inl");
    }
    prep_ = dev.kernel(prep_name_.c_str());
    const bool swz = d.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
    const int64_t dcols = layout::scale_cols(d.head_dim);
    const int64_t scols = layout::scale_cols(d.seqlen_kv);
    base_.batch = static_cast<int32_t>(d.batch);
    base_.heads_q = static_cast<int32_t>(d.heads_q);
    base_.heads_kv = static_cast<int32_t>(d.heads_kv);
    base_.seqlen_q = static_cast<int32_t>(d.seqlen_q);
    base_.seqlen_kv = static_cast<int32_t>(d.seqlen_kv);
    base_.bshd = d.layout == MXQ_ATTN_LAYOUT_BSHD || d.varlen;
    base_.mask = static_cast<int32_t>(d.mask);
    base_.swizzled = swz;
    base_.d_scale_ld = static_cast<int32_t>(swz ? layout::swz_cols(dcols) : dcols);
    base_.s_scale_cols = static_cast<int32_t>(scols);
    base_.s_scale_ld = static_cast<int32_t>(swz ? layout::swz_cols(scols) : scols);
    base_.v_scale_entry = layout::scale_bytes(swz, d.head_dim, scols);
    base_.kv_pad = static_cast<int32_t>(attn_sm90_kv_pad(d.seqlen_kv));
    base_.scale_log2 = static_cast<float>(static_cast<double>(d.softmax_scale) * 1.4426950408889634);
    base_.p_scale = d.p_scale;
    base_.log2_p_scale = static_cast<float>(std::log2(static_cast<double>(d.p_scale)));
    // The persistent kernel's order under a mask (PERFORMANCE.md, eleventh session): the (batch, head)
    // pairs of the last 16 MiB of bf16 K/V (at least one KV head's query heads) form one section whose
    // items run longest first across all of its heads (head after head, the longest items of the last
    // heads started late and ran on alone at the end), and the converters' unit counter follows the
    // same order (else those heads' units are not converted ahead). Without a mask: head after head.
    base_.sec_heads = 1;
    base_.tail_heads = 0;
    base_.conv_sec = 0;
    if (persist_ && d.mask != MXQ_ATTN_MASK_NONE) {
      const int64_t heads = d.batch * d.heads_q, group = d.heads_q / d.heads_kv;
      const int64_t kv_head_bytes = 2 * int64_t(base_.kv_pad) * d.head_dim * 2;
      base_.sec_heads = static_cast<int32_t>(group);
      base_.tail_heads =
          static_cast<int32_t>(std::min(heads, std::max<int64_t>(1, (int64_t(16) << 20) / kv_head_bytes) * group));
      base_.conv_sec = 1;
    }
  }

  std::string name() const override { return kname_; }
  std::string reason() const override {
    return f8_ ? "sm_90a flash attention with S and P V on FP8 wgmma over operands rescaled within E4M3 (one "
                  "power-of-two factor per Q row, K tile and V column; the exact BF16 kernel redoes calls past "
                  "the rescale's error bound), P quantized per the recipe"
                : "sm_90a BF16-wgmma flash attention on exactly dequantized MXFP8 operands (K, V through a bf16 "
                  "workspace and TMA), P quantized per the recipe";
  }
  size_t workspace_bytes() const override {
    return static_cast<size_t>(attn_sm90_workspace_bytes(d_.batch, d_.heads_kv, d_.seqlen_kv, d_.head_dim));
  }

  size_t required_alignment(mxqArgSlot_t slot) const override {
    switch (slot) {
      case MXQ_ARG_Q_DATA:
      case MXQ_ARG_K_DATA:
      case MXQ_ARG_V_DATA:
        return 16;  // 16-byte loads of D-byte rows
      case MXQ_ARG_K_SCALES:
      case MXQ_ARG_V_SCALES:  // swizzled: one word per row (K) or per d and tile (V)
        return d_.scale_layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4 ? 4 : 1;
      case MXQ_ARG_O:
      case MXQ_ARG_LSE:
      case MXQ_ARG_CU_SEQLENS_Q:
      case MXQ_ARG_CU_SEQLENS_KV:
        return 4;
      default:
        return 1;
    }
  }

  void run(const ExecArgs& args, void* workspace, size_t workspace_bytes, mxqStream_t stream) const override {
    AttnFwdSm90Params p = base_;
    p.q = args.as<const uint8_t>(MXQ_ARG_Q_DATA);
    p.k = args.as<const uint8_t>(MXQ_ARG_K_DATA);
    p.v = args.as<const uint8_t>(MXQ_ARG_V_DATA);
    p.q_scales = args.as<const uint8_t>(MXQ_ARG_Q_SCALES);
    p.k_scales = args.as<const uint8_t>(MXQ_ARG_K_SCALES);
    p.v_scales = args.as<const uint8_t>(MXQ_ARG_V_SCALES);
    p.o = args.as<uint16_t>(MXQ_ARG_O);
    p.lse = args.as<float>(MXQ_ARG_LSE);
    p.cu_q = d_.varlen ? args.as<const int32_t>(MXQ_ARG_CU_SEQLENS_Q) : nullptr;
    p.cu_kv = d_.varlen ? args.as<const int32_t>(MXQ_ARG_CU_SEQLENS_KV) : nullptr;
    MXQ_REQUIRE(p.q && p.k && p.v && p.q_scales && p.k_scales && p.v_scales && p.o && p.lse,
                MXQ_STATUS_BAD_PARAM_NULL_POINTER, "attention: Q, K, V (data and scales), O and LSE are required");
    MXQ_REQUIRE(!d_.varlen || (p.cu_q && p.cu_kv), MXQ_STATUS_BAD_PARAM_NULL_POINTER,
                "attention: CU_SEQLENS_Q and CU_SEQLENS_KV are required with VARLEN");
    MXQ_REQUIRE(workspace && workspace_bytes >= this->workspace_bytes(), MXQ_STATUS_BAD_PARAM_WORKSPACE,
                "attention: the GPU forward needs a workspace of {} bytes (mxqAttentionPlanGetWorkspaceSize)",
                this->workspace_bytes());
    // K and V as bf16 [B*Hkv*kv_pad, D] at 256-byte aligned offsets of the workspace.
    const uintptr_t ws = (reinterpret_cast<uintptr_t>(workspace) + 255) & ~uintptr_t(255);
    const int64_t rows = d_.batch * d_.heads_kv * base_.kv_pad;
    p.ws_k = reinterpret_cast<uint16_t*>(ws);
    p.ws_v = p.ws_k + rows * d_.head_dim;
    encode(p.ws_k, rows, p.tmap_k);
    if (f8_) {  // K' (E4M3 rows of 128 bytes) in ws_k's first half, then the unit factors and V's column maxima
      encode_tma_2d(p.tmap_k8, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.ws_k, d_.head_dim, rows, 128, kAttnSm90TileKV,
                    CU_TENSOR_MAP_SWIZZLE_128B, "attention K' workspace");
      p.ws_kf = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(p.ws_k) + rows * d_.head_dim);
      p.ws_ev = p.ws_kf + rows / 32;  // after the units' 16-byte factors (rows / 128 of them)
      encode_tma_2d(p.tmap_v8, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, p.ws_v, kAttnSm90TileKV, rows, 128, kAttnSm90TileKV,
                    CU_TENSOR_MAP_SWIZZLE_128B, "attention V'^T workspace");
    }
    encode(p.ws_v, rows, p.tmap_v);
    p.tile_state = reinterpret_cast<uint32_t*>(p.ws_v + rows * d_.head_dim);
    p.n_units = static_cast<int32_t>(rows / kAttnSm90TileKV);
    p.f8_flag = p.tile_state + attn_sm90_f8_flag_word(p.n_units);
    p.gate = 0;
    const int64_t tile_q = w3_ ? kAttnSm90TileQ3 : kAttnSm90TileQ;
    const int64_t ctas = layout::ceil_div(d_.seqlen_q, tile_q) * d_.heads_q * d_.batch;
    p.quota = static_cast<int32_t>(layout::ceil_div(int64_t(p.n_units), ctas));

    void* params[] = {&p};
    if (inline_) {
      Dim3 g, b;
      const int64_t zthreads =
          std::max<int64_t>(attn_sm90_state_words(p.n_units), f8_ ? d_.batch * d_.heads_kv * 128 * 32 : 0);  // FP8: a warp per (entry, d)
      g.x = static_cast<unsigned>(std::min<int64_t>(layout::ceil_div(zthreads, 256), 1024));
      b.x = 256;
      dev_.launch(prep_, g, b, 0, stream, params, prep_name_.c_str());
    } else {
      const int64_t chunks = rows * (d_.head_dim / 16) * 5 / 4;  // K chunks, then V items of 4 chunks
      Dim3 g, b;
      g.x = static_cast<unsigned>(std::min<int64_t>(layout::ceil_div(chunks, kAttnSm90PrepThreads),
                                                    int64_t(dev_.sm_count()) * 16));
      b.x = kAttnSm90PrepThreads;
      dev_.launch(prep_, g, b, 0, stream, params, prep_name_.c_str());
    }
    Dim3 g, b;
    if (persist_) {  // one CTA per SM walks the items (at most one per item)
      g.x = static_cast<unsigned>(std::min<int64_t>(ctas, dev_.sm_count()));
    } else {
      g.x = static_cast<unsigned>(layout::ceil_div(d_.seqlen_q, tile_q));
      g.y = static_cast<unsigned>(d_.heads_q);
      g.z = static_cast<unsigned>(d_.batch);
    }
    b.x = w3_ ? kAttnSm90Threads3 : kAttnSm90Threads;
    // A programmatic dependent launch: its blocks start (barrier setup, Q dequantized) while the
    // prepass finishes; the producer's griddepcontrol.wait orders its first workspace read.
    dev_.launch(fn_, g, b,
                static_cast<size_t>(inline_ ? attn_sm90_smem_bytes_inl(d_.head_dim)
                                            : attn_sm90_smem_bytes(d_.head_dim, tile_q)),
                stream, params, kname_.c_str(),
                /*programmatic=*/true);
    if (f8_fallback_) {
      // The exact kernel, a programmatic dependent of the FP8 one: it returns at once unless that one
      // raised its flag, and then runs on the second set of state words (zeroed with the first).
      AttnFwdSm90Params p2 = p;
      p2.gate = 1;
      p2.tile_state = p.tile_state + attn_sm90_exact_state_word(p.n_units);
      void* params2[] = {&p2};
      dev_.launch(exact_, g, b, static_cast<size_t>(attn_sm90_smem_bytes_inl(d_.head_dim)), stream, params2,
                  "mxq_attn_fwd_sm90_d128_inl", /*programmatic=*/true);
    }
  }

 private:
  // TMA descriptor of a bf16 [rows, D] workspace tensor: (keys per tile)-row x 64-column boxes,
  // 128-byte swizzle (the shared-memory panel layout the kernel's wgmma descriptors read).
  void encode(uint16_t* base, int64_t rows, uint8_t (&out)[128]) const {
    encode_tma_2d(out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, d_.head_dim, rows, 64, attn_sm90_tile_kv(d_.head_dim),
                  CU_TENSOR_MAP_SWIZZLE_128B, "attention K/V workspace");
  }

  AttentionDesc d_;
  Device& dev_;
  CUfunction fn_ = nullptr, prep_ = nullptr, exact_ = nullptr;
  std::string kname_, prep_name_;
  bool inline_ = false, persist_ = false, w3_ = false, f8_ = false, f8_fallback_ = false;
  AttnFwdSm90Params base_{};
};

}  // namespace

void register_attention_fwd_kernels(Registry& r) {
  KernelEntry<AttentionDesc> e;
  e.name = "sm90.attention.fwd.bf16wgmma";
  e.arch = {90, 90};
  e.in_dtypes = {MXQ_DTYPE_E4M3};
  e.out_dtypes = {MXQ_DTYPE_BF16};
  e.variant = "K/V dequantized to bf16 in the workspace (D=128: rescaled within E4M3 by the kernel's producer warps "
              "for S and P V on FP8 wgmma, the exact kernel as fallback, units claimed "
              "through state words, one persistent CTA per SM; D=64, 192, 256: a prepass); 128 queries (D=64: 192) x 128-key "
              "tiles (D=192, 256: 64-key), TMA producer + two math warpgroups (D=64: three), online softmax";
  e.priority = 0;
  e.supports = attn_fwd_supports;
  e.make = [](const AttentionDesc& d, Device& dev) -> std::unique_ptr<OpImpl> {
    return std::make_unique<AttnFwdSm90>(d, dev);
  };
  r.add(std::move(e));
}

}  // namespace cuda
}  // namespace mxq
