// pageblame's subcommands, in the order `pageblame --help` lists them.
//
//   const Command* c = FindCommand("maps");
//   return c->run(args);
#ifndef PAGEBLAME_CLI_COMMAND_REGISTRY_H_
#define PAGEBLAME_CLI_COMMAND_REGISTRY_H_

#include <string>
#include <vector>

#include "processor/cli/command_spec.h"

namespace pageblame::cli {

struct Command {
  const CommandSpec* spec;
  int (*run)(const std::vector<std::string>& argv);  // returns the exit code (usage.h)
  const char* summary;                               // one line for the top-level help
};

const std::vector<Command>& AllCommands();
const Command* FindCommand(const std::string& name);

}  // namespace pageblame::cli

#endif  // PAGEBLAME_CLI_COMMAND_REGISTRY_H_
