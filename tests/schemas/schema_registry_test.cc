#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <climits>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/onnx_import.h"
#include "schemas/schema.h"
#include "schemas/validate.h"

namespace ferry::schemas {
namespace {

const SchemaRegistry& R() { return SchemaRegistry::Get(); }

int SinceOf(std::string_view domain, std::string_view op, int64_t opset) {
  const OpSchema* s = R().Find(domain, op, opset);
  return s ? s->since_version : -1;
}

TEST(SchemaRegistry, FindPicksNewestVersionAtOrBelowOpset) {
  EXPECT_EQ(SinceOf("", "Relu", 12), 6);
  EXPECT_EQ(SinceOf("", "Relu", 13), 13);
  EXPECT_EQ(SinceOf("", "Relu", 14), 14);
  EXPECT_EQ(SinceOf("", "Relu", 28), 14);
  EXPECT_EQ(SinceOf("", "Relu", 5), 1);
  EXPECT_EQ(SinceOf("", "ReduceSum", 18), 13);
  EXPECT_EQ(SinceOf("", "ReduceMean", 17), 13);
  EXPECT_EQ(SinceOf("", "ReduceMean", 18), 18);
  EXPECT_EQ(SinceOf("", "ReduceMax", 20), 20);
  EXPECT_EQ(SinceOf("", "Cast", 25), 25);
  EXPECT_EQ(SinceOf("", "Attention", 23), 23);
  EXPECT_EQ(SinceOf("", "Attention", 28), 24);
  EXPECT_EQ(SinceOf("", "Attention", 22), -1);  // did not exist yet
  EXPECT_EQ(SinceOf("ai.onnx", "Relu", 13), 13);  // "ai.onnx" is the default domain
  EXPECT_EQ(SinceOf("ai.onnx.ml", "LabelEncoder", 4), 4);
  EXPECT_EQ(SinceOf("ai.onnx.ml", "TreeEnsemble", 5), 5);
  EXPECT_EQ(SinceOf("ai.onnx.preview.training", "Adam", 1), 1);
  EXPECT_EQ(SinceOf("ai.onnx.preview", "FlexAttention", 1), 1);
  EXPECT_EQ(R().Find("", "NoSuchOp", 18), nullptr);
  EXPECT_EQ(R().Find("com.example", "Relu", 18), nullptr);
}

TEST(SchemaRegistry, MaxOpsetAndDomains) {
  EXPECT_GE(R().MaxOpset(""), 24);
  EXPECT_EQ(R().MaxOpset("ai.onnx"), R().MaxOpset(""));
  EXPECT_GE(R().MaxOpset("ai.onnx.ml"), 3);
  EXPECT_GE(R().MaxOpset("ai.onnx.preview.training"), 1);
  EXPECT_EQ(R().MaxOpset("com.example"), 0);
  EXPECT_EQ(CanonicalDomain("ai.onnx"), "");
  EXPECT_EQ(CanonicalDomain(""), "");
  EXPECT_EQ(CanonicalDomain("ai.onnx.ml"), "ai.onnx.ml");
}

TEST(SchemaRegistry, VersionsAreOrderedAndSchemasAreSelfConsistent) {
  std::set<std::pair<std::string, std::string>> ops;
  for (const auto& s : R().all()) ops.insert({s.domain, s.name});
  for (const auto& [domain, name] : ops) {
    auto versions = R().Versions(domain, name);
    ASSERT_FALSE(versions.empty()) << domain << "::" << name;
    for (size_t i = 1; i < versions.size(); ++i) {
      EXPECT_LT(versions[i - 1]->since_version, versions[i]->since_version) << name;
    }
  }
  for (const auto& s : R().all()) {
    SCOPED_TRACE(s.domain + "::" + s.name + "-" + std::to_string(s.since_version));
    EXPECT_LE(s.min_inputs, s.max_inputs);
    EXPECT_LE(s.min_outputs, s.max_outputs);
    EXPECT_LE(s.inputs.size(), static_cast<size_t>(s.max_inputs));
    // Every formal parameter names a type variable of the schema or is a concrete, parsable type.
    for (const auto* params : {&s.inputs, &s.outputs}) {
      for (const auto& p : *params) {
        if (s.FindTypeConstraint(p.type_str)) continue;
        EXPECT_TRUE(ParseTypeString(p.type_str).has_value()) << p.name << ": " << p.type_str;
      }
    }
    for (const auto& tc : s.type_constraints) {
      EXPECT_FALSE(tc.allowed.empty()) << tc.var;
      for (const auto& t : tc.allowed) EXPECT_TRUE(ParseTypeString(t).has_value()) << tc.var << ": " << t;
    }
    for (const auto& a : s.attributes) {
      if (a.default_value) {
        EXPECT_EQ(a.default_value->type, a.type) << a.name;
      }
    }
  }
}

TEST(SchemaRegistry, TypeVariablesOfParameters) {
  const OpSchema* concat = R().Find("", "Concat", 13);
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->InputTypeVar(0), "T");
  EXPECT_EQ(concat->InputTypeVar(7), "T");  // variadic: every extra argument binds the last parameter
  const OpSchema* reshape = R().Find("", "Reshape", 14);
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->InputTypeVar(0), "T");
  EXPECT_EQ(reshape->InputTypeVar(1), "");  // tensor(int64)
  EXPECT_EQ(reshape->InputTypeVar(2), "");  // out of range
  const OpSchema* dq = R().Find("", "DequantizeLinear", 21);
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->InputTypeVar(0), "T1");
  EXPECT_EQ(dq->InputTypeVar(1), "T2");
  EXPECT_EQ(dq->OutputTypeVar(0), "T2");
  const OpSchema* pad = R().Find("", "Pad", 18);
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->max_inputs, 4);
  EXPECT_EQ(pad->InputTypeVar(3), "Tind");
  const OpSchema* rmean = R().Find("", "ReduceMean", 18);
  ASSERT_NE(rmean, nullptr);
  EXPECT_EQ(rmean->FindAttr("axes"), nullptr);
  ASSERT_NE(rmean->FindAttr("noop_with_empty_axes"), nullptr);
  EXPECT_EQ(rmean->max_inputs, 2);
  const OpSchema* cast = R().Find("", "Cast", 25);
  ASSERT_NE(cast, nullptr);
  ASSERT_NE(cast->FindAttr("to"), nullptr);
  EXPECT_TRUE(cast->FindAttr("to")->required);
  ASSERT_NE(cast->FindAttr("round_mode"), nullptr);
  const TypeConstraint* t1 = cast->FindTypeConstraint("T1");
  ASSERT_NE(t1, nullptr);
  for (const char* t : {"tensor(int2)", "tensor(float8e8m0)", "tensor(float4e2m1)", "tensor(int4)",
                        "tensor(float8e4m3fn)", "tensor(bfloat16)"}) {
    EXPECT_NE(std::find(t1->allowed.begin(), t1->allowed.end(), t), t1->allowed.end()) << t;
  }
}

