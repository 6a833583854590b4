// GPU quantize against the CPU reference, through the public API only. The same plan runs on a CPU
// handle (the oracle) and a CUDA handle, and every output slot (FP8 data, scales with their swizzle
// and group padding, the SwiGLU activation, amax) is compared byte for byte over the whole
// allocation plus guard bytes: the contract is bit-exact, NaNs included (both sides store 0x7F).
//
// Coverage: bf16 / fp16 / fp32 -> E4M3 / E5M2; RCEIL, FLOOR, CEIL, EVEN; both non-finite policies;
// rowwise, columnwise transposed and row-major, both from one read; LINEAR and SWIZZLED_128x4;
// 32x32 blocks; batches with padded batch strides; row groups (empty, tiny and odd-sized groups,
// rows past the last group, invalid offsets the GPU clamps, int32 / int64 offsets, more groups than
// the in-kernel lookup handles); SwiGLU with and without the activation output; the amax output;
// odd shapes, K % 32 != 0, padded row strides, misaligned input and output pointers.
//
// Inputs are fresh random tensors (seed printed on failure, MXQ_TEST_SEED reproduces) spanning 60
// binades and salted with NaN, +-Inf, fp32 / bf16 subnormals, +-0 and huge values; on top of that a
// few 32-blocks per tensor are made all-zero, all-subnormal or given a maximal element. A crafted
// test pins the edge cases of docs/NUMERICS.md (amax exactly 448 * 2^k and one ulp above, 0x04600001,
// rounding ties, values near FLT_MAX) for every scale mode.
#include <cstdio>

#include "gpu/test_gpu_common.h"

using namespace mxq_test::gpu;

namespace {

constexpr uint8_t kPoison = 0xA7;

struct QCase {
  mxqDataType_t in = MXQ_DTYPE_BF16;
  mxqDataType_t fp8 = MXQ_DTYPE_E4M3;
  mxqScaleMode_t mode = MXQ_SCALE_MODE_RCEIL;
  mxqNonfinitePolicy_t policy = MXQ_NONFINITE_TE_COMPATIBLE;
  int32_t direction = MXQ_QUANTIZE_ROWWISE;
  bool transposed = true;
  mxqScaleLayout_t layout = MXQ_SCALE_LAYOUT_SWIZZLED_128x4;
  bool block2d = false;
  int64_t batch = 1, rows = 1, cols = 1;
  int64_t ld_pad = 0;       // input row stride = input columns + ld_pad
  int64_t bstride_pad = 0;  // input batch stride = rows * ld + bstride_pad
  bool grouped = false;
  int64_t groups = 0;
  mxqDataType_t offsets_dtype = MXQ_DTYPE_INT32;
  bool leave_tail = false;
  bool invalid_offsets = false;
  bool swiglu = false;
  bool want_act = false;
  bool want_amax = false;
  size_t misalign_x = 0;    // elements
  size_t misalign_out = 0;  // bytes, FP8 data and scale outputs
  double special = 0.01;
  std::vector<uint8_t> crafted;  // input bytes to use instead of random ones (must fit the extent)

  int64_t in_cols() const { return swiglu ? 2 * cols : cols; }
  int64_t ld() const { return in_cols() + ld_pad; }
  int64_t bstride() const { return rows * ld() + bstride_pad; }
  size_t in_elems() const { return static_cast<size_t>(batch * bstride()); }

