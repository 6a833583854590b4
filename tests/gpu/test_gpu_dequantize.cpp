// GPU dequantize against the CPU reference, through the public API only: for every orientation
// (rowwise, columnwise transposed, columnwise row-major), scale layout, FP8 type, output type,
// batch, row grouping (sizes 0, 1, 31, 33, 127, 129, rows past the last group, invalid offsets that
// the GPU must clamp), odd shapes, padded output strides and misaligned pointers, the same plan runs
// on a CPU handle and a CUDA handle and the whole output allocation is compared byte for byte
// (the contract is bit-exact, NaNs included: both backends store canonical NaNs).
//
// Inputs are realistic: random high-precision tensors (salted with NaN, Inf, subnormals, huge
// values) quantized by the CPU backend, then salted again on the quantized side with random FP8
// codes and special scale bytes (0xFF NaN, 0x00, 0xFE) so every code path of the conversion runs.
#include <cstdio>

#include "gpu/test_gpu_common.h"

using namespace mxq_test::gpu;

namespace {

constexpr uint8_t kPoison = 0xA7;  // a NaN-free bf16/fp16/fp32 pattern nobody computes by accident

struct DqCase {
  int32_t direction = MXQ_QUANTIZE_ROWWISE;
  bool transposed = true;
  mxqScaleLayout_t layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  mxqDataType_t fp8 = MXQ_DTYPE_E4M3;
  mxqDataType_t out = MXQ_DTYPE_BF16;
  mxqDataType_t in = MXQ_DTYPE_BF16;  // of the tensor that gets quantized
  int64_t batch = 1, rows = 1, cols = 1, out_ld = 1;
  bool grouped = false;
  int64_t groups = 0;
  mxqDataType_t offsets_dtype = MXQ_DTYPE_INT32;
  bool leave_tail = false;
  bool invalid_offsets = false;
  size_t misalign_data = 0, misalign_out = 0;
  bool raw_random = false;  // random FP8 and scale bytes instead of quantizing (large cases)

  std::string describe() const {
    char b[512];
    std::snprintf(b, sizeof b,
                  "%s%s %s %s->%s batch=%lld rows=%lld cols=%lld ld=%lld grouped=%d G=%lld %s tail=%d invalid=%d "
                  "misalign data=%zu out=%zu",
                  direction == MXQ_QUANTIZE_ROWWISE ? "rowwise" : "columnwise",
                  direction == MXQ_QUANTIZE_ROWWISE ? "" : (transposed ? "(transposed)" : "(row-major)"),
                  layout == MXQ_SCALE_LAYOUT_LINEAR ? "LINEAR" : "SWIZZLED", dtype_str(fp8), dtype_str(out),
                  static_cast<long long>(batch), static_cast<long long>(rows), static_cast<long long>(cols),
                  static_cast<long long>(out_ld), grouped, static_cast<long long>(groups),
                  offsets_dtype == MXQ_DTYPE_INT64 ? "i64" : "i32", leave_tail, invalid_offsets, misalign_data,
                  misalign_out);
    return b;
  }
};

template <typename T>
void set_q(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, T v) {
  MXQ_REQUIRE_OK(mxqQuantizePlanSetAttribute(p, a, &v, sizeof v));
}
template <typename T>
void set_dq(mxqDequantizePlan_t p, mxqDequantizeAttribute_t a, T v) {
  MXQ_REQUIRE_OK(mxqDequantizePlanSetAttribute(p, a, &v, sizeof v));
}

struct Quantized {
  std::vector<uint8_t> data, scales;
};

// Quantizes a random tensor on the CPU backend with the plan attributes the dequantize plan mirrors.
Quantized quantize_on_cpu(const DqCase& c, mxqHandle_t cpu, const std::vector<int64_t>& ends, std::mt19937_64& rng) {
  mxqQuantizePlan_t qp = nullptr;
  MXQ_REQUIRE_OK(mxqQuantizePlanCreate(cpu, &qp));
  set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, c.in);
  set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE, c.fp8);
  set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_DIRECTION, c.direction);
  set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, c.transposed ? 1 : 0);
  set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, c.layout);
  set_q<int64_t>(qp, MXQ_QUANTIZE_ATTR_ROWS, c.rows);
  set_q<int64_t>(qp, MXQ_QUANTIZE_ATTR_COLS, c.cols);
  set_q<int64_t>(qp, MXQ_QUANTIZE_ATTR_BATCH, c.batch);
  if (c.grouped) {
    set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    set_q<int64_t>(qp, MXQ_QUANTIZE_ATTR_NUM_GROUPS, c.groups);
    set_q<int32_t>(qp, MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, c.offsets_dtype);
  }
  MXQ_REQUIRE_OK(mxqQuantizePlanFinalize(qp));
  const bool row = c.direction == MXQ_QUANTIZE_ROWWISE;
  const mxqArgSlot_t data_slot = row ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA;
  const mxqArgSlot_t scale_slot = row ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES;
  size_t data_bytes = 0, scale_bytes = 0;
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(qp, data_slot, &data_bytes));
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(qp, scale_slot, &scale_bytes));
  REQUIRE(data_bytes == static_cast<size_t>(c.batch * c.rows * c.cols));

  std::vector<uint8_t> x = random_hp(c.in, static_cast<size_t>(c.batch * c.rows * c.cols), rng);
  Quantized q{std::vector<uint8_t>(data_bytes), std::vector<uint8_t>(scale_bytes)};
  std::vector<uint8_t> offs = offsets_bytes(ends, c.offsets_dtype);
  std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, x.data()}, {data_slot, 0, q.data.data()}, {scale_slot, 0, q.scales.data()}};
  if (c.grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, offs.data()});
  MXQ_REQUIRE_OK(mxqQuantizeExecute(cpu, qp, args.data(), static_cast<int>(args.size()), nullptr, 0, nullptr));
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(qp));
  return q;
}

