/* Ferry custom-op plugins: a C ABI.
 *
 * A plugin is a shared library that exports two functions:
 *
 *   uint32_t FerryPluginAbiVersion(void);           // return FERRY_PLUGIN_ABI_VERSION
 *   FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar);
 *
 * Ferry calls FerryPluginAbiVersion first and refuses the plugin when the number differs from its own
 * FERRY_PLUGIN_ABI_VERSION; then FerryPluginInit, in which the plugin calls api->register_op once per op.
 * Everything crossing the boundary is a plain C struct, a C string or a function pointer: a plugin built with
 * another compiler or C++ standard library works, and a plugin may be written in C. Errors travel as FerryStatus
 * codes plus a message given with api->set_error; Ferry never lets a C++ exception cross into plugin code, and a
 * plugin must not let one escape into Ferry.
 *
 * Lifetime of one op instance (one node of a model, in one session):
 *   create  (once, when the session is created: read attributes, validate, pre-compute) -> state
 *   compute (every run; may be called from several threads at once with the same state: keep it read-only)
 *   destroy (once, when the session is destroyed)
 * infer_shapes (optional) runs during shape inference, before any create, and also for `ferry check`.
 *
 * See docs/plugins.md and examples/plugins/ for a complete plugin.
 */
#ifndef FERRY_PLUGIN_H_
#define FERRY_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every incompatible change of the structs or function tables below. */
#define FERRY_PLUGIN_ABI_VERSION 1u

#if defined(_WIN32)
#define FERRY_PLUGIN_EXPORT __declspec(dllexport)
#else
#define FERRY_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum FerryStatus {
  FERRY_OK = 0,
  FERRY_INVALID_ARGUMENT = 1, /* bad attribute or input (shape, dtype, value) */
  FERRY_UNSUPPORTED = 2,      /* valid, but this plugin does not handle it */
  FERRY_OUT_OF_MEMORY = 3,
  FERRY_NOT_FOUND = 4,        /* get_attr_*: the node has no such attribute */
  FERRY_INTERNAL = 5          /* a bug in the plugin */
} FerryStatus;

/* Element types: the values of ONNX's TensorProto.DataType. */
typedef enum FerryDataType {
  FERRY_FLOAT = 1,
  FERRY_UINT8 = 2,
  FERRY_INT8 = 3,
  FERRY_UINT16 = 4,
  FERRY_INT16 = 5,
  FERRY_INT32 = 6,
  FERRY_INT64 = 7,
  FERRY_BOOL = 9,
  FERRY_FLOAT16 = 10,
  FERRY_DOUBLE = 11,
  FERRY_UINT32 = 12,
  FERRY_UINT64 = 13,
  FERRY_BFLOAT16 = 16
} FerryDataType;

/* A tensor as a kernel sees it: dense, row-major, in host memory. `data` is NULL when the tensor has no
 * elements. Inputs are read-only. */
typedef struct FerryTensor {
  int32_t dtype;       /* FerryDataType */
  int32_t rank;
  const int64_t* dims; /* rank entries */
  const void* data;
} FerryTensor;

/* A shape during shape inference: rank -1 when unknown; a dim of -1 is unknown. */
typedef struct FerryShape {
  int32_t dtype; /* FerryDataType, 0 when unknown */
  int32_t rank;
  const int64_t* dims;
} FerryShape;

/* One formal input or output of the op, as in an ONNX schema. */
typedef struct FerryParam {
  const char* name;
  const char* type_var; /* a type variable declared in FerryOpDef.type_constraints, e.g. "T" */
  int32_t optional;     /* inputs only: non-zero when the input may be omitted (must be trailing) */
} FerryParam;

/* The element types a type variable may take. */
typedef struct FerryTypeConstraint {
  const char* type_var;
  const int32_t* types; /* FerryDataType values */
  size_t num_types;
} FerryTypeConstraint;

typedef enum FerryAttrType {
  FERRY_ATTR_FLOAT = 1,
  FERRY_ATTR_INT = 2,
  FERRY_ATTR_STRING = 3,
  FERRY_ATTR_FLOATS = 6,
  FERRY_ATTR_INTS = 7
} FerryAttrType; /* the values of ONNX's AttributeProto.AttributeType */

typedef struct FerryAttrDef {
  const char* name;
  int32_t type;     /* FerryAttrType */
  int32_t required; /* non-zero: a node without it is rejected before create */
} FerryAttrDef;

/* Opaque handles, valid only during the callback that receives them. */
typedef struct FerryOpContext FerryOpContext;
typedef struct FerryRegistrar FerryRegistrar;