  std::string describe() const {
    static const char* modes[] = {"RCEIL", "FLOOR", "CEIL", "EVEN"};
    const char* dir = direction == MXQ_QUANTIZE_ROWWISE ? "rowwise" : direction == MXQ_QUANTIZE_COLUMNWISE ? "colwise" : "both";
    char b[640];
    std::snprintf(b, sizeof b,
                  "%s->%s %s %s %s%s %s%s batch=%lld rows=%lld cols=%lld ld_pad=%lld bstride_pad=%lld grouped=%d "
                  "G=%lld %s tail=%d invalid=%d swiglu=%d act=%d amax=%d misalign x=%zu out=%zu",
                  dtype_str(in), dtype_str(fp8), modes[mode], policy == MXQ_NONFINITE_PROPAGATE ? "PROPAGATE" : "TE",
                  dir, direction == MXQ_QUANTIZE_ROWWISE ? "" : (transposed ? "(transposed)" : "(row-major)"),
                  layout == MXQ_SCALE_LAYOUT_LINEAR ? "LINEAR" : "SWIZZLED", block2d ? " 32x32" : "",
                  static_cast<long long>(batch), static_cast<long long>(rows), static_cast<long long>(cols),
                  static_cast<long long>(ld_pad), static_cast<long long>(bstride_pad), grouped,
                  static_cast<long long>(groups), offsets_dtype == MXQ_DTYPE_INT64 ? "i64" : "i32", leave_tail,
                  invalid_offsets, swiglu, want_act, want_amax, misalign_x, misalign_out);
    return b;
  }
};

template <typename T>
void set_q(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, T v) {
  MXQ_REQUIRE_OK(mxqQuantizePlanSetAttribute(p, a, &v, sizeof v));
}

mxqQuantizePlan_t make_plan(const QCase& c, mxqHandle_t h) {
  mxqQuantizePlan_t p = nullptr;
  MXQ_REQUIRE_OK(mxqQuantizePlanCreate(h, &p));
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_INPUT_DTYPE, c.in);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_OUTPUT_DTYPE, c.fp8);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_SCALE_MODE, c.mode);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_NONFINITE_POLICY, c.policy);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_DIRECTION, c.direction);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, c.transposed ? 1 : 0);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, c.layout);
  set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_BLOCK_2D, c.block2d ? 1 : 0);
  set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_ROWS, c.rows);
  set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_COLS, c.cols);
  set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_BATCH, c.batch);
  set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_INPUT_LD, c.ld());
  if (c.batch > 1) set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_INPUT_BATCH_STRIDE, c.bstride());
  if (c.grouped) {
    set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
    set_q<int64_t>(p, MXQ_QUANTIZE_ATTR_NUM_GROUPS, c.groups);
    set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_GROUP_OFFSETS_DTYPE, c.offsets_dtype);
  }
  if (c.swiglu) set_q<int32_t>(p, MXQ_QUANTIZE_ATTR_FUSION, MXQ_FUSION_SWIGLU);
  MXQ_REQUIRE_OK(mxqQuantizePlanFinalize(p));
  return p;
}

// The next value above a positive f in the input dtype (f a normal number of that dtype).
float next_up_hp(float f, mxqDataType_t t) {
  if (t == MXQ_DTYPE_FP32) return std::nextafter(f, 1e38f);
  return f * (1.0f + std::ldexp(1.0f, t == MXQ_DTYPE_BF16 ? -7 : -10));
}

// Block-level structure the elementwise salt does not produce: whole 32-blocks of zeros, of
// subnormals, or with one maximal element.
void salt_blocks(std::vector<uint8_t>& x, const QCase& c, std::mt19937_64& rng) {
  const size_t es = dtype_bytes(c.in);
  const int64_t nb = (c.in_cols() + 31) / 32;
  for (int64_t l = 0; l < c.batch; ++l)
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t b = 0; b < nb; ++b) {
        const uint64_t pick = rng() % 100;
        if (pick >= 6) continue;
        const int64_t k1 = std::min(c.in_cols(), 32 * b + 32);
        for (int64_t k = 32 * b; k < k1; ++k) {
          const size_t i = static_cast<size_t>(l * c.bstride() + r * c.ld() + k);
          if (pick < 2) {
            std::memset(&x[es * i], 0, es);
          } else if (pick < 4) {
            if (c.in == MXQ_DTYPE_FP32) put_hp(x, c.in, i, f32_of(1u + static_cast<uint32_t>(rng() % 0x7FFFFF)));
            else {
              const uint16_t h = static_cast<uint16_t>((rng() % 0x7F + 1) | (rng() % 2 ? 0x8000 : 0));
              std::memcpy(&x[es * i], &h, 2);  // bf16 / fp16 subnormal
            }
          } else if (k == 32 * b) {
            const float big = c.in == MXQ_DTYPE_FP32 ? 3.4028235e38f : c.in == MXQ_DTYPE_BF16 ? 3.3895314e38f : 65504.0f;
            put_hp(x, c.in, i, rng() % 2 ? big : -big);
          }
        }
      }
}

struct Slot {
  mxqArgSlot_t slot;
  size_t elem;  // comparison granularity in bytes
  const char* name;
};

