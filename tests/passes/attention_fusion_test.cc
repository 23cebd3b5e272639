// fuse_attention: Softmax([scale *] MatMul(Q, Kᵀ) [+ mask]) -> MatMul(·, V) => ai.ferry::Attention, for each place
// the scale sits (Q, K before or after its Transpose, the scores, none; Mul or Div), each form of Kᵀ (a Transpose
// swapping the last two axes, a value given as [.., Dh, Sk], the PyTorch seq-first Transpose perm [1, 2, 0]),
// masks of several broadcast shapes, a constant [Sk] mask that fuse_matmul already folded into a FusedMatMul,
// symbolic batch dims; numerics level 2 vs 0 on ref and cpu,ref; idempotence; and what is left alone.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/dump.h"
#include "pass_test_util.h"
#include "passes/pass_list.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

enum class ScaleAt { kNone, kQ, kKBeforeTranspose, kKAfterTranspose, kScores };
enum class KForm { kSwap, kGivenTransposed, kTorchSeqFirst };

struct Spec {
  ScaleAt scale_at = ScaleAt::kQ;
  bool div = true;  // Div by c (else Mul by 1 / c)
  KForm k_form = KForm::kSwap;
  std::vector<int64_t> mask = {-1};  // the mask input's dims; {-1}: no mask
  int64_t opset = 17;
  int64_t axis = -1;  // Softmax's axis; -100: no attribute
  int64_t sq = 5;
  bool symbolic_batch = false;
};

constexpr int64_t kB = 2, kH = 3, kSk = 6, kDh = 4, kDv = 7;

// The attention core of `s` over inputs q, k (or kt), v [and mask]; output "y". c = 2 (scale 0.5).
std::string Model(const Spec& s) {
  Net net(s.opset);
  auto in = [&](const std::string& name, std::vector<int64_t> dims) {
    if (s.symbolic_batch && !dims.empty() && name != "mask") dims[0] = -1;
    net.b.InputSym(name, kF, dims, "N");
    auto* type = net.b.graph().mutable_input(net.b.graph().input_size() - 1)->mutable_type();
    type->mutable_tensor_type()->mutable_shape();  // rank 0 when dims is empty (not an unknown rank)
  };
  const bool torch = s.k_form == KForm::kTorchSeqFirst;
  std::string q = "q", k = "k", v = "v";
  if (torch) {  // [S, B*H, Dh] tensors, transposed to [B*H, S, Dh] (Q, V) and [B*H, Dh, S] (K)
    in("q", {s.sq, kB * kH, kDh});
    in("k", {kSk, kB * kH, kDh});
    in("v", {kSk, kB * kH, kDv});
    pass_test::IntsAttr(net.Node("Transpose", {"q"}, &q), "perm", {1, 0, 2});
    pass_test::IntsAttr(net.Node("Transpose", {"v"}, &v), "perm", {1, 0, 2});
  } else {
    in("q", {kB, kH, s.sq, kDh});
    in("k", s.k_form == KForm::kGivenTransposed ? std::vector<int64_t>{kB, kH, kDh, kSk}
                                               : std::vector<int64_t>{kB, kH, kSk, kDh});
    in("v", {kB, kH, kSk, kDv});
  }
  const std::string c = net.Constant("c", s.div ? 2.0f : 0.5f);
  const char* scale_op = s.div ? "Div" : "Mul";
  if (s.scale_at == ScaleAt::kQ) q = net.Op(scale_op, {q, c});
  if (s.scale_at == ScaleAt::kKBeforeTranspose) k = net.Op(scale_op, {k, c});
  std::string kt = k;
  if (torch) {
    pass_test::IntsAttr(net.Node("Transpose", {k}, &kt), "perm", {1, 2, 0});
  } else if (s.k_form == KForm::kSwap) {
    pass_test::IntsAttr(net.Node("Transpose", {k}, &kt), "perm", {0, 1, 3, 2});
  }
  if (s.scale_at == ScaleAt::kKAfterTranspose) kt = net.Op(scale_op, {kt, c});
  std::string scores = net.Op("MatMul", {q, kt});
  if (s.scale_at == ScaleAt::kScores) scores = net.Op(scale_op, {scores, c});
  if (s.mask != std::vector<int64_t>{-1}) {
    in("mask", s.mask);
    scores = net.Op("Add", {scores, "mask"});
  }
  std::string p;
  auto& sm = net.Node("Softmax", {scores}, &p);
  if (s.axis != -100) testing::ModelBuilder::IntAttr(sm, "axis", s.axis);
  net.b.Node("MatMul", {p, v}, {"y"}, "MatMul_out");
  net.b.Output("y", kF, {});
  return net.b.Bytes();
}

