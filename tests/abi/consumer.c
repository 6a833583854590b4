/* An outside program that links libmxq the way users do (pkg-config, find_package, vendored
 * add_subdirectory) and proves the library it got works: header and library versions agree, a CPU
 * handle quantizes a fresh random bf16 matrix both ways, and the library's own dequantize gives back
 * every element within the MXFP8 (E4M3, RCEIL) error bound computed here from first principles.
 * It uses only the public header and the C standard library, so it also shows that nothing else is
 * needed to build against mxq. Strict C99.
 *
 * Usage: consumer [--seed N] [--expect-no-cuda]
 *   --expect-no-cuda: the library was built with MXQ_ENABLE_CUDA_KERNELS=OFF, so creating a CUDA
 *   handle must fail cleanly with MXQ_STATUS_NOT_SUPPORTED_BACKEND. */
#include <mxq/mxq.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 45 /* neither a multiple of 32 (partial column blocks) nor of 128 (swizzle padding) */
#define COLS 100

static int failures = 0;
static unsigned long long rng_state;

#define CHECK(call)                                                                               \
  do {                                                                                            \
    mxqStatus_t st_ = (call);                                                                     \
    if (st_ != MXQ_STATUS_SUCCESS) {                                                              \
      fprintf(stderr, "FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, mxqGetStatusName(st_), \
              mxqGetLastErrorMessage());                                                         \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static unsigned rng_next(void) { /* splitmix64: fine statistics, no platform dependence */
  unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (unsigned)((z ^ (z >> 31)) >> 32);
}

static unsigned long long fresh_seed(void) {
  unsigned long long s = (unsigned long long)time(NULL) ^ ((unsigned long long)clock() << 32);
  FILE *f = fopen("/dev/urandom", "rb");
  if (f) {
    unsigned long long r = 0;
    if (fread(&r, sizeof r, 1, f) == 1) s ^= r;
    fclose(f);
  }
  return s;
}

static float bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Random non-zero finite bf16: random sign and mantissa, exponents over 2^-12..2^11, so blocks
 * mix magnitudes (small elements land in E4M3's subnormal range after scaling). */
static uint16_t random_bf16(void) {
  unsigned r = rng_next();
  unsigned sign = r & 1u, mant = (r >> 1) & 0x7Fu, exp = 127u - 12u + (r >> 8) % 24u;
  return (uint16_t)((sign << 15) | (exp << 7) | mant);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "FAIL: out of host memory\n");
    exit(1);
  }
  return p;
}

static void set_i32(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, int32_t v) {
  CHECK(mxqQuantizePlanSetAttribute(p, a, &v, sizeof v));
}
static void set_i64(mxqQuantizePlan_t p, mxqQuantizeAttribute_t a, int64_t v) {
  CHECK(mxqQuantizePlanSetAttribute(p, a, &v, sizeof v));
}

/* Execute never allocates: the caller provides workspace, 256-byte aligned. */
static void *aligned_workspace(size_t bytes, void **to_free) {
  unsigned char *raw;
  size_t misalign;
  if (bytes == 0) {
    *to_free = NULL;
    return NULL;
  }
  raw = (unsigned char *)xmalloc(bytes + 256);
  *to_free = raw;
  misalign = (size_t)((uintptr_t)raw % 256u);
  return raw + (misalign ? 256 - misalign : 0);
}

/* Dequantizes one orientation with the library into fp32 [ROWS, COLS]. */
static void dequantize(mxqHandle_t h, int direction, int64_t layout, const void *data, const void *scales,
                       float *out) {
  mxqDequantizePlan_t plan;
  int32_t dir = direction, out_dtype = MXQ_DTYPE_FP32, lay = (int32_t)layout;
  int64_t rows = ROWS, cols = COLS;
  size_t ws = 0;
  void *ws_raw, *ws_ptr;
  mxqExecArg_t args[3];
  int data_slot = direction == MXQ_QUANTIZE_ROWWISE ? MXQ_ARG_ROWWISE_DATA : MXQ_ARG_COLWISE_DATA;
  CHECK(mxqDequantizePlanCreate(h, &plan));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_DIRECTION, &dir, sizeof dir));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, &out_dtype, sizeof out_dtype));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_SCALE_LAYOUT, &lay, sizeof lay));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_COLS, &cols, sizeof cols));
  CHECK(mxqDequantizePlanFinalize(plan));
  CHECK(mxqDequantizePlanGetWorkspaceSize(plan, &ws));
  ws_ptr = aligned_workspace(ws, &ws_raw);
  args[0].slot = data_slot;
  args[0].reserved = 0;
  args[0].ptr = (void *)data;
  args[1].slot = data_slot + 1; /* the scales slot follows its data slot */
  args[1].reserved = 0;
  args[1].ptr = (void *)scales;
  args[2].slot = MXQ_ARG_X;
  args[2].reserved = 0;
  args[2].ptr = out;
  CHECK(mxqDequantizeExecute(h, plan, args, 3, ws_ptr, ws, NULL));
  CHECK(mxqDequantizePlanDestroy(plan));
  free(ws_raw);
}

