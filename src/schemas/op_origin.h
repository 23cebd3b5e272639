// Where an operator's definition comes from, for messages (`ferry check`, session errors) and `ferry ops`: the
// ONNX standard, ONNX Runtime's contrib domains, ONNX Runtime's registrations in the default domain below an
// op's first ONNX version (LayerNormalization before opset 17, SimplifiedLayerNormalization), Ferry's own
// domain, or a plugin's. One function, OriginOf, answers it for every caller.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ferry::schemas {

// ONNX Runtime's contrib domains: schemas_ort_contrib.cc and the files it lists.
inline constexpr std::string_view kMsDomain = "com.microsoft";
inline constexpr std::string_view kMsNchwcDomain = "com.microsoft.nchwc";

enum class OpOrigin {
  kOnnx,           // ai.onnx, ai.onnx.ml, ai.onnx.preview(.training)
  kOrtContrib,     // com.microsoft, com.microsoft.nchwc
  kOrtConvention,  // a default-domain op version ONNX Runtime registers and ONNX does not (OrtDefaultDomainOps)
  kFerry,          // ai.ferry
  kPlugin,         // a domain whose schemas a loaded plugin added
  kUnknown,        // a domain nothing defines
};

// A default-domain op ONNX Runtime registers as a contrib op at version 1: the first ONNX version of the op
// (0 when ONNX has none); every opset below it is ONNX Runtime's convention.
struct OrtDefaultDomainOp {
  std::string_view op;
  int first_onnx_version;
};
std::span<const OrtDefaultDomainOp> OrtDefaultDomainOps();

// The origin of `op` of `domain` ("" or "ai.onnx": the default domain) at `opset`.
OpOrigin OriginOf(std::string_view domain, std::string_view op, int64_t opset);
// "ONNX", "ONNX Runtime contrib op", "ONNX Runtime convention (default-domain op below its first ONNX version)",
// "Ferry", "plugin", "custom op".
std::string_view OriginName(OpOrigin origin);

}  // namespace ferry::schemas