void run_case(const QCase& c, mxqHandle_t cpu, mxqHandle_t gpu, uint64_t seed) {
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
  std::vector<uint8_t> x;
  if (!c.crafted.empty()) {
    x = c.crafted;
    REQUIRE(x.size() == c.in_elems() * dtype_bytes(c.in));
  } else {
    x = random_hp(c.in, c.in_elems(), rng, c.special);
    salt_blocks(x, c, rng);
    // One ordinary value at the start, so even a 1-element tensor quantizes to something non-zero.
    put_hp(x, c.in, 0, 1.5f);
    if (c.swiglu) put_hp(x, c.in, static_cast<size_t>(c.cols), 1.5f);
  }

  std::vector<Slot> slots;
  if (c.direction & MXQ_QUANTIZE_ROWWISE) {
    slots.push_back({MXQ_ARG_ROWWISE_DATA, 1, "rowwise data"});
    slots.push_back({MXQ_ARG_ROWWISE_SCALES, 1, "rowwise scales"});
  }
  if (c.direction & MXQ_QUANTIZE_COLUMNWISE) {
    slots.push_back({MXQ_ARG_COLWISE_DATA, 1, "columnwise data"});
    slots.push_back({MXQ_ARG_COLWISE_SCALES, 1, "columnwise scales"});
  }
  if (c.want_act) slots.push_back({MXQ_ARG_ACTIVATION, dtype_bytes(c.in), "activation"});
  if (c.want_amax) slots.push_back({MXQ_ARG_AMAX, 4, "amax"});

  // ---- CPU reference ----
  mxqQuantizePlan_t cp = make_plan(c, cpu);
  std::vector<std::vector<uint8_t>> expected;
  for (const Slot& s : slots) {
    size_t bytes = 0;
    MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(cp, s.slot, &bytes));
    REQUIRE(bytes > 0);
    expected.emplace_back(bytes, kPoison);
  }
  std::vector<uint8_t> offs_cpu = offsets_bytes(ends, c.offsets_dtype);
  {
    std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, x.data()}};
    for (size_t i = 0; i < slots.size(); ++i) args.push_back({slots[i].slot, 0, expected[i].data()});
    if (c.grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, offs_cpu.data()});
    MXQ_REQUIRE_OK(mxqQuantizeExecute(cpu, cp, args.data(), static_cast<int>(args.size()), nullptr, 0, nullptr));
  }
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(cp));
  // A meaningful oracle output: some non-zero FP8 data (unless no row belongs to any group).
  if (!c.grouped || ends.back() > 0)
    REQUIRE(std::any_of(expected[0].begin(), expected[0].end(), [](uint8_t b) { return (b & 0x7F) != 0; }));

  // ---- GPU ----
  mxqQuantizePlan_t gp = make_plan(c, gpu);
  size_t ws_bytes = 0;
  MXQ_REQUIRE_OK(mxqQuantizePlanGetWorkspaceSize(gp, &ws_bytes));
  const size_t es = dtype_bytes(c.in);
  DeviceBuffer d_x(x.size(), c.misalign_x * es);
  d_x.upload(x);
  DeviceBuffer d_ws(std::max<size_t>(ws_bytes, 1));
  d_ws.poison(0xEE);
  DeviceBuffer d_offs(offsets_bytes(gpu_ends.empty() ? std::vector<int64_t>{0} : gpu_ends, c.offsets_dtype));
  std::vector<std::unique_ptr<DeviceBuffer>> outs;
  for (size_t i = 0; i < slots.size(); ++i) {
    const bool fp8_slot = slots[i].slot != MXQ_ARG_ACTIVATION && slots[i].slot != MXQ_ARG_AMAX;
    outs.push_back(std::make_unique<DeviceBuffer>(expected[i].size(), fp8_slot ? c.misalign_out : 0));
    outs.back()->poison(kPoison);
  }
  {
    std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, d_x.ptr()}};
    for (size_t i = 0; i < slots.size(); ++i) args.push_back({slots[i].slot, 0, outs[i]->ptr()});
    if (c.grouped) args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()});
    MXQ_REQUIRE_OK(mxqQuantizeExecute(gpu, gp, args.data(), static_cast<int>(args.size()),
                                      ws_bytes ? d_ws.ptr() : nullptr, ws_bytes, nullptr));
  }
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(gp));

  for (size_t i = 0; i < slots.size(); ++i) {
    const std::vector<uint8_t> actual = outs[i]->download();
    std::string report;
    const bool same = same_bytes(expected[i], actual, slots[i].elem,
                                 [&](size_t e) { return std::string(slots[i].name) + " byte offset " +
                                                        std::to_string(e * slots[i].elem); },
                                 &report);
    INFO(slots[i].name << ": " << report);
    CHECK(same);
    CHECK(outs[i]->guards_intact(kPoison));
  }
}

struct Orientation {
  int32_t direction;
  bool transposed;
};
const Orientation kOrientations[] = {{MXQ_QUANTIZE_ROWWISE, true},
                                     {MXQ_QUANTIZE_COLUMNWISE, true},
                                     {MXQ_QUANTIZE_COLUMNWISE, false},
                                     {MXQ_QUANTIZE_BOTH, true},
                                     {MXQ_QUANTIZE_BOTH, false}};
