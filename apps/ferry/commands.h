// Subcommands of the `ferry` CLI. Each file registers its subcommand on the app and returns the exit code
// through a callback; exit codes follow DESIGN.md (0 ok, 1 error, 2 usage, 3 check failed).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ferry::cli {

using Command = std::function<int()>;

// Adds `ferry run` to `app`; the returned command runs it after parsing.
Command AddRunCommand(CLI::App& app);
// Adds `ferry ops`: the operator support matrix (text, --json, or --md for docs/ops.md).
Command AddOpsCommand(CLI::App& app);
// Adds `ferry check`: will this model run on these backends and this hardware, node by node (exit 3: a gate failed).
Command AddCheckCommand(CLI::App& app);
// Adds `ferry optimize`: run the graph passes and write the model as ONNX (portable, or for --target backends).
Command AddOptimizeCommand(CLI::App& app);
// Adds `ferry serve`: a KServe v2 inference server over a Triton-style model repository (docs/serve.md).
Command AddServeCommand(CLI::App& app);
// Adds `ferry bench`: latency and throughput over batch sizes x threads x concurrency (table, --json, --csv, --plot).
Command AddBenchCommand(CLI::App& app);
// Adds `ferry compare`: a model under two configurations, or against stored outputs (exit 3: beyond tolerance).
Command AddCompareCommand(CLI::App& app);

// Adds `ferry help [COMMAND]`: the help of the app, or of one command (as `ferry COMMAND --help`).
Command AddHelpCommand(CLI::App& app);

}  // namespace ferry::cli