mxqDequantizePlan_t make_dq_plan(const DqCase& c, mxqHandle_t h) {
  mxqDequantizePlan_t p = nullptr;
  MXQ_REQUIRE_OK(mxqDequantizePlanCreate(h, &p));
  set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_INPUT_DTYPE, c.fp8);
  set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, c.out);
  set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_DIRECTION, c.direction);
  set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, c.transposed ? 1 : 0);
  set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT, c.layout);
  set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_ROWS, c.rows);
  set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_COLS, c.cols);
  set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_BATCH, c.batch);
  set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_OUTPUT_LD, c.out_ld);
  if (c.grouped) {
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, c.groups);
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, c.offsets_dtype);
  }
  MXQ_REQUIRE_OK(mxqDequantizePlanFinalize(p));
  return p;
}

// Scale bytes of a raw-random case: the extent the dequantize plan reads (mirrors core/sizes.h for
// the ungrouped case, which is all raw cases use).
size_t raw_scale_bytes(const DqCase& c) {
  const bool swz = c.layout == MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  const int64_t srows = c.direction == MXQ_QUANTIZE_ROWWISE ? c.rows : c.cols;
  const int64_t scols = (c.direction == MXQ_QUANTIZE_ROWWISE ? c.cols + 31 : c.rows + 31) / 32;
  const int64_t per = swz ? ((srows + 127) / 128 * 128) * ((scols + 3) / 4 * 4) : srows * scols;
  return static_cast<size_t>(c.batch * per);
}

// Guards against a suite that passes on trivial data: a tiny case or one whose (clamped) groups
// cover no row may legitimately dequantize to all zeros, but most cases of a test must not.
struct Coverage {
  int cases = 0;
  int nontrivial = 0;
  void check() const {
    INFO(nontrivial << " of " << cases << " cases produced non-zero output");
    CHECK(cases > 0);
    CHECK(nontrivial * 4 >= cases * 3);
  }
};