const mxqScaleLayout_t kLayouts[] = {MXQ_SCALE_LAYOUT_SWIZZLED_128x4, MXQ_SCALE_LAYOUT_LINEAR};
const mxqDataType_t kFp8[] = {MXQ_DTYPE_E4M3, MXQ_DTYPE_E5M2};
const mxqDataType_t kIn[] = {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16, MXQ_DTYPE_FP32};
const mxqScaleMode_t kModes[] = {MXQ_SCALE_MODE_RCEIL, MXQ_SCALE_MODE_FLOOR, MXQ_SCALE_MODE_CEIL, MXQ_SCALE_MODE_EVEN};
const mxqNonfinitePolicy_t kPolicies[] = {MXQ_NONFINITE_TE_COMPATIBLE, MXQ_NONFINITE_PROPAGATE};

// {batch, rows, cols}: aligned multi-tile, one element, partial 32-blocks, K % 8 != 0, ragged tiles.
const int64_t kShapes[][3] = {{1, 256, 512}, {1, 1, 1}, {1, 33, 100}, {3, 129, 48}, {2, 64, 272},
                              {1, 200, 31},  {1, 300, 257}, {2, 130, 160}, {1, 128, 128}, {1, 77, 1000}};

}  // namespace

TEST_CASE("gpu quantize: every dtype, scale mode, policy, orientation and layout matches the CPU reference",
          "[gpu][quantize]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (auto in : kIn)
    for (auto fp8 : kFp8)
      for (auto mode : kModes)
        for (auto policy : kPolicies)
          for (const auto& o : kOrientations)
            for (auto layout : kLayouts) {
              QCase c;
              c.in = in;
              c.fp8 = fp8;
              c.mode = mode;
              c.policy = policy;
              c.direction = o.direction;
              c.transposed = o.transposed;
              c.layout = layout;
              const auto& s = kShapes[pick() % (sizeof kShapes / sizeof kShapes[0])];
              c.batch = s[0];
              c.rows = s[1];
              c.cols = s[2];
              c.ld_pad = pick() % 3 == 0 ? static_cast<int64_t>(pick() % 3) * 8 + static_cast<int64_t>(pick() % 2) : 0;
              c.bstride_pad = c.batch > 1 && pick() % 2 ? 8 : 0;
              c.want_amax = pick() % 2 == 0;
              run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
            }
}

TEST_CASE("gpu quantize: 32x32 blocks in every orientation, batched expert weights", "[gpu][quantize][2d]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto layout : kLayouts)
      for (auto policy : kPolicies)
        for (int k = 0; k < 3; ++k) {
          QCase c;
          c.in = kIn[pick() % 3];
          c.fp8 = kFp8[pick() % 2];
          c.mode = kModes[pick() % 4];
          c.policy = policy;
          c.direction = o.direction;
          c.transposed = o.transposed;
          c.layout = layout;
          c.block2d = true;
          c.batch = k == 0 ? 3 : 1;  // [E, N, K] expert weights
          c.rows = k == 2 ? 1 + static_cast<int64_t>(pick() % 300) : 256;
          c.cols = k == 2 ? 1 + static_cast<int64_t>(pick() % 300) : 384;
          c.want_amax = true;
          run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
        }
}

TEST_CASE("gpu quantize: row groups, empty and tiny groups, tails, invalid offsets", "[gpu][quantize][groups]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto layout : kLayouts)
      for (auto odt : {MXQ_DTYPE_INT32, MXQ_DTYPE_INT64})
        for (int tail = 0; tail < 2; ++tail)
          for (int invalid = 0; invalid < 2; ++invalid) {
            QCase c;
            c.in = kIn[pick() % 3];
            c.fp8 = kFp8[pick() % 2];
            c.mode = kModes[pick() % 4];
            c.policy = kPolicies[pick() % 2];
            c.direction = o.direction;
            c.transposed = o.transposed;
            c.layout = layout;
            c.grouped = true;
            c.groups = 1 + static_cast<int64_t>(pick() % 12);
            c.rows = 1 + static_cast<int64_t>(pick() % 900);
            c.cols = 1 + static_cast<int64_t>(pick() % 300);
            c.offsets_dtype = odt;
            c.leave_tail = tail != 0;
            c.invalid_offsets = invalid != 0;
            c.want_amax = true;
            run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
          }
  // Many groups in one tensor (every size the header promises): up to 128 groups one warp builds a
  // block's group table, from 129 to 1024 all its threads (128 / 129 / 700 cover both sides), and
  // more groups than the kernel's inline lookup handles take the device-built group table path; in
  // every orientation and layout.
  for (const auto& o : kOrientations)
    for (auto layout : kLayouts)
      for (int64_t groups : {40, 128, 129, 700, 1500}) {
        QCase c;
        c.direction = o.direction;
        c.transposed = o.transposed;
        c.layout = layout;
        c.grouped = true;
        c.groups = groups;
        c.rows = groups == 40 ? 3000 : 9000;
        c.cols = 96;
        c.leave_tail = pick() % 2 == 0;
        run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
      }
}

