// Einsum's equation and its resolution against the input shapes, shared by the ref and cpu kernels: the equation
// in numpy's notation, explicit ("ij,jk->ik") or implicit (the labels that occur once, sorted, after the broadcast
// ellipsis dims), "..." broadcasting, repeated labels within a term (diagonals: their strides add up), summation over
// every label absent from the output.
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref::einsum {

// A term: its labels in order; kEllipsis stands for the "..." position.
inline constexpr int kEllipsis = -1;
inline constexpr int kLetters = 52;  // a-z -> 0..25, A-Z -> 26..51; ellipsis dims get labels kLetters + j

struct Term {
  std::vector<int> labels;
  bool has_ellipsis = false;
};

struct Equation {
  std::vector<Term> inputs;
  Term output;  // the implicit output when the equation has no "->"
};

// Parses the node's `equation` attribute; throws InvalidModelError naming the node on a malformed equation.
Equation ParseEquation(const ir::Node& node);

// The loop nest of one input signature: the output labels first (nout of them, in output order), then the summed
// labels. strides[k][i] is input k's element stride along loop label i (repeated labels add; 0 where input k lacks
// the label or broadcasts it with a dim of 1).
struct Plan {
  size_t nout = 0;
  size_t nloop = 0;
  std::vector<int64_t> loop_size;
  std::vector<std::vector<int64_t>> strides;
  DataType dtype = DataType::kUndefined;
  Shape out_shape;
};

// Checks the inputs against the equation (count, one dtype, ranks, label sizes) and builds the plan; throws
// InvalidArgumentError naming the node, the input and the dims that disagree.
Plan Resolve(const Equation& eq, const PrepareContext& ctx);

}  // namespace ferry::ref::einsum
