/* MXFP8 attention forward from C, on the CPU reference backend: grouped-query attention (4 query
 * heads sharing 2 KV heads) with a bottom-right causal mask, layout BHSD.
 *
 * The recipe (docs/NUMERICS.md) wants Q and K quantized along the head dimension D and V along the
 * sequence: Q and K are [B*H*S, D] matrices quantized rowwise; V is B*Hkv matrices [S_kv, D]
 * quantized columnwise (32x1 blocks along S) with the data left untransposed.
 *
 * Check: O against the recipe computed in float64 on the dequantized operands: p = exp(S - rowmax),
 * O = sum_j e4m3(256 p_j)/256 v_j / sum_j p_j. The library computes S and p in fp32, which can move a
 * p*256 across an E4M3 rounding midpoint, so the bound per element allows two such flips of the
 * largest weight (2^-3 max_j p_j|v_j| / l) besides fp32 noise and the bf16 rounding of O; LSE must
 * agree to fp32 accuracy. Exit status 0 when every element is within its bound. */
#include "example_common.h"

enum { B = 2, HQ = 4, HKV = 2, D = 64 };

typedef struct {
  uint8_t *data, *scales;
} Fp8;

/* Quantize bf16 [batch, rows, D]: rowwise (along D) or columnwise untransposed (along rows). */
static Fp8 quantize(mxqHandle_t h, const uint16_t *x, int64_t batch, int64_t rows, int along_rows) {
  mxqQuantizePlan_t plan;
  int64_t cols = D;
  int32_t direction = along_rows ? MXQ_QUANTIZE_COLUMNWISE : MXQ_QUANTIZE_ROWWISE, transposed = 0;
  mxqArgSlot_t data_slot = along_rows ? MXQ_ARG_COLWISE_DATA : MXQ_ARG_ROWWISE_DATA;
  mxqArgSlot_t scale_slot = along_rows ? MXQ_ARG_COLWISE_SCALES : MXQ_ARG_ROWWISE_SCALES;
  size_t data_bytes, scale_bytes, ws_bytes;
  void *ws_base, *ws;
  Fp8 out;
  mxqExecArg_t args[3];

  CHECK(mxqQuantizePlanCreate(h, &plan));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_BATCH, &batch, sizeof batch));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_COLS, &cols, sizeof cols));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_DIRECTION, &direction, sizeof direction));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_COLWISE_TRANSPOSED, &transposed, sizeof transposed));
  CHECK(mxqQuantizePlanFinalize(plan));
  CHECK(mxqQuantizePlanGetOutputSize(plan, data_slot, &data_bytes));
  CHECK(mxqQuantizePlanGetOutputSize(plan, scale_slot, &scale_bytes));
  CHECK(mxqQuantizePlanGetWorkspaceSize(plan, &ws_bytes));
  out.data = example_poisoned(data_bytes);
  out.scales = example_poisoned(scale_bytes);
  ws = example_workspace(ws_bytes, &ws_base);
  args[0].slot = MXQ_ARG_X, args[0].reserved = 0, args[0].ptr = (void *)x;
  args[1].slot = data_slot, args[1].reserved = 0, args[1].ptr = out.data;
  args[2].slot = scale_slot, args[2].reserved = 0, args[2].ptr = out.scales;
  CHECK(mxqQuantizeExecute(h, plan, args, 3, ws, ws_bytes, NULL));
  CHECK(mxqQuantizePlanDestroy(plan));
  free(ws_base);
  return out;
}

