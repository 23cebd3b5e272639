// The model census behind `ferry check`: will this model run on these backends and this hardware, node by
// node, and if not, where (graph / kernel / hardware layer), why, and what to do. It loads the model without
// building a session and asks the same registry query placement uses, so check and run cannot disagree.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace ferry::tools {

struct CheckOptions {
  std::vector<std::string> backends = {"cpu", "ref"};  // priority order (a session's default)
  std::string isa;                              // "" = host (narrowed by FERRY_ISA); else e.g. "avx2,fma"
  // false (what a session does): the target is the host's ISA narrowed by `isa` (--isa emulates a lesser CPU).
  // true: the target is exactly `isa` (--target-isa: judging for another machine than this one).
  bool isa_exact = false;
  int compute_capability = 0;                   // GPU target, e.g. 75; 0 = none
  std::map<std::string, std::vector<int64_t>> shapes;  // --shape NAME=DIMS for symbolic input dims
  // As in SessionOptions: --no-fallback, --pin NODE_OR_OP=BACKEND, --plugin PATH.
  bool allow_fallback = true;
  std::vector<std::pair<std::string, std::string>> pins;
  std::vector<std::string> plugins;
};

// native: on the first backend (or the plugin providing its custom op); pinned: where --pin put it; fallback: on
// a later backend; unsupported: nowhere (or not as pinned / not without falling back under --no-fallback).
enum class Verdict { kNative, kFallback, kUnsupported, kPinned };
const char* VerdictName(Verdict v);  // "native", "fallback", "unsupported", "pinned"

struct BackendAttempt {
  std::string backend;
  FailureLayer layer = FailureLayer::kNone;  // kNone when this backend took the node
  std::string reason;
};

struct NodeCheck {
  std::string name, op, domain;  // domain "" = ai.onnx
  int64_t opset = 0;             // the node's domain opset
  std::string graph;             // "main" or the path of the subgraph holding it ("main/If_3:then_branch")
  Verdict verdict = Verdict::kUnsupported;
  std::string backend;           // backend that runs it ("" when unsupported)
  std::string kernel;            // KernelDef name
  std::string library;           // KernelDef::library: "oneDNN" (then it uses CheckReport::onednn_isa) or ""
  FailureLayer layer = FailureLayer::kNone;  // first backend's failure layer (kNone when native)
  std::string reason;            // one line: why it is not native
  std::string remedy;            // one line: what to do ("" when native)
  // Unsupported nodes only: the decomposition `--legalize` would rewrite it with into ops the backends run
  // (legalize/decomposition.h), its one-line description; "" when there is none.
  std::string rewrite;
  std::vector<BackendAttempt> attempts;  // every backend asked, in order, until one took it
  std::vector<std::string> inputs, outputs;  // value names (for the graph drawing)
  std::vector<std::string> input_types, output_types;  // TypeInfo::ToString()
  double flops = 0;              // estimated from static shapes; 0 when unknown
};

struct OpsetInfo {
  std::string domain;
  int64_t model = 0;      // what the model imports
  int64_t supported = 0;  // the newest Ferry's schemas know (0: unknown domain)
};

struct CheckReport {
  std::string model_path;
  int64_t ir_version = 0;
  std::string producer;
  std::vector<OpsetInfo> opsets;
  int64_t node_count = 0, initializer_count = 0;  // node_count: every node checked (subgraphs and inlined
                                                   // function bodies included); initializers of the main graph
  int64_t initializers_not_loaded = 0;             // weights whose data check skipped (never needed)
  int64_t initializer_bytes_not_loaded = 0;
  std::vector<std::string> backends;
  std::string isa;                                 // the target ISA the kernels were judged against
  std::string onednn_isa;  // with the cpu backend: the instruction set its oneDNN kernels use on that target
  int compute_capability = 0;
  std::vector<NodeCheck> nodes;  // topological order, subgraph nodes after their parent
  // Model-level problems that are not one node's verdict (type inference proved the model invalid, a function
  // could not be inlined), one line each; and warnings (declared types that disagree with inferred ones).
  std::vector<std::string> problems, warnings;

  // Summary.
  int64_t native = 0, fallback = 0, unsupported = 0, pinned = 0;
  int64_t rewritable = 0;  // unsupported nodes with a rewrite available (`--legalize`)
  double total_flops = 0, fallback_flops = 0;
  // Nodes whose op does arithmetic (it has a FLOPs estimate) but whose shapes are not static, so that their cost
  // is not in total_flops; and the inputs with symbolic dims that --shape would fix ("x [batch,seq,64]").
  int64_t flops_unknown = 0;
  std::vector<std::string> symbolic_inputs;
  double fallback_ratio_nodes() const;  // (fallback + unsupported) / nodes
  double fallback_ratio_flops() const;  // flops of fallback and unsupported nodes / total
  // A problem (type inference proving the model invalid, a function that cannot be inlined) is one a session
  // stops at too: the model is then not runnable, whatever the nodes' verdicts.
  bool runnable() const { return unsupported == 0 && problems.empty(); }
};

// Throws ferry::Error only when the model cannot be read at all (not a ModelProto, missing file), or
// InvalidArgumentError when the options are wrong (unknown backend or ISA, a --shape naming no input or of the
// wrong rank); every per-node problem is reported in the result, all of them at once.
// Weights are not loaded (only initializers of up to 1024 elements, which shape inference may read).
CheckReport CheckModel(const std::string& model_path, const CheckOptions& options);

// CI gates (`--fail-on`, `--max-fallback`).
enum class FailOn { kNever, kUnsupported, kFallback };
struct CheckGate {
  FailOn fail_on = FailOn::kNever;
  double max_fallback_pct = -1;  // fallback ratio by node count, in percent; < 0: no limit
};
// Why `report` breaches `gate`, one line each; empty when it passes (then `ferry check` exits 0, else 3).
std::vector<std::string> GateFailures(const CheckReport& report, const CheckGate& gate);

// The report as text (`ferry check`): model summary, non-native nodes (every node with `verbose`), ops by
// verdict, fallback ratios and every problem with its remedy.
std::string FormatCheckText(const CheckReport& report, bool verbose = false);
// The report as JSON (`ferry check --json`, schema in docs/check.md); with `gate`, its verdict is included.
std::string FormatCheckJson(const CheckReport& report, const CheckGate* gate = nullptr);

}  // namespace ferry::tools
