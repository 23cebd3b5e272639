/* Test plugin: registers com.ferry.test::Twice (opset 1+) twice. The second register_op must fail; the plugin
 * returns whatever status it got, as a well-behaved plugin would. */
#include <ferry/plugin.h>

#include <string.h>

static FerryStatus twice_compute(void* state, FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs) {
  (void)state;
  (void)ctx;
  (void)inputs;
  (void)num_inputs;
  return FERRY_INTERNAL; /* never run */
}

FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void) { return FERRY_PLUGIN_ABI_VERSION; }

FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar) {
  static const int32_t float_only[] = {FERRY_FLOAT};
  static const FerryTypeConstraint constraints[] = {{"T", float_only, 1}};
  static const FerryParam inputs[] = {{"x", "T", 0}};
  static const FerryParam outputs[] = {{"y", "T", 0}};

  FerryOpDef def;
  memset(&def, 0, sizeof def);
  def.struct_size = sizeof def;
  def.domain = "com.ferry.test";
  def.op_type = "Twice";
  def.since_version = 1;
  def.inputs = inputs;
  def.num_inputs = 1;
  def.outputs = outputs;
  def.num_outputs = 1;
  def.type_constraints = constraints;
  def.num_type_constraints = 1;
  def.compute = twice_compute;

  FerryStatus status = api->register_op(registrar, &def);
  if (status != FERRY_OK) return status;
  return api->register_op(registrar, &def);
}
