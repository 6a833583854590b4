// The fp16-input register-only rowwise kernels of the MXFP8 quantizer (device code in
// common/quant_kernels.cuh). One kernel kind and input type per file keeps each nvcc invocation
// small, so the 48 quantize kernels build in parallel.
#include "common/quant_kernels.cuh"

MXQ_QUANT_ENTRIES_IN(rowwise, F16, f16)