const ir::Node* TheAttention(const ir::Model& m) {
  const auto a = NodesOf(m, "Attention");
  return a.size() == 1 ? a[0] : nullptr;
}

void ExpectSameOnRefAndCpu(const std::string& bytes) {
  pass_test::ExpectSameOutputs(bytes, 2, {"ref"});
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"});
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-4, 1e-4, 2);
}

TEST(FuseAttention, ScaledQueryTransposedKeyAndMask) {
  const auto m = Optimized(Model({.mask = {kB, 1, 5, kSk}}), 2);
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (q: float32[2,3,5,4], k: float32[2,3,6,4], v: float32[2,3,6,7], mask: float32[2,1,5,6]) -> "
            "(y: float32[2,3,5,7]) {\n"
            "  %c = initializer float32[]\n"
            "  %y = ai.ferry::Attention(%q, %k, %v, %mask) {scale=0.5, k_transposed=0}   # MatMul_3, opset 1\n"
            "}\n");
  ExpectSameOnRefAndCpu(Model({.mask = {kB, 1, 5, kSk}}));
}

TEST(FuseAttention, EveryScalePositionAndKeyForm) {
  for (ScaleAt at : {ScaleAt::kNone, ScaleAt::kQ, ScaleAt::kKBeforeTranspose, ScaleAt::kKAfterTranspose,
                     ScaleAt::kScores}) {
    for (KForm form : {KForm::kSwap, KForm::kGivenTransposed, KForm::kTorchSeqFirst}) {
      for (bool div : {true, false}) {
        for (bool mask : {false, true}) {
          if (at == ScaleAt::kKBeforeTranspose && form == KForm::kGivenTransposed) continue;  // no Transpose
          const bool torch = form == KForm::kTorchSeqFirst;
          const Spec spec{.scale_at = at,
                          .div = div,
                          .k_form = form,
                          .mask = mask ? (torch ? std::vector<int64_t>{5, kSk} : std::vector<int64_t>{kB, 1, 5, kSk})
                                       : std::vector<int64_t>{-1}};
          SCOPED_TRACE(::testing::Message() << "scale at " << static_cast<int>(at) << ", k form "
                                          << static_cast<int>(form) << ", div " << div << ", mask " << mask);
          const std::string bytes = Model(spec);
          const auto m = Optimized(bytes, 2);
          const ir::Node* a = TheAttention(*m);
          ASSERT_NE(a, nullptr) << ir::DumpGraph(*m->graph);
          // A scale under the torch Transpose (not a swap) stays a node of its own.
          const bool stays = at == ScaleAt::kKBeforeTranspose && torch;
          EXPECT_FLOAT_EQ(a->GetFloat("scale", 0), at == ScaleAt::kNone || stays ? 1.0f : 0.5f);
          const bool swapped = form == KForm::kSwap;
          EXPECT_EQ(a->GetInt("k_transposed", -1), swapped ? 0 : 1);
          EXPECT_EQ(a->input(0)->name(), torch ? "Transpose1" : "q");
          // K: the input itself once its swap is absorbed; else Kᵀ as the graph has it (the torch Transpose stays).
          if (swapped || form == KForm::kGivenTransposed) {
            EXPECT_EQ(a->input(1)->name(), "k");
          }
          EXPECT_EQ(a->num_inputs(), mask ? 4u : 3u);
          EXPECT_TRUE(NodesOf(*m, "Softmax").empty());
          EXPECT_TRUE(NodesOf(*m, "MatMul").empty());
          EXPECT_EQ(NodesOf(*m, "Div").size(), stays && div ? 1u : 0u);
          EXPECT_EQ(NodesOf(*m, "Mul").size(), stays && !div ? 1u : 0u);
          EXPECT_EQ(NodesOf(*m, "Transpose").size(), torch ? 3u : 0u);
          ExpectSameOnRefAndCpu(bytes);
        }
      }
    }
  }
}

