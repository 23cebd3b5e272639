// The support matrix (`ferry ops`, docs/ops.md) is built from the registries: every KernelDef appears, nothing
// else does, every schema op is listed, filters select, the JSON parses, and ISA / predicate data shows.
#include "tools/ops_matrix.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "backends/backend.h"
#include "ferry/error.h"
#include "schemas/schema.h"

namespace ferry::tools {
namespace {

class NoopKernel : public OpKernel {
 public:
  explicit NoopKernel(const ir::Node&) {}
  void Compute(KernelContext&) const override {}
};

const KernelRegistry& Ref() { return FindBackend("ref")->kernels(); }

const OpsEntry* FindOp(const OpsMatrix& m, const std::string& domain, const std::string& op) {
  for (const auto& e : m.ops) {
    if (e.domain == domain && e.op == op) return &e;
  }
  return nullptr;
}

TEST(OpsMatrix, EveryRefKernelDefAppears) {
  OpsMatrix m = BuildOpsMatrix();
  for (const auto& d : Ref().defs()) {
    const OpsEntry* e = FindOp(m, d.domain, d.op);
    ASSERT_NE(e, nullptr) << d.name;
    const OpsBackendSupport* s = e->Find("ref");
    ASSERT_NE(s, nullptr) << d.name;
    bool found = std::any_of(s->kernels.begin(), s->kernels.end(), [&](const OpsKernel& k) {
      return k.name == d.name && k.since == d.since && k.until == d.until && k.types.size() == d.types.size() &&
             k.predicate == static_cast<bool>(d.predicate) && k.host_inputs == d.host_inputs;
    });
    EXPECT_TRUE(found) << d.name << " is not in the matrix";
  }
}

TEST(OpsMatrix, EveryListedRefKernelHasADef) {
  OpsMatrix m = BuildOpsMatrix();
  size_t listed = 0;
  for (const auto& e : m.ops) {
    const OpsBackendSupport* s = e.Find("ref");
    if (!s) continue;
    for (const auto& k : s->kernels) {
      ++listed;
      bool found = std::any_of(Ref().defs().begin(), Ref().defs().end(), [&](const KernelDef& d) {
        return d.name == k.name && d.op == e.op && d.domain == e.domain && d.since == k.since && d.until == k.until;
      });
      EXPECT_TRUE(found) << e.op << " " << k.name << " has no KernelDef";
    }
  }
  EXPECT_EQ(listed, Ref().defs().size());
}

TEST(OpsMatrix, ListsEverySchemaOpSortedAndUnique) {
  OpsMatrix m = BuildOpsMatrix();
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    EXPECT_TRUE(seen.insert({m.ops[i].domain, m.ops[i].op}).second) << m.ops[i].op << " listed twice";
    if (i > 0) {
      EXPECT_LT(std::tie(m.ops[i - 1].domain, m.ops[i - 1].op), std::tie(m.ops[i].domain, m.ops[i].op));
    }
  }
  for (const auto& s : schemas::SchemaRegistry::Get().all()) {
    EXPECT_TRUE(seen.count({std::string(schemas::CanonicalDomain(s.domain)), s.name})) << s.name;
  }
}

TEST(OpsMatrix, ReluRangesAndCoverage) {
  OpsFilter f;
  f.op = "Relu";
  OpsMatrix m = BuildOpsMatrix(f);
  ASSERT_EQ(m.ops.size(), 1u);
  const OpsEntry& e = m.ops[0];
  EXPECT_EQ(e.versions, (std::vector<int>{1, 6, 13, 14}));
  EXPECT_EQ(e.newest_version, 14);
  const OpsBackendSupport* s = e.Find("ref");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->RangesText(), "1-5, 6-12, 13, 14+");
  EXPECT_TRUE(s->complete);
  EXPECT_EQ(e.CoverageText(*s), "all versions up to 14");
  std::string text = OpsMatrixText(m);
  EXPECT_NE(text.find("ref: 1-5, 6-12, 13, 14+ (all versions up to 14)"), std::string::npos) << text;
}

TEST(OpsMatrix, Filters) {
  OpsFilter f;
  f.op = "relu";  // no exact match: matched ignoring case
  OpsMatrix m = BuildOpsMatrix(f);
  ASSERT_EQ(m.ops.size(), 1u);
  EXPECT_EQ(m.ops[0].op, "Relu");

  f.op = "NoSuchOp";
  EXPECT_TRUE(BuildOpsMatrix(f).ops.empty());

  OpsFilter ml;
  ml.domain = "ai.onnx.ml";
  OpsMatrix mm = BuildOpsMatrix(ml);
  ASSERT_FALSE(mm.ops.empty());
  for (const auto& e : mm.ops) EXPECT_EQ(e.domain, "ai.onnx.ml") << e.op;

  OpsFilter onnx;
  onnx.domain = "ai.onnx";  // the default domain by either name
  OpsMatrix mo = BuildOpsMatrix(onnx);
  ASSERT_FALSE(mo.ops.empty());
  for (const auto& e : mo.ops) EXPECT_EQ(e.domain, "") << e.op;

  OpsFilter b;
  b.backend = "ref";
  EXPECT_EQ(BuildOpsMatrix(b).backends, std::vector<std::string>{"ref"});
  b.backend = "nope";
  EXPECT_THROW(BuildOpsMatrix(b), InvalidArgumentError);
}

