// Measurement-only variants of the TMA kernel's `_bpre` entry points (MXQ_GEMM_SM90_VARIANT, see
// gemm_body's kVar), E4M3 x E4M3 only. A separate file so nvcc compiles it in parallel with the
// main one.
#define MXQ_GEMM_SM90_TMA_VARIANTS_ONLY
#include "sm90/gemm_mxfp8_tma.cu"

#define MXQ_GEMM_SM90_TMA_VARIANT(V)                                                                            \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_v##V, E4M3, E4M3, false, false, false, V)         \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_v##V, E4M3, E4M3, true, false, false, V)           \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_kgrouped_v##V, E4M3, E4M3, false, true, false, V) \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_kgrouped_v##V, E4M3, E4M3, true, true, false, V)   \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_bpre_v##V, E4M3, E4M3, false, false, true, V)    \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_bpre_v##V, E4M3, E4M3, true, false, true, V)      \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_kgrouped_bpre_v##V, E4M3, E4M3, false, true, true, V) \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_kgrouped_bpre_v##V, E4M3, E4M3, true, true, true, V)
MXQ_GEMM_SM90_TMA_VARIANT(1)
// Bit 2 (one `empty` arrival per warp) applies to the _bpre entry points only.
MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_bpre_v4, E4M3, E4M3, false, false, true, 4)
MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_bpre_v4, E4M3, E4M3, true, false, true, 4)
MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_bf16_kgrouped_bpre_v4, E4M3, E4M3, false, true, true, 4)
MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_f32_kgrouped_bpre_v4, E4M3, E4M3, true, true, true, 4)
// The M-grouped / dense B pre-kernel with one thread per item, staged stores (bprep_staged_body).
extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90BPrepThreads)
    mxq_gemm_sm90_bprep_e4m3_staged(const __grid_constant__ mxq::GemmSm90BPrepParams p) {
  mxq::sm90gemm::tmapath::bprep_staged_body<mxq::ptx::Fp8Kind::E4M3, false>(p);
}