/* The inverse, to fp32, for the reference. */
static float *dequantize(mxqHandle_t h, Fp8 q, int64_t batch, int64_t rows, int along_rows) {
  mxqDequantizePlan_t plan;
  int64_t cols = D;
  int32_t direction = along_rows ? MXQ_QUANTIZE_COLUMNWISE : MXQ_QUANTIZE_ROWWISE, transposed = 0,
          out = MXQ_DTYPE_FP32;
  float *x = example_poisoned((size_t)(batch * rows * D) * sizeof(float));
  mxqExecArg_t args[3];
  CHECK(mxqDequantizePlanCreate(h, &plan));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_OUTPUT_DTYPE, &out, sizeof out));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_BATCH, &batch, sizeof batch));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_COLS, &cols, sizeof cols));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_DIRECTION, &direction, sizeof direction));
  CHECK(mxqDequantizePlanSetAttribute(plan, MXQ_DEQUANTIZE_ATTR_COLWISE_TRANSPOSED, &transposed, sizeof transposed));
  CHECK(mxqDequantizePlanFinalize(plan));
  args[0].slot = along_rows ? MXQ_ARG_COLWISE_DATA : MXQ_ARG_ROWWISE_DATA, args[0].reserved = 0, args[0].ptr = q.data;
  args[1].slot = along_rows ? MXQ_ARG_COLWISE_SCALES : MXQ_ARG_ROWWISE_SCALES, args[1].reserved = 0,
  args[1].ptr = q.scales;
  args[2].slot = MXQ_ARG_X, args[2].reserved = 0, args[2].ptr = x;
  CHECK(mxqDequantizeExecute(h, plan, args, 3, NULL, 0, NULL));
  CHECK(mxqDequantizePlanDestroy(plan));
  return x;
}

static void set_i64(mxqAttentionPlan_t p, mxqAttentionAttribute_t a, int64_t v) {
  CHECK(mxqAttentionPlanSetAttribute(p, a, &v, sizeof v));
}

