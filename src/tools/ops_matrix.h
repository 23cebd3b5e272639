// The operator support matrix behind `ferry ops` and docs/ops.md, built from the kernel registries and the
// schema registry only (never a hand-written table): per (domain, op) the schema versions Ferry knows, and per
// backend the opset ranges its KernelDefs cover, the dtypes per type variable, attribute/shape predicates,
// host-memory inputs and ISA / compute-capability needs. Ops with a schema but no kernel are listed too.
//
// JSON (OpsMatrixJson), one document:
//   {"backends": ["ref"],
//    "ops": [{"op": "Relu", "domain": "ai.onnx",           // "ai.onnx" for the default domain
//             "schema_versions": [1, 6, 13, 14],           // since_version of every schema version, oldest first
//             "deprecated_versions": [],                   // those marked deprecated (not live)
//             "newest_version": 14,                        // 0 when Ferry has no schema for the op
//             "origin": "ONNX",                            // schemas::OriginName of the newest version
//             "refused": "...",                            // only for kernels/refused_ops.h's ops: the reason
//             "support": [                                 // backends with at least one kernel, priority order
//               {"backend": "ref", "ranges": "1-5, 6-12, 13, 14+",
//                "complete": true,                         // every live opset from the first version is covered
//                "coverage": "all versions up to 14",
//                "missing_versions": [], "uncovered_opsets": [[first, last], ...],
//                "kernels": [{"name": "ref.Relu.14", "since": 14, "until": null,   // null = open-ended
//                             "types": {"T": ["float32", ...]},
//                             "unconstrained": ["T1"],     // schema type variables the kernel leaves open
//                             "predicate": false, "shape_predicate": false,
//                             "constraints": "",          // description, "(predicate)" or ""
//                             "host_inputs": [], "isa": [], "min_compute_capability": 0,
//                             "library": "oneDNN",         // only for kernels running in a library
//                             "library_isa": "avx2"}]}]}], // ... and the instruction set it uses on this host
//    "summary": {"ops": N, "with_schema": N, "not_implemented": ["Op" or "domain::Op", ...],
//                "backends": {"ref": {"ops": N, "kernels": N, "complete": N}}}}
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/isa.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::tools {

// One KernelDef as the matrix shows it.
struct OpsKernel {
  std::string name;
  int since = 1;
  int until = kOpsetOpen;
  std::vector<TypeConstraintDef> types;   // as declared
  std::vector<std::string> unconstrained;  // schema type variables the def does not constrain (any the schema allows)
  bool predicate = false;
  bool shape_predicate = false;
  std::string constraints;  // KernelDef::constraints
  std::vector<int> host_inputs;
  IsaSet isa;
  int min_compute_capability = 0;
  std::string library;  // KernelDef::library: "oneDNN" or ""

  // The description, "(predicate)" / "(shape predicate)" when a predicate has none, "" without predicates.
  std::string ConstraintsText() const;
};

// The kernels one backend has for one op.
struct OpsBackendSupport {
  std::string backend;
  std::vector<OpsKernel> kernels;                 // sorted by since, until, name
  std::vector<std::pair<int, int>> uncovered;     // live opsets (from the first schema version) no kernel covers
  std::vector<int> missing_versions;              // live schema versions whose first opset no kernel covers
  bool complete = false;                          // uncovered is empty and the op has a schema

  std::string RangesText() const;  // distinct kernel ranges: "1-5, 6-12, 13, 14+"
};

struct OpsEntry {
  std::string domain;  // "" = ai.onnx
  std::string op;
  std::vector<int> versions;             // schema since_versions, oldest first (empty: no schema)
  std::vector<int> deprecated_versions;  // subset of versions
  int newest_version = 0;                // 0 when there is no schema
  std::string origin;                    // schemas::OriginName (op_origin.h) of the newest version
  std::vector<OpsBackendSupport> support;  // backends with a kernel for the op, in the matrix's backend order

  // "all versions up to 14" / "uncovered: opsets 1-5 (version 1)" / "no schema" for one backend.
  std::string CoverageText(const OpsBackendSupport& s) const;
  const OpsBackendSupport* Find(const std::string& backend) const;
};

struct OpsMatrix {
  std::vector<std::string> backends;  // the backends shown, priority order
  std::vector<OpsEntry> ops;          // sorted by domain ("" first) then op name
};

struct OpsFilter {
  std::string backend;                // "" = every backend
  std::string op;                     // "" = every op; exact name, else a case-insensitive match
  std::optional<std::string> domain;  // "ai.onnx" and "" both mean the default domain
};

// Builds the matrix over `registries` (in that order) and the schema registry. With filter.backend set only
// that registry is used (the others are ignored); with filter.op / filter.domain only matching ops are kept.
OpsMatrix BuildOpsMatrix(const std::vector<const KernelRegistry*>& registries, const OpsFilter& filter = {});
// The same over every registered backend (FindBackend / BackendNames). Throws InvalidArgumentError naming the
// known backends when filter.backend names none.
OpsMatrix BuildOpsMatrix(const OpsFilter& filter = {});

// "floats, int8" style description of a dtype set, using the groups of the legend (OpsTypeLegend()).
std::string DescribeTypes(const std::vector<DataType>& types);
std::string OpsTypeLegend();
// "ai.onnx" for "", else the domain.
std::string DomainDisplayName(const std::string& domain);

// Renderings; all deterministic (no timestamps, sorted).
std::string OpsMatrixText(const OpsMatrix& m);
std::string OpsMatrixJson(const OpsMatrix& m);
std::string OpsMatrixMarkdown(const OpsMatrix& m);

}  // namespace ferry::tools
