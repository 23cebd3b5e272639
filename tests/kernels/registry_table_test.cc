// Validates every built-in backend's kernel table (ref, cpu) against Ferry's schemas (STYLE.md practice 3):
// every KernelDef names a known op, its opset range starts and ends on schema version boundaries, ranges of one
// op never overlap (unless split by dtype, predicate or ISA variant), no schema version after an op's first
// supported version is skipped, every type variable it constrains exists in the schema, and names are unique.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "backends/backend.h"
#include "schemas/schema.h"
#include "schemas/validate.h"

namespace ferry {
namespace {

using schemas::CanonicalDomain;
using schemas::SchemaRegistry;

const KernelRegistry& RefKernels() { return FindBackend("ref")->kernels(); }

class RegistryTable : public ::testing::TestWithParam<std::string> {
 protected:
  const KernelRegistry& Kernels() const { return FindBackend(GetParam())->kernels(); }
};

std::string Id(const KernelDef& d) {
  return d.name + " [" + std::to_string(d.since) + "," + (d.until == kOpsetOpen ? "-" : std::to_string(d.until)) + "]";
}

TEST_P(RegistryTable, EveryKernelNamesAKnownOpVersion) {
  for (const auto& d : Kernels().defs()) {
    auto versions = SchemaRegistry::Get().Versions(d.domain, d.op);
    ASSERT_FALSE(versions.empty()) << Id(d) << ": no schema for this op";
    EXPECT_LE(d.since, d.until) << Id(d);
    EXPECT_TRUE(d.create) << Id(d) << ": no factory";
    bool starts_on_version = std::any_of(versions.begin(), versions.end(),
                                         [&](const auto* s) { return s->since_version == d.since; });
    EXPECT_TRUE(starts_on_version) << Id(d) << ": since is not the first opset of a schema version";
    if (d.until != kOpsetOpen) {
      bool ends_before_version = std::any_of(versions.begin(), versions.end(),
                                             [&](const auto* s) { return s->since_version == d.until + 1; });
      EXPECT_TRUE(ends_before_version) << Id(d) << ": until is not the opset just before a later schema version";
    }
  }
}

TEST_P(RegistryTable, TypeVariablesExistInTheSchema) {
  // A def may span several schema versions with the union of their types; each type variable it constrains
  // must exist in at least one version inside its range.
  for (const auto& d : Kernels().defs()) {
    for (const auto& c : d.types) {
      bool found = false;
      for (const auto* s : SchemaRegistry::Get().Versions(d.domain, d.op)) {
        bool in_range = s->since_version >= d.since && s->since_version <= d.until;
        found = found || (in_range && s->FindTypeConstraint(c.var) != nullptr);
      }
      EXPECT_TRUE(found) << Id(d) << ": type variable '" << c.var << "' is in no schema version of " << d.op
                         << " inside the kernel's range";
      EXPECT_FALSE(c.types.empty()) << Id(d) << ": empty dtype list for " << c.var;
    }
  }
}

TEST_P(RegistryTable, RangesOfOneOpDoNotOverlapUnlessPredicated) {
  std::map<std::pair<std::string, std::string>, std::vector<const KernelDef*>> by_op;
  for (const auto& d : Kernels().defs()) by_op[{d.domain, d.op}].push_back(&d);
  for (auto& [key, defs] : by_op) {
    for (size_t i = 0; i < defs.size(); ++i) {
      for (size_t j = i + 1; j < defs.size(); ++j) {
        const KernelDef& a = *defs[i];
        const KernelDef& b = *defs[j];
        bool overlap = a.since <= b.until && b.since <= a.until;
        if (!overlap) continue;
        // Two kernels may share an opset range only when they split it by dtype, by predicate, or are ISA
        // variants of one kernel (the registry takes the first the target supports).
        bool split = a.predicate || b.predicate || a.shape_predicate || b.shape_predicate || a.isa != b.isa;
        for (const auto& ca : a.types) {
          for (const auto& cb : b.types) {
            if (ca.var != cb.var) continue;
            bool disjoint = std::none_of(ca.types.begin(), ca.types.end(), [&](DataType t) {
              return std::find(cb.types.begin(), cb.types.end(), t) != cb.types.end();
            });
            split = split || disjoint;
          }
        }
        EXPECT_TRUE(split) << Id(a) << " and " << Id(b) << " overlap";
      }
    }
  }
}

TEST_P(RegistryTable, NoSkippedSchemaVersions) {
  std::map<std::pair<std::string, std::string>, std::vector<const KernelDef*>> by_op;
  for (const auto& d : Kernels().defs()) by_op[{d.domain, d.op}].push_back(&d);
  for (auto& [key, defs] : by_op) {
    int first = INT32_MAX;
    for (const auto* d : defs) first = std::min(first, d->since);
    for (const auto* s : SchemaRegistry::Get().Versions(key.first, key.second)) {
      if (s->since_version < first || s->deprecated) continue;
      bool covered = std::any_of(defs.begin(), defs.end(),
                                 [&](const auto* d) { return d->since <= s->since_version && s->since_version <= d->until; });
      EXPECT_TRUE(covered) << key.second << "-" << s->since_version << " (domain '" << key.first
                           << "') is skipped by the " << GetParam() << " kernels";
    }
  }
}

TEST_P(RegistryTable, KernelNamesAreUnique) {
  std::map<std::string, int> seen;
  for (const auto& d : Kernels().defs()) EXPECT_EQ(++seen[d.name], 1) << "two kernels are named " << d.name;
}

INSTANTIATE_TEST_SUITE_P(Backends, RegistryTable, ::testing::Values("ref", "cpu"));

// `ref` is the oracle and the fallback of last resort, so it covers every version of every op of the default
// domain, up to the newest opset Ferry knows. The only exceptions are listed here with their reason; an entry
// that is no longer needed fails the test too. (That Ferry's schema registry knows every (op, version) libonnx
// 1.12 knows is SchemaRegistry.GeneratedSchemasAgreeWithLibonnx.)
TEST(RefCoverage, EveryDefaultDomainOpVersionHasARefKernelOrAReasonedExclusion) {
  const std::map<std::string, std::string> excluded = {
      {"ImageDecoder",
       "decoding JPEG, PNG, TIFF, WebP, JPEG 2000, BMP and PNM needs image codec libraries, which are not among "
       "Ferry's dependencies (its 9 conformance cases are expected failures)"},
  };
  ASSERT_EQ(SchemaRegistry::Get().MaxOpset(""), 28);
  std::map<std::string, int> missing;  // op -> versions without a kernel
  size_t checked = 0;
  for (const auto& s : SchemaRegistry::Get().all()) {
    if (!CanonicalDomain(s.domain).empty() || s.since_version > 28) continue;
    ++checked;
    const bool covered = std::any_of(RefKernels().defs().begin(), RefKernels().defs().end(), [&](const KernelDef& d) {
      return CanonicalDomain(d.domain).empty() && d.op == s.name && d.since <= s.since_version &&
             s.since_version <= d.until;
    });
    if (!covered) ++missing[s.name];
    if (!covered && !excluded.count(s.name)) {
      ADD_FAILURE() << s.name << "-" << s.since_version << " has no ref kernel and no reasoned exclusion";
    }
  }
  for (const auto& [op, reason] : excluded) {
    EXPECT_TRUE(missing.count(op)) << op << " is excluded (" << reason << ") but every version has a ref kernel now";
  }
  EXPECT_GT(checked, 400u);
}

TEST(RegistryQuery, QueryReportsLayers) {
  // A registry query for an op no schema knows is a graph-layer failure.
  ir::Graph g;
  ir::Value* x = g.AddValue("x");
  ir::Node* n = g.AddNode("n", "NoSuchOp", "", {x}, {g.AddValue("y")});
  n->set_opset(17);
  auto r = RefKernels().Query(*n, {DataType::kFloat});
  EXPECT_FALSE(r.supported());
  EXPECT_EQ(r.layer, FailureLayer::kGraph);
  // A known op at an opset newer than Ferry knows is a graph-layer failure too.
  ir::Node* relu = g.AddNode("r", "Relu", "", {x}, {g.AddValue("z")});
  relu->set_opset(SchemaRegistry::Get().MaxOpset("") + 1);
  EXPECT_EQ(RefKernels().Query(*relu, {DataType::kFloat}).layer, FailureLayer::kGraph);
  relu->set_opset(14);
  EXPECT_TRUE(RefKernels().Query(*relu, {DataType::kFloat}).supported());
  // A dtype outside the kernel's constraint is a kernel-layer failure naming the type.
  auto bad = RefKernels().Query(*relu, {DataType::kString});
  EXPECT_FALSE(bad.supported());
  EXPECT_EQ(bad.layer, FailureLayer::kKernel);
  EXPECT_NE(bad.reason.find("string"), std::string::npos) << bad.reason;
}

// `ref` declares every tensor element type each schema version inside a kernel's range allows for each type
// variable the kernel constrains (a variable it leaves unconstrained accepts every type). Limits that depend on
// attributes or shapes (bool/string GridSample only with mode=nearest, ...) belong in the kernel's predicate,
// which names them. The only gaps allowed are listed here, keyed by (kernel name or op, type variable, dtype),
// each with its reason; an entry that is no longer needed fails the test too. Sequence, optional and map types
// are not element types and are not checked.
TEST(RefCoverage, EveryDtypeTheSchemaAllows) {
  using Key = std::tuple<std::string, std::string, DataType>;
  // None today. An entry would read, e.g.:
  //   {{"ref.Foo.18", "T", DataType::kString}, "Foo of strings is not defined: the spec sums its inputs"},
  const std::map<Key, std::string> excluded = {};
  std::set<Key> used;
  size_t checked = 0;
  for (const KernelDef& d : RefKernels().defs()) {
    if (!CanonicalDomain(d.domain).empty()) continue;
    for (const auto* s : SchemaRegistry::Get().Versions(d.domain, d.op)) {
      if (s->since_version < d.since || s->since_version > d.until) continue;
      for (const auto& tc : s->type_constraints) {
        const auto kc = std::find_if(d.types.begin(), d.types.end(),
                                     [&](const TypeConstraintDef& c) { return c.var == tc.var; });
        if (kc == d.types.end()) continue;
        for (const std::string& allowed : tc.allowed) {
          const auto ti = schemas::ParseTypeString(allowed);
          ASSERT_TRUE(ti) << s->name << "-" << s->since_version << " " << tc.var << ": cannot parse " << allowed;
          if (!ti->is_tensor()) continue;
          ++checked;
          if (std::find(kc->types.begin(), kc->types.end(), ti->elem_type) != kc->types.end()) continue;
          bool excused = false;
          for (const std::string& who : {d.name, d.op}) {
            const Key key{who, tc.var, ti->elem_type};
            if (excluded.count(key)) {
              used.insert(key);
              excused = true;
            }
          }
          if (!excused) {
            ADD_FAILURE() << Id(d) << " implements " << s->name << "-" << s->since_version << ", which allows "
                          << tc.var << " = " << allowed << ", but the kernel does not declare it and no "
                          << "exclusion gives a reason";
          }
        }
      }
    }
  }
  for (const auto& [key, reason] : excluded) {
    EXPECT_TRUE(used.count(key)) << std::get<0>(key) << " " << std::get<1>(key) << " "
                                 << DataTypeName(std::get<2>(key)) << " is excluded (" << reason
                                 << ") but no ref kernel lacks it any more";
  }
  EXPECT_GT(checked, 3000u);
}

}  // namespace
}  // namespace ferry
