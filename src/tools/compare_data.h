// Inputs and stored reference outputs for `ferry compare`.
//
// A data folder holds one data set, or several as subfolders test_data_set_0, test_data_set_1, ... (the ONNX
// backend test layout). In a data set, an input is read from input_K.pb (the K-th input the caller feeds) or from
// NAME.npy / NAME.pb, an output from output_K.pb or NAME.npy / NAME.pb; in NAME, the characters / \ : may be
// written as _ (as `ferry run --output-dir` writes them). .pb files are TensorProto (SequenceProto or
// OptionalProto for such inputs and outputs), as in the ONNX test data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "tools/run_inputs.h"

namespace ferry::tools {

struct DataSet {
  std::string dir;
  std::map<std::string, Value> inputs;   // by input name (possibly none)
  std::map<std::string, Value> outputs;  // by output name (possibly none)
};

// The data sets of `dir`. Throws InvalidArgumentError naming the folder when it does not exist or holds no file
// for any input or output of the model.
std::vector<DataSet> ReadDataDir(const std::string& dir, const std::vector<IoInfo>& inputs,
                                 const std::vector<IoInfo>& outputs);

// Where the inputs of each trial come from (`--inputs random|zeros|ones|DIR`).
struct InputSource {
  enum class Kind { kRandom, kZeros, kOnes, kDir };
  Kind kind = Kind::kRandom;
  std::string dir;  // kDir
  InputSpec spec;   // shapes, --batch, --range and the seed (kRandom; shapes for zeros and ones too)
};

// Parses "random", "zeros", "ones" or a folder path.
InputSource ParseInputSource(const std::string& text);

// The inputs of trial `trial` for `session`: with a data set, its inputs (every input the session needs must be
// there: InvalidArgumentError naming it otherwise); else random with seed spec.seed + trial, zeros or ones.
std::vector<NamedValue> MakeTrialInputs(const Session& session, const InputSource& source, int trial,
                                        const DataSet* data_set);

// `v` with every element set to `x` (numeric and bool tensors; others are returned as they are).
Tensor FilledLike(const Tensor& t, double x);

}  // namespace ferry::tools
