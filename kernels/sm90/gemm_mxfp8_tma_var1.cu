// TEMPORARY (helper gemm10): measurement variant 1 of the TMA kernel (gemm_body's kV bits), e4m3 x e4m3
// only, selected by MXQ_GEMM_SM90_VARIANT; removed once measured.
#define MXQ_GEMM_TMA_VARIANT_FILE
#include "sm90/gemm_mxfp8_tma.cu"
#define MXQ_VAR_ENTRY(SUFFIX, F32, KG, BP) \
  MXQ_GEMM_SM90_TMA_ENTRY_V(mxq_gemm_sm90_tma_e4m3_e4m3_##SUFFIX##_v1, E4M3, E4M3, F32, KG, BP, 1)
MXQ_VAR_ENTRY(bf16, false, false, false)
MXQ_VAR_ENTRY(f32, true, false, false)
MXQ_VAR_ENTRY(f32_bpre, true, false, true)
MXQ_VAR_ENTRY(bf16_kgrouped, false, true, false)
MXQ_VAR_ENTRY(f32_kgrouped, true, true, false)
MXQ_VAR_ENTRY(bf16_bpre, false, false, true)
MXQ_VAR_ENTRY(bf16_kgrouped_bpre, false, true, true)
MXQ_VAR_ENTRY(f32_kgrouped_bpre, true, true, true)