/* Quantizes x both ways in the given scale layout; returns the four output buffers. */
static void quantize_both(mxqHandle_t h, int32_t layout, const uint16_t *x, unsigned char **out, size_t *bytes) {
  static const int slots[4] = {MXQ_ARG_ROWWISE_DATA, MXQ_ARG_ROWWISE_SCALES, MXQ_ARG_COLWISE_DATA,
                               MXQ_ARG_COLWISE_SCALES};
  mxqQuantizePlan_t plan;
  mxqExecArg_t args[5];
  size_t ws = 0;
  void *ws_raw, *ws_ptr;
  int i;
  CHECK(mxqQuantizePlanCreate(h, &plan));
  set_i64(plan, MXQ_QUANTIZE_ATTR_ROWS, ROWS);
  set_i64(plan, MXQ_QUANTIZE_ATTR_COLS, COLS);
  set_i32(plan, MXQ_QUANTIZE_ATTR_DIRECTION, MXQ_QUANTIZE_BOTH);
  set_i32(plan, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, layout);
  CHECK(mxqQuantizePlanFinalize(plan));
  CHECK(mxqQuantizePlanGetWorkspaceSize(plan, &ws));
  ws_ptr = aligned_workspace(ws, &ws_raw);
  args[0].slot = MXQ_ARG_X;
  args[0].reserved = 0;
  args[0].ptr = (void *)x;
  for (i = 0; i < 4; ++i) {
    CHECK(mxqQuantizePlanGetOutputSize(plan, (mxqArgSlot_t)slots[i], &bytes[i]));
    if (bytes[i] == 0) {
      fprintf(stderr, "FAIL: output size of slot %d is 0\n", slots[i]);
      exit(1);
    }
    out[i] = (unsigned char *)xmalloc(bytes[i]);
    memset(out[i], 0xA5, bytes[i]); /* poison: a byte left unwritten shows up in the checks */
    args[i + 1].slot = slots[i];
    args[i + 1].reserved = 0;
    args[i + 1].ptr = out[i];
  }
  CHECK(mxqQuantizeExecute(h, plan, args, 5, ws_ptr, ws, NULL));
  CHECK(mxqQuantizePlanDestroy(plan));
  free(ws_raw);
}

/* E4M3 with an RCEIL scale: the block scale S satisfies amax/448 <= S < amax/224 (up to fp32
 * rounding of amax*(1/448)), so a normal element is off by at most 2^-4 relative and an element in
 * E4M3's subnormal range by at most half its spacing, 2^-10 * S < 2^-10 * amax / 224. */
static void check_roundtrip(const char *what, const float *x, const float *y, int along_rows) {
  int r, c, bad = 0;
  for (r = 0; r < ROWS; ++r) {
    for (c = 0; c < COLS; ++c) {
      int r0 = along_rows ? r / 32 * 32 : r, c0 = along_rows ? c : c / 32 * 32, k;
      float amax = 0.0f, xv = x[r * COLS + c], yv = y[r * COLS + c], tol;
      for (k = 0; k < 32; ++k) {
        int rr = along_rows ? r0 + k : r, cc = along_rows ? c : c0 + k;
        if (rr < ROWS && cc < COLS && fabsf(x[rr * COLS + cc]) > amax) amax = fabsf(x[rr * COLS + cc]);
      }
      tol = ldexpf(fabsf(xv), -4) + ldexpf(amax, -10) / 224.0f * 1.0001f;
      if (!(fabsf(yv - xv) <= tol)) {
        if (bad < 5)
          fprintf(stderr, "FAIL %s [%d,%d]: x=%a dequantized=%a |err| > %a (block amax %a)\n", what, r, c, xv,
                  yv, tol, amax);
        ++bad;
      }
    }
  }
  if (bad) fprintf(stderr, "FAIL %s: %d of %d elements out of bound\n", what, bad, ROWS * COLS);
  failures += bad != 0;
}

