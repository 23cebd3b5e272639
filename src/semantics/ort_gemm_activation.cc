#include "semantics/ort_gemm_activation.h"

#include <vector>

#include "ferry/error.h"

namespace ferry::semantics {
namespace {

struct Row {
  std::string_view name;
  OrtGemmActivationKind kind;
  const char* params;  // which of alpha ('a'), beta ('b'), gamma ('g') it reads
  float alpha, beta, gamma;
  bool required;  // the parameters have no default
};

constexpr Row kRows[] = {
    {"Relu", OrtGemmActivationKind::kRelu, "", 0, 0, 0, false},
    {"LeakyRelu", OrtGemmActivationKind::kLeakyRelu, "a", 0.01f, 0, 0, false},
    {"Elu", OrtGemmActivationKind::kElu, "a", 1.0f, 0, 0, false},
    {"Selu", OrtGemmActivationKind::kSelu, "ag", 1.67326319217681884765625f, 0, 1.05070102214813232421875f, false},
    {"HardSigmoid", OrtGemmActivationKind::kHardSigmoid, "ab", 0.2f, 0.5f, 0, false},
    {"Sigmoid", OrtGemmActivationKind::kSigmoid, "", 0, 0, 0, false},
    {"Tanh", OrtGemmActivationKind::kTanh, "", 0, 0, 0, false},
    {"Softplus", OrtGemmActivationKind::kSoftplus, "", 0, 0, 0, false},
    {"Softsign", OrtGemmActivationKind::kSoftsign, "", 0, 0, 0, false},
    {"ThresholdedRelu", OrtGemmActivationKind::kThresholdedRelu, "a", 1.0f, 0, 0, false},
    {"ScaledTanh", OrtGemmActivationKind::kScaledTanh, "ab", 0, 0, 0, true},
    {"ParametricSoftplus", OrtGemmActivationKind::kParametricSoftplus, "ab", 0, 0, 0, true},
};

}  // namespace

std::string ParseOrtGemmActivation(const ir::Node& node, OrtGemmActivation* out) {
  OrtGemmActivation act;
  act.name = node.GetString("activation", "");
  if (act.name.empty()) {
    *out = act;
    return "";
  }
  const Row* row = nullptr;
  for (const Row& r : kRows) {
    if (r.name == act.name) row = &r;
  }
  if (!row) {
    std::string names;
    for (const Row& r : kRows) names += (names.empty() ? "" : ", ") + std::string(r.name);
    return node.op_type() + ": activation '" + act.name + "' is not one of ONNX Runtime's (" + names + ")";
  }
  act.kind = row->kind;
  act.alpha = row->alpha;
  act.beta = row->beta;
  act.gamma = row->gamma;
  const std::string params(row->params);
  if (row->required && (!node.has_attr("activation_alpha") || !node.has_attr("activation_beta"))) {
    return node.op_type() + ": activation " + act.name + " needs activation_alpha and activation_beta";
  }
  if (params.find('a') != std::string::npos) act.alpha = node.GetFloat("activation_alpha", act.alpha);
  if (params.find('b') != std::string::npos) act.beta = node.GetFloat("activation_beta", act.beta);
  if (params.find('g') != std::string::npos) act.gamma = node.GetFloat("activation_gamma", act.gamma);
  *out = act;
  return "";
}

OrtGemmActivation OrtGemmActivationFromNode(const ir::Node& node) {
  OrtGemmActivation act;
  if (std::string reason = ParseOrtGemmActivation(node, &act); !reason.empty()) {
    throw InvalidModelError(node.Describe() + ": " + reason);
  }
  return act;
}

}  // namespace ferry::semantics
