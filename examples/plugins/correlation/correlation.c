/* Correlation (cost volume), the layer of FlowNet and PWC-Net, as a Ferry custom-op plugin.
 *
 *   com.ferry.examples::Correlation (opset 1+)
 *   inputs   x1, x2: float32 (N, C, H, W), the same shape
 *   attrs    max_displacement: int, default 4, >= 0
 *            stride: int, default 1, >= 1 (the displacement step)
 *   output   y: float32 (N, D*D, H, W), D = 2*r + 1, r = max_displacement / stride
 *
 *   y[n, i*D + j, h, w] = 1/C * sum_c x1[n,c,h,w] * x2[n,c,h+dy,w+dx],  dy = (i - r)*stride, dx = (j - r)*stride
 *
 * and 0 where (h+dy, w+dx) falls outside the image. Plain C11 and the C standard library only; build it with
 *
 *   cc -std=c11 -O2 -shared -fPIC -I/path/to/ferry/include correlation.c -o libferry_correlation.so
 *
 * See README.md next to this file for a walkthrough.
 */
#include <ferry/plugin.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host's function table, valid for the life of the process: saved by FerryPluginInit. */
static const FerryHostApi* g_api;

/* Largest accepted r = max_displacement / stride: keeps D = 2r+1 within int32, so D*D fits in int64. */
#define CORRELATION_MAX_RADIUS ((INT32_MAX - 1) / 2)

/* The attributes, read and validated once (create), and again by infer_shapes, which runs before create. */
typedef struct CorrelationParams {
  int64_t max_displacement;
  int64_t stride;
  int64_t radius; /* r = max_displacement / stride */
  int64_t d;      /* D = 2*r + 1 displacements per axis */
} CorrelationParams;

/* set_error with printf formatting; returns `status` so that callers can `return set_errorf(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static FerryStatus set_errorf(FerryOpContext* ctx, FerryStatus status, const char* fmt, ...) {
  char message[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  g_api->set_error(ctx, message);
  return status;
}

/* Reads an optional int attribute: `fallback` when the node does not have it. */
static FerryStatus get_int_or(FerryOpContext* ctx, const char* name, int64_t fallback, int64_t* value) {
  FerryStatus status = g_api->get_attr_int(ctx, name, value);
  if (status == FERRY_NOT_FOUND) {
    *value = fallback;
    return FERRY_OK;
  }
  if (status != FERRY_OK) return set_errorf(ctx, status, "attribute '%s' must be an int", name);
  return FERRY_OK;
}

static FerryStatus read_params(FerryOpContext* ctx, CorrelationParams* params) {
  FerryStatus status = get_int_or(ctx, "max_displacement", 4, &params->max_displacement);
  if (status != FERRY_OK) return status;
  status = get_int_or(ctx, "stride", 1, &params->stride);
  if (status != FERRY_OK) return status;
  if (params->max_displacement < 0) {
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "attribute 'max_displacement' must be >= 0, got %lld",
                      (long long)params->max_displacement);
  }
  if (params->stride < 1) {
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "attribute 'stride' must be >= 1, got %lld",
                      (long long)params->stride);
  }
  params->radius = params->max_displacement / params->stride;
  if (params->radius > CORRELATION_MAX_RADIUS) {
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "max_displacement / stride = %lld is too large (at most %d)",
                      (long long)params->radius, CORRELATION_MAX_RADIUS);
  }
  params->d = 2 * params->radius + 1;
  return FERRY_OK;
}

static FerryStatus correlation_create(FerryOpContext* ctx, void** state) {
  CorrelationParams params;
  FerryStatus status = read_params(ctx, &params);
  if (status != FERRY_OK) return status;
  CorrelationParams* copy = malloc(sizeof *copy);
  if (copy == NULL) {
    g_api->set_error(ctx, "out of memory");
    return FERRY_OUT_OF_MEMORY;
  }
  *copy = params;
  *state = copy;
  return FERRY_OK;
}

static void correlation_destroy(void* state) { free(state); }

/* Output (N, D*D, H, W) from the input shapes: unknown dims stay -1; x2 fills in what x1 leaves unknown. */
static FerryStatus correlation_infer_shapes(FerryOpContext* ctx, const FerryShape* inputs, size_t num_inputs) {
  CorrelationParams params;
  FerryStatus status = read_params(ctx, &params);
  if (status != FERRY_OK) return status;
  if (num_inputs != 2) {
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "expected 2 inputs (x1, x2), got %zu", num_inputs);
  }
  for (size_t k = 0; k < 2; ++k) {
    if (inputs[k].rank >= 0 && inputs[k].rank != 4) {
      return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "x%zu: expected rank 4 (N, C, H, W), got rank %d", k + 1,
                        (int)inputs[k].rank);
    }
  }
  if (inputs[0].rank < 0 && inputs[1].rank < 0) return g_api->set_output_shape(ctx, 0, -1, NULL);
  int64_t dims[4];
  for (int axis = 0; axis < 4; ++axis) {
    const int64_t a = inputs[0].rank == 4 ? inputs[0].dims[axis] : -1;
    const int64_t b = inputs[1].rank == 4 ? inputs[1].dims[axis] : -1;
    if (a >= 0 && b >= 0 && a != b) {
      return set_errorf(ctx, FERRY_INVALID_ARGUMENT,
                        "x1 and x2 must have the same shape: dim %d is %lld in x1 and %lld in x2", axis,
                        (long long)a, (long long)b);
    }
    dims[axis] = a >= 0 ? a : b;
  }
  dims[1] = params.d * params.d; /* (N, C, H, W) -> (N, D*D, H, W) */
  return g_api->set_output_shape(ctx, 0, 4, dims);
}

