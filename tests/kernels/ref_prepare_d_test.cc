// The ref kernels' Prepare, group D (ScatterND ... Window functions): shape and dtype errors are raised by Prepare,
// naming the model, the node and the input; Shape and Size declare their data (OutputSpec::value); inputs that
// carry shapes as data (Slice's starts, TopK's K, Tile's repeats, Split's split) give a declared output when they
// are constants and a dynamic one when they are fed, which Compute then resolves (raising the data's errors); and a
// Session on the ref backend reports Prepare's error for a run whose shapes are wrong and stays usable.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/registry.h"
#include "testing/model_builder.h"
#include "testing/prepare_harness.h"

namespace ferry {
namespace {

using testing::Contains;
using testing::ErrorOf;
using testing::RefRegistry;

Tensor Floats(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

Tensor Int64s(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

Tensor Int64Scalar(int64_t v) { return Tensor::FromVector<int64_t>(DataType::kInt64, {}, {v}); }

// One node 'n' whose inputs are graph inputs (fed: their data unknown to Prepare) or initializers (`constant`:
// Prepare sees their data), with `outputs` outputs; its ref kernel is created, prepared and run as the executor does.
struct OneNode {
  struct In {
    std::string name;
    Tensor value;
    bool constant = false;
  };
  ir::Graph g;
  ir::Node* node = nullptr;
  std::vector<In> inputs;
  std::unique_ptr<OpKernel> kernel;

  OneNode(const std::string& op, int64_t opset, std::vector<In> ins, std::vector<ir::Attribute> attrs = {},
          int outputs = 1)
      : inputs(std::move(ins)) {
    std::vector<ir::Value*> values;
    std::vector<DataType> types;
    for (const In& in : inputs) {
      if (in.constant) {
        values.push_back(g.AddInitializer(in.name, std::make_shared<const Tensor>(in.value)));
      } else {
        ir::Value* v = g.AddValue(in.name, ir::StaticTensorType(in.value.dtype(), in.value.shape()));
        g.mutable_inputs().push_back(v);
        values.push_back(v);
      }
      types.push_back(in.value.dtype());
    }
    std::vector<ir::Value*> outs;
    for (int i = 0; i < outputs; ++i) outs.push_back(g.AddValue("y" + std::to_string(i)));
    node = g.AddNode("n", op, "", values, outs, std::move(attrs));
    node->set_opset(opset);
    const SupportResult s = RefRegistry().Query(*node, types);
    if (!s.supported()) throw std::runtime_error("ref does not run " + op + ": " + s.reason);
    kernel = s.kernel->create(*node, KernelOptions{1, false});
  }

  std::vector<InputSpec> Specs() const {
    std::vector<InputSpec> specs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      InputSpec s;
      s.kind = InputSpec::Kind::kTensor;
      s.dtype = inputs[k].value.dtype();
      s.shape = inputs[k].value.shape();
      if (inputs[k].constant) s.data = node->input(k)->initializer();
      specs.push_back(std::move(s));
    }
    return specs;
  }

  PreparedKernel Prepare() const {
    const std::vector<InputSpec> specs = Specs();
    PrepareContext ctx(*node, specs, KernelOptions{1, false}, "model 'm.onnx'");
    kernel->Prepare(ctx);
    return ctx.Finish();
  }

  // The outputs of a run on every input's data, prepared first with Specs().
  std::vector<Value> Run() const {
    const PreparedKernel prepared = Prepare();
    std::vector<Value> values;
    for (const In& in : inputs) values.emplace_back(in.value);
    std::vector<const Value*> ptrs;
    for (const Value& v : values) ptrs.push_back(&v);
    std::vector<Value> outputs(node->num_outputs());
    KernelContext ctx(*node, ptrs, outputs, 1, nullptr);
    ctx.set_prepared(&prepared);
    kernel->Compute(ctx);
    return outputs;
  }
};

// Output i is declared a tensor of this dtype and shape.
::testing::AssertionResult Declares(const PreparedKernel& p, int i, DataType dtype, const Shape& shape) {
  if (static_cast<size_t>(i) >= p.outputs.size() || !p.outputs[static_cast<size_t>(i)].is_tensor()) {
    return ::testing::AssertionFailure() << "output " << i << " is not declared";
  }
  const OutputSpec& o = p.outputs[static_cast<size_t>(i)];
  if (o.dtype != dtype || o.shape != shape) {
    return ::testing::AssertionFailure() << "output " << i << " is " << DataTypeName(o.dtype)
                                         << ShapeToString(o.shape) << ", want " << DataTypeName(dtype)
                                         << ShapeToString(shape);
  }
  return ::testing::AssertionSuccess();
}

std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
}

TEST(RefPrepareD, ShapeAndSizeDeclareTheirData) {
  OneNode shape("Shape", 15, {{"x", Floats({2, 3, 4})}}, {ir::IntAttr("start", 1)});
  const PreparedKernel ps = shape.Prepare();
  ASSERT_TRUE(Declares(ps, 0, DataType::kInt64, {2}));
  ASSERT_TRUE(ps.outputs[0].value);
  EXPECT_EQ(Ints(*ps.outputs[0].value), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Ints(shape.Run()[0].tensor()), (std::vector<int64_t>{3, 4}));

  OneNode size("Size", 13, {{"x", Floats({2, 3, 4})}});
  const PreparedKernel pz = size.Prepare();
  ASSERT_TRUE(Declares(pz, 0, DataType::kInt64, {}));
  ASSERT_TRUE(pz.outputs[0].value);
  EXPECT_EQ(pz.outputs[0].value->data<int64_t>()[0], 24);
  EXPECT_EQ(size.Run()[0].tensor().data<int64_t>()[0], 24);
}

TEST(RefPrepareD, ScatterNDUpdatesShapeIsPrepareError) {
  OneNode n("ScatterND", 16,
            {{"data", Floats({4, 4})},
             {"indices", Tensor::FromVector<int64_t>(DataType::kInt64, {2, 1}, {0, 2})},
             {"updates", Floats({2, 3})}});
  const std::string what = ErrorOf<InvalidArgumentError>([&] { n.Prepare(); });
  EXPECT_TRUE(Contains(what, "m.onnx")) << what;
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "ScatterND")) << what;
  EXPECT_TRUE(Contains(what, "'updates' float32[2,3]")) << what;
  EXPECT_TRUE(Contains(what, "float32[2,4]")) << what;  // what it must be
}

