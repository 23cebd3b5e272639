// ferry: the command-line front end. One file per subcommand.
#include <iostream>

#include "commands.h"
#include "ferry/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Ferry: run ONNX models, and know before deploying whether they will run"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ferry " FERRY_VERSION);  // CMakeLists.txt's project() version
  std::vector<std::pair<CLI::App*, ferry::cli::Command>> commands;
  ferry::cli::Command run = ferry::cli::AddRunCommand(app);
  ferry::cli::Command ops = ferry::cli::AddOpsCommand(app);
  ferry::cli::Command check = ferry::cli::AddCheckCommand(app);
  ferry::cli::Command optimize = ferry::cli::AddOptimizeCommand(app);
  ferry::cli::Command serve = ferry::cli::AddServeCommand(app);
  ferry::cli::Command bench = ferry::cli::AddBenchCommand(app);
  ferry::cli::Command compare = ferry::cli::AddCompareCommand(app);
  ferry::cli::Command help = ferry::cli::AddHelpCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("ops")) return ops();
    if (app.got_subcommand("check")) return check();
    if (app.got_subcommand("optimize")) return optimize();
    if (app.got_subcommand("serve")) return serve();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("compare")) return compare();
    if (app.got_subcommand("help")) return help();
  } catch (const ferry::Error& e) {
    std::cerr << "ferry: error [" << ferry::ErrorCategoryName(e.category()) << "]: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ferry: internal error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
