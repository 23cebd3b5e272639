// ferry optimize IN OUT: run the optimizer's passes on a model and write it back as ONNX, reporting what each pass
// did. Without --target the output is portable (standard ONNX ops only, for any runtime); with --target it may
// hold Ferry's own fused ops (domain ai.ferry) for those backends; `--target ort` writes the fused graph in ONNX
// Runtime's ops (com.microsoft), for ONNX Runtime to load. `--list-passes [--md]` lists the passes.
// Exit codes: 0 ok; 1 the model cannot be read or the output cannot be written; 2 a usage error (flags, an unknown
// pass or backend, a --shape that does not fit the model's inputs, an --opset some node cannot be expressed in).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.h"
#include "core/regular_file.h"
#include "ferry/error.h"
#include "ir/dump.h"
#include "passes/pass_manager.h"
#include "tools/optimize.h"
#include "tools/run_inputs.h"

namespace ferry::cli {
namespace {

struct OptimizeArgs {
  std::string input, output;
  int level = passes::kDefaultLevel;
  std::vector<std::string> shapes, disabled;
  std::string targets, isa;
  bool external_data = false, json = false;
  bool legalize = false;
  int64_t opset = 0;
  std::string dump_ir, dump_ir_each;
  bool list_passes = false, md = false;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int Usage(const std::string& message) {
  std::cerr << "ferry optimize: " << message << "\n";
  return 2;
}

// Writes `text` to `path`; false (with a message on stderr) when it cannot.
bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out && out.write(text.data(), static_cast<std::streamsize>(text.size())) && out.flush()) return true;
  std::cerr << "ferry: error [InvalidArgument]: cannot write '" << path << "'\n";
  return false;
}

int Optimize(const OptimizeArgs& a) {
  if (a.list_passes) {
    std::cout << (a.md ? tools::PassListMarkdown() : tools::PassListText());
    return 0;
  }
  if (a.md) return Usage("--md goes with --list-passes");
  if (a.input.empty() || a.output.empty()) return Usage("expected IN and OUT model paths (or --list-passes)");

  tools::OptimizeOptions options;
  options.level = a.level;
  options.disabled = a.disabled;
  options.legalize = a.legalize;
  options.opset = a.opset;
  options.isa = a.isa;
  try {
    options.targets = SplitList(a.targets);
    if (!a.targets.empty() && options.targets.empty()) throw InvalidArgumentError("--target: the list is empty");
    for (const auto& s : a.shapes) {
      auto [name, dims] = tools::ParseAssignment(s, "--shape");
      if (options.shapes.count(name)) throw InvalidArgumentError("--shape " + name + " is given twice");
      options.shapes[name] = tools::ParseDims(dims, "--shape " + name);
    }
    tools::ValidateOptimizeOptions(options);
  } catch (const Error& e) {
    return Usage(e.what());
  }
  std::error_code ec;
  if (const RegularFile file = RegularFile::Open(a.input); !file.ok()) {  // a FIFO is refused without blocking
    std::cerr << "ferry: error [InvalidArgument]: model '" << a.input
              << "': " << (file.error() == "does not exist" ? "no such file" : file.error()) << "\n";
    return 1;
  }

  // --dump-ir-each DIR: 00_input.ir, then NN_<pass>.ir after each pass that changed the graph.
  std::string dump_error;
  if (!a.dump_ir_each.empty()) {
    std::filesystem::create_directories(a.dump_ir_each, ec);
    if (ec) {
      std::cerr << "ferry: error [InvalidArgument]: --dump-ir-each: cannot create '" << a.dump_ir_each
                << "': " << ec.message() << "\n";
      return 1;
    }
    auto count = std::make_shared<int>(0);
    options.instrument = [dir = a.dump_ir_each, count, &dump_error](const passes::PassRun* run, const ir::Model& m) {
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%02d_", (*count)++);
      const std::string file = (std::filesystem::path(dir) / (prefix + (run ? run->name : "input") + ".ir")).string();
      if (dump_error.empty() && !WriteText(file, ir::DumpModel(m))) dump_error = file;
    };
  }

  tools::OptimizeResult result;
  try {
    result = tools::OptimizeModelFile(a.input, options);
  } catch (const Error& e) {
    // The options were checked above: an InvalidArgumentError now is a --shape that does not fit the model, or
    // an --opset some node cannot be expressed in (the message lists them).
    if (e.category() == ErrorCategory::kInvalidArgument) return Usage(e.what());
    throw;
  }
  if (!dump_error.empty()) return 1;
  ir::ExportOptions export_options;
  export_options.external_data = a.external_data;
  tools::WriteOptimizedModel(result, a.output, export_options);
  if (!a.dump_ir.empty() && !WriteText(a.dump_ir, ir::DumpModel(*result.model))) return 1;
  std::cout << (a.json ? tools::FormatOptimizeJson(result) : tools::FormatOptimizeText(result));
  return 0;
}

}  // namespace

Command AddOptimizeCommand(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize", "run the graph optimizer on a model and write it as ONNX (docs/optimize.md)");
  cmd->add_option("in", args->input, "the model to optimize (.onnx)");
  cmd->add_option("out", args->output, "where to write the optimized model (.onnx)");
  cmd->add_option("-O,--level,--opt-level", args->level,
                  "optimization level 0-" + std::to_string(passes::kMaxLevel) + " (default " +
                      std::to_string(passes::kDefaultLevel) + ")")
      ->check(CLI::Range(0, passes::kMaxLevel));
  cmd->add_option("--shape", args->shapes,
                  "NAME=DIMS, e.g. input=1,3,224,224: fix that input's shape (symbolic dims become static) before "
                  "optimizing; repeatable");
  cmd->add_option("--target", args->targets,
                  "optimize for these backends, in priority order (e.g. cpu,ref): fused ops of domain ai.ferry "
                  "that only Ferry runs are allowed; `ort`: ONNX Runtime's ops (com.microsoft fusions) for ONNX "
                  "Runtime to load. Default: none, the output is standard ONNX");
  cmd->add_option("--isa", args->isa, "with --target: optimize for a CPU with only these extensions, e.g. avx2,fma");
  cmd->add_option("--disable,--disable-pass", args->disabled, "do not run this pass; repeatable");
  cmd->add_flag("--legalize", args->legalize,
                "with --target: rewrite nodes those backends have no kernel for into standard ONNX ops they run, "
                "where a rewrite exists (`ferry check` lists them as \"rewrite available\")");
  cmd->add_option("--opset", args->opset,
                  "convert the model's ai.onnx opset to N (7-28) before optimizing; fails listing every node that "
                  "cannot be expressed in opset N");
  cmd->add_flag("--external-data", args->external_data,
                "write initializers over 1 KiB to OUT.data beside OUT (ONNX external data)");
  cmd->add_flag("--json", args->json, "machine-readable report");
  cmd->add_option("--dump-ir", args->dump_ir, "write the optimized graph in Ferry's IR text form to FILE");
  cmd->add_option("--dump-ir-each", args->dump_ir_each,
                  "write the IR before the passes (00_input.ir) and after each pass that changed it "
                  "(NN_<pass>.ir) into DIR");
  cmd->add_flag("--list-passes", args->list_passes, "list every pass in run order: name, level, what it rewrites");
  cmd->add_flag("--md", args->md, "with --list-passes: Markdown (the generated part of docs/optimize.md)");
  return [args] { return Optimize(*args); };
}

}  // namespace ferry::cli
