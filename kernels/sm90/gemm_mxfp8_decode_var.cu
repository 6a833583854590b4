// TEMPORARY (helper dec13's measurement, MXQ_DECODE_VAR read at plan creation): decode variants
//   _p2    the pair form (a ring slot of two K stages, B as one 3D box of 128 rows x 256 bytes), every type;
//   _lo    the plain form's loads, ring and barriers only (wrong results, timing only), E4M3 x E4M3, bf16;
//   _p2lo  the same for the pair form.
#define MXQ_DECODE_NO_ENTRIES
#include "sm90/gemm_mxfp8_decode.cu"

#define MXQ_DV_ENTRY(NAME, ONE, AK, BK, F32, T, C, PAIR, LO)                                            \
  extern "C" __global__ void __launch_bounds__(mxq::kGemmSm90DecodeThreads, C)                          \
      NAME(const __grid_constant__ mxq::GemmSm90DecodeParams p) {                                      \
    mxq::sm90gemm::decode::decode_body<mxq::ptx::Fp8Kind::AK, mxq::ptx::Fp8Kind::BK, F32, T, C, ONE, PAIR, LO>(p); \
  }
#define MXQ_DV_T(A, B, AK, BK, T, ONE)                                                                            \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_bf16_t##T##_x1_p2, ONE, AK, BK, false, T, 1, true, false) \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_f32_t##T##_x1_p2, ONE, AK, BK, true, T, 1, true, false)   \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_bf16_t##T##_x2_p2, ONE, AK, BK, false, T, 2, true, false) \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_##A##_##B##_f32_t##T##_x2_p2, ONE, AK, BK, true, T, 2, true, false)
#define MXQ_DV_ALL(A, B, AK, BK)   \
  MXQ_DV_T(A, B, AK, BK, 8, false)  \
  MXQ_DV_T(A, B, AK, BK, 16, false) \
  MXQ_DV_T(A, B, AK, BK, 32, true)

MXQ_DV_ALL(e4m3, e4m3, E4M3, E4M3)
MXQ_DV_ALL(e4m3, e5m2, E4M3, E5M2)
MXQ_DV_ALL(e5m2, e4m3, E5M2, E4M3)

#define MXQ_DV_LO(T, ONE, C)                                                                                 \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_e4m3_e4m3_bf16_t##T##_x##C##_lo, ONE, E4M3, E4M3, false, T, C, false, true) \
  MXQ_DV_ENTRY(mxq_gemm_sm90_decode_e4m3_e4m3_bf16_t##T##_x##C##_p2lo, ONE, E4M3, E4M3, false, T, C, true, true)
MXQ_DV_LO(8, false, 1)
MXQ_DV_LO(8, false, 2)
MXQ_DV_LO(16, false, 1)
MXQ_DV_LO(16, false, 2)
MXQ_DV_LO(32, true, 1)
MXQ_DV_LO(32, true, 2)
