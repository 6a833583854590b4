// Launcher for the standalone scale (un)swizzle kernels: one thread per 16-byte line of the
// swizzled tensor, a grid-stride loop capped at a few waves (the tensors are small: 1/32 of the
// data they scale).
#include "cuda/op_swizzle.h"

#include <algorithm>

#include "common/swizzle.h"
#include "core/error.h"
#include "core/layout.h"

namespace mxq {
namespace cuda {

void swizzle_scales(Device& dev, bool to_swizzled, int64_t batch, int64_t rows, int64_t scale_cols,
                    int64_t linear_ld, const void* src, void* dst, mxqStream_t stream) {
  MXQ_REQUIRE(dev.cc() >= 90, MXQ_STATUS_NOT_SUPPORTED_ARCH,
              "no scale swizzle kernel for sm_{} ({}); this build has kernels for sm_90+", dev.cc(), dev.name());
  const char* name = to_swizzled ? "mxq_swizzle_scales" : "mxq_unswizzle_scales";
  CUfunction fn = dev.kernel(name);
  SwizzleParams p{};
  p.src = static_cast<const uint8_t*>(src);
  p.dst = static_cast<uint8_t*>(dst);
  p.batch = batch;
  p.rows = rows;
  p.scale_cols = scale_cols;
  p.linear_ld = linear_ld;
  p.rpad = layout::swz_rows(rows);
  p.cpad = layout::swz_cols(scale_cols);
  p.lines = batch * p.rpad * p.cpad / 16;
  p.swizzled_aligned = (reinterpret_cast<uintptr_t>(to_swizzled ? dst : src) & 15u) == 0 ? 1 : 0;
  const int64_t blocks = std::min<int64_t>(layout::ceil_div(p.lines, kSwizzleThreads), int64_t(dev.sm_count()) * 32);
  void* params[] = {&p};
  dev.launch(fn, Dim3{static_cast<unsigned>(std::max<int64_t>(blocks, 1)), 1, 1},
             Dim3{static_cast<unsigned>(kSwizzleThreads), 1, 1}, 0, stream, params, name);
}

}  // namespace cuda
}  // namespace mxq