// The generated tables must reproduce libonnx exactly: every schema version libonnx knows for the three domains
// agrees on version, parameters, arity, attributes (names, types, required, scalar defaults) and constraints.
TEST(SchemaRegistry, GeneratedSchemasAgreeWithLibonnx) {
  const std::set<std::string> domains = {"", "ai.onnx.ml", "ai.onnx.preview.training"};
  size_t checked = 0;
  for (const auto& o : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!domains.count(o.domain())) continue;
    SCOPED_TRACE(o.domain() + "::" + o.Name() + "-" + std::to_string(o.since_version()));
    const OpSchema* f = R().Find(o.domain(), o.Name(), o.since_version());
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->since_version, o.since_version());
    EXPECT_EQ(f->deprecated, o.deprecated());
    ASSERT_EQ(f->inputs.size(), o.inputs().size());
    ASSERT_EQ(f->outputs.size(), o.outputs().size());
    for (size_t i = 0; i < o.inputs().size(); ++i) {
      EXPECT_EQ(f->inputs[i].name, o.inputs()[i].GetName());
      EXPECT_EQ(f->inputs[i].type_str, o.inputs()[i].GetTypeStr());
      EXPECT_EQ(static_cast<int>(f->inputs[i].option), static_cast<int>(o.inputs()[i].GetOption()));
    }
    for (size_t i = 0; i < o.outputs().size(); ++i) {
      EXPECT_EQ(f->outputs[i].name, o.outputs()[i].GetName());
      EXPECT_EQ(f->outputs[i].type_str, o.outputs()[i].GetTypeStr());
    }
    EXPECT_EQ(f->min_inputs, o.min_input());
    EXPECT_EQ(f->max_inputs, o.max_input());
    EXPECT_EQ(f->min_outputs, o.min_output());
    EXPECT_EQ(f->max_outputs, o.max_output());
    ASSERT_EQ(f->attributes.size(), o.attributes().size());
    for (const auto& [name, oa] : o.attributes()) {
      const AttrSchema* fa = f->FindAttr(name);
      ASSERT_NE(fa, nullptr) << name;
      EXPECT_EQ(static_cast<int>(fa->type), static_cast<int>(oa.type)) << name;
      EXPECT_EQ(fa->required, oa.required) << name;
      const auto& d = oa.default_value;
      if (d.type() == onnx::AttributeProto::INT) {
        ASSERT_TRUE(fa->default_value.has_value()) << name;
        EXPECT_EQ(fa->default_value->i, d.i()) << name;
      } else if (d.type() == onnx::AttributeProto::FLOAT) {
        ASSERT_TRUE(fa->default_value.has_value()) << name;
        EXPECT_EQ(fa->default_value->f, d.f()) << name;
      } else if (d.type() == onnx::AttributeProto::STRING) {
        ASSERT_TRUE(fa->default_value.has_value()) << name;
        EXPECT_EQ(fa->default_value->s, d.s()) << name;
      } else if (d.type() == onnx::AttributeProto::INTS) {
        ASSERT_TRUE(fa->default_value.has_value()) << name;
        EXPECT_EQ(fa->default_value->ints, std::vector<int64_t>(d.ints().begin(), d.ints().end())) << name;
      }
    }
    ASSERT_EQ(f->type_constraints.size(), o.typeConstraintParams().size());
    for (const auto& tc : o.typeConstraintParams()) {
      const TypeConstraint* ft = f->FindTypeConstraint(tc.type_param_str);
      ASSERT_NE(ft, nullptr) << tc.type_param_str;
      EXPECT_EQ(ft->allowed, tc.allowed_type_strs) << tc.type_param_str;
    }
    ++checked;
  }
  EXPECT_GT(checked, 400u);
}