void run_case(const DqCase& c, mxqHandle_t cpu, mxqHandle_t gpu, uint64_t seed, Coverage& cov) {
  INFO("case: " << c.describe());
  INFO("seed: " << seed << " (MXQ_TEST_SEED=" << seed << " reproduces)");
  std::mt19937_64 rng(seed);

  std::vector<int64_t> ends, gpu_ends;
  if (c.grouped) {
    ends = random_group_ends(c.rows, c.groups, rng, c.leave_tail);
    gpu_ends = ends;
    if (c.invalid_offsets) {
      gpu_ends = corrupt_offsets(ends, c.rows, rng);
      ends = clamp_offsets(gpu_ends, c.rows);
    }
  }

  Quantized q;
  if (c.raw_random) {
    q.data.resize(static_cast<size_t>(c.batch * c.rows * c.cols));
    for (auto& b : q.data) b = static_cast<uint8_t>(rng());
    q.scales.resize(raw_scale_bytes(c));
    // Scales mostly near 2^0 so results stay finite; the salt adds NaN / extreme scales.
    for (auto& b : q.scales) b = static_cast<uint8_t>(110 + rng() % 34);
  } else {
    q = quantize_on_cpu(c, cpu, ends, rng);
  }
  salt_bytes(q.data, rng, 0.02);
  salt_bytes(q.scales, rng, 0.02, {0xFF, 0x00, 0xFE, 0x01, 0x7F});

  const size_t esize = dtype_bytes(c.out);
  const size_t out_bytes = static_cast<size_t>(c.batch * c.rows * c.out_ld) * esize;

  // ---- CPU reference ----
  mxqDequantizePlan_t cp = make_dq_plan(c, cpu);
  std::vector<uint8_t> expected(out_bytes, kPoison);
  std::vector<uint8_t> offs_cpu = offsets_bytes(ends, c.offsets_dtype);
  const bool row = c.direction == MXQ_QUANTIZE_ROWWISE;
  const mxqArgSlot_t data_slot = row ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA;
  const mxqArgSlot_t scale_slot = row ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES;
  {
    std::vector<mxqExecArg_t> args = {{data_slot, 0, q.data.data()}, {scale_slot, 0, q.scales.data()},
                                      {MXQ_ARG_X, 0, expected.data()}};
    if (c.grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, offs_cpu.data()});
    MXQ_REQUIRE_OK(mxqDequantizeExecute(cpu, cp, args.data(), static_cast<int>(args.size()), nullptr, 0, nullptr));
  }
  MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(cp));

  // ---- GPU ----
  mxqDequantizePlan_t gp = make_dq_plan(c, gpu);
  size_t ws_bytes = 0;
  MXQ_REQUIRE_OK(mxqDequantizePlanGetWorkspaceSize(gp, &ws_bytes));
  REQUIRE((ws_bytes > 0) == c.grouped);
  DeviceBuffer d_data(q.data, c.misalign_data);
  DeviceBuffer d_scales(q.scales);
  DeviceBuffer d_out(out_bytes, c.misalign_out);
  DeviceBuffer d_ws(std::max<size_t>(ws_bytes, 1));
  DeviceBuffer d_offs(offsets_bytes(gpu_ends.empty() ? std::vector<int64_t>{0} : gpu_ends, c.offsets_dtype));
  d_out.poison(kPoison);
  d_ws.poison(0xEE);  // the group table must not depend on the workspace's previous contents
  {
    std::vector<mxqExecArg_t> args = {{data_slot, 0, d_data.ptr()}, {scale_slot, 0, d_scales.ptr()},
                                      {MXQ_ARG_X, 0, d_out.ptr()}};
    if (c.grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()});
    MXQ_REQUIRE_OK(mxqDequantizeExecute(gpu, gp, args.data(), static_cast<int>(args.size()),
                                        ws_bytes ? d_ws.ptr() : nullptr, ws_bytes, nullptr));
  }
  const std::vector<uint8_t> actual = d_out.download();
  MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(gp));

  // The reference wrote every element of X (zeros included) and left the stride gaps alone;
  // count whether it produced anything but zeros.
  size_t unwritten = 0, nonzero = 0;
  for (size_t e = 0; e < expected.size() / esize; ++e) {
    const bool in_row = static_cast<int64_t>(e) % c.out_ld < c.cols;
    bool poison = true, zero = true;
    for (size_t b = 0; b < esize; ++b) {
      poison = poison && expected[e * esize + b] == kPoison;
      zero = zero && (expected[e * esize + b] & (b + 1 == esize ? 0x7F : 0xFF)) == 0;
    }
    unwritten += in_row && poison;
    nonzero += in_row && !zero;
  }
  REQUIRE(unwritten == 0);
  ++cov.cases;
  cov.nontrivial += nonzero > 0;

  std::string report;
  const bool same = same_bytes(expected, actual, esize,
                               [&](size_t e) {
                                 const int64_t row_all = static_cast<int64_t>(e) / c.out_ld;
                                 return "batch " + std::to_string(row_all / c.rows) + " row " +
                                        std::to_string(row_all % c.rows) + " col " +
                                        std::to_string(static_cast<int64_t>(e) % c.out_ld);
                               },
                               &report);
  INFO(report);
  CHECK(same);
  CHECK(d_out.guards_intact(kPoison));
}

