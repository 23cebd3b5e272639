// The registry judges kernels against the target hardware: a kernel needing an ISA extension or a compute
// capability the target lacks is a hardware-layer failure, and a lesser kernel is chosen when one exists.
#include <gtest/gtest.h>

#include "core/isa.h"
#include "ferry/error.h"
#include "kernels/registry.h"

namespace ferry {
namespace {

class NoopKernel : public OpKernel {
 public:
  explicit NoopKernel(const ir::Node&) {}
  void Compute(KernelContext&) const override {}
};

struct Fixture {
  ir::Graph g;
  ir::Node* relu;
  Fixture() {
    relu = g.AddNode("r", "Relu", "", {g.AddValue("x")}, {g.AddValue("y")});
    relu->set_opset(14);
  }
};

TEST(Isa, ParseAndPrint) {
  IsaSet s = IsaSet::Parse("fma, avx2");
  EXPECT_TRUE(s.has(Isa::kAvx2));
  EXPECT_TRUE(s.has(Isa::kFma));
  EXPECT_FALSE(s.has(Isa::kAvx512f));
  EXPECT_EQ(s.ToString(), "avx2,fma");
  EXPECT_TRUE(IsaSet::Parse("none").empty());
  EXPECT_EQ(IsaSet().ToString(), "none");
  EXPECT_THROW(IsaSet::Parse("avx9000"), InvalidArgumentError);
  EXPECT_TRUE(IsaSet::All().contains(DetectHostIsa()));
}

TEST(RegistryTarget, MissingIsaIsAHardwareFailure) {
  Fixture f;
  KernelRegistry r("test");
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .isa = {Isa::kAvx512f}});
  Target avx2;
  avx2.isa = IsaSet{Isa::kAvx, Isa::kAvx2, Isa::kFma};
  auto res = r.Query(*f.relu, {DataType::kFloat}, avx2);
  EXPECT_FALSE(res.supported());
  EXPECT_EQ(res.layer, FailureLayer::kHardware);
  EXPECT_NE(res.reason.find("avx512f"), std::string::npos) << res.reason;
  Target full;
  full.isa = IsaSet::All();
  EXPECT_TRUE(r.Query(*f.relu, {DataType::kFloat}, full).supported());
}

TEST(RegistryTarget, FallsBackToALesserKernel) {
  Fixture f;
  KernelRegistry r("test");
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .isa = {Isa::kAvx512f}, .name = "test.Relu.avx512"});
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .name = "test.Relu.scalar"});
  Target none;
  none.isa = IsaSet();
  auto res = r.Query(*f.relu, {DataType::kFloat}, none);
  ASSERT_TRUE(res.supported());
  EXPECT_EQ(res.kernel->name, "test.Relu.scalar");
}

TEST(RegistryTarget, ComputeCapability) {
  Fixture f;
  KernelRegistry r("gpu");
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .min_compute_capability = 80});
  Target turing;
  turing.compute_capability = 75;
  auto res = r.Query(*f.relu, {DataType::kFloat}, turing);
  EXPECT_EQ(res.layer, FailureLayer::kHardware);
  EXPECT_NE(res.reason.find("8.0"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("7.5"), std::string::npos) << res.reason;
  Target hopper;
  hopper.compute_capability = 90;
  EXPECT_TRUE(r.Query(*f.relu, {DataType::kFloat}, hopper).supported());
}

TEST(RegistryTarget, ShapePredicateGivesKernelLayerReason) {
  Fixture f;
  f.relu->input(0)->set_type(ir::TypeInfo::Tensor(DataType::kFloat, std::vector<ir::Dim>{ir::Dim::Static(7)}));
  KernelRegistry r("test");
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .shape_predicate = [](const ir::Node& n) -> std::string {
           const auto& t = n.input(0)->type();
           if (t.shape && !t.shape->empty() && t.shape->back().is_static() && t.shape->back().value % 8 != 0) {
             return "last dim " + std::to_string(t.shape->back().value) + " is not a multiple of 8";
           }
           return "";
         }});
  auto res = r.Query(*f.relu, {DataType::kFloat});
  EXPECT_EQ(res.layer, FailureLayer::kKernel);
  EXPECT_NE(res.reason.find("multiple of 8"), std::string::npos);
}

}  // namespace
}  // namespace ferry
