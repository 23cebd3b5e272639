// ferry ops [--backend B] [--op X] [--domain D] [--plugin PATH]... [--json|--md]: the operator support matrix, read from the
// kernel registries and schemas (src/tools/ops_matrix.h documents the JSON).
// Exit codes: 0 ok; 1 when the filters match no op (a valid, empty document is still printed for --json and
// --md; text prints nothing on stdout); 2 usage error, including an unknown --backend.
#include <iostream>

#include "backends/backend.h"
#include "backends/plugin/plugin_loader.h"
#include "commands.h"
#include "placement_flags.h"
#include "tools/ops_matrix.h"

namespace ferry::cli {
namespace {

struct OpsArgs {
  std::string backend, op, domain;
  bool json = false, md = false;
  PlacementFlags placement;
};

int Ops(const OpsArgs& a, const CLI::App& cmd) {
  for (const auto& path : a.placement.plugins) LoadPlugin(path);  // errors: exit 1 (main)
  if (!a.backend.empty() && !FindBackend(a.backend)) {
    std::string known;
    for (const auto& n : BackendNames()) known += (known.empty() ? "" : ", ") + n;
    std::cerr << "ferry ops: unknown backend '" << a.backend << "' (known: " << known << ")\n";
    return 2;
  }
  tools::OpsFilter filter;
  filter.backend = a.backend;
  filter.op = a.op;
  if (cmd.count("--domain")) filter.domain = a.domain;
  tools::OpsMatrix m = tools::BuildOpsMatrix(filter);
  if (a.json) {
    std::cout << tools::OpsMatrixJson(m);
  } else if (a.md) {
    std::cout << tools::OpsMatrixMarkdown(m);
  } else {
    std::cout << tools::OpsMatrixText(m);
  }
  if (m.ops.empty()) {
    std::cerr << "ferry ops: no op matches";
    if (!a.op.empty()) std::cerr << " --op " << a.op;
    if (cmd.count("--domain")) std::cerr << " --domain '" << a.domain << "'";
    std::cerr << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

Command AddOpsCommand(CLI::App& app) {
  auto args = std::make_shared<OpsArgs>();
  CLI::App* cmd = app.add_subcommand("ops", "show which ops, opsets, dtypes and constraints each backend supports");
  cmd->add_option("--backend", args->backend, "only this backend (default: every backend)");
  cmd->add_option("--op", args->op, "only this op (exact name, else matched ignoring case)");
  cmd->add_option("--domain", args->domain, "only this domain: ai.onnx (or \"\"), ai.onnx.ml, ai.onnx.preview.training, ...");
  auto* json = cmd->add_flag("--json", args->json, "machine-readable output");
  auto* md = cmd->add_flag("--md", args->md, "the Markdown of docs/ops.md");
  json->excludes(md);
  AddPluginFlag(*cmd, args->placement);
  cmd->footer("Exit codes: 0 ok, 1 no op matches the filters, 2 usage error (including an unknown --backend).");
  return [args, cmd] { return Ops(*args, *cmd); };
}

}  // namespace ferry::cli