struct Orientation {
  int32_t direction;
  bool transposed;
};
const Orientation kOrientations[] = {
    {MXQ_QUANTIZE_ROWWISE, true}, {MXQ_QUANTIZE_COLUMNWISE, true}, {MXQ_QUANTIZE_COLUMNWISE, false}};
const mxqScaleLayout_t kLayouts[] = {MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR};
const mxqDataType_t kFp8[] = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
const mxqDataType_t kOut[] = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32};
const mxqDataType_t kIn[] = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32};

}  // namespace

TEST_CASE("gpu dequantize: every orientation, layout and dtype pair matches the CPU reference", "[gpu][dequantize]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  Coverage cov;
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  // {batch, rows, cols, extra ld}: 16-byte vector paths, ragged edges, a partial last 32-block,
  // single elements, padded strides, batches with per-batch swizzle padding.
  const int64_t shapes[][4] = {{1, 256, 512, 0}, {1, 33, 100, 3}, {3, 129, 48, 8}, {1, 1, 1, 0},
                               {2, 64, 272, 16}, {1, 200, 31, 1}};
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto layout : kLayouts)
      for (auto fp8 : kFp8)
        for (auto out : kOut)
          for (const auto& s : shapes) {
            DqCase c;
            c.direction = o.direction;
            c.transposed = o.transposed;
            c.layout = layout;
            c.fp8 = fp8;
            c.out = out;
            c.in = kIn[pick() % 3];
            c.batch = s[0];
            c.rows = s[1];
            c.cols = s[2];
            c.out_ld = s[2] + s[3];
            run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++), cov);
          }
  cov.check();
}

TEST_CASE("gpu dequantize: row groups, empty and tiny groups, tails, invalid offsets", "[gpu][dequantize][groups]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  Coverage cov;
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto layout : kLayouts)
      for (auto odt : {MXQ_DTYPE_INT32, MXQ_DTYPE_INT64})
        for (int tail = 0; tail < 2; ++tail)
          for (int invalid = 0; invalid < 2; ++invalid) {
            DqCase c;
            c.direction = o.direction;
            c.transposed = o.transposed;
            c.layout = layout;
            c.fp8 = kFp8[pick() % 2];
            c.out = kOut[pick() % 3];
            c.in = kIn[pick() % 3];
            c.grouped = true;
            c.groups = 1 + static_cast<int64_t>(pick() % 12);
            c.rows = 1 + static_cast<int64_t>(pick() % 900);
            c.cols = 1 + static_cast<int64_t>(pick() % 300);
            c.out_ld = c.cols + static_cast<int64_t>(pick() % 3) * 8;
            c.offsets_dtype = odt;
            c.leave_tail = tail != 0;
            c.invalid_offsets = invalid != 0;
            run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++), cov);
          }
  // Every group size the header promises to handle, in one tensor, each orientation.
  for (const auto& o : kOrientations) {
    DqCase c;
    c.direction = o.direction;
    c.transposed = o.transposed;
    c.grouped = true;
    c.groups = 40;
    c.rows = 3000;
    c.cols = 96;
    c.out_ld = 96;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++), cov);
  }
  cov.check();
}

TEST_CASE("gpu dequantize: misaligned pointers and strides take the scalar path correctly", "[gpu][dequantize]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  Coverage cov;
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto out : kOut)
      for (int k = 0; k < 3; ++k) {
        DqCase c;
        c.direction = o.direction;
        c.transposed = o.transposed;
        c.out = out;
        c.rows = 96;
        c.cols = 128;
        c.out_ld = k == 2 ? 130 : 128;  // a stride that breaks 16-byte rows for every output type
        c.misalign_data = k == 0 ? 1 + pick() % 15 : 0;
        c.misalign_out = k == 1 ? dtype_bytes(out) * (1 + pick() % 3) : 0;
        run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++), cov);
      }
  cov.check();
}