// --- validation ---

class ValidateTest : public ::testing::Test {
 protected:
  ir::Node* MakeNode(const std::string& op, int64_t opset, size_t num_inputs, size_t num_outputs,
                     std::vector<ir::Attribute> attrs = {}, const std::string& domain = "") {
    std::vector<ir::Value*> ins, outs;
    for (size_t i = 0; i < num_inputs; ++i) ins.push_back(g_.AddValue(op + "_in" + std::to_string(counter_++)));
    for (size_t i = 0; i < num_outputs; ++i) outs.push_back(g_.AddValue(op + "_out" + std::to_string(counter_++)));
    ir::Node* n = g_.AddNode("n" + std::to_string(counter_++), op, domain, ins, outs, std::move(attrs));
    n->set_opset(opset);
    return n;
  }
  static ir::Attribute Int(const std::string& name, int64_t v) {
    ir::Attribute a;
    a.name = name;
    a.type = ir::AttrType::kInt;
    a.i = v;
    return a;
  }
  static ir::Attribute Float(const std::string& name, float v) {
    ir::Attribute a;
    a.name = name;
    a.type = ir::AttrType::kFloat;
    a.f = v;
    return a;
  }
  std::string Validate(const ir::Node* n) {
    const OpSchema* s = R().Find(n->domain(), n->op_type(), n->opset());
    EXPECT_NE(s, nullptr);
    return s ? ValidateNodeAgainstSchema(*n, *s) : "no schema";
  }

  ir::Graph g_;
  int counter_ = 0;
};

TEST_F(ValidateTest, AcceptsValidNodes) {
  EXPECT_EQ(Validate(MakeNode("Cast", 13, 1, 1, {Int("to", 1)})), "");
  EXPECT_EQ(Validate(MakeNode("Concat", 13, 5, 1, {Int("axis", 0)})), "");
  EXPECT_EQ(Validate(MakeNode("Pad", 18, 4, 1)), "");
  EXPECT_EQ(Validate(MakeNode("ReduceMean", 18, 2, 1, {Int("keepdims", 0)})), "");
  EXPECT_EQ(Validate(MakeNode("Attention", 24, 7, 4, {Int("is_causal", 1)})), "");
}

