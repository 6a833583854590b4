// The f16-input sm_90 TMA tile kernels (columnwise, both) of the MXFP8 quantizer, variant s2 (device
// code in sm90/quant_tma.cuh), in their own file so they compile in parallel with the others.
#include "sm90/quant_tma.cuh"

MXQ_QUANT_TMA_ENTRIES_IN(_s2, 2, 0, F16, f16)
