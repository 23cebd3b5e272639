// Operators Ferry knows (they have schemas, so models carrying them import and type-check) that no built-in
// backend implements, by decision, each with the reason. The registry's support query appends the reason to its
// kernel-layer "no kernel" verdict, so placement, `ferry check` and session errors say why; `ferry ops` shows it
// beside the op (text, JSON "refused", docs/ops.md) and `ferry check` makes it the node's remedy. Today: ONNX
// Runtime's whole decoding loops (BeamSearch, GreedySearch, Sampling, WhisperBeamSearch), its example op
// SampleOp, and the com.microsoft ops its CPU execution provider does not register (PackedAttention,
// PackedMultiHeadAttention, DecoderMaskedSelfAttention: CUDA-only there).
// tests/kernels/ort_contrib_misc_test.cc checks that no built-in backend registers a kernel for any of them.
#pragma once

#include <span>
#include <string_view>

namespace ferry {

struct RefusedOp {
  std::string_view domain;  // canonical ("" = ai.onnx)
  std::string_view op;
  std::string_view reason;  // a sentence: why no backend implements it, and what to do instead
};

// The whole table, sorted by domain then op.
std::span<const RefusedOp> RefusedOps();
// The reason `op` of `domain` (any spelling of the default domain) is refused, or "" when it is not in the table.
std::string_view RefusedOpReason(std::string_view domain, std::string_view op);

}  // namespace ferry