static void format_shape(char* out, size_t size, const FerryTensor* t) {
  size_t used = (size_t)snprintf(out, size, "[");
  for (int32_t k = 0; k < t->rank && used < size; ++k) {
    used += (size_t)snprintf(out + used, size - used, k ? ",%lld" : "%lld", (long long)t->dims[k]);
  }
  if (used < size) snprintf(out + used, size - used, "]");
}

static FerryStatus check_inputs(FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs) {
  if (num_inputs != 2) {
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "expected 2 inputs (x1, x2), got %zu", num_inputs);
  }
  for (size_t k = 0; k < 2; ++k) {
    if (inputs[k].dtype != FERRY_FLOAT) {
      return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "x%zu: expected element type float32 (%d), got %d", k + 1,
                        FERRY_FLOAT, (int)inputs[k].dtype);
    }
    if (inputs[k].rank != 4) {
      return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "x%zu: expected rank 4 (N, C, H, W), got rank %d", k + 1,
                        (int)inputs[k].rank);
    }
  }
  if (memcmp(inputs[0].dims, inputs[1].dims, 4 * sizeof(int64_t)) != 0) {
    char s1[96], s2[96];
    format_shape(s1, sizeof s1, &inputs[0]);
    format_shape(s2, sizeof s2, &inputs[1]);
    return set_errorf(ctx, FERRY_INVALID_ARGUMENT, "x1 and x2 must have the same shape: got x1 %s and x2 %s", s1,
                      s2);
  }
  return FERRY_OK;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static FerryStatus correlation_compute(void* state, FerryOpContext* ctx, const FerryTensor* inputs,
                                       size_t num_inputs) {
  const CorrelationParams* params = state;
  FerryStatus status = check_inputs(ctx, inputs, num_inputs);
  if (status != FERRY_OK) return status;

  const int64_t n_batch = inputs[0].dims[0], channels = inputs[0].dims[1];
  const int64_t height = inputs[0].dims[2], width = inputs[0].dims[3];
  const int64_t d = params->d, r = params->radius, stride = params->stride;
  const int64_t out_dims[4] = {n_batch, d * d, height, width};
  void* out_data = NULL;
  status = g_api->allocate_output(ctx, 0, FERRY_FLOAT, 4, out_dims, &out_data);
  if (status != FERRY_OK) return status;
  if (out_data == NULL || channels == 0) return FERRY_OK; /* empty output, or C == 0: all zeros */

  const float* x1 = inputs[0].data;
  const float* x2 = inputs[1].data;
  float* y = out_data;
  const int64_t plane = height * width;
  const float scale = 1.0f / (float)channels;

  for (int64_t n = 0; n < n_batch; ++n) {
    const float* x1n = x1 + n * channels * plane;
    const float* x2n = x2 + n * channels * plane;
    for (int64_t i = 0; i < d; ++i) {
      const int64_t dy = (i - r) * stride;
      /* Rows h with 0 <= h + dy < height. */
      const int64_t h_begin = max64(0, -dy), h_end = min64(height, height - dy);
      for (int64_t j = 0; j < d; ++j) {
        const int64_t dx = (j - r) * stride;
        const int64_t w_begin = max64(0, -dx), w_end = min64(width, width - dx);
        float* yp = y + (n * d * d + i * d + j) * plane; /* zero-filled by allocate_output */
        if (h_begin >= h_end || w_begin >= w_end) continue;
        for (int64_t c = 0; c < channels; ++c) {
          const float* a = x1n + c * plane;
          const float* b = x2n + c * plane + dy * width + dx; /* b[h*W + w] = x2[c, h+dy, w+dx] */
          for (int64_t h = h_begin; h < h_end; ++h) {
            const float* ar = a + h * width;
            const float* br = b + h * width;
            float* yr = yp + h * width;
            for (int64_t w = w_begin; w < w_end; ++w) yr[w] += ar[w] * br[w];
          }
        }
        for (int64_t h = h_begin; h < h_end; ++h) {
          float* yr = yp + h * width;
          for (int64_t w = w_begin; w < w_end; ++w) yr[w] *= scale;
        }
      }
    }
  }
  return FERRY_OK;
}

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return FERRY_PLUGIN_ABI_VERSION; }

FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar) {
  g_api = api;

  static const int32_t float_only[] = {FERRY_FLOAT};
  static const FerryTypeConstraint constraints[] = {{"T", float_only, 1}};
  static const FerryParam inputs[] = {{"x1", "T", 0}, {"x2", "T", 0}};
  static const FerryParam outputs[] = {{"y", "T", 0}};
  static const FerryAttrDef attributes[] = {{"max_displacement", FERRY_ATTR_INT, 0}, {"stride", FERRY_ATTR_INT, 0}};

  FerryOpDef def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.domain = "com.ferry.examples";
  def.op_type = "Correlation";
  def.since_version = 1;
  def.until_version = 0;
  def.inputs = inputs;
  def.num_inputs = 2;
  def.outputs = outputs;
  def.num_outputs = 1;
  def.type_constraints = constraints;
  def.num_type_constraints = 1;
  def.attributes = attributes;
  def.num_attributes = 2;
  def.create = correlation_create;
  def.compute = correlation_compute;
  def.destroy = correlation_destroy;
  def.infer_shapes = correlation_infer_shapes;
  return api->register_op(registrar, &def);
}