TEST(RefPrepareD, TransposePermAgainstRankIsPrepareError) {
  OneNode n("Transpose", 13, {{"data", Floats({2, 3, 4})}}, {ir::IntsAttr("perm", {1, 0})});
  const std::string what = ErrorOf<InvalidArgumentError>([&] { n.Prepare(); });
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "[1,0]")) << what;
  OneNode ok("Transpose", 13, {{"data", Floats({2, 3, 4})}}, {ir::IntsAttr("perm", {2, 0, 1})});
  EXPECT_TRUE(Declares(ok.Prepare(), 0, DataType::kFloat, {4, 2, 3}));
  const Tensor y = ok.Run()[0].tensor();
  EXPECT_EQ(y.data<float>()[1], 4.0f);  // y[0, 0, 1] = x[0, 1, 0]
}

TEST(RefPrepareD, SliceWithConstantBoundsIsDeclaredAndWithFedBoundsIsDynamic) {
  OneNode known("Slice", 13,
                {{"x", Floats({4, 6})},
                 {"starts", Int64s({1}), true},
                 {"ends", Int64s({3}), true},
                 {"axes", Int64s({1}), true}});
  EXPECT_TRUE(Declares(known.Prepare(), 0, DataType::kFloat, {4, 2}));
  OneNode fed("Slice", 13, {{"x", Floats({4, 6})}, {"starts", Int64s({1})}, {"ends", Int64s({3})},
                            {"axes", Int64s({1})}});
  EXPECT_FALSE(fed.Prepare().outputs[0].is_tensor());
  const Tensor y = fed.Run()[0].tensor();
  ASSERT_EQ(y.shape(), (Shape{4, 2}));
  EXPECT_EQ(y.data<float>()[2], 7.0f);  // y[1, 0] = x[1, 1]
  // Constant bounds that do not fit are Prepare's error; fed ones are the run's.
  OneNode bad("Slice", 13, {{"x", Floats({4, 6})}, {"starts", Int64s({1}), true}, {"ends", Int64s({3, 4}), true}});
  std::string what = ErrorOf<InvalidArgumentError>([&] { bad.Prepare(); });
  EXPECT_TRUE(Contains(what, "m.onnx")) << what;
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "same length")) << what;
  OneNode bad_fed("Slice", 13, {{"x", Floats({4, 6})}, {"starts", Int64s({1})}, {"ends", Int64s({3, 4})}});
  EXPECT_FALSE(bad_fed.Prepare().outputs[0].is_tensor());
  what = ErrorOf<InvalidArgumentError>([&] { bad_fed.Run(); });
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "same length")) << what;
}