TEST(FuseAttention, MaskBroadcastShapes) {
  const std::vector<std::vector<int64_t>> masks = {{}, {1}, {kSk}, {5, kSk}, {5, 1}, {1, kSk},
                                                   {kH, 5, kSk}, {1, 1, 1, kSk}, {kB, kH, 5, kSk}, {kB, 1, 1, 1}};
  for (const auto& mask : masks) {
    SCOPED_TRACE(::testing::PrintToString(mask));
    const std::string bytes = Model({.mask = mask});
    const auto m = Optimized(bytes, 2);
    const ir::Node* a = TheAttention(*m);
    ASSERT_NE(a, nullptr) << ir::DumpGraph(*m->graph);
    ASSERT_EQ(a->num_inputs(), 4u);
    EXPECT_EQ(a->input(3)->name(), "mask");
    ExpectSameOnRefAndCpu(bytes);
  }
}

TEST(FuseAttention, MaskGrowingTheScoresIsLeftAlone) {
  // One query row, a mask with five: the Add broadcasts the scores to five rows, which Attention does not do.
  const auto m = Optimized(Model({.mask = {1, 1, 5, kSk}, .sq = 1}), 2);
  EXPECT_EQ(TheAttention(*m), nullptr);
  EXPECT_EQ(NodesOf(*m, "Softmax").size(), 1u);
}

TEST(FuseAttention, SymbolicBatch) {
  const std::string bytes = Model({.mask = {1, 1, 5, kSk}, .symbolic_batch = true});
  const auto m = Optimized(bytes, 2);
  ASSERT_NE(TheAttention(*m), nullptr) << ir::DumpGraph(*m->graph);
  EXPECT_EQ(m->graph->outputs()[0]->type().ToString(), "float32[N,3,5,7]");
  ExpectSameOnRefAndCpu(bytes);
}

TEST(FuseAttention, ConstantMaskFoldedIntoFusedMatMul) {
  // MatMul + a constant [Sk] mask is a linear layer's bias to fuse_matmul (run first): FusedMatMul(q, kt, mask).
  Net net;
  net.b.Input("q", kF, {kB, kH, 5, kDh});
  net.b.Input("kt", kF, {kB, kH, kDh, kSk});
  net.b.Input("v", kF, {kB, kH, kSk, kDv});
  net.b.FloatInitializer("mask", {kSk}, {0, -1, 0, -1e9f, 0, 2});
  const std::string p = net.Op("Softmax", {net.Op("Add", {net.Op("MatMul", {"q", "kt"}), "mask"})});
  net.b.Node("MatMul", {p, "v"}, {"y"}, "MatMul_out");
  net.b.Output("y", kF, {});
  const std::string bytes = net.b.Bytes();
  const auto m = Optimized(bytes, 2);
  EXPECT_EQ(OpList(*m), "ai.ferry::Attention");
  const ir::Node* a = TheAttention(*m);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->num_inputs(), 4u);
  EXPECT_EQ(a->GetInt("k_transposed", -1), 1);
  ASSERT_NE(a->input(3)->initializer(), nullptr);
  EXPECT_EQ(a->input(3)->initializer()->shape(), (Shape{kSk}));
  ExpectSameOnRefAndCpu(bytes);
}

