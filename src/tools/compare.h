// `ferry compare`: run one model under two configurations (or one configuration against stored outputs) on the
// same inputs and report, per output, how far side A is from side B (tools/compare_stats.h). With several trials
// (input draws with seeds S, S+1, ..., or the data sets of a folder) each output reports its worst trial.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "tools/compare_config.h"
#include "tools/compare_data.h"
#include "tools/compare_stats.h"

namespace ferry::tools {

struct CompareSetup {
  std::string model;
  CompareConfig a, b;
  std::string reference_dir;  // non-empty: side B is the outputs stored here, not a configuration
  InputSource inputs;
  bool inputs_given = false;  // --inputs was given (else a reference folder's inputs are used when it has some)
  int trials = 1;             // for random inputs; a data folder has one trial per data set
  ToleranceSet tolerance;
};

// The sessions and data one comparison runs on.
struct CompareSides {
  std::unique_ptr<Session> a, b;  // b is null with a reference folder
  std::vector<DataSet> input_sets, reference_sets;
  int trials = 1;
  std::string Source(const CompareSetup& setup, int trial) const;  // "random, seed 3", "DIR/test_data_set_1"
  // The inputs of trial `trial`.
  std::vector<NamedValue> Inputs(const CompareSetup& setup, int trial) const;
};

// Creates the sessions and reads the data folders. Throws ferry::Error (bad model, bad configuration, a data
// folder that does not match the model).
CompareSides OpenSides(const CompareSetup& setup);

struct OutputComparison {
  std::string name;
  ErrorStats stats;     // of the worst trial
  int worst_trial = 0;
  int failed_trials = 0;
  CompareTolerance tolerance;
  std::string note;     // set when the output was not compared ("no reference file"); stats are then empty
  bool compared() const { return note.empty(); }
  bool pass() const { return !compared() || stats.pass(); }
};

struct OutputReport {
  std::vector<OutputComparison> outputs;
  int trials = 0;
  int first_failed_trial = -1;  // -1 when every trial passed
  bool pass() const { return first_failed_trial < 0; }
};

// Runs every trial on both sides and compares the outputs.
OutputReport CompareOutputs(const CompareSetup& setup, const CompareSides& sides);

// Compares two value lists by name (outputs of the same model); values missing on one side get a note.
void CompareValueLists(const std::vector<NamedValue>& a, const std::vector<NamedValue>& b, const ToleranceSet& tol,
                       int trial, std::vector<OutputComparison>& into);

// ErrorStats of two values: tensors element-wise; sequences element by element (the worst element); an
// empty optional against an empty optional passes; other mixes are a problem.
ErrorStats CompareValueStats(const Value& a, const Value& b, const CompareTolerance& tol);

}  // namespace ferry::tools
