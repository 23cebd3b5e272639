#include "semantics/fused_activation.h"

#include <iterator>
#include <limits>
#include <vector>

#include "ferry/error.h"

namespace ferry::semantics {
namespace {

using Kind = FusedActivationKind;

constexpr float kInf = std::numeric_limits<float>::infinity();

constexpr FusedActivationInfo kActivations[] = {
    {Kind::kNone, "", 0, {}, {0, 0}},
    {Kind::kRelu, "Relu", 0, {}, {0, 0}},
    {Kind::kLeakyRelu, "LeakyRelu", 1, {"alpha"}, {0.01f, 0}},
    {Kind::kClip, "Clip", 2, {"min", "max"}, {-kInf, kInf}},
    {Kind::kSigmoid, "Sigmoid", 0, {}, {0, 0}},
    {Kind::kTanh, "Tanh", 0, {}, {0, 0}},
    {Kind::kHardSigmoid, "HardSigmoid", 2, {"alpha", "beta"}, {0.2f, 0.5f}},
    {Kind::kHardSwish, "HardSwish", 0, {}, {0, 0}},
    {Kind::kSilu, "Silu", 0, {}, {0, 0}},
    {Kind::kGelu, "Gelu", 0, {}, {0, 0}},
    {Kind::kGeluTanh, "GeluTanh", 0, {}, {0, 0}},
    {Kind::kMish, "Mish", 0, {}, {0, 0}},
};

constexpr bool InKindOrder() {
  for (size_t i = 0; i < std::size(kActivations); ++i) {
    if (static_cast<size_t>(kActivations[i].kind) != i) return false;
  }
  return std::size(kActivations) == static_cast<size_t>(Kind::kMish) + 1;
}
static_assert(InKindOrder(), "FusedActivationOf indexes the table by kind");

}  // namespace

std::span<const FusedActivationInfo> FusedActivations() { return kActivations; }

const FusedActivationInfo* FindFusedActivation(std::string_view name) {
  for (const FusedActivationInfo& a : kActivations) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const FusedActivationInfo& FusedActivationOf(FusedActivationKind kind) {
  return kActivations[static_cast<size_t>(kind)];
}

std::string FusedActivationNames() {
  std::string s;
  const size_t n = std::size(kActivations);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? " or " : ", ";
    s += kActivations[i].name.empty() ? std::string("\"\"") : std::string(kActivations[i].name);
  }
  return s;
}

FusedActivationProblem ParseFusedActivation(std::string_view name, std::span<const float> params,
                                            FusedActivation* out) {
  const FusedActivationInfo* info = FindFusedActivation(name);
  if (!info) return FusedActivationProblem::kUnknownName;
  if (!params.empty() && params.size() != info->params) return FusedActivationProblem::kParamCount;
  out->kind = info->kind;
  out->alpha = params.empty() ? info->defaults[0] : params[0];
  out->beta = params.size() < 2 ? info->defaults[1] : params[1];
  return FusedActivationProblem::kNone;
}

std::string FusedActivationError(std::string_view name, std::span<const float> params) {
  FusedActivation act;
  switch (ParseFusedActivation(name, params, &act)) {
    case FusedActivationProblem::kNone: return "";
    case FusedActivationProblem::kUnknownName:
      return "unknown activation '" + std::string(name) + "' (expected " + FusedActivationNames() + ")";
    case FusedActivationProblem::kParamCount:
      return "activation '" + std::string(name) + "' takes " + std::to_string(FindFusedActivation(name)->params) +
             " activation_params (or none for the defaults), got " + std::to_string(params.size());
  }
  return "";
}

FusedActivation FusedActivationFromNode(const ir::Node& node) {
  const std::string name = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params", {});
  FusedActivation act;
  if (ParseFusedActivation(name, params, &act) != FusedActivationProblem::kNone) {
    throw InvalidModelError(node.Describe() + ": " + FusedActivationError(name, params));
  }
  return act;
}

}  // namespace ferry::semantics