TEST_CASE("gpu dequantize: grids larger than 65535 in y and z loop correctly", "[gpu][dequantize][large]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  Coverage cov;
  const uint64_t seed = fresh_seed();
  // batch > 65535 (grid z), K > 65535 * 128 for the transposed kernel (grid y), and rows > 65535
  // with one row per block for the direct kernel (grid y).
  DqCase z;
  z.batch = 65537 + 3;
  z.rows = 2;
  z.cols = 5;
  z.out_ld = 5;
  z.raw_random = true;
  run_case(z, cpu, gpu, seed, cov);
  DqCase y;
  y.direction = MXQ_QUANTIZE_COLUMNWISE;
  y.transposed = true;
  y.rows = 3;
  y.cols = 65535 * 128 + 300;
  y.out_ld = y.cols;
  y.raw_random = true;
  run_case(y, cpu, gpu, seed + 1, cov);
  DqCase d;
  d.rows = 65535 + 70;
  d.cols = 2064;  // 129 chunks of 16: a 256-thread row per block
  d.out_ld = d.cols;
  d.out = MXQ_DTYPE_FP16;
  d.raw_random = true;
  run_case(d, cpu, gpu, seed + 2, cov);
  cov.check();
}

// Throughput figures for the report (hidden: run with "[.bench]"). Memory-bound: bytes moved =
// FP8 data + scales + output, against the device's HBM bandwidth.
TEST_CASE("gpu dequantize: bandwidth", "[.bench]") {
  Handle gpu(MXQ_BACKEND_CUDA);
  struct B {
    const char* what;
    int32_t dir;
    mxqDataType_t out;
    int64_t rows, cols;
  };
  const B cases[] = {{"rowwise 8192x7168 -> bf16", MXQ_QUANTIZE_ROWWISE, MXQ_DTYPE_BF16, 8192, 7168},
                     {"rowwise 8192x7168 -> fp32", MXQ_QUANTIZE_ROWWISE, MXQ_DTYPE_FP32, 8192, 7168},
                     {"colwise transposed 8192x7168 -> bf16", MXQ_QUANTIZE_COLUMNWISE, MXQ_DTYPE_BF16, 8192, 7168},
                     {"colwise transposed 8192x7168 -> fp32", MXQ_QUANTIZE_COLUMNWISE, MXQ_DTYPE_FP32, 8192, 7168},
                     {"rowwise 65536x2048 -> bf16", MXQ_QUANTIZE_ROWWISE, MXQ_DTYPE_BF16, 65536, 2048}};
  for (const B& b : cases) {
    mxqDequantizePlan_t p = nullptr;
    MXQ_REQUIRE_OK(mxqDequantizePlanCreate(gpu, &p));
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_DIRECTION, b.dir);
    set_dq<int32_t>(p, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, b.out);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_ROWS, b.rows);
    set_dq<int64_t>(p, MXQ_DEQUANTIZE_ATTR_COLS, b.cols);
    MXQ_REQUIRE_OK(mxqDequantizePlanFinalize(p));
    const size_t n = static_cast<size_t>(b.rows * b.cols);
    const size_t scale_bytes = static_cast<size_t>(((std::max(b.rows, b.cols) + 127) / 128 * 128) *
                                                   ((std::max(b.rows, b.cols) / 32 + 3) / 4 * 4));
    DeviceBuffer data(n), scales(scale_bytes), out(n * dtype_bytes(b.out));
    data.poison(0x38);
    scales.poison(127);
    const bool row = b.dir == MXQ_QUANTIZE_ROWWISE;
    mxqExecArg_t args[] = {{row ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA, 0, data.ptr()},
                           {row ? MXQ_ARG_ROWWISE_SCALES : MXQ_ARG_COLWISE_SCALES, 0, scales.ptr()},
                           {MXQ_ARG_X, 0, out.ptr()}};
    const double ms = time_ms(20, [&] { REQUIRE(mxqDequantizeExecute(gpu, p, args, 3, nullptr, 0, nullptr) == 0); });
    const double bytes = static_cast<double>(n) * (1 + dtype_bytes(b.out)) + static_cast<double>(n) / 32;
    std::printf("dequantize %-40s %8.1f us  %7.0f GB/s\n", b.what, ms * 1e3, bytes / (ms * 1e-3) / 1e9);
    MXQ_REQUIRE_OK(mxqDequantizePlanDestroy(p));
  }
}
