// The CUDA dispatcher's kernel selection, without a GPU: Registry::choose() takes a plain
// DeviceInfo, so ordering, data-type keys, architecture ranges, supports() reasons and every
// NOT_SUPPORTED_* status can be pinned here on any machine. Only built with GPU kernels.
#include <catch2/catch.hpp>

#ifdef MXQ_HAVE_CUDA_KERNELS

#include <string>

#include <cstdint>
#include <cstring>
#include <set>

#include "core/error.h"
#include "cuda/kernel_images.h"
#include "cuda/registry.h"

using namespace mxq;
using namespace mxq::cuda;

namespace {

DeviceInfo device(int cc) {
  DeviceInfo d;
  d.cc = cc;
  d.sm_count = 132;
  d.smem_optin = 227 * 1024;
  d.name = "test device sm_" + std::to_string(cc);
  return d;
}

template <typename Fn>
mxqStatus_t status_of(Fn&& fn, std::string* message) {
  try {
    fn();
  } catch (const Error& e) {
    *message = e.what();
    return e.status();
  }
  return MXQ_STATUS_SUCCESS;
}

KernelEntry<DequantizeDesc> entry(const std::string& name, int priority, ArchRange arch,
                                  std::vector<mxqDataType_t> out, std::string refuse = {}) {
  KernelEntry<DequantizeDesc> e;
  e.name = name;
  e.arch = arch;
  e.out_dtypes = std::move(out);
  e.variant = name + " variant";
  e.priority = priority;
  e.supports = [refuse](const DequantizeDesc&, const DeviceInfo&) { return refuse; };
  e.make = [](const DequantizeDesc&, Device&) -> std::unique_ptr<OpImpl> { return nullptr; };
  return e;
}

}  // namespace

TEST_CASE("cuda registry: the built-in dequantize entries split by orientation", "[internal][cuda][registry]") {
  DequantizeDesc d;
  d.rows = 64;
  d.cols = 64;
  d.out_ld = 64;
  const auto row = registry().choose(d, device(90));
  REQUIRE(row.entry != nullptr);
  CHECK(row.entry->name == "generic.dequantize.direct");
  INFO(row.reason);
  CHECK(row.reason.find("skipped generic.dequantize.transposed") != std::string::npos);

  d.direction = MXQ_QUANTIZE_COLUMNWISE;
  CHECK(registry().choose(d, device(90)).entry->name == "generic.dequantize.transposed");
  d.colwise_transposed = false;
  CHECK(registry().choose(d, device(90)).entry->name == "generic.dequantize.direct");
  // Generic kernels (compute_90 PTX embedded) are offered to newer GPUs too.
  CHECK(registry().choose(d, device(100)).entry->name == "generic.dequantize.direct");
  CHECK(registry().choose(d, device(120)).entry->name == "generic.dequantize.direct");
}

TEST_CASE("cuda registry: a pre-Hopper device gets NOT_SUPPORTED_ARCH with the device named", "[internal][cuda][registry]") {
  DequantizeDesc d;
  d.rows = d.cols = d.out_ld = 32;
  std::string msg;
  CHECK(status_of([&] { registry().choose(d, device(80)); }, &msg) == MXQ_STATUS_NOT_SUPPORTED_ARCH);
  INFO(msg);
  CHECK(msg.find("sm_80") != std::string::npos);
  CHECK(msg.find("sm_90+") != std::string::npos);
}