TEST(OpsMatrix, JsonParsesAndAgrees) {
  OpsMatrix m = BuildOpsMatrix();
  nlohmann::json j = nlohmann::json::parse(OpsMatrixJson(m));
  ASSERT_TRUE(j["ops"].is_array());
  EXPECT_EQ(j["ops"].size(), m.ops.size());
  size_t kernels = 0;
  for (const auto& o : j["ops"]) {
    for (const auto& s : o["support"]) {
      if (s["backend"] == "ref") kernels += s["kernels"].size();
    }
  }
  EXPECT_EQ(kernels, Ref().defs().size());
  EXPECT_EQ(j["summary"]["backends"]["ref"]["kernels"].get<size_t>(), Ref().defs().size());
  for (const auto& o : j["ops"]) {
    if (o["op"] != "Relu" || o["domain"] != "ai.onnx") continue;
    const auto& k = o["support"][0]["kernels"].back();
    EXPECT_EQ(k["since"], 14);
    EXPECT_TRUE(k["until"].is_null());
    EXPECT_TRUE(k["types"]["T"].is_array());
    EXPECT_EQ(o["support"][0]["coverage"], "all versions up to 14");
  }
}

TEST(OpsMatrix, OutputIsDeterministic) {
  EXPECT_EQ(OpsMatrixMarkdown(BuildOpsMatrix()), OpsMatrixMarkdown(BuildOpsMatrix()));
  std::string md = OpsMatrixMarkdown(BuildOpsMatrix());
  EXPECT_NE(md.find("| Relu | 1, 6, 13, 14 | 1-5, 6-12, 13, 14+ |"), std::string::npos);
}

TEST(OpsMatrix, TestRegistryShowsIsaPredicatesAndGaps) {
  KernelRegistry r("test");
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .isa = {Isa::kAvx2, Isa::kFma}, .name = "test.Relu.avx2"});
  r.Add({.op = "Relu", .since = 14, .types = {{"T", {DataType::kFloat}}}, .create = MakeKernel<NoopKernel>,
         .predicate = [](const ir::Node&) { return std::string(); }, .name = "test.Relu.pred"});
  r.Add({.op = "Relu", .since = 14, .create = MakeKernel<NoopKernel>,
         .predicate = [](const ir::Node&) { return std::string(); }, .host_inputs = {0},
         .min_compute_capability = 80, .name = "test.Relu.gpu", .constraints = "only even sizes"});
  OpsFilter f;
  f.op = "Relu";
  OpsMatrix m = BuildOpsMatrix({&r}, f);
  ASSERT_EQ(m.ops.size(), 1u);
  const OpsBackendSupport* s = m.ops[0].Find("test");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->kernels.size(), 3u);
  EXPECT_EQ(s->RangesText(), "14+");
  EXPECT_FALSE(s->complete);
  EXPECT_EQ(m.ops[0].CoverageText(*s), "uncovered: opsets 1-13 (versions 1, 6, 13)");
  EXPECT_EQ(s->missing_versions, (std::vector<int>{1, 6, 13}));

  std::string text = OpsMatrixText(m);
  EXPECT_NE(text.find("needs: avx2,fma"), std::string::npos) << text;
  EXPECT_NE(text.find("constraints: (predicate)"), std::string::npos) << text;
  EXPECT_NE(text.find("constraints: only even sizes"), std::string::npos) << text;
  EXPECT_NE(text.find("needs: compute capability 8.0"), std::string::npos) << text;
  EXPECT_NE(text.find("host inputs: 0"), std::string::npos) << text;
  EXPECT_NE(text.find("T: as schema"), std::string::npos) << text;

  nlohmann::json j = nlohmann::json::parse(OpsMatrixJson(m));
  const auto& kernels = j["ops"][0]["support"][0]["kernels"];
  ASSERT_EQ(kernels.size(), 3u);
  for (const auto& k : kernels) {
    if (k["name"] == "test.Relu.avx2") {
      EXPECT_EQ(k["isa"], nlohmann::json::array({"avx2", "fma"}));
    }
    if (k["name"] == "test.Relu.gpu") {
      EXPECT_EQ(k["min_compute_capability"], 80);
      EXPECT_EQ(k["unconstrained"], nlohmann::json::array({"T"}));
    }
  }
  EXPECT_EQ(j["ops"][0]["support"][0]["uncovered_opsets"], nlohmann::json::array({nlohmann::json::array({1, 13})}));
}

TEST(OpsMatrix, OpsWithoutKernelsAreListed) {
  KernelRegistry empty("none");
  OpsFilter f;
  f.op = "Relu";
  OpsMatrix m = BuildOpsMatrix({&empty}, f);
  ASSERT_EQ(m.ops.size(), 1u);
  EXPECT_TRUE(m.ops[0].support.empty());
  EXPECT_NE(OpsMatrixText(m).find("none: not implemented"), std::string::npos);
  EXPECT_NE(OpsMatrixMarkdown(m).find("| Relu | 1, 6, 13, 14 | — |"), std::string::npos);
}

TEST(OpsMatrix, DescribeTypes) {
  EXPECT_EQ(DescribeTypes(dtypes::Floats()), "floats");
  EXPECT_EQ(DescribeTypes(dtypes::Numeric()), "numeric");
  EXPECT_EQ(DescribeTypes(dtypes::Concat(dtypes::Floats(), {DataType::kInt64})), "floats, int64");
  EXPECT_EQ(DescribeTypes(dtypes::Concat(dtypes::Ints(), {DataType::kBool})), "ints, bool");
  EXPECT_EQ(DescribeTypes(dtypes::All()), "all");
  EXPECT_EQ(DescribeTypes(dtypes::AllNonString()), "all but string");
  EXPECT_EQ(DescribeTypes({DataType::kInt64, DataType::kFloat}), "float32, int64");
}

}  // namespace
}  // namespace ferry::tools