TEST(FuseAttention, SoftmaxAxisBelowOpset13) {
  // Softmax-11 on the last axis is the row softmax; its default axis 1 coerces [B, H*Sq*Sk] rows: not fused.
  const std::string last = Model({.mask = {5, kSk}, .opset = 11, .axis = 3});
  const auto m = Optimized(last, 2);
  ASSERT_NE(TheAttention(*m), nullptr) << ir::DumpGraph(*m->graph);
  ExpectSameOnRefAndCpu(last);
  EXPECT_NE(TheAttention(*Optimized(Model({.opset = 11, .axis = -1}), 2)), nullptr);
  EXPECT_EQ(TheAttention(*Optimized(Model({.opset = 11, .axis = -100}), 2)), nullptr);
  EXPECT_EQ(TheAttention(*Optimized(Model({.opset = 11, .axis = 2}), 2)), nullptr);
}

TEST(FuseAttention, SoftmaxOnAnotherAxisIsLeftAlone) {
  for (int64_t axis : {2, 1, -2}) {
    const auto m = Optimized(Model({.axis = axis}), 2);
    EXPECT_EQ(TheAttention(*m), nullptr) << axis;
    EXPECT_EQ(NodesOf(*m, "MatMul").size() + NodesOf(*m, "FusedMatMul").size(), 2u);
  }
  EXPECT_NE(TheAttention(*Optimized(Model({.axis = 3}), 2)), nullptr);
  EXPECT_NE(TheAttention(*Optimized(Model({.axis = -100}), 2)), nullptr);  // opset 17's default: -1
}

// The Spec model with one more node reading `value` (a Relu to a second output "z").
std::string WithSecondReader(const std::string& value) {
  std::string bytes = Model({.mask = {5, kSk}});
  onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  auto* n = proto.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->set_name("second_reader");
  n->add_input(value);
  n->add_output("z");
  proto.mutable_graph()->add_output()->set_name("z");
  return proto.SerializeAsString();
}

TEST(FuseAttention, IntermediateWithASecondReaderIsLeftAlone) {
  // The scores (MatMul3, Add4) or the probabilities (Softmax5) read twice.
  for (const char* value : {"MatMul3", "Add4", "Softmax5"}) {
    const std::string bytes = WithSecondReader(value);
    const auto m = Optimized(bytes, 2);
    EXPECT_EQ(TheAttention(*m), nullptr) << value << "\n" << ir::DumpGraph(*m->graph);
    pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"});
  }
  // A scaled Q read elsewhere: the Div stays, Attention reads its output with scale 1.
  {
    const std::string bytes = WithSecondReader("Div1");
    const auto m = Optimized(bytes, 2);
    const ir::Node* a = TheAttention(*m);
    ASSERT_NE(a, nullptr) << ir::DumpGraph(*m->graph);
    EXPECT_EQ(a->input(0)->name(), "Div1");
    EXPECT_FLOAT_EQ(a->GetFloat("scale", 0), 1.0f);
    EXPECT_EQ(NodesOf(*m, "Div").size(), 1u);
    ExpectSameOnRefAndCpu(bytes);
  }
  // A Transpose of K read elsewhere stays, and Attention reads its output as Kᵀ.
  const auto m = Optimized(WithSecondReader("Transpose2"), 2);
  const ir::Node* a = TheAttention(*m);
  ASSERT_NE(a, nullptr) << ir::DumpGraph(*m->graph);
  EXPECT_EQ(a->GetInt("k_transposed", -1), 1);
  EXPECT_EQ(a->input(1)->name(), "Transpose2");
  EXPECT_EQ(NodesOf(*m, "Transpose").size(), 1u);
}

TEST(FuseAttention, ScoresAsGraphOutputAreLeftAlone) {
  std::string bytes = Model({});
  onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  proto.mutable_graph()->add_output()->set_name("Softmax4");
  const auto m = Optimized(proto.SerializeAsString(), 2);
  EXPECT_EQ(TheAttention(*m), nullptr);
}

