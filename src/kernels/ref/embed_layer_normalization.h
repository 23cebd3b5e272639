// ONNX Runtime's com.microsoft EmbedLayerNormalization (schemas_com_microsoft_transformer.cc): the input checks,
// the outputs and the index checks both backends share (embed_layer_normalization.cc in ref and cpu), so that they
// accept exactly the same inputs and name the same input in their errors.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/tensor.h"

namespace ferry {
class PrepareContext;
class KernelContext;
}  // namespace ferry

namespace ferry::ref {

// Inputs: input_ids 0, segment_ids 1, word_embedding 2, position_embedding 3, segment_embedding 4, gamma 5, beta 6,
// mask 7, position_ids 8. Outputs: output 0, mask_index 1, embedding_sum 2.
struct EmbedLayerNormShape {
  int64_t batch = 0, seq = 0, hidden = 0;
  int64_t words = 0, positions = 0, segments = 0;  // rows of the embeddings (segments 0: no segment_embedding)
  bool segment_ids = false;                        // segment_ids given (else segment 0 when segments > 0)
  int64_t position_rows = 0;                       // rows of position_ids: 0 (absent: position s), 1 or batch
  bool mask = false;
};

// Checks the inputs (input_ids, segment_ids, mask and position_ids int32 of [batch, seq], position_ids' first dim
// 1 or batch; the embeddings 2-D of one hidden size H and of X's element type, float; gamma and beta [H];
// segment_ids only with segment_embedding), keeps the shape as the state and declares the requested outputs:
// output and embedding_sum [batch, seq, H] of the embeddings' type, mask_index int32 [batch]. Throws
// InvalidArgumentError naming the input.
void PrepareEmbedLayerNorm(PrepareContext& ctx);

// Checks every index the run reads (word, segment, position: in [0, rows)) before any is used; throws
// InvalidArgumentError naming the input, the element and the range.
void CheckEmbedIndices(const KernelContext& ctx, const EmbedLayerNormShape& s);

// Output mask_index (when requested): per batch row the count of mask elements equal to 1, zeros without mask.
void WriteMaskIndex(KernelContext& ctx, const EmbedLayerNormShape& s);

}  // namespace ferry::ref
