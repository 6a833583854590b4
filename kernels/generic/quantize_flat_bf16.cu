// The flat and band rowwise kernels of the MXFP8 quantizer for bf16 inputs (device code in
// common/quant_flat.cuh).
#include "common/quant_flat.cuh"

MXQ_QUANT_FLAT_ENTRIES_IN(BF16, bf16)
MXQ_QUANT_BAND_ENTRIES_IN(BF16, bf16)
