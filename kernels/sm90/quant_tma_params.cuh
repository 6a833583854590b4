// Parameters of the sm_90 TMA quantize kernels (kernels/sm90/quantize_tma_*.cu): the generic
// QuantizeParams plus the TMA descriptor of the input, encoded by the host launcher
// (src/cuda/op_quantize.cpp) for every execution, since it holds the input pointer. Plain data only:
// the host compiler includes this too.
#pragma once

#include <cstdint>

#include "common/quant_params.cuh"

namespace mxq {

struct alignas(64) QuantizeTmaParams {
  QuantizeParams q;
  // CUtensorMap of the 16-bit input as [batch][rows][in_ld] (dims cols, rows, batch), 128 x 128 x 1
  // boxes, no swizzle, out-of-range elements read as zeros.
  alignas(64) uint8_t tmap[128];
};

// Input stages of the TMA kernel: 128 x 128 16-bit tiles in a ring. kStages = 2 also double-buffers
// the FP8 staging tile; kStages = 3 stores the transposed FP8 bytes straight from registers.
constexpr int kQuantTmaStageBytes = kQuantTile * kQuantTile * 2;
// Dynamic shared memory: 128 bytes of alignment slack, the stages, two rowwise and two columnwise
// scale tiles and (staged variant) two FP8 staging tiles.
constexpr int quantize_tma_smem_bytes(int stages, bool staged) {
  return 128 + stages * kQuantTmaStageBytes + 4 * 512 + (staged ? 2 * kQuantTile * kQuantOutPitch : 0);
}

}  // namespace mxq
