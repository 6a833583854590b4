// The bf16-input M-grouped rowwise kernels of the MXFP8 quantizer (one block per data tile; device code
// in common/quant_kernels.cuh, quantize_mgrouped), in their own file so they compile in parallel.
#include "common/quant_kernels.cuh"

MXQ_QUANT_MGROUPED_ENTRIES_IN(BF16, bf16)
