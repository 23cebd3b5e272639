// The ref kernel of ai.ferry SkipLayerNormalization (schemas_ferry.cc) against its definition run as standard ONNX
// ops on ref: SkipLayerNormalization(X, Skip, gamma, beta) == LayerNormalization(Add(X, Skip), gamma, beta) and
// Sum == Add(X, Skip), bit for bit (both compute the sum and the statistics in float, in the same order), for
// random ranks, axes, Skip broadcasting over X's leading dims, beta absent and the Sum output requested or not.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "ir/tensor_proto.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::Float;
using testing::Int;
using testing::RandomTensor;

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

using Named = std::vector<std::pair<std::string, Tensor>>;

// x and skip are graph inputs, gamma and beta initializers; `fused`: one SkipLayerNormalization writing y (and
// sum), else Add then LayerNormalization (opset 17).
std::unique_ptr<Session> RefSession(bool fused, const Named& inputs, const Named& params, int64_t axis, bool sum) {
  onnx::ModelProto m;
  m.set_ir_version(10);
  for (auto [domain, version] : {std::pair<const char*, int>{"", 17}, {"ai.ferry", 1}}) {
    auto* imp = m.add_opset_import();
    imp->set_domain(domain);
    imp->set_version(version);
  }
  auto* g = m.mutable_graph();
  g->set_name("skip_layer_norm");
  for (const auto& [name, t] : inputs) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(t.dtype()));
    for (int64_t d : t.shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  std::vector<std::string> param_names;
  for (const auto& [name, t] : params) {
    ir::TensorToProto(t, name, g->add_initializer());
    param_names.push_back(name);
  }
  auto* n = g->add_node();
  if (fused) {
    n->set_op_type("SkipLayerNormalization");
    n->set_domain("ai.ferry");
    n->add_input("x");
    n->add_input("skip");
  } else {
    auto* add = n;
    add->set_op_type("Add");
    add->add_input("x");
    add->add_input("skip");
    add->add_output("sum");
    n = g->add_node();
    n->set_op_type("LayerNormalization");
    n->add_input("sum");
  }
  for (const auto& p : param_names) n->add_input(p);
  n->add_output("y");
  if (fused && sum) n->add_output("sum");
  *n->add_attribute() = Int("axis", axis);
  *n->add_attribute() = Float("epsilon", 1e-3f);
  g->add_output()->set_name("y");
  if (sum) g->add_output()->set_name("sum");
  const std::string bytes = m.SerializeAsString();
  SessionOptions o;
  o.backends = {"ref"};
  o.optimization_level = 0;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

TEST(RefSkipLayerNorm, EqualsAddThenLayerNormalization) {
  std::mt19937 rng(31);
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 40 : 7));
    const int64_t axis = Pick(rng, 0, rank - 1);
    Shape skip(xs.begin() + Pick(rng, 0, rank - 1), xs.end());  // X's trailing dims (or all of them)
    if (Pick(rng, 0, 1)) skip[0] = 1;                            // ... led by a 1
    const Shape norm(xs.begin() + axis, xs.end());
    const Named inputs{{"x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, i % 4 == 0)},
                       {"skip", RandomTensor(DataType::kFloat, skip, rng, -3, 3)}};
    Named params{{"gamma", RandomTensor(DataType::kFloat, norm, rng, -2, 2)}};
    if (Pick(rng, 0, 2) > 0) params.emplace_back("beta", RandomTensor(DataType::kFloat, norm, rng));
    const bool sum = Pick(rng, 0, 1) == 1;
    const int64_t a = Pick(rng, 0, 1) ? axis : axis - rank;
    const auto want = RefSession(false, inputs, params, a, sum)->Run(inputs);
    const auto got = RefSession(true, inputs, params, a, sum)->Run(inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_TRUE(testing::SameBits(got[k].second, want[k].second))
          << "case " << i << " x" << ShapeToString(xs) << " skip" << ShapeToString(skip) << " axis " << a
          << " output " << got[k].first;
    }
  }
}

}  // namespace
}  // namespace ferry