TEST(RefPrepareD, TopKWithAConstantKIsCheckedByPrepareAndAFedKByCompute) {
  OneNode known("TopK", 11, {{"x", Floats({2, 3})}, {"k", Int64s({5}), true}}, {}, 2);
  std::string what = ErrorOf<InvalidArgumentError>([&] { known.Prepare(); });
  EXPECT_TRUE(Contains(what, "m.onnx")) << what;
  EXPECT_TRUE(Contains(what, "k=5")) << what;
  OneNode ok("TopK", 11, {{"x", Floats({2, 3})}, {"k", Int64s({2}), true}}, {}, 2);
  const PreparedKernel p = ok.Prepare();
  EXPECT_TRUE(Declares(p, 0, DataType::kFloat, {2, 2}));
  EXPECT_TRUE(Declares(p, 1, DataType::kInt64, {2, 2}));
  const std::vector<Value> out = ok.Run();
  EXPECT_EQ(out[0].tensor().data<float>()[0], 2.0f);
  EXPECT_EQ(out[1].tensor().data<int64_t>()[1], 1);
  OneNode fed("TopK", 11, {{"x", Floats({2, 3})}, {"k", Int64s({5})}}, {}, 2);
  EXPECT_FALSE(fed.Prepare().outputs[0].is_tensor());
  what = ErrorOf<InvalidArgumentError>([&] { fed.Run(); });
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "k=5")) << what;
  // K's size is a shape: Prepare's, fed or not.
  OneNode two("TopK", 11, {{"x", Floats({2, 3})}, {"k", Int64s({1, 2})}}, {}, 2);
  what = ErrorOf<InvalidArgumentError>([&] { two.Prepare(); });
  EXPECT_TRUE(Contains(what, "input 'K'")) << what;
}

TEST(RefPrepareD, TileRepeatsOfAnotherRankIsPrepareError) {
  OneNode n("Tile", 13, {{"x", Floats({2, 3})}, {"repeats", Int64s({2, 2, 2})}});
  const std::string what = ErrorOf<InvalidArgumentError>([&] { n.Prepare(); });
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "int64[3]")) << what;
  OneNode known("Tile", 13, {{"x", Floats({2, 3})}, {"repeats", Int64s({2, 1}), true}});
  EXPECT_TRUE(Declares(known.Prepare(), 0, DataType::kFloat, {4, 3}));
  OneNode negative("Tile", 13, {{"x", Floats({2, 3})}, {"repeats", Int64s({-1, 1})}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { negative.Run(); }), "negative"));
  // Opset 1 tiles along `axis`, which a scalar does not have (this used to write past the repeats).
  OneNode scalar("Tile", 1, {{"x", Floats({})}, {"tiles", Int64Scalar(2)}, {"axis", Int64Scalar(0)}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { scalar.Prepare(); }), "scalar cannot be tiled"));
}

// Unique's `axis` names a dimension: a scalar input has none (this used to read past its shape).
TEST(RefPrepareD, UniqueAlongAnAxisOfAScalarIsPrepareError) {
  OneNode n("Unique", 11, {{"x", Floats({})}}, {ir::IntAttr("axis", 0)}, 4);
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { n.Prepare(); }), "rank >= 1"));
  OneNode ok("Unique", 11, {{"x", Floats({2, 3})}}, {}, 4);
  const PreparedKernel p = ok.Prepare();
  EXPECT_FALSE(p.outputs[0].is_tensor());
  EXPECT_TRUE(Declares(p, 2, DataType::kInt64, {6}));  // one inverse index per element
  EXPECT_EQ(ok.Run()[2].tensor().data<int64_t>()[5], 5);
}