/* Callbacks a plugin implements for one op. On failure they return a status other than FERRY_OK and should
 * call api->set_error(ctx, message) first; Ferry adds the plugin path, node name and op to the message. */
typedef FerryStatus (*FerryCreateFn)(FerryOpContext* ctx, void** state);
typedef FerryStatus (*FerryComputeFn)(void* state, FerryOpContext* ctx, const FerryTensor* inputs, size_t num_inputs);
typedef void (*FerryDestroyFn)(void* state);
typedef FerryStatus (*FerryInferShapesFn)(FerryOpContext* ctx, const FerryShape* inputs, size_t num_inputs);

typedef struct FerryOpDef {
  size_t struct_size;  /* sizeof(FerryOpDef): lets later ABI versions append fields */
  const char* domain;  /* e.g. "com.example"; "" is the ONNX default domain */
  const char* op_type; /* e.g. "Correlation" */
  int32_t since_version; /* the op's opset range in its domain, inclusive */
  int32_t until_version; /* 0 = open-ended */
  const FerryParam* inputs;
  size_t num_inputs;
  const FerryParam* outputs;
  size_t num_outputs;
  const FerryTypeConstraint* type_constraints;
  size_t num_type_constraints;
  const FerryAttrDef* attributes; /* the attributes the op accepts; a node with any other is rejected (graph
                                     layer) before create */
  size_t num_attributes;
  FerryCreateFn create;           /* optional (state = NULL) */
  FerryComputeFn compute;         /* required */
  FerryDestroyFn destroy;         /* optional */
  FerryInferShapesFn infer_shapes; /* optional: without it output shapes are unknown until run */
} FerryOpDef;

/* What Ferry offers the plugin. Valid for the life of the process. */
typedef struct FerryHostApi {
  uint32_t abi_version; /* FERRY_PLUGIN_ABI_VERSION of the Ferry that loaded the plugin */
  size_t struct_size;   /* sizeof(FerryHostApi) */

  /* FerryPluginInit only. Copies everything it needs from `def`. */
  FerryStatus (*register_op)(FerryRegistrar* registrar, const FerryOpDef* def);

  /* Any callback. Ferry copies the message: a stack buffer is fine. */
  void (*set_error)(FerryOpContext* ctx, const char* message);
  const char* (*node_name)(const FerryOpContext* ctx);
  /* Attributes of the node (create and infer_shapes; also compute). FERRY_NOT_FOUND when absent,
   * FERRY_INVALID_ARGUMENT when the attribute has another type. Arrays stay valid while the session lives. */
  FerryStatus (*get_attr_int)(const FerryOpContext* ctx, const char* name, int64_t* value);
  FerryStatus (*get_attr_float)(const FerryOpContext* ctx, const char* name, float* value);
  FerryStatus (*get_attr_string)(const FerryOpContext* ctx, const char* name, const char** value, size_t* length);
  FerryStatus (*get_attr_ints)(const FerryOpContext* ctx, const char* name, const int64_t** values, size_t* count);
  FerryStatus (*get_attr_floats)(const FerryOpContext* ctx, const char* name, const float** values, size_t* count);

  /* infer_shapes only: the shape of output `index` (rank -1: unknown rank, and `dims` may be NULL; a dim of -1:
   * unknown dim). The output's element type comes from its type variable: the type an input binds to it, or
   * the variable's only allowed type. */
  FerryStatus (*set_output_shape)(FerryOpContext* ctx, size_t index, int32_t rank, const int64_t* dims);

  /* compute only: allocates output `index` with the given element type and shape, zero-filled, and returns its
   * buffer in *data (NULL for an empty tensor). Call at most once per output. */
  FerryStatus (*allocate_output)(FerryOpContext* ctx, size_t index, int32_t dtype, int32_t rank,
                                 const int64_t* dims, void** data);
  /* compute only: how many threads the op may use. */
  int32_t (*thread_count)(const FerryOpContext* ctx);
} FerryHostApi;

/* The two symbols a plugin exports, declared here so that the compiler checks a plugin's definitions (and a
 * C++ plugin gets C linkage for them from this header's extern "C"). */
typedef uint32_t (*FerryPluginAbiVersionFn)(void);
typedef FerryStatus (*FerryPluginInitFn)(const FerryHostApi* api, FerryRegistrar* registrar);
FERRY_PLUGIN_EXPORT uint32_t FerryPluginAbiVersion(void);
FERRY_PLUGIN_EXPORT FerryStatus FerryPluginInit(const FerryHostApi* api, FerryRegistrar* registrar);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_PLUGIN_H_ */
