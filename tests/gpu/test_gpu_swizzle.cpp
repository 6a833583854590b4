// mxqSwizzleScales on the GPU against the CPU backend, both directions, through the public API:
// random scale bytes (every UE8M0 code), odd row / column counts that need padding, LINEAR row
// strides wider than the scale columns, batches, and a swizzled pointer that is not 16-byte aligned.
// Destinations are poisoned on both backends and compared in full: swizzling must write every
// padding byte as 0; unswizzling must leave the gap between scaleCols and linearLd untouched.
#include "gpu/test_gpu_common.h"

using namespace mxq_test::gpu;

namespace {

constexpr uint8_t kPoison = 0x5C;

struct SwzCase {
  int64_t batch, rows, scols, ld;
  bool to_swizzled;
  size_t misalign;  // applied to the swizzled-side pointer
};

void run_swizzle(const SwzCase& c, mxqHandle_t cpu, mxqHandle_t gpu, uint64_t seed) {
  INFO("batch " << c.batch << " rows " << c.rows << " scols " << c.scols << " ld " << c.ld << " to_swizzled "
                << c.to_swizzled << " misalign " << c.misalign);
  INFO("seed: " << seed);
  std::mt19937_64 rng(seed);
  const size_t linear_bytes = static_cast<size_t>(c.batch * c.rows * c.ld);
  const size_t swz_bytes = mxqSwizzledScaleBytes(c.batch, c.rows, c.scols);
  REQUIRE(swz_bytes == static_cast<size_t>(c.batch * ((c.rows + 127) / 128 * 128) * ((c.scols + 3) / 4 * 4)));
  const size_t src_bytes = c.to_swizzled ? linear_bytes : swz_bytes;
  const size_t dst_bytes = c.to_swizzled ? swz_bytes : linear_bytes;

  std::vector<uint8_t> src(src_bytes);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  REQUIRE(std::any_of(src.begin(), src.end(), [](uint8_t b) { return b != 0; }));

  std::vector<uint8_t> expected(dst_bytes, kPoison);
  MXQ_REQUIRE_OK(mxqSwizzleScales(cpu, c.to_swizzled, c.batch, c.rows, c.scols, c.ld, src.data(), expected.data(), nullptr));

  DeviceBuffer d_src(src, c.to_swizzled ? 0 : c.misalign);
  DeviceBuffer d_dst(dst_bytes, c.to_swizzled ? c.misalign : 0);
  d_dst.poison(kPoison);
  MXQ_REQUIRE_OK(mxqSwizzleScales(gpu, c.to_swizzled, c.batch, c.rows, c.scols, c.ld, d_src.ptr(), d_dst.ptr(), nullptr));
  const std::vector<uint8_t> actual = d_dst.download();

  std::string report;
  const bool same = same_bytes(expected, actual, 1, [](size_t i) { return "byte " + std::to_string(i); }, &report);
  INFO(report);
  CHECK(same);
  CHECK(d_dst.guards_intact(kPoison));

  if (c.to_swizzled) {
    // Round trip on the GPU: unswizzling what was just swizzled gives the source back in the
    // [rows, scols] entries and leaves the stride gap alone.
    DeviceBuffer back(linear_bytes);
    back.poison(kPoison);
    MXQ_REQUIRE_OK(mxqSwizzleScales(gpu, 0, c.batch, c.rows, c.scols, c.ld, d_dst.ptr(), back.ptr(), nullptr));
    const std::vector<uint8_t> lin = back.download();
    size_t bad = 0;
    for (size_t i = 0; i < linear_bytes; ++i) {
      const bool in_row = static_cast<int64_t>(i % static_cast<size_t>(c.ld)) < c.scols;
      bad += lin[i] != (in_row ? src[i] : kPoison);
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("gpu swizzle: both directions match the CPU backend byte for byte", "[gpu][swizzle]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  const int64_t shapes[][4] = {{1, 1, 1, 1},   {1, 128, 4, 4},  {2, 129, 5, 7},   {3, 300, 33, 40},
                               {1, 1000, 1, 1}, {5, 17, 130, 130}, {1, 257, 224, 256}, {4, 33, 3, 9}};
  uint64_t n = 0;
  for (const auto& s : shapes)
    for (int dir = 0; dir < 2; ++dir)
      for (size_t mis : {size_t(0), size_t(3)})
        run_swizzle(SwzCase{s[0], s[1], s[2], s[3], dir == 1, mis}, cpu, gpu, seed + n++);
}

TEST_CASE("gpu swizzle: bad arguments give a status and a message", "[gpu][swizzle]") {
  Handle gpu(MXQ_BACKEND_CUDA);
  DeviceBuffer a(4096), b(4096);
  MXQ_REQUIRE_STATUS(mxqSwizzleScales(gpu, 1, 1, 4, 4, 4, nullptr, b.ptr(), nullptr), MXQ_STATUS_BAD_PARAM_NULL_POINTER);
  CHECK(std::strlen(mxqGetLastErrorMessage()) > 0);
  MXQ_REQUIRE_STATUS(mxqSwizzleScales(gpu, 1, 1, 4, 8, 4, a.ptr(), b.ptr(), nullptr), MXQ_STATUS_BAD_PARAM_SHAPE);
  MXQ_REQUIRE_STATUS(mxqSwizzleScales(gpu, 0, 0, 4, 4, 4, a.ptr(), b.ptr(), nullptr), MXQ_STATUS_BAD_PARAM_SHAPE);
}
