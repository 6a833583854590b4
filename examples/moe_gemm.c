/* Mixture-of-Experts forward pass in MXFP8, from C, on the CPU reference backend:
 *
 *   quantize  bf16 activations X [M, K], rows grouped by expert (rowwise: 1x32 blocks along K)
 *   quantize  bf16 expert weights W [G, N, K] (a batch of G matrices)
 *   GEMM      Y[rows of g] = X[rows of g] * W[g]^T          (M-grouped, fp32 accumulation, bf16 out)
 *   dequantize X and W, to check every element of Y against a float64 product of exactly what the
 *             GEMM multiplied.
 *
 * Group sizes are random (an empty expert included) and K is not a multiple of 32, the two cases MoE
 * layers meet that padded formats handle badly. Every byte size comes from the library
 * (mxqQuantizePlanGetOutputSize), never from layout formulas written here. The same calls run on a
 * GPU with mxqCreate() and device buffers.
 *
 * Exit status 0 when every output is within the bound, 1 otherwise. */
#include "example_common.h"

enum { EXPERTS = 4, N = 96, K = 200 };

/* Quantize a bf16 [batch, rows, K] tensor rowwise; grouped rows when offsets is not NULL. */
static void quantize(mxqHandle_t h, const uint16_t *x, int64_t batch, int64_t rows, const int32_t *offsets,
                     uint8_t **data, uint8_t **scales) {
  mxqQuantizePlan_t plan;
  int64_t cols = K, groups = EXPERTS;
  int32_t grouping = MXQ_GROUPING_ROWS;
  size_t data_bytes, scale_bytes, ws_bytes;
  void *ws_base, *ws;
  mxqExecArg_t args[4];
  int n = 0;

  CHECK(mxqQuantizePlanCreate(h, &plan));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_BATCH, &batch, sizeof batch));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_COLS, &cols, sizeof cols));
  if (offsets) {
    CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_GROUPING, &grouping, sizeof grouping));
    CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_NUM_GROUPS, &groups, sizeof groups));
  }
  CHECK(mxqQuantizePlanFinalize(plan));
  CHECK(mxqQuantizePlanGetOutputSize(plan, MXQ_ARG_ROWWISE_DATA, &data_bytes));
  CHECK(mxqQuantizePlanGetOutputSize(plan, MXQ_ARG_ROWWISE_SCALES, &scale_bytes));
  CHECK(mxqQuantizePlanGetWorkspaceSize(plan, &ws_bytes));
  *data = example_poisoned(data_bytes);
  *scales = example_poisoned(scale_bytes);
  ws = example_workspace(ws_bytes, &ws_base);

  args[n].slot = MXQ_ARG_X, args[n].reserved = 0, args[n++].ptr = (void *)x;
  args[n].slot = MXQ_ARG_ROWWISE_DATA, args[n].reserved = 0, args[n++].ptr = *data;
  args[n].slot = MXQ_ARG_ROWWISE_SCALES, args[n].reserved = 0, args[n++].ptr = *scales;
  if (offsets) args[n].slot = MXQ_ARG_GROUP_OFFSETS, args[n].reserved = 0, args[n++].ptr = (void *)offsets;
  CHECK(mxqQuantizeExecute(h, plan, args, n, ws, ws_bytes, NULL));
  CHECK(mxqQuantizePlanDestroy(plan));
  free(ws_base);
}

/* Dequantize what quantize() wrote back to fp32 [batch, rows, K]. */
static float *dequantize(mxqHandle_t h, const uint8_t *data, const uint8_t *scales, int64_t batch, int64_t rows,
                         const int32_t *offsets) {
  mxqDequantizePlan_t plan;
  int64_t cols = K, groups = EXPERTS;
  int32_t grouping = MXQ_GROUPING_ROWS, out = MXQ_DTYPE_FP32;
  float *x = example_poisoned((size_t)(batch * rows * cols) * sizeof(float));
  size_t ws_bytes;
  void *ws_base, *ws;
  mxqExecArg_t args[4] = {{MXQ_ARG_ROWWISE_DATA, 0, NULL}, {MXQ_ARG_ROWWISE_SCALES, 0, NULL}, {MXQ_ARG_X, 0, NULL},
                          {MXQ_ARG_GROUP_OFFSETS, 0, NULL}};
  args[0].ptr = (void *)data, args[1].ptr = (void *)scales, args[2].ptr = x, args[3].ptr = (void *)offsets;

  CHECK(mxqDequantizePlanCreate(h, &plan));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, &out, sizeof out));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_BATCH, &batch, sizeof batch));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_COLS, &cols, sizeof cols));
  if (offsets) {
    CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_GROUPING, &grouping, sizeof grouping));
    CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_NUM_GROUPS, &groups, sizeof groups));
  }
  CHECK(mxqDequantizePlanFinalize(plan));
  CHECK(mxqDequantizePlanGetWorkspaceSize(plan, &ws_bytes));
  ws = example_workspace(ws_bytes, &ws_base);
  CHECK(mxqDequantizeExecute(h, plan, args, offsets ? 4 : 3, ws, ws_bytes, NULL));
  CHECK(mxqDequantizePlanDestroy(plan));
  free(ws_base);
  return x;
}