TEST_F(ValidateTest, RejectsMissingRequiredAttribute) {
  std::string e = Validate(MakeNode("Cast", 13, 1, 1));
  EXPECT_NE(e.find("required attribute 'to'"), std::string::npos) << e;
  EXPECT_NE(e.find("Cast"), std::string::npos) << e;
  EXPECT_NE(e.find("opset 13"), std::string::npos) << e;
}

TEST_F(ValidateTest, RejectsWrongAttributeType) {
  std::string e = Validate(MakeNode("Cast", 19, 1, 1, {Float("to", 1.0f)}));
  EXPECT_NE(e.find("attribute 'to' must be of type"), std::string::npos) << e;
}

TEST_F(ValidateTest, RejectsUnknownAttributeInDefaultDomainOnly) {
  std::string e = Validate(MakeNode("Relu", 14, 1, 1, {Int("alpha", 1)}));
  EXPECT_NE(e.find("unknown attribute 'alpha'"), std::string::npos) << e;
  EXPECT_EQ(Validate(MakeNode("Binarizer", 1, 1, 1, {Int("custom_hint", 1)}, "ai.onnx.ml")), "");
}

TEST_F(ValidateTest, RejectsArityOutOfRange) {
  std::string few = Validate(MakeNode("Add", 14, 1, 1));
  EXPECT_NE(few.find("at least 2"), std::string::npos) << few;
  std::string many = Validate(MakeNode("Relu", 14, 2, 1));
  EXPECT_NE(many.find("at most 1"), std::string::npos) << many;
  std::string outs = Validate(MakeNode("Relu", 14, 1, 2));
  EXPECT_NE(outs.find("outputs"), std::string::npos) << outs;
}

TEST_F(ValidateTest, RejectsEmptyRequiredInput) {
  ir::Value* x = g_.AddValue("x");
  ir::Value* y = g_.AddValue("y");
  ir::Node* n = g_.AddNode("gemm_missing_b", "Gemm", "", {x, nullptr}, {y});
  n->set_opset(13);
  std::string e = Validate(n);
  EXPECT_NE(e.find("'B'"), std::string::npos) << e;
}

TEST(InferOutputElementTypes, PropagatesThroughTypeVariables) {
  ir::Graph g;
  ir::Value* a = g.AddValue("a", ir::TypeInfo::Tensor(DataType::kFloat16));
  ir::Value* b = g.AddValue("b", ir::TypeInfo::Tensor(DataType::kFloat16));
  ir::Node* add = g.AddNode("add", "Add", "", {a, b}, {g.AddValue("c")});
  add->set_opset(14);
  ir::Node* shape = g.AddNode("shape", "Shape", "", {a}, {g.AddValue("s")});
  shape->set_opset(19);
  ir::Node* cast = g.AddNode("cast", "Cast", "", {a}, {g.AddValue("k")});
  cast->set_opset(19);
  ir::Node* topk = g.AddNode("topk", "TopK", "", {a, g.AddValue("k2")}, {g.AddValue("v"), g.AddValue("i")});
  topk->set_opset(11);

  auto infer = [](const ir::Node* n) {
    std::vector<const ir::TypeInfo*> ins;
    for (const ir::Value* v : n->inputs()) ins.push_back(v ? &v->type() : nullptr);
    std::vector<ir::TypeInfo> outs;
    const OpSchema* s = R().Find(n->domain(), n->op_type(), n->opset());
    EXPECT_NE(s, nullptr);
    if (s) InferOutputElementTypes(*n, *s, ins, outs);
    return outs;
  };
  auto add_out = infer(add);
  ASSERT_EQ(add_out.size(), 1u);
  EXPECT_EQ(add_out[0].kind, ir::TypeInfo::Kind::kTensor);
  EXPECT_EQ(add_out[0].elem_type, DataType::kFloat16);
  auto shape_out = infer(shape);
  EXPECT_EQ(shape_out[0].elem_type, DataType::kInt64);
  auto cast_out = infer(cast);
  EXPECT_EQ(cast_out[0].kind, ir::TypeInfo::Kind::kUnknown);  // depends on the `to` attribute
  auto topk_out = infer(topk);
  ASSERT_EQ(topk_out.size(), 2u);
  EXPECT_EQ(topk_out[0].elem_type, DataType::kFloat16);
  EXPECT_EQ(topk_out[1].elem_type, DataType::kInt64);

  const OpSchema* dq = R().Find("", "DequantizeLinear", 21);
  ASSERT_NE(dq, nullptr);
  ir::TypeInfo x = ir::TypeInfo::Tensor(DataType::kInt8), scale = ir::TypeInfo::Tensor(DataType::kBFloat16);
  EXPECT_EQ(ResolveTypeVar(*dq, "T2", {&x, &scale}), DataType::kBFloat16);
  EXPECT_EQ(ResolveTypeVar(*dq, "T1", {&x, &scale}), DataType::kInt8);
}

