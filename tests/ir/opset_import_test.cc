// ir::kKnownDomains, the domains the importer holds to the opsets Ferry knows, is the schema registry's list: the
// IR may not depend on the schemas (DESIGN.md), so the table is kept here in step with them.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "ir/onnx_import.h"
#include "schemas/schema.h"

namespace ferry::ir {
namespace {

TEST(OpsetImport, KnownDomainsAreTheSchemaRegistrysBuiltinDomains) {
  const auto& registry = schemas::SchemaRegistry::Get();
  std::set<std::string> builtin;
  for (const auto& s : registry.all()) builtin.insert(std::string(schemas::CanonicalDomain(s.domain)));
  std::set<std::string> listed;
  for (const KnownDomain& d : kKnownDomains) {
    listed.insert(std::string(d.domain));
    EXPECT_TRUE(registry.IsBuiltinDomain(d.domain)) << "'" << d.domain << "'";
    EXPECT_EQ(d.max_opset, registry.MaxOpset(d.domain)) << "'" << d.domain << "'";
    EXPECT_EQ(KnownMaxOpset(d.domain), d.max_opset);
  }
  for (const std::string& d : builtin) {
    EXPECT_TRUE(listed.count(d)) << "domain '" << d << "' is missing from kKnownDomains";
  }
  EXPECT_EQ(KnownMaxOpset("ai.onnx"), KnownMaxOpset(""));
  EXPECT_EQ(KnownMaxOpset("com.example.plugin"), 0);
}

}  // namespace
}  // namespace ferry::ir