int main(void) {
  int64_t sq, skv, i, j, c, b, hq, bad_o = 0, bad_lse = 0;
  int32_t mask = MXQ_ATTN_MASK_CAUSAL_BOTTOM_RIGHT;
  uint16_t *q, *k, *v, *o;
  float *lse, *qd, *kd, *vd, scale;
  double *p;
  Fp8 q8, k8, v8;
  mxqHandle_t h;
  mxqAttentionPlan_t plan;
  size_t ws_bytes, written;
  void *ws_base, *ws;

  example_seed();
  skv = example_range(1, 200);
  sq = example_range(1, skv + 1); /* Sq <= Skv: with the bottom-right mask every query sees a key */
  q = example_poisoned((size_t)(B * HQ * sq * D) * 2);
  k = example_poisoned((size_t)(B * HKV * skv * D) * 2);
  v = example_poisoned((size_t)(B * HKV * skv * D) * 2);
  o = example_poisoned((size_t)(B * HQ * sq * D) * 2);
  lse = example_poisoned((size_t)(B * HQ * sq) * sizeof(float));
  p = example_poisoned((size_t)skv * sizeof(double));
  for (i = 0; i < B * HQ * sq * D; ++i) q[i] = example_to_bf16(example_normal());
  for (i = 0; i < B * HKV * skv * D; ++i) k[i] = example_to_bf16(example_normal());
  for (i = 0; i < B * HKV * skv * D; ++i) v[i] = example_to_bf16(example_normal());

  CHECK(mxqCreateWithBackend(&h, MXQ_BACKEND_CPU, 0));
  q8 = quantize(h, q, 1, B * HQ * sq, 0);
  k8 = quantize(h, k, 1, B * HKV * skv, 0);
  v8 = quantize(h, v, B * HKV, skv, 1);

  CHECK(mxqAttentionPlanCreate(h, &plan));
  set_i64(plan, MXQ_ATTN_ATTR_BATCH, B);
  set_i64(plan, MXQ_ATTN_ATTR_HEADS_Q, HQ);
  set_i64(plan, MXQ_ATTN_ATTR_HEADS_KV, HKV);
  set_i64(plan, MXQ_ATTN_ATTR_SEQLEN_Q, sq);
  set_i64(plan, MXQ_ATTN_ATTR_SEQLEN_KV, skv);
  set_i64(plan, MXQ_ATTN_ATTR_HEAD_DIM, D);
  CHECK(mxqAttentionPlanSetAttribute(plan, MXQ_ATTN_ATTR_MASK, &mask, sizeof mask));
  CHECK(mxqAttentionPlanFinalize(plan));
  CHECK(mxqAttentionPlanGetAttribute(plan, MXQ_ATTN_ATTR_SOFTMAX_SCALE, &scale, sizeof scale, &written));
  CHECK(mxqAttentionPlanGetWorkspaceSize(plan, &ws_bytes));
  ws = example_workspace(ws_bytes, &ws_base);
  {
    mxqExecArg_t args[8] = {{MXQ_ARG_Q_DATA, 0, NULL}, {MXQ_ARG_Q_SCALES, 0, NULL}, {MXQ_ARG_K_DATA, 0, NULL},
                            {MXQ_ARG_K_SCALES, 0, NULL}, {MXQ_ARG_V_DATA, 0, NULL}, {MXQ_ARG_V_SCALES, 0, NULL},
                            {MXQ_ARG_O, 0, NULL}, {MXQ_ARG_LSE, 0, NULL}};
    args[0].ptr = q8.data, args[1].ptr = q8.scales, args[2].ptr = k8.data, args[3].ptr = k8.scales;
    args[4].ptr = v8.data, args[5].ptr = v8.scales, args[6].ptr = o, args[7].ptr = lse;
    CHECK(mxqAttentionExecute(h, plan, args, 8, ws, ws_bytes, NULL));
  }

  qd = dequantize(h, q8, 1, B * HQ * sq, 0);
  kd = dequantize(h, k8, 1, B * HKV * skv, 0);
  vd = dequantize(h, v8, B * HKV, skv, 1);
  for (b = 0; b < B; ++b) {
    for (hq = 0; hq < HQ; ++hq) {
      int64_t hk = hq / (HQ / HKV);
      for (i = 0; i < sq; ++i) {
        const float *qrow = qd + ((b * HQ + hq) * sq + i) * D;
        int64_t row = (b * HQ + hq) * sq + i, last = i + skv - sq; /* keys 0..last are visible */
        double m = -INFINITY, l = 0, want_lse;
        for (j = 0; j <= last; ++j) {
          const float *krow = kd + ((b * HKV + hk) * skv + j) * D;
          double s = 0;
          for (c = 0; c < D; ++c) s += (double)qrow[c] * krow[c];
          p[j] = s * scale;
          m = p[j] > m ? p[j] : m;
        }
        for (j = 0; j <= last; ++j) l += (p[j] = exp(p[j] - m));
        want_lse = m + log(l);
        if (!(fabs(lse[row] - want_lse) <= 1e-4 * (fabs(want_lse) > 1 ? fabs(want_lse) : 1))) ++bad_lse;
        for (c = 0; c < D; ++c) {
          double want = 0, mag = 0, top = 0, got = example_from_bf16(o[row * D + c]);
          for (j = 0; j <= last; ++j) {
            double vj = vd[((b * HKV + hk) * skv + j) * D + c];
            want += example_e4m3(256 * p[j]) / 256 * vj;
            mag += p[j] * fabs(vj);
            top = p[j] * fabs(vj) > top ? p[j] * fabs(vj) : top;
          }
          want /= l;
          if (!(fabs(got - want) <= ldexp(top / l, -3) + 1e-4 * mag / l + ldexp(fabs(want), -8))) ++bad_o;
        }
      }
    }
  }
  printf("attention fwd: B=%d Hq=%d Hkv=%d Sq=%lld Skv=%lld D=%d causal bottom-right: %lld of %lld O and "
         "%lld of %lld LSE values outside the bound\n",
         B, HQ, HKV, (long long)sq, (long long)skv, D, (long long)bad_o, (long long)(B * HQ * sq * D),
         (long long)bad_lse, (long long)(B * HQ * sq));

  CHECK(mxqAttentionPlanDestroy(plan));
  CHECK(mxqDestroy(h));
  free(q), free(k), free(v), free(o), free(lse), free(p), free(qd), free(kd), free(vd), free(ws_base);
  free(q8.data), free(q8.scales), free(k8.data), free(k8.scales), free(v8.data), free(v8.scales);
  return bad_o == 0 && bad_lse == 0 ? 0 : 1;
}