TEST(ParseTypeString, ParsesOnnxTypeStrings) {
  auto t = ParseTypeString("tensor(float)");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->elem_type, DataType::kFloat);
  auto s = ParseTypeString("seq(tensor(int64))");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, ir::TypeInfo::Kind::kSequence);
  ASSERT_TRUE(s->elem);
  EXPECT_EQ(s->elem->elem_type, DataType::kInt64);
  auto o = ParseTypeString("optional(seq(tensor(bool)))");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, ir::TypeInfo::Kind::kOptional);
  EXPECT_TRUE(ParseTypeString("map(int64, string)"));
  auto m = ParseTypeString("map(string, tensor(double))");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, ir::TypeInfo::Kind::kMap);
  EXPECT_EQ(m->elem_type, DataType::kString);
  EXPECT_FALSE(ParseTypeString("tensor(float7)"));
  EXPECT_FALSE(ParseTypeString("T"));
}

// Every node of every ONNX node-test model (opsets 1-28) resolves to a schema and validates against it.
void CollectNodes(const ir::Graph& g, std::vector<const ir::Node*>& out) {
  for (const auto& n : g.nodes()) {
    out.push_back(n.get());
    for (const ir::Graph* sub : n->subgraphs()) CollectNodes(*sub, out);
  }
}

TEST(SchemaRegistry, OnnxNodeTestModelsResolveAndValidate) {
  std::filesystem::path dir = std::filesystem::path(FERRY_SOURCE_DIR) / ".." / "shared" / "onnx-tests" / "node";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no ONNX node tests at " << dir;
  std::vector<std::filesystem::path> models;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (std::filesystem::exists(entry.path() / "model.onnx")) models.push_back(entry.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  ASSERT_GT(models.size(), 1000u);
  size_t nodes_checked = 0, import_failures = 0;
  std::vector<std::string> problems;
  for (const auto& path : models) {
    std::unique_ptr<ir::Model> model;
    try {
      model = ir::ImportModelFromFile(path.string());
    } catch (const std::exception& e) {
      ++import_failures;  // import problems are the importer's tests' business
      continue;
    }
    std::vector<const ir::Node*> nodes;
    CollectNodes(*model->graph, nodes);
    for (const auto& f : model->functions) CollectNodes(*f.body, nodes);
    for (const ir::Node* n : nodes) {
      if (model->FindFunction(n->domain(), n->op_type())) continue;  // model-local function call
      const OpSchema* s = R().Find(n->domain(), n->op_type(), n->opset());
      if (!s) {
        problems.push_back(path.parent_path().filename().string() + ": no schema for " + n->Describe() +
                           " at opset " + std::to_string(n->opset()));
        continue;
      }
      std::string e = ValidateNodeAgainstSchema(*n, *s);
      if (!e.empty()) problems.push_back(path.parent_path().filename().string() + ": " + e);
      ++nodes_checked;
    }
  }
  EXPECT_LT(import_failures, models.size() / 10) << "most models should import";
  EXPECT_GT(nodes_checked, 5000u);
  std::string all;
  for (size_t i = 0; i < problems.size() && i < 40; ++i) all += problems[i] + "\n";
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems:\n" << all;
}

}  // namespace
}  // namespace ferry::schemas
