// The executor: compiles a graph (and its subgraphs) into steps with value slots, creates one kernel per node
// on the backend placement chose, turns the placement's copy plans into copy steps (initializer copies are done
// once, here), and runs the steps. Run() is const and thread-safe: per-run state lives in a Frame on the
// caller's stack.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ferry/value.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "runtime/placement.h"

namespace ferry::runtime {

class Executor {
 public:
  // Creates kernels for every node of `graph` and its subgraphs as `placement` decided. Throws ferry::Error
  // naming the node when a kernel rejects its node.
  Executor(const ir::Model& model, const Placement& placement, int threads);
  ~Executor();

  // Runs the top graph. `inputs` is one Value per graph input (graph().inputs() order); a kNone entry for an
  // input that also has an initializer means "use the initializer". Returns one Value per graph output.
  std::vector<Value> Run(std::vector<Value> inputs, RunStats* stats = nullptr) const;

  struct CompiledGraph;

 private:
  struct Frame;
  void Compile(const ir::Graph& graph, const Placement& placement);
  std::vector<Value> RunGraph(const CompiledGraph& cg, std::vector<Value> inputs, const Frame* parent,
                              RunStats* stats) const;

  const ir::Model& model_;
  int threads_;
  std::unordered_map<const ir::Graph*, std::unique_ptr<CompiledGraph>> compiled_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
};

}  // namespace ferry::runtime
