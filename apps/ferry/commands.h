// Subcommands of the `ferry` CLI. Each file registers its subcommand on the app and returns the exit code
// through a callback; exit codes follow DESIGN.md (0 ok, 1 error, 2 usage, 3 check failed).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ferry::cli {

using Command = std::function<int()>;

// Adds `ferry run` to `app`; the returned command runs it after parsing.
Command AddRunCommand(CLI::App& app);

}  // namespace ferry::cli
