// The bf16-input pipelined tile kernels (columnwise, both) of the MXFP8 quantizer (device code in
// common/quant_ring.cuh), in their own file so they compile in parallel with the others.
#include "common/quant_ring.cuh"

MXQ_QUANT_RING_ENTRIES_IN(BF16, bf16)
