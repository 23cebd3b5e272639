// The fused activation of FusedConv / BlockedConv / FusedMatMul: parsing and the reference loops (fused_activation.h).
#include "kernels/ref/fused_activation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ferry/error.h"
#include "kernels/ref/gelu.h"

namespace ferry::ref {
namespace {

using Kind = FusedActivation::Kind;

struct ActivationInfo {
  Kind kind;
  std::string_view name;
  size_t params;           // how many activation_params it takes (0 or this many are accepted)
  float alpha, beta;       // the defaults when activation_params is empty
};

constexpr float kInf = std::numeric_limits<float>::infinity();

constexpr ActivationInfo kActivations[] = {
    {Kind::kNone, "", 0, 0, 0},
    {Kind::kRelu, "Relu", 0, 0, 0},
    {Kind::kLeakyRelu, "LeakyRelu", 1, 0.01f, 0},
    {Kind::kClip, "Clip", 2, -kInf, kInf},
    {Kind::kSigmoid, "Sigmoid", 0, 0, 0},
    {Kind::kTanh, "Tanh", 0, 0, 0},
    {Kind::kHardSigmoid, "HardSigmoid", 2, 0.2f, 0.5f},
    {Kind::kHardSwish, "HardSwish", 0, 0, 0},
    {Kind::kSilu, "Silu", 0, 0, 0},
    {Kind::kGelu, "Gelu", 0, 0, 0},
    {Kind::kGeluTanh, "GeluTanh", 0, 0, 0},
};

// The same formula as the ref Sigmoid kernel (unary_math.cc): exp never overflows.
inline float Sigmoid(float x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

// min(1, max(0, v)) with NaN kept (std::min/max would turn it into a bound).
inline float Clamp01(float v) { return std::isnan(v) ? v : std::min(1.0f, std::max(0.0f, v)); }

template <typename F>
void Map(float* y, int64_t n, int threads, F f) {
  ParallelFor(n < (1 << 16) ? 1 : threads, n, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(y[i]);
  });
}

}  // namespace

FusedActivation FusedActivation::FromNode(const ir::Node& node) {
  const std::string name = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params", {});
  const ActivationInfo* info = nullptr;
  for (const ActivationInfo& a : kActivations) {
    if (a.name == name) info = &a;
  }
  if (!info) {
    throw InvalidModelError(node.Describe() + ": unknown activation '" + name +
                            "' (expected \"\", Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Silu, "
                            "Gelu or GeluTanh)");
  }
  if (!params.empty() && params.size() != info->params) {
    throw InvalidModelError(node.Describe() + ": activation '" + name + "' takes " + std::to_string(info->params) +
                            " activation_params (or none for the defaults), got " + std::to_string(params.size()));
  }
  FusedActivation act;
  act.kind = info->kind;
  act.alpha = params.empty() ? info->alpha : params[0];
  act.beta = params.size() < 2 ? info->beta : params[1];
  return act;
}

std::string_view FusedActivation::Name(Kind kind) {
  for (const ActivationInfo& a : kActivations) {
    if (a.kind == kind) return a.name;
  }
  return "?";
}

void FusedActivation::Apply(float* y, int64_t n, int threads) const {
  const float a = alpha, b = beta;
  switch (kind) {
    case Kind::kNone: return;
    case Kind::kRelu: return Map(y, n, threads, [](float x) { return x > 0 || x != x ? x : 0.0f; });
    case Kind::kLeakyRelu: return Map(y, n, threads, [a](float x) { return x < 0 ? x * a : x; });
    case Kind::kClip:
      return Map(y, n, threads, [a, b](float x) { return x != x ? x : std::min(std::max(x, a), b); });
    case Kind::kSigmoid: return Map(y, n, threads, [](float x) { return Sigmoid(x); });
    case Kind::kTanh: return Map(y, n, threads, [](float x) { return std::tanh(x); });
    case Kind::kHardSigmoid: return Map(y, n, threads, [a, b](float x) { return Clamp01(a * x + b); });
    case Kind::kHardSwish: return Map(y, n, threads, [](float x) { return x * Clamp01(x / 6 + 0.5f); });
    case Kind::kSilu: return Map(y, n, threads, [](float x) { return x * Sigmoid(x); });
    case Kind::kGelu: return Map(y, n, threads, [](float x) { return GeluErf(x); });
    case Kind::kGeluTanh: return Map(y, n, threads, [](float x) { return GeluTanh(x); });
  }
}

}  // namespace ferry::ref
