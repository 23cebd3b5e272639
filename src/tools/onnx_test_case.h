// ONNX backend test cases on disk: <case>/model.onnx and <case>/test_data_set_N/{input,output}_K.pb, where
// each .pb is a TensorProto, SequenceProto or OptionalProto depending on the model's input/output type.
#pragma once

#include <string>
#include <vector>

#include "ferry/value.h"
#include "tools/tensor_compare.h"

namespace ferry::tools {

struct OnnxTestCase {
  std::string dir;       // the case folder
  std::string category;  // "node", "pytorch-converted", ...
  std::string name;      // "test_abs"
  std::string id() const { return category + "/" + name; }
};

// Every case folder under `data_dir` (sorted by name). `category` defaults to the folder's name.
std::vector<OnnxTestCase> ListOnnxTestCases(const std::string& data_dir);

// What the case's model is made of: the op types it uses (top graph and subgraphs, "domain::Op" outside
// ai.onnx; sorted, unique) and the opset it imports for the default domain (0 when it imports none). Both are
// empty/0 when the model cannot be parsed.
struct OnnxTestCaseModel {
  std::vector<std::string> ops;
  int opset = 0;
};
OnnxTestCaseModel ReadOnnxTestCaseModel(const OnnxTestCase& c);

// Runs every data set of `c` on a session over `backends`; returns "" on success, else the failure reason.
// Throws ferry::Error for load/run failures (the caller reports them).
std::string RunOnnxTestCase(const OnnxTestCase& c, const std::vector<std::string>& backends, int threads,
                            const Tolerance& tol);

// Loads a .pb file as the value kind the declared `kind` ("tensor", "sequence", "optional") says.
Value LoadPbValue(const std::string& path, const std::string& kind);

}  // namespace ferry::tools