TEST_CASE("gpu quantize: SwiGLU fusion with activation and amax outputs", "[gpu][quantize][swiglu]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (auto in : kIn)
    for (const auto& o : kOrientations)
      for (int act = 0; act < 2; ++act) {
        QCase c;
        c.in = in;
        c.fp8 = kFp8[pick() % 2];
        c.mode = kModes[pick() % 4];
        c.policy = kPolicies[pick() % 2];
        c.direction = o.direction;
        c.transposed = o.transposed;
        c.layout = kLayouts[pick() % 2];
        c.swiglu = true;
        c.want_act = act != 0;
        c.want_amax = true;
        const auto& s = kShapes[pick() % (sizeof kShapes / sizeof kShapes[0])];
        c.batch = s[0];
        c.rows = s[1];
        c.cols = s[2];
        c.ld_pad = pick() % 2 ? 8 : 0;
        run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
      }
  // Grouped SwiGLU (the MoE down-projection input), rows past the last group.
  for (const auto& o : kOrientations) {
    QCase c;
    c.direction = o.direction;
    c.transposed = o.transposed;
    c.swiglu = true;
    c.want_act = true;
    c.want_amax = true;
    c.grouped = true;
    c.groups = 7;
    c.rows = 700;
    c.cols = 256;
    c.leave_tail = true;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
  }
}

TEST_CASE("gpu quantize: misaligned pointers, odd strides and K take the scalar paths correctly",
          "[gpu][quantize][align]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  int n = 0;
  for (const auto& o : kOrientations)
    for (auto in : kIn)
      for (int k = 0; k < 4; ++k) {
        QCase c;
        c.in = in;
        c.direction = o.direction;
        c.transposed = o.transposed;
        c.layout = kLayouts[pick() % 2];
        c.rows = 160;
        c.cols = k == 3 ? 203 : 256;
        c.ld_pad = k == 2 ? 1 : 0;                                           // rows not 16-byte aligned
        c.misalign_x = k == 0 ? 1 + pick() % 7 : 0;                          // base not 16-byte aligned
        c.misalign_out = k == 1 ? 1 + pick() % 15 : 0;                       // outputs not aligned
        c.swiglu = k == 1 && pick() % 2;
        c.want_act = c.swiglu;
        c.want_amax = true;
        run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
      }
}

