/* Test plugin libferry_test_ops.so: small ops in domain com.ferry.test, some of which fail on purpose.
 *
 *   AddOne       float x -> y = x + 1; has infer_shapes (copies the input shape)
 *   FailCompute  float x -> compute always fails: "FailCompute always fails: input has N elements"
 *   FailCreate   float x -> y = x; int attribute k (default 0): create fails unless k > 0
 *   Fp16Only     float16 x -> y = x (for dtype-mismatch messages)
 *   Versioned    float x -> y = x, opset 2 to 3 only
 *
 * Only AddOne has infer_shapes; the others leave output shapes unknown until run.
 */
#include <ferry/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const FerryHostApi* g_api;

static int64_t element_count(const FerryTensor* t) {
  int64_t count = 1;
  for (int32_t k = 0; k < t->rank; ++k) count *= t->dims[k];
  return count;
}

/* y = x, for any element type of 1, 2, 4 or 8 bytes. */
static FerryStatus copy_input(FerryOpContext* ctx, const FerryTensor* x) {
  size_t element_size;
  switch (x->dtype) {
    case FERRY_UINT8: case FERRY_INT8: case FERRY_BOOL: element_size = 1; break;
    case FERRY_UINT16: case FERRY_INT16: case FERRY_FLOAT16: case FERRY_BFLOAT16: element_size = 2; break;
    case FERRY_FLOAT: case FERRY_INT32: case FERRY_UINT32: element_size = 4; break;
    default: element_size = 8; break;
  }
  void* y = NULL;
  FerryStatus status = g_api->allocate_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
  if (status != FERRY_OK) return status;
  if (y != NULL && x->data != NULL) memcpy(y, x->data, (size_t)element_count(x) * element_size);
  return FERRY_OK;
}

static FerryStatus identity_compute(void* state, FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs) {
  (void)state;
  (void)num_inputs;
  return copy_input(ctx, &inputs[0]);
}

static FerryStatus add_one_compute(void* state, FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs) {
  (void)state;
  (void)num_inputs;
  const FerryTensor* x = &inputs[0];
  void* out = NULL;
  FerryStatus status = g_api->allocate_output(ctx, 0, FERRY_FLOAT, x->rank, x->dims, &out);
  if (status != FERRY_OK || out == NULL) return status;
  const float* in = x->data;
  float* y = out;
  const int64_t count = element_count(x);
  for (int64_t i = 0; i < count; ++i) y[i] = in[i] + 1.0f;
  return FERRY_OK;
}

static FerryStatus add_one_infer_shapes(FerryOpContext* ctx, const FerryShape* inputs, size_t num_inputs) {
  (void)num_inputs;
  return g_api->set_output_shape(ctx, 0, inputs[0].rank, inputs[0].dims);
}

static FerryStatus fail_compute(void* state, FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs) {
  (void)state;
  (void)num_inputs;
  char message[128];
  snprintf(message, sizeof message, "FailCompute always fails: input has %lld elements",
           (long long)element_count(&inputs[0]));
  g_api->set_error(ctx, message);
  return FERRY_INVALID_ARGUMENT;
}

/* FailCreate keeps k in a heap-allocated state, so that a missing destroy shows up as a leak. */
static FerryStatus fail_create_create(FerryOpContext* ctx, void** state) {
  int64_t k = 0;
  FerryStatus status = g_api->get_attr_int(ctx, "k", &k);
  if (status != FERRY_OK && status != FERRY_NOT_FOUND) {
    g_api->set_error(ctx, "attribute 'k' must be an int");
    return status;
  }
  if (k <= 0) {
    char message[96];
    snprintf(message, sizeof message, "attribute 'k' must be positive, got %lld", (long long)k);
    g_api->set_error(ctx, message);
    return FERRY_INVALID_ARGUMENT;
  }
  int64_t* saved = malloc(sizeof *saved);
  if (saved == NULL) return FERRY_OUT_OF_MEMORY;
  *saved = k;
  *state = saved;
  return FERRY_OK;
}

static void fail_create_destroy(void* state) { free(state); }

static const int32_t kFloat[] = {FERRY_FLOAT};
static const int32_t kFloat16[] = {FERRY_FLOAT16};
static const FerryTypeConstraint kFloatT[] = {{"T", kFloat, 1}};
static const FerryTypeConstraint kFloat16T[] = {{"T", kFloat16, 1}};
static const FerryParam kInputX[] = {{"x", "T", 0}};
static const FerryParam kOutputY[] = {{"y", "T", 0}};
static const FerryAttrDef kAttrK[] = {{"k", FERRY_ATTR_INT, 0}};

/* A one-input, one-output op of com.ferry.test. */
static FerryOpDef unary_op(const char* op_type, const FerryTypeConstraint* constraint, FerryComputeFn compute) {
  FerryOpDef def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.domain = "com.ferry.test";
  def.op_type = op_type;
  def.since_version = 1;
  def.inputs = kInputX;
  def.num_inputs = 1;
  def.outputs = kOutputY;
  def.num_outputs = 1;
  def.type_constraints = constraint;
  def.num_type_constraints = 1;
  def.compute = compute;
  return def;
}

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return FERRY_PLUGIN_ABI_VERSION; }

FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar) {
  g_api = api;
  FerryOpDef defs[5];
  defs[0] = unary_op("AddOne", kFloatT, add_one_compute);
  defs[0].infer_shapes = add_one_infer_shapes;
  defs[1] = unary_op("FailCompute", kFloatT, fail_compute);
  defs[2] = unary_op("FailCreate", kFloatT, identity_compute);
  defs[2].attributes = kAttrK;
  defs[2].num_attributes = 1;
  defs[2].create = fail_create_create;
  defs[2].destroy = fail_create_destroy;
  defs[3] = unary_op("Fp16Only", kFloat16T, identity_compute);
  defs[4] = unary_op("Versioned", kFloatT, identity_compute);
  defs[4].since_version = 2;
  defs[4].until_version = 3;
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; ++i) {
    FerryStatus status = api->register_op(registrar, &defs[i]);
    if (status != FERRY_OK) return status;
  }
  return FERRY_OK;
}
