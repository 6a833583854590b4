// The fp16-input shared-memory tile kernels (columnwise, both, 32x32) of the MXFP8 quantizer
// (device code in common/quant_kernels.cuh). One kernel kind and input type per file keeps each
// nvcc invocation small, so the 48 quantize kernels build in parallel.
#include "common/quant_kernels.cuh"

MXQ_QUANT_ENTRIES_IN(tiled, F16, f16)