// The streaming rowwise kernels (common/quant_flat.cuh) take ungrouped rowwise plans with 16-bit
// inputs and K % 128 == 0 (op_quantize.cpp, fast_rowwise): flat (contiguous rows) in every mode,
// policy, format and layout, rows that leave swizzle padding (its padding blocks) and chunk counts that
// leave the last data block partly empty, with 2 (few blocks) and 4 chunks per thread; band (swizzled
// scales above 16 MiB, batched or strided inputs). Other rows of this file reach them too; the GPU
// checks also run [quantize] with MXQ_QUANT_FLAT=0 MXQ_QUANT_BAND=0 (the ring instead), with
// MXQ_QUANT_FLAT=1 and with MXQ_QUANT_BAND=1 (every plan either can take).
TEST_CASE("gpu quantize: the streaming rowwise kernels' plans (flat and band, K a multiple of 128)",
          "[gpu][quantize][flat]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 pick(seed);
  const int64_t shapes[][2] = {{1, 128}, {77, 384}, {300, 896}, {1000, 128}, {129, 4096}, {1, 7168}, {255, 1152}};
  int n = 0;
  for (auto in : {MXQ_DTYPE_BF16, MXQ_DTYPE_FP16})
    for (auto fp8 : kFp8)
      for (auto mode : kModes)
        for (auto policy : kPolicies)
          for (auto layout : kLayouts) {
            QCase c;
            c.in = in;
            c.fp8 = fp8;
            c.mode = mode;
            c.policy = policy;
            c.layout = layout;
            const auto& s = shapes[pick() % (sizeof shapes / sizeof shapes[0])];
            c.rows = s[0];
            c.cols = s[1];
            c.want_amax = pick() % 2 == 0;
            run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
          }
  // The band kernel (swizzled scales above the flat kernel's bound; batched or strided inputs at any
  // size): batches, row strides larger than K, rows that end inside a band and inside a scale tile.
  const int64_t banded[][4] = {{3, 100, 256, 8}, {2, 64, 128, 0}, {1, 193, 384, 16}, {2, 1, 1024, 8}};
  for (const auto& s : banded)
    for (auto fp8 : kFp8) {
      QCase c;
      c.fp8 = fp8;
      c.in = pick() % 2 ? MXQ_DTYPE_BF16 : MXQ_DTYPE_FP16;
      c.mode = kModes[pick() % 4];
      c.policy = kPolicies[pick() % 2];
      c.batch = s[0];
      c.rows = s[1];
      c.cols = s[2];
      c.ld_pad = s[3];
      c.bstride_pad = c.batch > 1 ? 8 : 0;
      c.want_amax = pick() % 2 == 0;
      run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    }
  // The M-grouped band kernel (swizzled, up to 1024 groups: warp 0 alone or all threads build the
  // table): empty and tiny groups, rows past the last group, clamped invalid offsets, int64 offsets.
  for (int64_t groups : {1, 5, 40, 128, 129, 700})
    for (int k = 0; k < 2; ++k) {
      QCase c;
      c.in = pick() % 2 ? MXQ_DTYPE_BF16 : MXQ_DTYPE_FP16;
      c.fp8 = kFp8[pick() % 2];
      c.mode = kModes[pick() % 4];
      c.policy = kPolicies[pick() % 2];
      c.grouped = true;
      c.groups = groups;
      c.rows = 1 + static_cast<int64_t>(pick() % (groups > 100 ? 6000 : 1500));
      c.cols = 128 * (1 + static_cast<int64_t>(pick() % 3));
      c.offsets_dtype = pick() % 2 ? MXQ_DTYPE_INT64 : MXQ_DTYPE_INT32;
      c.leave_tail = k == 1;
      c.invalid_offsets = pick() % 3 == 0;
      c.want_amax = pick() % 2 == 0;
      run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    }
  // Larger: the flat kernel with 4 chunks per thread over many blocks (2048 x 4096, 1000 x 7168), 2 per
  // thread (520 x 1024: padding rows in the last scale tile), and the band kernel (4096 x 4608
  // swizzled, above the flat bound), both layouts, amax.
  const int64_t large[][2] = {{2048, 4096}, {1000, 7168}, {520, 1024}, {4096, 4608}};
  for (const auto& s : large)
    for (auto layout : kLayouts) {
      QCase c;
      c.layout = layout;
      c.rows = s[0];
      c.cols = s[1];
      c.want_amax = true;
      c.special = 0.001;
      run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    }
}

TEST_CASE("gpu quantize: crafted edge values of the scale contract in every mode", "[gpu][quantize][edges]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  // Each row holds eight 32-blocks; row j scales the pattern by 2^(j - 20) so the edges appear in
  // many binades. Block contents: 0 all zero; 1 amax = 448 * 2^k; 2 amax one ulp (of the input
// dtype) above; 3 the fp32
  // amax 0x04600001; 4 ties at the FP8 rounding boundary; 5 values near FLT_MAX; 6 subnormals only;
  // 7 57344 * 2^k with +-Inf / NaN neighbours.
  for (auto in : kIn)
    for (auto fp8 : kFp8)
      for (auto mode : kModes)
        for (auto policy : kPolicies) {
          QCase c;
          c.in = in;
          c.fp8 = fp8;
          c.mode = mode;
          c.policy = policy;
          c.direction = MXQ_QUANTIZE_BOTH;
          c.rows = 40;
          c.cols = 256;
          c.want_amax = true;
          std::vector<uint8_t> x(c.in_elems() * dtype_bytes(in), 0);
          std::mt19937_64 rng(seed);
          for (int64_t r = 0; r < c.rows; ++r) {
            const float s = std::ldexp(1.0f, static_cast<int>(r) - 20);
            for (int64_t k = 0; k < c.cols; ++k) {
              const int blk = static_cast<int>(k / 32), i = static_cast<int>(k % 32);
              const float small = std::ldexp(static_cast<float>(rng() % 64) - 32.0f, -6) * s;
              float v = 0.0f;
              switch (blk) {
                case 0: v = 0.0f; break;
                case 1: v = i == 5 ? 448.0f * s : small; break;
                case 2: v = i == 7 ? next_up_hp(448.0f * s, in) : small; break;
                case 3: v = i == 0 ? f32_of(0x04600001u) : i == 1 ? -f32_of(0x04600000u) : 0.0f; break;
                case 4: {  // midpoints between neighbouring E4M3 (i < 16) and E5M2 (i >= 16) values
                  const float half_step = i < 16 ? 16.0f : 8.0f;
                  v = (1.0f + (2.0f * static_cast<float>(i % 4) + 1.0f) / half_step) * s * (i % 2 ? -1.0f : 1.0f);
                  break;
                }
                case 5: v = i == 0 ? 3.4028235e38f : i == 1 ? -3.0e38f : small; break;
                case 6: v = f32_of(1u + static_cast<uint32_t>(rng() % 0x7FFFFF)); break;
                default:
                  v = i == 3 ? 57344.0f * s
                             : (r % 5 == 0 && i == 9) ? std::numeric_limits<float>::infinity()
                             : (r % 7 == 0 && i == 11) ? std::numeric_limits<float>::quiet_NaN() : small;
              }
              put_hp(x, in, static_cast<size_t>(r * c.ld() + k), v);
            }
          }
          c.crafted = x;
          run_case(c, cpu, gpu, seed);
        }
}

