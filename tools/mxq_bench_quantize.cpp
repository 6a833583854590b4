// mxq_bench_quantize: times MXFP8 quantization next to a device-to-device copy of the same bytes and
// prints effective bandwidth and the ratio to the copy. A quantizer is a streaming kernel, so the
// copy (cuMemcpyDtoDAsync, the best the hardware does with memory) is the bar: bytes moved =
// input read + FP8 data + scales written, and the copy moves the same total (half read, half
// written). Every timed launch starts from a cold L2 (a 256 MiB memset in between, outside the
// timed interval), for mxq and the copy alike, so shapes that fit in L2 are not flattered.
// Buffers come from the driver API (dlopen, like libmxq itself); no CUDA library is linked.
//
//   mxq_bench_quantize                      the issue's shapes and variants
//   mxq_bench_quantize M K [iters]          one shape, every variant
//   ... --only both,colwise                 only the variants whose name contains one of the
//                                           comma-separated substrings
//   ... --torch tools/bench_quantize_torch.py   then runs the torch.compile peer on the same shapes
//                                               in the same process tree (same GPU state)
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_driver.h"
#include "mxq/mxq.h"

namespace {

using namespace mxq_bench;

// Times `fn` (which enqueues on the default stream) `iters` times from a cold L2; returns the
// median in milliseconds.
template <typename Fn>
double time_ms(Fn fn, int iters, const DevMem& flush) {
  void *e0 = nullptr, *e1 = nullptr;
  ck(cu.cuEventCreate(&e0, 0), "cuEventCreate");
  ck(cu.cuEventCreate(&e1, 0), "cuEventCreate");
  fn();  // warm-up (module load, first-touch)
  ck(cu.cuCtxSynchronize(), "warm-up");
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    ck(cu.cuMemsetD8Async(flush.p, static_cast<unsigned char>(i), flush.bytes, nullptr), "L2 flush");
    ck(cu.cuEventRecord(e0, nullptr), "cuEventRecord");
    fn();
    ck(cu.cuEventRecord(e1, nullptr), "cuEventRecord");
    ck(cu.cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    ck(cu.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A second bar for the rowwise variants: a plain streaming kernel with exactly the rowwise quantizer's
// traffic (reads 16 bytes per 8 bf16 elements, writes 8 bytes, and 1 byte per 32 elements), no
// arithmetic to speak of, 8 x 16-byte loads in flight per thread, one block per 2048 chunks. The
// copy moves half reads and half writes; a bf16 quantizer reads two thirds, so where the copy gains
// from L2 absorbing its writes (tensors of tens of MB) this kernel shows what the traffic itself
// allows. Hand-written PTX (sm_80+), JIT-compiled by the driver; tensors whose 16-byte chunk count is
// not a multiple of 2048 skip it.
const char kStreamPtx[] = R"PTX(.version 8.0
.target sm_80
.address_size 64
.visible .entry mxq_bench_stream_2to1(.param .u64 p_in, .param .u64 p_out, .param .u64 p_sc)
.maxntid 256, 1, 1
{
  .reg .b32 %r<64>;
  .reg .b64 %rd<16>;
  .reg .pred %p;
  ld.param.u64 %rd0, [p_in];
  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_sc];
  mov.u32 %r0, %ctaid.x;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r0, 2048;
  cvt.u64.u32 %rd4, %r1;
  add.u64 %rd3, %rd3, %rd4;
  shl.b64 %rd5, %rd3, 4;
  add.u64 %rd5, %rd0, %rd5;
  ld.global.nc.L1::no_allocate.v4.u32 {%r2, %r3, %r4, %r5}, [%rd5+0];
  ld.global.nc.L1::no_allocate.v4.u32 {%r6, %r7, %r8, %r9}, [%rd5+4096];
  ld.global.nc.L1::no_allocate.v4.u32 {%r10, %r11, %r12, %r13}, [%rd5+8192];
  ld.global.nc.L1::no_allocate.v4.u32 {%r14, %r15, %r16, %r17}, [%rd5+12288];
  ld.global.nc.L1::no_allocate.v4.u32 {%r18, %r19, %r20, %r21}, [%rd5+16384];
  ld.global.nc.L1::no_allocate.v4.u32 {%r22, %r23, %r24, %r25}, [%rd5+20480];
  ld.global.nc.L1::no_allocate.v4.u32 {%r26, %r27, %r28, %r29}, [%rd5+24576];
  ld.global.nc.L1::no_allocate.v4.u32 {%r30, %r31, %r32, %r33}, [%rd5+28672];
  shl.b64 %rd6, %rd3, 3;
  add.u64 %rd6, %rd1, %rd6;
  prmt.b32 %r34, %r2, %r3, 0x7531;
  prmt.b32 %r35, %r4, %r5, 0x7531;
  st.global.v2.u32 [%rd6+0], {%r34, %r35};
  prmt.b32 %r36, %r6, %r7, 0x7531;
  prmt.b32 %r37, %r8, %r9, 0x7531;
  st.global.v2.u32 [%rd6+2048], {%r36, %r37};
  prmt.b32 %r38, %r10, %r11, 0x7531;
  prmt.b32 %r39, %r12, %r13, 0x7531;
  st.global.v2.u32 [%rd6+4096], {%r38, %r39};
  prmt.b32 %r40, %r14, %r15, 0x7531;
  prmt.b32 %r41, %r16, %r17, 0x7531;
  st.global.v2.u32 [%rd6+6144], {%r40, %r41};
  prmt.b32 %r42, %r18, %r19, 0x7531;
  prmt.b32 %r43, %r20, %r21, 0x7531;
  st.global.v2.u32 [%rd6+8192], {%r42, %r43};
  prmt.b32 %r44, %r22, %r23, 0x7531;
  prmt.b32 %r45, %r24, %r25, 0x7531;
  st.global.v2.u32 [%rd6+10240], {%r44, %r45};
  prmt.b32 %r46, %r26, %r27, 0x7531;
  prmt.b32 %r47, %r28, %r29, 0x7531;
  st.global.v2.u32 [%rd6+12288], {%r46, %r47};
  prmt.b32 %r48, %r30, %r31, 0x7531;
  prmt.b32 %r49, %r32, %r33, 0x7531;
  st.global.v2.u32 [%rd6+14336], {%r48, %r49};
  and.b32 %r50, %r1, 3;
  setp.ne.u32 %p, %r50, 0;
  @%p bra DONE;
  shr.u64 %rd7, %rd3, 2;
  add.u64 %rd7, %rd2, %rd7;
  xor.b32 %r51, %r34, %r35;
  st.global.u8 [%rd7+0], %r51;
  xor.b32 %r51, %r36, %r37;
  st.global.u8 [%rd7+64], %r51;
  xor.b32 %r51, %r38, %r39;
  st.global.u8 [%rd7+128], %r51;
  xor.b32 %r51, %r40, %r41;
  st.global.u8 [%rd7+192], %r51;
  xor.b32 %r51, %r42, %r43;
  st.global.u8 [%rd7+256], %r51;
  xor.b32 %r51, %r44, %r45;
  st.global.u8 [%rd7+320], %r51;
  xor.b32 %r51, %r46, %r47;
  st.global.u8 [%rd7+384], %r51;
  xor.b32 %r51, %r48, %r49;
  st.global.u8 [%rd7+448], %r51;
DONE:
  ret;
}
)PTX";

struct StreamPeer {
  void* fn = nullptr;
  StreamPeer() {
    void* mod = nullptr;
    if (cu.cuModuleLoadData(&mod, kStreamPtx) != 0 || cu.cuModuleGetFunction(&fn, mod, "mxq_bench_stream_2to1") != 0)
      fn = nullptr;
  }
};

// The launch floor under the benchmark's conditions: an empty kernel, 3 blocks of 256 threads per SM
// (the rowwise ring's grid), timed after the same L2 flush, once without shared memory and once with
// the rowwise ring's 65 KB of dynamic shared memory per block. A kernel that needs a shared-memory
// carveout the flush kernel did not have may wait for the SMs to reconfigure; this line shows what
// that costs on the machine, apart from any work.
const char kEmptyPtx[] = R"PTX(.version 8.0
.target sm_80
.address_size 64
.visible .entry mxq_bench_empty()
{
  ret;
}
)PTX";

void launch_floor(const DevMem& flush, int iters) {
  void *mod = nullptr, *fn = nullptr;
  if (cu.cuModuleLoadData(&mod, kEmptyPtx) != 0 || cu.cuModuleGetFunction(&fn, mod, "mxq_bench_empty") != 0) return;
  constexpr int kRingSmem = 2 * 128 * 128 * 2 + 2 * 512;  // quantize_ringrow_smem_bytes()
  constexpr int kMaxDynSmem = 8, kSmCount = 16;           // CUfunction_attribute, CUdevice_attribute
  int sms = 0;
  if (cu.cuDeviceGetAttribute(&sms, kSmCount, 0) != 0 || cu.cuFuncSetAttribute(fn, kMaxDynSmem, kRingSmem) != 0) return;
  double t[2];
  for (int k = 0; k < 2; ++k) {
    const unsigned smem = k ? kRingSmem : 0;
    t[k] = time_ms([&] { ck(cu.cuLaunchKernel(fn, 3u * sms, 1, 1, 256, 1, 1, smem, nullptr, nullptr, nullptr), "empty launch"); },
                   iters, flush);
  }
  std::printf("launch floor after the L2 flush (empty kernel, %d blocks of 256 threads): %.1f us without shared memory, "
              "%.1f us with %d B of dynamic shared memory per block\n",
              3 * sms, t[0] * 1e3, t[1] * 1e3, kRingSmem);
}

struct Variant {
  const char* name;
  int32_t direction;
  int transposed;
  mxqScaleLayout_t layout;
  int64_t groups;  // 0: ungrouped
};

const Variant kVariants[] = {
    {"rowwise swizzled", MXQ_QUANTIZE_ROWWISE, 1, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 0},
    {"rowwise linear", MXQ_QUANTIZE_ROWWISE, 1, MXQ_SCALE_LAYOUT_LINEAR, 0},
    {"colwise transposed swz", MXQ_QUANTIZE_COLUMNWISE, 1, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 0},
    {"colwise row-major swz", MXQ_QUANTIZE_COLUMNWISE, 0, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 0},
    {"both (transposed) swz", MXQ_QUANTIZE_BOTH, 1, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 0},
    {"rowwise swz M-grouped 8", MXQ_QUANTIZE_ROWWISE, 1, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 8},
    {"rowwise swz M-grouped 128", MXQ_QUANTIZE_ROWWISE, 1, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, 128},
};

template <typename T>
void set(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, T v) {
  ckq(mxqQuantizePlanSetAttribute(p, a, &v, sizeof v), "mxqQuantizePlanSetAttribute");
}

// Uneven group sizes that sum to m: sizes drawn around m/g (0.25x .. 1.75x), the last one absorbing
// the rounding, none negative.
std::vector<int32_t> uneven_ends(int64_t m, int64_t g) {
  std::mt19937_64 rng(12345);
  std::vector<double> w(static_cast<size_t>(g));
  double sum = 0;
  for (auto& x : w) sum += (x = 0.25 + 1.5 * std::uniform_real_distribution<double>(0, 1)(rng));
  std::vector<int32_t> ends(static_cast<size_t>(g));
  int64_t at = 0;
  for (int64_t i = 0; i < g; ++i) {
    at += static_cast<int64_t>(static_cast<double>(m) * w[static_cast<size_t>(i)] / sum);
    ends[static_cast<size_t>(i)] = static_cast<int32_t>(std::min(at, m));
  }
  ends.back() = static_cast<int32_t>(m);
  return ends;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t e = s.find(',', at);
    const std::string part = s.substr(at, e == std::string::npos ? std::string::npos : e - at);
    if (!part.empty()) out.push_back(part);
    if (e == std::string::npos) break;
    at = e + 1;
  }
  return out;
}

