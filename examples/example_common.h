/* Helpers shared by the C and C++ examples: a status check that prints the library's message, a
 * seeded random generator (seed printed, MXQ_EXAMPLE_SEED replays a run), bf16 conversions and an
 * aligned workspace allocation. Kept out of the examples so that each one reads as the API calls
 * it makes. Not part of the library's API. */
#ifndef MXQ_EXAMPLE_COMMON_H_
#define MXQ_EXAMPLE_COMMON_H_

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mxq/mxq.h>

/* Every call is checked; a failure prints the status name and the detailed message, then exits. */
#define CHECK(call)                                                                              \
  do {                                                                                           \
    mxqStatus_t check_status_ = (call);                                                          \
    if (check_status_ != MXQ_STATUS_SUCCESS) {                                                   \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,                   \
              mxqGetStatusName(check_status_), mxqGetLastErrorMessage());                        \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

/* SplitMix64: small, seedable, good enough for test inputs. */
static uint64_t example_rng_state;

static inline uint64_t example_seed(void) {
  const char *env = getenv("MXQ_EXAMPLE_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)clock();
  example_rng_state = seed;
  printf("seed %llu (MXQ_EXAMPLE_SEED=%llu replays this run)\n", (unsigned long long)seed,
         (unsigned long long)seed);
  return seed;
}

static inline uint64_t example_next(void) {
  uint64_t z = (example_rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi). */
static inline int64_t example_range(int64_t lo, int64_t hi) {
  return lo + (int64_t)(example_next() % (uint64_t)(hi - lo));
}

/* Standard normal (Box-Muller). */
static inline float example_normal(void) {
  double u = ((double)(example_next() >> 11) + 1.0) / 9007199254740993.0;
  double v = (double)(example_next() >> 11) / 9007199254740992.0;
  return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* float -> bf16 bits, round to nearest even (inputs here are finite). */
static inline uint16_t example_to_bf16(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

static inline float example_from_bf16(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* The E4M3 value nearest to x >= 0 (ties to even, saturating at 448): what the attention recipe
 * does to P * 256. frexp/ldexp and nearbyint (round-half-even in the default mode) are exact here. */
static inline double example_e4m3(double x) {
  int e;
  double step;
  if (x >= 448) return 448;
  frexp(x, &e); /* x in [2^(e-1), 2^e) */
  step = e - 1 < -6 ? ldexp(1, -9) : ldexp(1, e - 4); /* 3 mantissa bits; subnormal spacing 2^-9 */
  x = nearbyint(x / step) * step;
  return x > 448 ? 448 : x;
}

/* A buffer of `bytes` filled with 0xA5 ("poisoned": a value the library did not write shows). */
static inline void *example_poisoned(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  memset(p, 0xA5, bytes);
  return p;
}

/* Workspace: 256-byte aligned as Execute requires; *base is what to free(). NULL for 0 bytes. */
static inline void *example_workspace(size_t bytes, void **base) {
  uintptr_t p;
  *base = NULL;
  if (bytes == 0) return NULL;
  *base = example_poisoned(bytes + 255);
  p = ((uintptr_t)*base + 255) & ~(uintptr_t)255;
  return (void *)p;
}

#endif /* MXQ_EXAMPLE_COMMON_H_ */
