#include "kernels/refused_ops.h"

#include <array>

#include "schemas/schema.h"

namespace ferry {

namespace {

constexpr std::string_view kDecodingLoop =
    "a whole ONNX Runtime decoding loop (the decoder subgraph run step by step with beam / greedy / sampling "
    "search and its KV-cache handling inside one node) is not implemented by any Ferry backend; export the "
    "decoder without the loop (e.g. the Optimum or GenAI decoder model) and run the search in the application";
constexpr std::string_view kCudaOnly =
    "ONNX Runtime implements this op only in its CUDA execution provider (its CPU provider has no kernel), and "
    "no Ferry backend implements it; export the model with the unpacked / non-fused attention ops";

constexpr std::array<RefusedOp, 8> kRefused = {{
    {"com.microsoft", "BeamSearch", kDecodingLoop},
    {"com.microsoft", "DecoderMaskedSelfAttention", kCudaOnly},
    {"com.microsoft", "GreedySearch", kDecodingLoop},
    {"com.microsoft", "PackedAttention", kCudaOnly},
    {"com.microsoft", "PackedMultiHeadAttention", kCudaOnly},
    {"com.microsoft", "SampleOp",
     "ONNX Runtime's example op for its contributor documentation (not written by any of its tools) is not "
     "implemented by any Ferry backend"},
    {"com.microsoft", "Sampling", kDecodingLoop},
    {"com.microsoft", "WhisperBeamSearch", kDecodingLoop},
}};

}  // namespace

std::span<const RefusedOp> RefusedOps() { return kRefused; }

std::string_view RefusedOpReason(std::string_view domain, std::string_view op) {
  const std::string_view d = schemas::CanonicalDomain(domain);
  for (const RefusedOp& r : kRefused) {
    if (r.domain == d && r.op == op) return r.reason;
  }
  return {};
}

}  // namespace ferry