std::vector<std::string> g_only;

bool selected(const char* name) {
  if (g_only.empty()) return true;
  for (const auto& o : g_only)
    if (std::string(name).find(o) != std::string::npos) return true;
  return false;
}

// Times a copy of the same total (moved/2 bytes read, moved/2 written) and prints one result row:
// bytes, time, bandwidth, the copy's bandwidth and the ratio copy time / t_ms.
void print_row(const char* name, size_t moved, double t_ms, int iters, const DevMem& flush) {
  const size_t half = moved / 2;
  DevMem src(half), dst(half);
  const double t_c = time_ms([&] { ck(cu.cuMemcpyDtoDAsync(dst.p, src.p, half, nullptr), "cuMemcpyDtoDAsync"); },
                             iters, flush);
  std::printf("  %-26s %10.1f %9.1f %9.3f %9.3f %7.3f\n", name, static_cast<double>(moved) / 1e6, t_ms * 1e3,
              static_cast<double>(moved) / (t_ms * 1e-3) / 1e12, static_cast<double>(2 * half) / (t_c * 1e-3) / 1e12,
              t_c / t_ms);
  std::fflush(stdout);
}

void bench_shape(mxqHandle_t h, int64_t m, int64_t k, int iters, const DevMem& flush) {
  const size_t in_bytes = static_cast<size_t>(m * k) * 2;  // bf16
  DevMem x(in_bytes);
  {
    // Random normal-range bf16 values (the data does not change the traffic), tiled from 64 MiB.
    const size_t tile = std::min<size_t>(in_bytes, size_t(64) << 20);
    std::vector<uint16_t> host(tile / 2);
    std::mt19937 rng(7);
    for (auto& v : host) v = static_cast<uint16_t>(0x3000 + (rng() % 0x1C00)) | static_cast<uint16_t>((rng() & 1) << 15);
    for (size_t off = 0; off < in_bytes; off += tile)
      ck(cu.cuMemcpyHtoD(x.p + off, host.data(), std::min(tile, in_bytes - off)), "cuMemcpyHtoD");
  }
  std::printf("\n%lld x %lld bf16 -> e4m3 (RCEIL)\n", static_cast<long long>(m), static_cast<long long>(k));
  std::printf("  %-26s %10s %9s %9s %9s %7s\n", "variant", "bytes(MB)", "time(us)", "TB/s", "copy TB/s", "ratio");
  static StreamPeer peer;
  const unsigned long long chunks = in_bytes / 16;
  if (peer.fn && in_bytes % 16 == 0 && chunks % 2048 == 0 && chunks / 2048 <= 0x7FFFFFFFull) {
    DevMem out(in_bytes / 2), sc(in_bytes / 64);
    unsigned long long pi = x.p, po = out.p, ps = sc.p;
    void* params[] = {&pi, &po, &ps};
    const double t_s = time_ms(
        [&] {
          ck(cu.cuLaunchKernel(peer.fn, static_cast<unsigned>(chunks / 2048), 1, 1, 256, 1, 1, 0, nullptr, params,
                               nullptr),
             "stream kernel launch");
        },
        iters, flush);
    print_row("(stream kernel, rowwise traffic)", in_bytes + in_bytes / 2 + in_bytes / 64, t_s, iters, flush);
  }
  for (const Variant& v : kVariants) {
    if (!selected(v.name)) continue;
    mxqQuantizePlan_t plan = nullptr;
    ckq(mxqQuantizePlanCreate(h, &plan), "mxqQuantizePlanCreate");
    set<int32_t>(plan, MXQ_QUANTIZE_ATTR_DIRECTION, v.direction);
    set<int32_t>(plan, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, v.transposed);
    set<int32_t>(plan, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, v.layout);
    set<int64_t>(plan, MXQ_QUANTIZE_ATTR_ROWS, m);
    set<int64_t>(plan, MXQ_QUANTIZE_ATTR_COLS, k);
    if (v.groups) {
      set<int32_t>(plan, MXQ_QUANTIZE_ATTR_GROUPING, MXQ_GROUPING_ROWS);
      set<int64_t>(plan, MXQ_QUANTIZE_ATTR_NUM_GROUPS, v.groups);
    }
    ckq(mxqQuantizePlanFinalize(plan), "mxqQuantizePlanFinalize");
    size_t ws = 0;
    ckq(mxqQuantizePlanGetWorkspaceSize(plan, &ws), "workspace size");
    std::vector<mxqExecArg_t> args = {{MXQ_ARG_X, 0, x.ptr()}};
    std::vector<std::unique_ptr<DevMem>> outs;
    size_t written = 0;
    for (mxqArgSlot_t s : {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA, MXQ_ARG_COLWISE_SCALES}) {
      size_t b = 0;
      ckq(mxqQuantizePlanGetOutputSize(plan, s, &b), "output size");
      if (!b) continue;
      outs.push_back(std::make_unique<DevMem>(b));
      args.push_back({s, 0, outs.back()->ptr()});
      // Scales: count the bytes of the tensor itself (ceil(K/32) per row), not the allocation bound.
      const bool scales = s == MXQ_ARG_ROWWISE_SCALES || s == MXQ_ARG_COLWISE_SCALES;
      written += scales ? static_cast<size_t>(m * ((k + 31) / 32)) : b;
    }
    std::unique_ptr<DevMem> offs, wsm;
    if (v.groups) {
      const std::vector<int32_t> ends = uneven_ends(m, v.groups);
      offs = std::make_unique<DevMem>(ends.size() * 4);
      ck(cu.cuMemcpyHtoD(offs->p, ends.data(), ends.size() * 4), "offsets upload");
      args.push_back({MXQ_ARG_GROUP_OFFSETS, 0, offs->ptr()});
    }
    if (ws) wsm = std::make_unique<DevMem>(ws);
    const size_t moved = in_bytes + written;
    const double t_q = time_ms(
        [&] {
          ckq(mxqQuantizeExecute(h, plan, args.data(), static_cast<int>(args.size()), wsm ? wsm->ptr() : nullptr, ws,
                                 nullptr),
              "mxqQuantizeExecute");
        },
        iters, flush);
    print_row(v.name, moved, t_q, iters, flush);
    ckq(mxqQuantizePlanDestroy(plan), "mxqQuantizePlanDestroy");
  }
}

}  // namespace