int main(void) {
  int32_t offsets[EXPERTS];
  int64_t m = 0, groups = EXPERTS, n = N, k = K;
  int32_t grouping = MXQ_GEMM_GROUPING_M;
  uint16_t *x, *w, *y;
  uint8_t *xq, *xs, *wq, *wsc; /* FP8 data and UE8M0 scales */
  float *xd, *wd;
  mxqHandle_t h;
  mxqGroupedGemmPlan_t gemm;
  size_t ws_bytes;
  void *ws_base, *ws;
  int64_t g, i, j, t, lo, bad = 0;
  double worst = 0;

  example_seed();
  for (g = 0; g < EXPERTS; ++g) {
    m += g == 1 ? 0 : example_range(1, 150); /* expert 1 gets no token */
    offsets[g] = (int32_t)m;
  }
  x = example_poisoned((size_t)(m * K) * 2);
  w = example_poisoned((size_t)(EXPERTS * N * K) * 2);
  y = example_poisoned((size_t)(m * N) * 2);
  for (i = 0; i < m * K; ++i) x[i] = example_to_bf16(example_normal());
  for (i = 0; i < EXPERTS * N * K; ++i) w[i] = example_to_bf16(0.05f * example_normal());

  CHECK(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 0));
  quantize(h, x, 1, m, offsets, &xq, &xs);
  quantize(h, w, EXPERTS, N, NULL, &wq, &wsc);

  CHECK(mxqGroupedGemmPlanCreate(h, &gemm));
  CHECK(mxqGroupedGemmPlanSetAttribute(gemm, MXQ_GEMM_ATTR_GROUPING, &grouping, sizeof grouping));
  CHECK(mxqGroupedGemmPlanSetAttribute(gemm, MXQ_GEMM_ATTR_M, &m, sizeof m));
  CHECK(mxqGroupedGemmPlanSetAttribute(gemm, MXQ_GEMM_ATTR_N, &n, sizeof n));
  CHECK(mxqGroupedGemmPlanSetAttribute(gemm, MXQ_GEMM_ATTR_K, &k, sizeof k));
  CHECK(mxqGroupedGemmPlanSetAttribute(gemm, MXQ_GEMM_ATTR_NUM_GROUPS, &groups, sizeof groups));
  CHECK(mxqGroupedGemmPlanFinalize(gemm));
  CHECK(mxqGroupedGemmPlanGetWorkspaceSize(gemm, &ws_bytes));
  ws = example_workspace(ws_bytes, &ws_base);
  {
    mxqExecArg_t args[6] = {{MXQ_ARG_A_DATA, 0, NULL}, {MXQ_ARG_A_SCALES, 0, NULL}, {MXQ_ARG_B_DATA, 0, NULL},
                            {MXQ_ARG_B_SCALES, 0, NULL}, {MXQ_ARG_GROUP_OFFSETS, 0, NULL}, {MXQ_ARG_D, 0, NULL}};
    args[0].ptr = xq, args[1].ptr = xs, args[2].ptr = wq, args[3].ptr = wsc, args[4].ptr = offsets, args[5].ptr = y;
    CHECK(mxqGroupedGemmExecute(h, gemm, args, 6, ws, ws_bytes, NULL));
  }

  /* Check every output: |Y - Xd Wd^T| within fp32 accumulation error (K 2^-23 sum|x w|) plus the bf16
   * rounding of the result (2^-8 of its magnitude). */
  xd = dequantize(h, xq, xs, 1, m, offsets);
  wd = dequantize(h, wq, wsc, EXPERTS, N, NULL);
  for (g = 0, lo = 0; g < EXPERTS; lo = offsets[g++]) {
    for (i = lo; i < offsets[g]; ++i) {
      for (j = 0; j < N; ++j) {
        double ref = 0, mag = 0, err, bound;
        for (t = 0; t < K; ++t) {
          double p = (double)xd[i * K + t] * wd[(g * N + j) * K + t];
          ref += p, mag += fabs(p);
        }
        err = fabs(example_from_bf16(y[i * N + j]) - ref);
        bound = K * ldexp(mag, -23); /* what fp32 accumulation can be off by */
        bound += ldexp(fabs(ref) + bound, -8) + 1e-30; /* plus rounding that sum to bf16 */
        if (!(err <= bound)) ++bad;
        if (err / bound > worst) worst = err / bound;
      }
    }
  }
  printf("moe fprop: %d experts, tokens per expert %d/%d/%d/%d, N=%d, K=%d: %lld of %lld outputs outside the "
         "bound (worst error/bound %.3f)\n",
         EXPERTS, offsets[0], offsets[1] - offsets[0], offsets[2] - offsets[1], offsets[3] - offsets[2], N, K,
         (long long)bad, (long long)(m * N), worst);

  CHECK(mxqGroupedGemmPlanDestroy(gemm));
  CHECK(mxqDestroy(h));
  free(x), free(w), free(y), free(xq), free(xs), free(wq), free(wsc), free(xd), free(wd), free(ws_base);
  return bad == 0 ? 0 : 1;
}