TEST(FuseAttention, NonConstantOrZeroScaleIsLeftAlone) {
  Net net;
  net.b.Input("q", kF, {kB, kH, 5, kDh});
  net.b.Input("kt", kF, {kB, kH, kDh, kSk});
  net.b.Input("v", kF, {kB, kH, kSk, kDv});
  net.b.Input("c", kF, {1});
  const std::string p = net.Op("Softmax", {net.Op("MatMul", {net.Op("Div", {"q", "c"}), "kt"})});
  net.b.Node("MatMul", {p, "v"}, {"y"}, "MatMul_out");
  net.b.Output("y", kF, {});
  // Without the Div, the rest is an attention core of its own (Q = Div's output): fused with scale 1.
  const auto m = Optimized(net.b.Bytes(), 2);
  ASSERT_NE(TheAttention(*m), nullptr);
  EXPECT_EQ(TheAttention(*m)->input(0)->name(), "Div1");
  EXPECT_FLOAT_EQ(TheAttention(*m)->GetFloat("scale", 0), 1.0f);

  Net zero;
  zero.b.Input("q", kF, {kB, kH, 5, kDh});
  zero.b.Input("kt", kF, {kB, kH, kDh, kSk});
  zero.b.Input("v", kF, {kB, kH, kSk, kDv});
  zero.Constant("c", 0.0f);
  const std::string p0 = zero.Op("Softmax", {zero.Op("MatMul", {zero.Op("Div", {"q", "c"}), "kt"})});
  zero.b.Node("MatMul", {p0, "v"}, {"y"}, "MatMul_out");
  zero.b.Output("y", kF, {});
  const auto z = Optimized(zero.b.Bytes(), 2);
  ASSERT_NE(TheAttention(*z), nullptr);
  EXPECT_EQ(TheAttention(*z)->input(0)->name(), "Div1");  // Q / 0 is not a scale: Div stays
}

TEST(FuseAttention, FrozenNodesPortableModeAndLevelOne) {
  const std::string bytes = Model({.mask = {5, kSk}});
  for (const char* frozen : {"Softmax", "MatMul", "Add", "Div", "Transpose", "MatMul_out"}) {
    const auto m = Optimized(bytes, 2, {"cpu", "ref"}, {frozen});
    EXPECT_EQ(TheAttention(*m), nullptr) << frozen;
  }
  EXPECT_EQ(TheAttention(*Optimized(bytes, 2, {})), nullptr);  // portable: no ai.ferry ops
  EXPECT_EQ(TheAttention(*Optimized(bytes, 1)), nullptr);
  EXPECT_NE(TheAttention(*Optimized(bytes, 2, {"ref"})), nullptr);
  EXPECT_NE(TheAttention(*Optimized(bytes, 3)), nullptr);
}

TEST(FuseAttention, OnlyWhereTheFusedNodeRuns) {
  // Without AVX2 the cpu backend has no Attention kernel: the MatMuls stay on cpu, unfused.
  const std::string bytes = Model({.mask = {5, kSk}});
  auto model = pass_test::Import(bytes);
  auto ctx = pass_test::Context(2, {"cpu", "ref"});
  ctx.target.isa = IsaSet::Parse("none");
  passes::OptimizeModel(*model, ctx);
  EXPECT_EQ(TheAttention(*model), nullptr) << ir::DumpGraph(*model->graph);
}

TEST(FuseAttention, Idempotent) {
  auto model = pass_test::Import(Model({.scale_at = ScaleAt::kKBeforeTranspose, .mask = {kB, 1, 5, kSk}}));
  const auto ctx = pass_test::Context(2, {"cpu", "ref"});
  const auto pass = passes::MakeFuseAttention();
  EXPECT_EQ(pass->name(), "fuse_attention");
  EXPECT_EQ(pass->level(), 2);
  EXPECT_TRUE(pass->Apply(*model, ctx));
  passes::VerifyGraph(*model->graph, "fuse_attention");
  const std::string once = ir::DumpGraph(*model->graph);
  EXPECT_FALSE(pass->Apply(*model, ctx));
  EXPECT_EQ(ir::DumpGraph(*model->graph), once);
  // The Mul on K, its Transpose, the product, the Add, the Softmax and the second product are gone, and so are the
  // values between them.
  EXPECT_EQ(model->graph->nodes().size(), 1u);
  for (const char* v : {"Mul1", "Transpose2", "MatMul3", "Add4", "Softmax5"}) {
    EXPECT_EQ(model->graph->FindValue(v), nullptr) << v;
  }
}

}  // namespace
}  // namespace ferry
