// ferry help [COMMAND]: what `ferry --help` and `ferry COMMAND --help` print, for users who type the verb first.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"

namespace ferry::cli {

Command AddHelpCommand(CLI::App& app) {
  auto topic = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("help", "print the help of ferry, or of one command (ferry help run)");
  cmd->add_option("command", *topic, "the command to describe");
  CLI::App* root = &app;
  return [root, topic]() -> int {
    // App::help() would describe the subcommand parsed (this one); the formatter describes the app asked for.
    if (topic->empty()) {
      std::cout << root->get_formatter()->make_help(root, root->get_name(), CLI::AppFormatMode::Normal);
      return 0;
    }
    for (const CLI::App* sub : root->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == *topic && *topic != "help") {
        std::cout << sub->help(root->get_name());
        return 0;
      }
    }
    std::string known;
    for (const CLI::App* sub : root->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() != "help") known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    std::cerr << "ferry help: no command '" << *topic << "' (commands: " << known << ")\n";
    return 2;
  };
}

}  // namespace ferry::cli