TEST_CASE("gpu quantize: large aligned tensors and a multi-tile grouped tensor", "[gpu][quantize][large]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  int n = 0;
  for (const auto& o : kOrientations) {
    QCase c;
    c.direction = o.direction;
    c.transposed = o.transposed;
    c.rows = 1024;
    c.cols = 2048;
    c.want_amax = true;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    c.grouped = true;
    c.groups = 128;
    c.rows = 4096;
    c.cols = 512;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    // More tiles (32 x 18, ragged in both directions) than any GPU runs persistent blocks of the
    // shared-memory tile kernels (2 per SM): every block loops over several tiles, so the pipelined
    // loads of the next tiles and the reuse of their shared-memory stages are exercised.
    c.grouped = false;
    c.groups = 0;
    c.rows = 4000;
    c.cols = 2200;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
    // The same with every tile full and every FP8 row 16-byte aligned (32 x 18 tiles): the full-tile
    // paths of the ring kernel (lean epilogue) across several tiles per block.
    c.rows = 4096;
    c.cols = 2304;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
  }
  // An M-grouped rowwise tensor with at least 16 tiles per resident block (144 x 64 tiles; 4 blocks
  // per SM on GPUs of up to 144 SMs), where the persistent register blocks take the counter-driven tile
  // order (the default for 16-bit inputs: more than 8192 tiles, 2304 rows per group; the GPU checks
  // also run the [quantize] cases with MXQ_QUANT_MGROUPED=ring and =persistent).
  for (auto layout : kLayouts) {
    QCase c;
    c.direction = MXQ_QUANTIZE_ROWWISE;
    c.layout = layout;
    c.grouped = true;
    c.groups = 8;
    c.rows = 144 * 128;
    c.cols = 8192;
    c.leave_tail = true;
    c.want_amax = true;
    run_case(c, cpu, gpu, seed + static_cast<uint64_t>(n++));
  }
}

