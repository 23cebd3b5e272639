#include "schemas/op_origin.h"

#include <array>

#include "schemas/schema.h"

namespace ferry::schemas {

std::span<const OrtDefaultDomainOp> OrtDefaultDomainOps() {
  static constexpr std::array<OrtDefaultDomainOp, 2> kOps = {{
      {"LayerNormalization", 17},
      {"SimplifiedLayerNormalization", 0},
  }};
  return kOps;
}

OpOrigin OriginOf(std::string_view domain, std::string_view op, int64_t opset) {
  const std::string_view d = CanonicalDomain(domain);
  if (d.empty()) {
    for (const OrtDefaultDomainOp& o : OrtDefaultDomainOps()) {
      if (o.op == op && (o.first_onnx_version == 0 || opset < o.first_onnx_version)) return OpOrigin::kOrtConvention;
    }
    return OpOrigin::kOnnx;
  }
  if (d == "ai.onnx.ml" || d == "ai.onnx.preview.training" || d == "ai.onnx.preview") return OpOrigin::kOnnx;
  if (d == kMsDomain || d == kMsNchwcDomain) return OpOrigin::kOrtContrib;
  if (d == kFerryDomain) return OpOrigin::kFerry;
  return SchemaRegistry::Get().Versions(d, op).empty() ? OpOrigin::kUnknown : OpOrigin::kPlugin;
}

std::string_view OriginName(OpOrigin origin) {
  switch (origin) {
    case OpOrigin::kOnnx: return "ONNX";
    case OpOrigin::kOrtContrib: return "ONNX Runtime contrib op";
    case OpOrigin::kOrtConvention: return "ONNX Runtime convention (default-domain op below its first ONNX version)";
    case OpOrigin::kFerry: return "Ferry";
    case OpOrigin::kPlugin: return "plugin";
    case OpOrigin::kUnknown: return "custom op";
  }
  return "custom op";
}

}  // namespace ferry::schemas