TEST_CASE("cuda registry: priority order, dtype keys and reasons", "[internal][cuda][registry]") {
  Registry r;
  DequantizeDesc d;
  std::string msg;
  CHECK(status_of([&] { r.choose(d, device(90)); }, &msg) == MXQ_STATUS_NOT_SUPPORTED);
  CHECK(msg.find("no GPU kernel exists yet for dequantize") != std::string::npos);

  r.add(entry("low", 0, {90, kAnyNewer}, {}));
  r.add(entry("high.refuses", 5, {90, kAnyNewer}, {}, "too wide"));
  r.add(entry("high.second", 5, {90, 90}, {}));  // same priority: registered later, tried later
  r.add(entry("bf16.only", 9, {90, kAnyNewer}, {MXQ_DTYPE_BF16}));
  REQUIRE(r.entries<DequantizeDesc>().size() == 4);
  CHECK(r.entries<DequantizeDesc>()[0].name == "bf16.only");
  CHECK(r.entries<DequantizeDesc>()[1].name == "high.refuses");
  CHECK(r.entries<DequantizeDesc>()[2].name == "high.second");
  CHECK(r.entries<DequantizeDesc>()[3].name == "low");

  d.out_dtype = MXQ_DTYPE_BF16;
  CHECK(r.choose(d, device(90)).entry->name == "bf16.only");
  d.out_dtype = MXQ_DTYPE_FP32;
  const auto c = r.choose(d, device(90));
  CHECK(c.entry->name == "high.second");
  INFO(c.reason);
  CHECK(c.reason.find("high.refuses: too wide") != std::string::npos);
  CHECK(c.reason.find("high.second variant") == 0);
  // sm_100: the sm_90-only entry drops out, the generic one remains.
  CHECK(r.choose(d, device(100)).entry->name == "low");
}

TEST_CASE("cuda registry: statuses when nothing fits", "[internal][cuda][registry]") {
  Registry r;
  r.add(entry("fp32.refuses", 1, {90, 90}, {MXQ_DTYPE_FP32}, "odd shapes"));
  r.add(entry("fp32.refuses.too", 0, {90, 90}, {MXQ_DTYPE_FP32}, "no reason at all"));
  DequantizeDesc d;
  std::string msg;
  d.out_dtype = MXQ_DTYPE_BF16;
  CHECK(status_of([&] { r.choose(d, device(90)); }, &msg) == MXQ_STATUS_NOT_SUPPORTED_DTYPE);
  CHECK(msg.find("E4M3 -> BF16") != std::string::npos);
  d.out_dtype = MXQ_DTYPE_FP32;
  CHECK(status_of([&] { r.choose(d, device(90)); }, &msg) == MXQ_STATUS_NOT_SUPPORTED_COMBINATION);
  INFO(msg);
  CHECK(msg.find("fp32.refuses: odd shapes") != std::string::npos);
  CHECK(msg.find("fp32.refuses.too: no reason at all") != std::string::npos);
  CHECK(status_of([&] { r.choose(d, device(100)); }, &msg) == MXQ_STATUS_NOT_SUPPORTED_ARCH);
  CHECK(msg.find("sm_90") != std::string::npos);
  // An entry without a factory is a programming error caught at registration.
  KernelEntry<DequantizeDesc> broken = entry("broken", 0, {90, 90}, {});
  broken.make = nullptr;
  CHECK(status_of([&] { r.add(std::move(broken)); }, &msg) == MXQ_STATUS_INTERNAL_ERROR);
}

TEST_CASE("cuda registry: the embedded images are fatbins, one per kernels/**/*.cu", "[internal][cuda][registry]") {
  REQUIRE(kNumEmbeddedImages >= 3);
  std::set<std::string> names;
  for (size_t i = 0; i < kNumEmbeddedImages; ++i) {
    const EmbeddedImage& img = kEmbeddedImages[i];
    INFO(img.name);
    names.insert(img.name);
    REQUIRE(img.size > 16);
    CHECK(reinterpret_cast<uintptr_t>(img.data) % 64 == 0);
    uint32_t magic = 0;
    std::memcpy(&magic, img.data, 4);
    CHECK(magic == 0xBA55ED50u);  // fatbin container header
  }
  CHECK(names.size() == kNumEmbeddedImages);
  CHECK(names.count("generic/dequantize") == 1);
  CHECK(names.count("common/swizzle") == 1);
  CHECK(names.count("common/group_table") == 1);
}

#endif  // MXQ_HAVE_CUDA_KERNELS
