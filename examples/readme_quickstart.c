/* Quantize a bf16 matrix to MXFP8 (E4M3 data + one UE8M0 scale per 32 values) on the CPU
 * reference backend. Build: cc readme_quickstart.c $(pkg-config --cflags --libs mxq) */
#include <mxq/mxq.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    mxqStatus_t s_ = (call);                                                     \
    if (s_ != MXQ_STATUS_SUCCESS) {                                              \
      fprintf(stderr, "%s: %s\n", mxqGetStatusName(s_), mxqGetLastErrorMessage()); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

int main(void) {
  enum { ROWS = 2, COLS = 64 };
  uint16_t x[ROWS * COLS]; /* bf16 bit patterns: 0x3F80 is 1.0, each +0x80 doubles it */
  int64_t rows = ROWS, cols = COLS;
  int32_t layout = MXQ_SCALE_LAYOUT_LINEAR; /* default: SWIZZLED_128x4, what GEMMs read */
  size_t data_bytes, scale_bytes, ws_bytes;
  mxqHandle_t handle;
  mxqQuantizePlan_t plan;
  int i;
  for (i = 0; i < ROWS * COLS; ++i) x[i] = (uint16_t)(0x3F80 + 0x80 * (i % 5) + (i & 0x7F));

  if (mxqGetVersion() != MXQ_VERSION) return fprintf(stderr, "header/library mismatch\n"), 1;
  CHECK(mxqCreateWithBackend(&handle, MXQ_BACKEND_CPU, 0));
  CHECK(mxqQuantizePlanCreate(handle, &plan));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_ROWS, &rows, sizeof rows));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_COLS, &cols, sizeof cols));
  CHECK(mxqQuantizePlanSetAttribute(plan, MXQ_QUANTIZE_ATTR_SCALE_LAYOUT, &layout, sizeof layout));
  CHECK(mxqQuantizePlanFinalize(plan));
  CHECK(mxqQuantizePlanGetWorkspaceSize(plan, &ws_bytes)); /* 0 here; a GPU plan may need some */
  CHECK(mxqQuantizePlanGetOutputSize(plan, MXQ_ARG_ROWWISE_DATA, &data_bytes));
  CHECK(mxqQuantizePlanGetOutputSize(plan, MXQ_ARG_ROWWISE_SCALES, &scale_bytes));
  {
    unsigned char *data = malloc(data_bytes), *scales = malloc(scale_bytes);
    mxqExecArg_t args[3] = {{MXQ_ARG_X, 0, x}, {MXQ_ARG_ROWWISE_DATA, 0, data}, {MXQ_ARG_ROWWISE_SCALES, 0, scales}};
    if (ws_bytes != 0 || !data || !scales) return fprintf(stderr, "unexpected workspace / out of memory\n"), 1;
    CHECK(mxqQuantizeExecute(handle, plan, args, 3, NULL, 0, NULL)); /* NULL stream: ignored on CPU */
    for (i = 0; i < (int)scale_bytes; ++i) /* LINEAR: scale i belongs to elements [32i, 32i+32) */
      printf("block %d: scale 2^%d, first E4M3 bytes %02x %02x %02x\n", i, scales[i] - 127, data[32 * i],
             data[32 * i + 1], data[32 * i + 2]);
    free(data);
    free(scales);
  }
  CHECK(mxqQuantizePlanDestroy(plan));
  CHECK(mxqDestroy(handle));
  return 0;
}