int main(int argc, char** argv) {
  mxq_bench::tool_name = "mxq_bench_quantize";
  std::vector<std::string> pos;
  std::string torch_script;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--torch" && i + 1 < argc) torch_script = argv[++i];
    else if (std::string(argv[i]) == "--only" && i + 1 < argc) g_only = split_commas(argv[++i]);
    else pos.push_back(argv[i]);
  }
  load_driver();
  mxqHandle_t h = nullptr;
  ckq(mxqCreate(&h), "mxqCreate");
  std::printf("mxq_bench_quantize on %s, %s\n", device_name.c_str(), mxqGetBuildInfo());
  std::printf("effective bandwidth = (input + FP8 data + scales) / time; copy = cuMemcpyDtoDAsync of the same total;\n"
              "ratio = copy time / mxq time; medians over cold-L2 launches\n");
  DevMem flush(size_t(256) << 20);
  launch_floor(flush, 20);
  std::vector<std::pair<int64_t, int64_t>> shapes = {{16384, 16384}, {131072, 7168}, {8192, 4096}, {2048, 4096}};
  int iters = 20;
  if (pos.size() >= 2) shapes = {{std::atoll(pos[0].c_str()), std::atoll(pos[1].c_str())}};
  if (pos.size() >= 3) iters = std::max(1, std::atoi(pos[2].c_str()));
  for (const auto& s : shapes) bench_shape(h, s.first, s.second, iters, flush);
  mxqDestroy(h);
  if (!torch_script.empty()) {
    std::string cmd = "python3 " + torch_script + " --iters " + std::to_string(iters) + " --shapes";
    for (const auto& s : shapes) cmd += " " + std::to_string(s.first) + "x" + std::to_string(s.second);
    std::printf("\n$ %s\n", cmd.c_str());
    std::fflush(stdout);
    const int rc = std::system(cmd.c_str());
    if (rc != 0) std::printf("(torch peer exited with status %d)\n", rc);
  }
  return 0;
}