static void count_errors(mxqLogLevel_t level, const char *message, void *user) {
  if (level == MXQ_LOG_ERROR && message && message[0]) ++*(int *)user;
}

int main(int argc, char **argv) {
  unsigned long long seed = fresh_seed();
  int expect_no_cuda = 0, logged_errors = 0, i, r, c;
  uint16_t *x = (uint16_t *)xmalloc(sizeof(uint16_t) * ROWS * COLS);
  float *xf = (float *)xmalloc(sizeof(float) * ROWS * COLS), *y = (float *)xmalloc(sizeof(float) * ROWS * COLS);
  unsigned char *swz[4], *lin[4];
  size_t swz_bytes[4], lin_bytes[4];
  mxqHandle_t h = NULL;
  mxqBackend_t backend;
  mxqStatus_t st;

  for (i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--expect-no-cuda")) expect_no_cuda = 1;
    else {
      fprintf(stderr, "usage: %s [--seed N] [--expect-no-cuda]\n", argv[0]);
      return 2;
    }
  }
  rng_state = seed;
  printf("mxq consumer: seed %llu\n", seed);

  if (mxqGetVersion() != MXQ_VERSION) {
    fprintf(stderr, "FAIL: header says version %d, library says %u\n", MXQ_VERSION, (unsigned)mxqGetVersion());
    return 1;
  }
  printf("version %s (%u); build: %s\n", MXQ_VERSION_STRING, (unsigned)mxqGetVersion(), mxqGetBuildInfo());

  if (expect_no_cuda) {
    mxqHandle_t cuda = NULL;
    int logged = 0;
    CHECK(mxqLoggerSetCallback(count_errors, &logged)); /* keeps the expected error off stderr */
    st = mxqCreateWithBackend(&cuda, MXQ_BACKEND_CUDA, -1);
    CHECK(mxqLoggerSetCallback(NULL, NULL));
    if (st != MXQ_STATUS_NOT_SUPPORTED_BACKEND || cuda != NULL || mxqGetLastErrorMessage()[0] == '\0') {
      fprintf(stderr, "FAIL: CUDA handle in a build without kernels gave %s (\"%s\"), expected "
                      "MXQ_STATUS_NOT_SUPPORTED_BACKEND with a message\n", mxqGetStatusName(st),
              mxqGetLastErrorMessage());
      return 1;
    }
    printf("CUDA backend: %s (as expected: built without kernels)\n", mxqGetStatusName(st));
  }

  CHECK(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 0));
  CHECK(mxqGetBackend(h, &backend));
  if (backend != MXQ_BACKEND_CPU) {
    fprintf(stderr, "FAIL: backend %d, expected CPU\n", (int)backend);
    return 1;
  }

  for (i = 0; i < ROWS * COLS; ++i) {
    x[i] = random_bf16();
    xf[i] = bf16_to_float(x[i]);
  }

  quantize_both(h, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, x, swz, swz_bytes);
  quantize_both(h, MXQ_SCALE_LAYOUT_LINEAR, x, lin, lin_bytes);

  /* The scale layout moves scale bytes only: FP8 data must be identical in both layouts. */
  if (swz_bytes[0] != lin_bytes[0] || memcmp(swz[0], lin[0], lin_bytes[0]) != 0 || swz_bytes[2] != lin_bytes[2] ||
      memcmp(swz[2], lin[2], lin_bytes[2]) != 0) {
    fprintf(stderr, "FAIL: FP8 data differs between the swizzled and linear scale layouts\n");
    ++failures;
  }

  /* LINEAR rowwise scales [ROWS, ceil(COLS/32)]: every RCEIL scale keeps amax/S in [224, 448]. */
  if (lin_bytes[1] != (size_t)ROWS * ((COLS + 31) / 32)) {
    fprintf(stderr, "FAIL: linear rowwise scales take %lu bytes, expected %d\n", (unsigned long)lin_bytes[1],
            ROWS * ((COLS + 31) / 32));
    return 1;
  }
  for (r = 0; r < ROWS; ++r) {
    for (c = 0; c < (COLS + 31) / 32; ++c) {
      float amax = 0.0f, ratio;
      int e = lin[1][r * ((COLS + 31) / 32) + c], k;
      for (k = c * 32; k < c * 32 + 32 && k < COLS; ++k)
        if (fabsf(xf[r * COLS + k]) > amax) amax = fabsf(xf[r * COLS + k]);
      ratio = ldexpf(amax, 127 - e);
      if (!(ratio <= 448.0f && ratio >= 224.0f * (1.0f - 1e-6f))) {
        fprintf(stderr, "FAIL: row %d block %d: amax %a with scale 2^%d gives amax/scale = %g, not in [224, 448]\n",
                r, c, amax, e - 127, ratio);
        ++failures;
      }
    }
  }

  for (i = 0; i < ROWS * COLS; ++i) y[i] = NAN;
  dequantize(h, MXQ_QUANTIZE_ROWWISE, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, swz[0], swz[1], y);
  check_roundtrip("rowwise (swizzled scales)", xf, y, 0);
  for (i = 0; i < ROWS * COLS; ++i) y[i] = NAN;
  dequantize(h, MXQ_QUANTIZE_COLUMNWISE, MXQ_SCALE_LAYOUT_SWIZZLED_128x4, swz[2], swz[3], y);
  check_roundtrip("columnwise (swizzled scales)", xf, y, 1);
  for (i = 0; i < ROWS * COLS; ++i) y[i] = NAN;
  dequantize(h, MXQ_QUANTIZE_COLUMNWISE, MXQ_SCALE_LAYOUT_LINEAR, lin[2], lin[3], y);
  check_roundtrip("columnwise (linear scales)", xf, y, 1);

  printf("row 0: x[0..3] = %g %g %g %g, E4M3 bytes %02x %02x %02x %02x, first scale 2^%d\n", xf[0], xf[1], xf[2],
         xf[3], lin[0][0], lin[0][1], lin[0][2], lin[0][3], lin[1][0] - 127);

  /* Bad input gives a status and a message, never a crash; the error is logged, here through a C
   * callback (which also keeps the expected error off stderr). */
  CHECK(mxqLoggerSetLevel(MXQ_LOG_ERROR));
  CHECK(mxqLoggerSetCallback(count_errors, &logged_errors));
  st = mxqQuantizeExecute(h, NULL, NULL, 0, NULL, 0, NULL);
  CHECK(mxqLoggerSetCallback(NULL, NULL));
  if (st != MXQ_STATUS_BAD_PARAM_NULL_POINTER || mxqGetLastErrorMessage()[0] == '\0') {
    fprintf(stderr, "FAIL: Execute(NULL plan) gave %s, expected MXQ_STATUS_BAD_PARAM_NULL_POINTER + message\n",
            mxqGetStatusName(st));
    ++failures;
  }
  if (logged_errors != 1) {
    fprintf(stderr, "FAIL: the log callback saw %d error messages for one failing call\n", logged_errors);
    ++failures;
  }
  printf("expected failure: %s: %s\n", mxqGetStatusName(st), mxqGetLastErrorMessage());

  CHECK(mxqDestroy(h));
  CHECK(mxqDestroy(NULL));
  for (i = 0; i < 4; ++i) {
    free(swz[i]);
    free(lin[i]);
  }
  free(x);
  free(xf);
  free(y);
  if (failures) {
    fprintf(stderr, "consumer FAILED (%d checks; rerun with --seed %llu)\n", failures, seed);
    return 1;
  }
  printf("consumer OK: %d elements quantized both ways and verified (seed %llu)\n", ROWS * COLS, seed);
  return 0;
}
