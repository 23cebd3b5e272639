#include "tools/ops_matrix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "backends/backend.h"
#include "core/isa.h"
#include "ferry/error.h"
#include "kernels/cpu/dnnl_isa.h"
#include "kernels/refused_ops.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::tools {
namespace {

std::string RangeText(int since, int until) {
  if (until == kOpsetOpen) return std::to_string(since) + "+";
  if (since == until) return std::to_string(since);
  return std::to_string(since) + "-" + std::to_string(until);
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) {
    if (!s.empty()) s += sep;
    s += p;
  }
  return s;
}

std::string JoinInts(const std::vector<int>& v, const std::string& sep = ", ") {
  std::vector<std::string> parts;
  for (int i : v) parts.push_back(std::to_string(i));
  return Join(parts, sep);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Display order of dtypes: floats, ints, bool, string, complex, then the narrow float and integer types.
const std::vector<DataType>& DisplayOrder() {
  static const std::vector<DataType> order = [] {
    std::vector<DataType> o = dtypes::Numeric();
    for (DataType t : {DataType::kBool, DataType::kString, DataType::kComplex64, DataType::kComplex128,
                       DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                       DataType::kFloat8E5M2FNUZ, DataType::kFloat8E8M0, DataType::kFloat4E2M1, DataType::kInt4,
                       DataType::kUint4, DataType::kInt2, DataType::kUint2}) {
      o.push_back(t);
    }
    for (DataType t : dtypes::All()) {  // any type added later goes last
      if (std::find(o.begin(), o.end(), t) == o.end()) o.push_back(t);
    }
    return o;
  }();
  return order;
}

std::vector<std::string> Names(const std::vector<DataType>& types) {
  std::vector<std::string> out;
  for (DataType t : types) out.emplace_back(DataTypeName(t));
  return out;
}

bool ContainsAll(const std::set<DataType>& s, const std::vector<DataType>& group) {
  return std::all_of(group.begin(), group.end(), [&](DataType t) { return s.count(t) > 0; });
}

std::string CapabilityText(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

std::string VersionsText(const OpsEntry& e) {
  std::vector<std::string> parts;
  for (int v : e.versions) {
    bool deprecated = std::find(e.deprecated_versions.begin(), e.deprecated_versions.end(), v) !=
                      e.deprecated_versions.end();
    const bool ort = schemas::OriginOf(e.domain, e.op, v) == schemas::OpOrigin::kOrtConvention;
    parts.push_back(std::to_string(v) + (deprecated ? " (deprecated)" : "") + (ort ? " (ONNX Runtime)" : ""));
  }
  return parts.empty() ? "no schema" : Join(parts, ", ");
}

std::string QualifiedName(const OpsEntry& e) { return e.domain.empty() ? e.op : e.domain + "::" + e.op; }

// Per-kernel type cells: "T: floats", "T1: as schema".
std::vector<std::string> TypeParts(const OpsKernel& k) {
  std::vector<std::string> parts;
  for (const auto& c : k.types) parts.push_back(c.var + ": " + DescribeTypes(c.types));
  for (const auto& v : k.unconstrained) parts.push_back(v + ": as schema");
  return parts;
}

// The instruction set oneDNN uses on this host (FERRY_ISA narrowing it as it narrows oneDNN).
std::string HostOneDnnIsa() { return cpu::DnnlIsaFor(DefaultIsa()); }

// The instruction set kernel `k`'s library uses here: `onednn_isa` (HostOneDnnIsa) for a oneDNN kernel, else "".
const std::string& LibraryIsa(const OpsKernel& k, const std::string& onednn_isa) {
  static const std::string none;
  return k.library == "oneDNN" ? onednn_isa : none;
}

// Host inputs, needs and constraints of one kernel; `library_isa`: the instruction set the kernel's library uses
// here ("" for the machine-independent docs/ops.md).
std::vector<std::string> NoteParts(const OpsKernel& k, const std::string& library_isa = "") {
  std::vector<std::string> parts;
  std::string c = k.ConstraintsText();
  if (!c.empty()) parts.push_back("constraints: " + c);
  if (!k.host_inputs.empty()) parts.push_back("host inputs: " + JoinInts(k.host_inputs));
  if (!k.isa.empty()) parts.push_back("needs: " + k.isa.ToString());
  if (k.min_compute_capability > 0) {
    parts.push_back("needs: compute capability " + CapabilityText(k.min_compute_capability));
  }
  if (!k.library.empty()) {
    parts.push_back("runs on " + k.library + (library_isa.empty() ? "" : " (its " + library_isa + " code here)"));
  }
  return parts;
}

void ComputeCoverage(const OpsEntry& e, int64_t max_opset, OpsBackendSupport& s) {
  s.uncovered.clear();
  s.missing_versions.clear();
  auto covered = [&](int opset) {
    return std::any_of(s.kernels.begin(), s.kernels.end(),
                       [&](const OpsKernel& k) { return k.since <= opset && opset <= k.until; });
  };
  auto add_uncovered = [&](int o) {
    if (!s.uncovered.empty() && s.uncovered.back().second == o - 1) {
      s.uncovered.back().second = o;
    } else {
      s.uncovered.push_back({o, o});
    }
  };
  // A plugin's domain with an open-ended op has no newest opset: judge up to the newest version anything names.
  if (max_opset >= kOpsetOpen) {
    max_opset = e.versions.empty() ? 1 : e.versions.back();
    for (const OpsKernel& k : s.kernels) {
      if (k.until != kOpsetOpen) max_opset = std::max<int64_t>(max_opset, k.until);
    }
  }
  for (size_t i = 0; i < e.versions.size(); ++i) {
    int v = e.versions[i];
    if (std::find(e.deprecated_versions.begin(), e.deprecated_versions.end(), v) != e.deprecated_versions.end()) {
      continue;
    }
    int last = i + 1 < e.versions.size() ? e.versions[i + 1] - 1 : static_cast<int>(std::max<int64_t>(max_opset, v));
    if (!covered(v)) s.missing_versions.push_back(v);
    for (int o = v; o <= last; ++o) {
      if (!covered(o)) add_uncovered(o);
    }
  }
  s.complete = !e.versions.empty() && s.uncovered.empty();
}

std::string MdEscape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string OpsKernel::ConstraintsText() const {
  if (!constraints.empty()) return constraints;
  if (predicate && shape_predicate) return "(predicate, shape predicate)";
  if (predicate) return "(predicate)";
  if (shape_predicate) return "(shape predicate)";
  return "";
}

std::string OpsBackendSupport::RangesText() const {
  std::vector<std::string> parts;
  std::set<std::pair<int, int>> seen;
  for (const auto& k : kernels) {
    if (seen.insert({k.since, k.until}).second) parts.push_back(RangeText(k.since, k.until));
  }
  return Join(parts, ", ");
}

std::string OpsEntry::CoverageText(const OpsBackendSupport& s) const {
  if (versions.empty()) return "no schema";
  if (s.complete) {
    int newest_live = 0;
    for (int v : versions) {
      if (std::find(deprecated_versions.begin(), deprecated_versions.end(), v) == deprecated_versions.end()) {
        newest_live = v;
      }
    }
    return "all versions up to " + std::to_string(newest_live);
  }
  std::vector<std::string> ranges;
  for (const auto& [a, b] : s.uncovered) ranges.push_back(RangeText(a, b));
  std::string text = "uncovered: opsets " + Join(ranges, ", ");
  if (!s.missing_versions.empty()) {
    text += " (version" + std::string(s.missing_versions.size() > 1 ? "s " : " ") + JoinInts(s.missing_versions) + ")";
  }
  return text;
}

const OpsBackendSupport* OpsEntry::Find(const std::string& backend) const {
  for (const auto& s : support) {
    if (s.backend == backend) return &s;
  }
  return nullptr;
}

std::string DomainDisplayName(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

std::string DescribeTypes(const std::vector<DataType>& types) {
  std::set<DataType> s(types.begin(), types.end());
  const auto all = dtypes::All();
  std::vector<DataType> missing;
  for (DataType t : DisplayOrder()) {
    if (!s.count(t)) missing.push_back(t);
  }
  bool within_all = ContainsAll(std::set<DataType>(all.begin(), all.end()), types);
  if (within_all && missing.empty()) return "all";
  if (within_all && s.size() >= 8 && missing.size() <= 3) return "all but " + Join(Names(missing), ", ");
  std::vector<std::string> parts;
  auto take = [&](const std::vector<DataType>& group, const char* name) {
    if (!ContainsAll(s, group)) return false;
    for (DataType t : group) s.erase(t);
    parts.emplace_back(name);
    return true;
  };
  if (!take(dtypes::Numeric(), "numeric")) {
    take(dtypes::Floats(), "floats");
    take(dtypes::Ints(), "ints");
  }
  for (DataType t : DisplayOrder()) {
    if (s.count(t)) parts.emplace_back(DataTypeName(t));
  }
  return Join(parts, ", ");
}

std::string OpsTypeLegend() {
  return "floats = " + Join(Names(dtypes::Floats()), ", ") + "; ints = " + Join(Names(dtypes::Ints()), ", ") +
         "; numeric = floats + ints; all = every tensor type (" + std::to_string(dtypes::All().size()) +
         "); \"as schema\" = whatever the op's schema allows";
}

OpsMatrix BuildOpsMatrix(const std::vector<const KernelRegistry*>& registries, const OpsFilter& filter) {
  std::vector<const KernelRegistry*> used;
  for (const auto* r : registries) {
    if (filter.backend.empty() || r->backend() == filter.backend) used.push_back(r);
  }
  if (!filter.backend.empty() && used.empty()) {
    std::vector<std::string> known;
    for (const auto* r : registries) known.push_back(r->backend());
    throw InvalidArgumentError("unknown backend '" + filter.backend + "' (known: " + Join(known, ", ") + ")");
  }
  const auto& schemas = schemas::SchemaRegistry::Get();
  std::optional<std::string> domain;
  if (filter.domain) domain = std::string(schemas::CanonicalDomain(*filter.domain));

  // Every (domain, op) a schema or a kernel names.
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& s : schemas.all()) keys.insert({std::string(schemas::CanonicalDomain(s.domain)), s.name});
  for (const auto* r : used) {
    for (const auto& d : r->defs()) keys.insert({std::string(schemas::CanonicalDomain(d.domain)), d.op});
  }
  std::vector<std::pair<std::string, std::string>> selected;
  for (const auto& k : keys) {
    if (domain && k.first != *domain) continue;
    if (!filter.op.empty() && k.second != filter.op) continue;
    selected.push_back(k);
  }
  if (selected.empty() && !filter.op.empty()) {  // no exact match: try ignoring case
    for (const auto& k : keys) {
      if (domain && k.first != *domain) continue;
      if (Lower(k.second) == Lower(filter.op)) selected.push_back(k);
    }
  }

  OpsMatrix m;
  for (const auto* r : used) m.backends.push_back(r->backend());
  for (const auto& [dom, op] : selected) {
    OpsEntry e;
    e.domain = dom;
    e.op = op;
    for (const auto* s : schemas.Versions(dom, op)) {
      e.versions.push_back(s->since_version);
      if (s->deprecated) e.deprecated_versions.push_back(s->since_version);
    }
    e.newest_version = e.versions.empty() ? 0 : e.versions.back();
    e.origin = std::string(schemas::OriginName(schemas::OriginOf(dom, op, e.newest_version)));
    for (const auto* r : used) {
      OpsBackendSupport sup;
      sup.backend = r->backend();
      for (const auto& d : r->defs()) {
        if (d.op != op || schemas::CanonicalDomain(d.domain) != dom) continue;
        OpsKernel k;
        k.name = d.name;
        k.since = d.since;
        k.until = d.until;
        k.types = d.types;
        if (const auto* schema = schemas.Find(dom, op, d.since)) {
          for (const auto& tc : schema->type_constraints) {
            bool declared = std::any_of(d.types.begin(), d.types.end(), [&](const auto& c) { return c.var == tc.var; });
            if (!declared) k.unconstrained.push_back(tc.var);
          }
        }
        k.predicate = static_cast<bool>(d.predicate);
        k.shape_predicate = static_cast<bool>(d.shape_predicate);
        k.constraints = d.constraints;
        k.host_inputs = d.host_inputs;
        k.isa = d.isa;
        k.min_compute_capability = d.min_compute_capability;
        k.library = d.library;
        sup.kernels.push_back(std::move(k));
      }
      if (sup.kernels.empty()) continue;
      std::sort(sup.kernels.begin(), sup.kernels.end(), [](const OpsKernel& a, const OpsKernel& b) {
        return std::tie(a.since, a.until, a.name) < std::tie(b.since, b.until, b.name);
      });
      ComputeCoverage(e, schemas.MaxOpset(dom), sup);
      e.support.push_back(std::move(sup));
    }
    m.ops.push_back(std::move(e));
  }
  return m;
}

OpsMatrix BuildOpsMatrix(const OpsFilter& filter) {
  std::vector<const KernelRegistry*> registries;
  for (const auto& name : BackendNames()) registries.push_back(&FindBackend(name)->kernels());
  return BuildOpsMatrix(registries, filter);
}

// ---------------------------------------------------------------------------------------------------------------
// Text: one block per op.
//   Relu: schema versions 1, 6, 13, 14
//     ref: 1-5, 6-12, 13, 14+ (all versions up to 14)
//       1-5     T: floats
std::string OpsMatrixText(const OpsMatrix& m) {
  std::ostringstream out;
  const std::string onednn_isa = HostOneDnnIsa();
  for (const auto& e : m.ops) {
    const bool onnx = e.origin == schemas::OriginName(schemas::OpOrigin::kOnnx);
    out << e.op << (e.domain.empty() ? "" : " (" + e.domain + (onnx ? "" : ", " + e.origin) + ")")
        << ": schema versions " << VersionsText(e) << "\n";
    const std::string_view refused = RefusedOpReason(e.domain, e.op);
    if (!refused.empty()) out << "  no backend implements it: " << refused << "\n";
    for (const auto& b : m.backends) {
      const OpsBackendSupport* s = e.Find(b);
      if (!s) {
        out << "  " << b << ": not implemented\n";
        continue;
      }
      out << "  " << b << ": " << s->RangesText() << " (" << e.CoverageText(*s) << ")\n";
      for (const auto& k : s->kernels) {
        std::string range = RangeText(k.since, k.until);
        range.resize(std::max<size_t>(range.size(), 7), ' ');
        std::vector<std::string> cells = TypeParts(k);
        for (auto& n : NoteParts(k, LibraryIsa(k, onednn_isa))) cells.push_back(std::move(n));
        out << "    " << range << " " << (cells.empty() ? "-" : Join(cells, " | ")) << "\n";
      }
    }
  }
  if (m.ops.size() > 1) {
    std::map<std::string, int> per_domain;
    std::vector<std::string> none;
    for (const auto& e : m.ops) {
      per_domain[DomainDisplayName(e.domain)]++;
      if (e.support.empty()) none.push_back(QualifiedName(e));
    }
    std::vector<std::string> domains;
    for (const auto& [d, n] : per_domain) domains.push_back(d + " " + std::to_string(n));
    out << "\n" << m.ops.size() << " ops (" << Join(domains, ", ") << ")\n";
    for (const auto& b : m.backends) {
      int impl = 0, complete = 0;
      for (const auto& e : m.ops) {
        const OpsBackendSupport* s = e.Find(b);
        impl += s != nullptr;
        complete += s != nullptr && s->complete;
      }
      out << b << ": implements " << impl << ", every live version of " << complete << "\n";
    }
    out << "no kernel in any backend shown: " << (none.empty() ? "none" : Join(none, ", ")) << "\n";
  }
  if (!m.ops.empty()) out << "types: " << OpsTypeLegend() << "\n";
  return out.str();
}

std::string OpsMatrixJson(const OpsMatrix& m) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["backends"] = m.backends;
  j["ops"] = Json::array();
  const std::string onednn_isa = HostOneDnnIsa();
  std::vector<std::string> none;
  std::map<std::string, std::array<int, 3>> per_backend;  // ops, kernels, complete
  for (const auto& b : m.backends) per_backend[b] = {0, 0, 0};
  int with_schema = 0;
  for (const auto& e : m.ops) {
    Json o;
    o["op"] = e.op;
    o["domain"] = DomainDisplayName(e.domain);
    o["schema_versions"] = e.versions;
    o["deprecated_versions"] = e.deprecated_versions;
    o["newest_version"] = e.newest_version;
    o["origin"] = e.origin;
    if (const std::string_view refused = RefusedOpReason(e.domain, e.op); !refused.empty()) {
      o["refused"] = std::string(refused);  // kernels/refused_ops.h: no backend implements it, and why
    }
    o["support"] = Json::array();
    with_schema += !e.versions.empty();
    if (e.support.empty()) none.push_back(QualifiedName(e));
    for (const auto& s : e.support) {
      Json b;
      b["backend"] = s.backend;
      b["ranges"] = s.RangesText();
      b["complete"] = s.complete;
      b["coverage"] = e.CoverageText(s);
      b["missing_versions"] = s.missing_versions;
      b["uncovered_opsets"] = Json::array();
      for (const auto& [lo, hi] : s.uncovered) b["uncovered_opsets"].push_back({lo, hi});
      b["kernels"] = Json::array();
      for (const auto& k : s.kernels) {
        Json kj;
        kj["name"] = k.name;
        kj["since"] = k.since;
        kj["until"] = k.until == kOpsetOpen ? Json(nullptr) : Json(k.until);
        kj["types"] = Json::object();
        for (const auto& c : k.types) kj["types"][c.var] = Names(c.types);
        kj["unconstrained"] = k.unconstrained;
        kj["predicate"] = k.predicate;
        kj["shape_predicate"] = k.shape_predicate;
        kj["constraints"] = k.ConstraintsText();
        kj["host_inputs"] = k.host_inputs;
        kj["isa"] = k.isa.Names();
        kj["min_compute_capability"] = k.min_compute_capability;
        if (!k.library.empty()) {
          kj["library"] = k.library;
          kj["library_isa"] = LibraryIsa(k, onednn_isa);
        }
        b["kernels"].push_back(std::move(kj));
      }
      auto& counts = per_backend[s.backend];
      counts[0] += 1;
      counts[1] += static_cast<int>(s.kernels.size());
      counts[2] += s.complete;
      o["support"].push_back(std::move(b));
    }
    j["ops"].push_back(std::move(o));
  }
  Json summary;
  summary["ops"] = m.ops.size();
  summary["with_schema"] = with_schema;
  summary["not_implemented"] = none;
  summary["backends"] = Json::object();
  for (const auto& b : m.backends) {
    const auto& c = per_backend[b];
    summary["backends"][b] = {{"ops", c[0]}, {"kernels", c[1]}, {"complete", c[2]}};
  }
  j["summary"] = std::move(summary);
  return j.dump(2) + "\n";
}

std::string OpsMatrixMarkdown(const OpsMatrix& m) {
  std::ostringstream out;
  out << "# Operator support\n\n"
      << "Generated from the kernel registries and operator schemas by `ferry ops --md` (`cmake --build build "
         "--target ops-doc`); do not edit by hand. A test (`ops_doc_current`) checks it is current.\n\n"
      << "How to read it: opset ranges are inclusive and `14+` runs through the newest opset Ferry knows. A "
         "backend's cell lists the opset ranges of its kernels and, when some opset from the op's first schema "
         "version on has no kernel, which ones (`uncovered`); `—` means the backend has no kernel for the op. "
         "Types: "
      << OpsTypeLegend()
      << ". Notes: attribute or shape constraints of the kernel (what it does not implement; `(predicate)` when "
         "the kernel gives no description), inputs that must live in host memory, CPU extensions or GPU "
         "compute capability the kernel needs, and `runs on oneDNN` where oneDNN does its arithmetic (oneDNN "
         "then picks its own code for the CPU, capped by `--isa` / `FERRY_ISA`; `ferry ops` and `ferry check` "
         "name the instruction set it uses on the machine they run on).\n\n";

  // Domains in matrix order ("" first).
  std::vector<std::string> domains;
  for (const auto& e : m.ops) {
    if (domains.empty() || domains.back() != e.domain) domains.push_back(e.domain);
  }
  const auto& schemas = schemas::SchemaRegistry::Get();
  out << "## Summary\n\n| domain | newest opset | ops |";
  for (const auto& b : m.backends) out << " " << b << " | " << b << ", every version |";
  out << "\n|---|---:|---:|";
  for (size_t i = 0; i < m.backends.size(); ++i) out << "---:|---:|";
  out << "\n";
  std::vector<std::string> none;
  for (const auto& d : domains) {
    int ops = 0;
    std::map<std::string, std::pair<int, int>> counts;
    for (const auto& e : m.ops) {
      if (e.domain != d) continue;
      ++ops;
      if (e.support.empty()) none.push_back("`" + QualifiedName(e) + "`");
      for (const auto& s : e.support) {
        counts[s.backend].first += 1;
        counts[s.backend].second += s.complete;
      }
    }
    out << "| " << DomainDisplayName(d) << " | " << schemas.MaxOpset(d) << " | " << ops << " |";
    for (const auto& b : m.backends) out << " " << counts[b].first << " | " << counts[b].second << " |";
    out << "\n";
  }
  out << "\nNo kernel in any backend: " << (none.empty() ? "none" : Join(none, ", ")) << ".\n";
  std::vector<std::string> refused;
  for (const auto& e : m.ops) {
    const std::string_view reason = RefusedOpReason(e.domain, e.op);
    if (!reason.empty()) refused.push_back("`" + QualifiedName(e) + "`: " + std::string(reason));
  }
  if (!refused.empty()) {
    out << "\nNot implemented by any backend, by decision (`src/kernels/refused_ops.h`):\n\n";
    for (const std::string& r : refused) out << "- " << r << "\n";
  }

  for (const auto& d : domains) {
    out << "\n## " << DomainDisplayName(d) << "\n\n";
    if (d == schemas::kMsDomain || d == schemas::kMsNchwcDomain) {
      out << "ONNX Runtime's contrib operators: Ferry knows their schemas (import, type inference, validation); "
             "the columns say which have kernels.\n\n";
    }
    out << "| op | schema versions |";
    for (const auto& b : m.backends) out << " " << b << " |";
    out << "\n|---|---|";
    for (size_t i = 0; i < m.backends.size(); ++i) out << "---|";
    out << "\n";
    for (const auto& e : m.ops) {
      if (e.domain != d) continue;
      out << "| " << e.op << " | " << VersionsText(e) << " |";
      for (const auto& b : m.backends) {
        const OpsBackendSupport* s = e.Find(b);
        if (!s) {
          out << " — |";
        } else {
          out << " " << s->RangesText() << (s->complete ? "" : " (" + e.CoverageText(*s) + ")") << " |";
        }
      }
      out << "\n";
    }
  }

  out << "\n## Kernels\n\nOne row per kernel (KernelDef).\n";
  for (const auto& d : domains) {
    out << "\n### " << DomainDisplayName(d) << "\n\n| op | backend | opsets | types | notes |\n|---|---|---|---|---|\n";
    for (const auto& e : m.ops) {
      if (e.domain != d) continue;
      for (const auto& s : e.support) {
        for (const auto& k : s.kernels) {
          out << "| " << e.op << " | " << s.backend << " | " << RangeText(k.since, k.until) << " | "
              << MdEscape(Join(TypeParts(k), "; ")) << " | " << MdEscape(Join(NoteParts(k), "; ")) << " |\n";
        }
      }
    }
  }
  return out.str();
}

}  // namespace ferry::tools