TEST_CASE("gpu quantize: a grouped plan replays from a CUDA graph without host synchronization",
          "[gpu][quantize][graph]") {
  Handle cpu(MXQ_BACKEND_CPU), gpu(MXQ_BACKEND_CUDA);
  const uint64_t seed = fresh_seed();
  INFO("seed: " << seed);
  std::mt19937_64 rng(seed);
  QCase c;
  c.direction = MXQ_QUANTIZE_BOTH;
  c.grouped = true;
  c.groups = 6;
  c.rows = 1000;
  c.cols = 384;
  c.want_amax = true;
  const std::vector<int64_t> ends = random_group_ends(c.rows, c.groups, rng, false);
  const std::vector<uint8_t> x = random_hp(c.in, c.in_elems(), rng);
  const std::vector<uint8_t> offs = offsets_bytes(ends, c.offsets_dtype);
  const mxqArgSlot_t out_slots[] = {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA,
                                    MXQ_ARG_COLWISE_SCALES, MXQ_ARG_AMAX};

  mxqQuantizePlan_t cp = make_plan(c, cpu);
  std::vector<std::vector<uint8_t>> expected;
  std::vector<mxqExecArg_t> cargs = {{MXQ_ARG_X, 0, const_cast<uint8_t*>(x.data())},
                                     {MXQ_ARG_GROUP_OFFSETS, 0, const_cast<uint8_t*>(offs.data())}};
  for (auto s : out_slots) {
    size_t bytes = 0;
    MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(cp, s, &bytes));
    expected.emplace_back(bytes, kPoison);
  }
  for (size_t i = 0; i < expected.size(); ++i) cargs.push_back({out_slots[i], 0, expected[i].data()});
  MXQ_REQUIRE_OK(mxqQuantizeExecute(cpu, cp, cargs.data(), static_cast<int>(cargs.size()), nullptr, 0, nullptr));
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(cp));

  mxqQuantizePlan_t gp = make_plan(c, gpu);
  DeviceBuffer d_x(x), d_offs(offs);
  std::vector<std::unique_ptr<DeviceBuffer>> outs;
  std::vector<mxqExecArg_t> gargs = {{MXQ_ARG_X, 0, d_x.ptr()}, {MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()}};
  for (size_t i = 0; i < expected.size(); ++i) {
    outs.push_back(std::make_unique<DeviceBuffer>(expected[i].size()));
    outs.back()->poison(kPoison);
    gargs.push_back({out_slots[i], 0, outs.back()->ptr()});
  }
  CapturedGraph graph([&](mxqStream_t s) {
    return mxqQuantizeExecute(gpu, gp, gargs.data(), static_cast<int>(gargs.size()), nullptr, 0, s);
  });
  INFO("execute during capture: " << mxqGetStatusName(graph.status) << ": " << mxqGetLastErrorMessage());
  REQUIRE(graph.status == MXQ_STATUS_SUCCESS);
  graph.launch();
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string report;
    const bool same = same_bytes(expected[i], outs[i]->download(), 1, [](size_t e) { return std::to_string(e); }, &report);
    INFO("slot " << static_cast<int>(out_slots[i]) << ": " << report);
    CHECK(same);
  }
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(gp));
}

TEST_CASE("gpu quantize: bad execution arguments give a status and a message", "[gpu][quantize][errors]") {
  Handle gpu(MXQ_BACKEND_CUDA);
  QCase c;
  c.grouped = true;
  c.groups = 2000;  // the device-built table: needs a workspace
  c.rows = 4096;
  c.cols = 64;
  mxqQuantizePlan_t gp = make_plan(c, gpu);
  size_t ws = 0;
  MXQ_REQUIRE_OK(mxqQuantizePlanGetWorkspaceSize(gp, &ws));
  REQUIRE(ws > 0);
  size_t data_bytes = 0, scale_bytes = 0;
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(gp, MXQ_ARG_ROWWISE_DATA, &data_bytes));
  MXQ_REQUIRE_OK(mxqQuantizePlanGetOutputSize(gp, MXQ_ARG_ROWWISE_SCALES, &scale_bytes));
  DeviceBuffer d_x(static_cast<size_t>(c.rows * c.cols) * 2), d_data(data_bytes), d_scales(scale_bytes),
      d_offs(static_cast<size_t>(c.groups) * 4), d_ws(ws);
  d_x.poison(0);
  d_offs.poison(0);
  std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, d_x.ptr()},
                                    {MXQ_ARG_ROWWISE_DATA, 0, d_data.ptr()},
                                    {MXQ_ARG_ROWWISE_SCALES, 0, d_scales.ptr()},
                                    {MXQ_ARG_GROUP_OFFSETS, 0, d_offs.ptr()}};
  MXQ_REQUIRE_STATUS(mxqQuantizeExecute(gpu, gp, args.data(), 4, d_ws.ptr(), ws - 1, nullptr), MXQ_STATUS_BAD_PARAM_WORKSPACE);
  CHECK(std::string(mxqGetLastErrorMessage()).size() > 0);
  MXQ_REQUIRE_STATUS(mxqQuantizeExecute(gpu, gp, args.data(), 3, d_ws.ptr(), ws, nullptr), MXQ_STATUS_BAD_PARAM_ARGUMENT);
  std::vector<mxqExecArg_t> odd = args;
  odd[0].ptr = static_cast<uint8_t*>(d_x.ptr()) + 1;  // bf16 input at an odd address
  MXQ_REQUIRE_STATUS(mxqQuantizeExecute(gpu, gp, odd.data(), 4, d_ws.ptr(), ws, nullptr), MXQ_STATUS_BAD_PARAM_MISALIGNED);
  MXQ_REQUIRE_OK(mxqQuantizeExecute(gpu, gp, args.data(), 4, d_ws.ptr(), ws, nullptr));
  synchronize();
  MXQ_REQUIRE_OK(mxqQuantizePlanDestroy(gp));
}