TEST(RefPrepareD, SplitDeclaresItsPieces) {
  OneNode n("Split", 13, {{"x", Floats({3, 2})}, {"split", Int64s({1, 2}), true}}, {ir::IntAttr("axis", 0)}, 2);
  const PreparedKernel p = n.Prepare();
  EXPECT_TRUE(Declares(p, 0, DataType::kFloat, {1, 2}));
  EXPECT_TRUE(Declares(p, 1, DataType::kFloat, {2, 2}));
  OneNode bad("Split", 13, {{"x", Floats({3, 2})}, {"split", Int64s({1, 1}), true}}, {ir::IntAttr("axis", 0)}, 2);
  const std::string what = ErrorOf<InvalidArgumentError>([&] { bad.Prepare(); });
  EXPECT_TRUE(Contains(what, "'n'")) << what;
  EXPECT_TRUE(Contains(what, "float32[3,2]")) << what;
  OneNode fed("Split", 13, {{"x", Floats({3, 2})}, {"split", Int64s({2, 1})}}, {ir::IntAttr("axis", 0)}, 2);
  EXPECT_FALSE(fed.Prepare().outputs[0].is_tensor());
  const std::vector<Value> out = fed.Run();
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(out[1].tensor().data<float>()[0], 4.0f);
}

TEST(RefPrepareD, OtherShapeChecksArePrepare) {
  OneNode s2d("SpaceToDepth", 13, {{"x", Floats({1, 1, 3, 4})}}, {ir::IntAttr("blocksize", 2)});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { s2d.Prepare(); }), "float32[1,1,3,4]"));
  OneNode where("Where", 16,
                {{"c", Tensor(DataType::kBool, {2, 3})}, {"x", Floats({2, 3})}, {"y", Floats({4})}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { where.Prepare(); }), "'n'"));
  OneNode swiglu("SwiGLU", 28, {{"a", Floats({2, 3})}, {"b", Floats({3, 2})}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { swiglu.Prepare(); }), "input 1 'b' float32[3,2]"));
  OneNode softmax("Softmax", 13, {{"x", Floats({2, 3})}}, {ir::IntAttr("axis", 2)});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { softmax.Prepare(); }), "axis 2"));
  OneNode window("HannWindow", 17, {{"size", Int64s({4, 4}), true}});
  EXPECT_TRUE(Contains(ErrorOf<InvalidArgumentError>([&] { window.Prepare(); }), "size must be a scalar"));
  OneNode hann("HannWindow", 17, {{"size", Int64Scalar(4), true}});
  EXPECT_TRUE(Declares(hann.Prepare(), 0, DataType::kFloat, {4}));
}

// Through a Session: X's height is known only when the run gives it; a height the blocksize does not divide is
// Prepare's error, naming the model's node, and the session then runs a valid shape.
TEST(RefPrepareD, ASessionReportsPrepareErrorAndStaysUsable) {
  constexpr int32_t kF = onnx::TensorProto::FLOAT;
  testing::ModelBuilder b;
  b.InputSym("x", kF, {1, 1, -1, 4}, "H");
  testing::ModelBuilder::IntAttr(b.Node("SpaceToDepth", {"x"}, {"y"}, "fold"), "blocksize", 2);
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.threads = 1;
  options.backends = {"ref"};
  auto session = Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
  const std::string what = ErrorOf<Error>([&] { session->Run({{"x", Floats({1, 1, 3, 4})}}); });
  EXPECT_TRUE(Contains(what, "fold")) << what;
  EXPECT_TRUE(Contains(what, "SpaceToDepth")) << what;
  EXPECT_TRUE(Contains(what, "[1,1,3,4]")) << what;
  const auto out = session->Run({{"x", Floats({1, 1, 2, 4})}});
  EXPECT_EQ(out.at(0).second.shape(), (Shape{1, 4, 1, 2}));
}

}  // namespace
}  // namespace ferry
