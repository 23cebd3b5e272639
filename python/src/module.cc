// ferry._ferry: the extension module under the Python package `ferry` (python/ferry/). It binds the Session API
// (include/ferry/session.h) and the tools' library side (tools.cc); the ONNX Runtime-compatible classes
// (InferenceSession, SessionOptions, NodeArg, IOBinding, ...) are written in Python over it (python/ferry/).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "convert.h"
#include "core/file_fingerprint.h"
#include "core/isa.h"
#include "ferry/error.h"
#include "ferry/limits.h"
#include "ferry/session.h"
#include "module.h"
#include "tools/profile.h"

namespace ferry::python {
namespace {

PyObject* g_errors[5] = {};  // by ErrorCategory
PyObject* g_error_base = nullptr;

PyObject* ErrorClass(ErrorCategory c) {
  const int i = static_cast<int>(c);
  return i >= 0 && i < 5 && g_errors[i] ? g_errors[i] : g_error_base;
}

void RegisterErrors(py::module_& m) {
  g_error_base = PyErr_NewExceptionWithDoc("ferry.Error",
                                           "Every error Ferry reports; the message names the model, node, op and "
                                           "value involved, as the CLI prints it.",
                                           PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(g_error_base);
  const struct {
    ErrorCategory category;
    const char* name;
    const char* doc;
  } kinds[] = {
      {ErrorCategory::kInvalidModel, "InvalidModelError", "The model file or graph is malformed or fails validation."},
      {ErrorCategory::kUnsupported, "UnsupportedError", "Valid, but Ferry (or the chosen backends) cannot run it."},
      {ErrorCategory::kInvalidArgument, "InvalidArgumentError",
       "Bad caller input: a wrong input name, dtype, shape or option."},
      {ErrorCategory::kResourceExhausted, "ResourceExhaustedError", "A memory limit or a size overflow."},
      {ErrorCategory::kInternal, "InternalError", "A bug in Ferry."},
  };
  for (const auto& k : kinds) {
    const std::string qualified = std::string("ferry.") + k.name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), k.doc, g_error_base, nullptr);
    g_errors[static_cast<int>(k.category)] = cls;
    m.attr(k.name) = py::handle(cls);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(ErrorClass(e.category()), e.what());
    }
  });
}

py::object DimObject(const IoInfo& info, size_t i) {
  if (info.dims[i] >= 0) return py::int_(info.dims[i]);
  if (i < info.dim_names.size() && !info.dim_names[i].empty()) return py::str(info.dim_names[i]);
  return py::none();
}

py::dict IoDict(const IoInfo& info) {
  py::dict d;
  d["name"] = info.name;
  d["kind"] = info.kind;
  d["element_kind"] = info.element_kind;
  d["dtype"] = static_cast<int>(info.dtype);
  py::list shape;
  for (size_t i = 0; i < info.dims.size(); ++i) shape.append(DimObject(info, i));
  d["shape"] = info.has_shape ? py::object(shape) : py::object(py::none());
  return d;
}

py::list IoList(const std::vector<IoInfo>& infos) {
  py::list out;
  for (const IoInfo& i : infos) out.append(IoDict(i));
  return out;
}

template <typename T>
T Get(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One session and what the Python side keeps beside it: the profiled runs (written by end_profiling).
class PySession {
 public:
  PySession(const py::object& model, const py::dict& options) {
    const SessionOptions o = SessionOptionsFrom(options);
    if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model)) {
      const std::string bytes = model.cast<std::string>();
      const std::string base = Get<std::string>(options, "base_dir", "");
      py::gil_scoped_release nogil;
      session_ = Session::CreateFromBytes(
          std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o, base);
      name_ = "<bytes>";
      from_bytes_ = true;
    } else {
      const std::string path = py::str(model).cast<std::string>();
      {
        py::gil_scoped_release nogil;
        session_ = Session::Create(path, o);
      }
      name_ = path;
    }
  }

  py::list inputs() const { return IoList(session_->inputs()); }
  py::list outputs() const { return IoList(session_->outputs()); }
  py::list overridable_initializers() const { return IoList(session_->overridable_initializers()); }

  py::dict metadata() const {
    const ModelMetadata& m = session_->metadata();
    py::dict d;
    d["producer_name"] = m.producer_name;
    d["producer_version"] = m.producer_version;
    d["domain"] = m.domain;
    d["description"] = m.description;
    d["graph_name"] = m.graph_name;
    d["graph_description"] = m.graph_description;
    d["version"] = m.version;
    d["custom_metadata_map"] = m.custom;
    return d;
  }

  // `feed`: a dict of name -> value; `names`: the outputs to return (empty: all, in the model's order).
  // `profile`: time every node and keep the run for end_profiling.
  py::list Run(const std::vector<std::string>& names, const py::dict& feed, bool profile) const {
    std::vector<NamedValue> inputs = Feed(feed);
    std::vector<size_t> picked;
    const auto& outs = session_->outputs();
    for (const std::string& n : names) {
      size_t i = 0;
      while (i < outs.size() && outs[i].name != n) ++i;
      if (i == outs.size()) {
        std::string known;
        for (const IoInfo& o : outs) known += (known.empty() ? "" : ", ") + o.name;
        throw InvalidArgumentError("model '" + name_ + "': unknown output '" + n + "' (the model's outputs are: " +
                                   known + ")");
      }
      picked.push_back(i);
    }
    std::vector<NamedValue> results;
    tools::ProfiledRun run;
    run.stats.profile = profile;
    {
      py::gil_scoped_release nogil;
      run.start_us = NowUs();
      results = session_->RunValues(inputs, &run.stats);
      run.end_us = NowUs();
      if (profile) {
        std::lock_guard<std::mutex> lock(mu_);
        runs_.push_back(std::move(run));
      }
    }
    inputs.clear();  // releases the input arrays under the GIL
    if (picked.empty()) {
      for (size_t i = 0; i < results.size(); ++i) picked.push_back(i);
    }
    // Each output's last pick takes its value; an earlier pick of the same output (asked for twice) gets a
    // copy: FromValue copies a buffer held elsewhere.
    std::vector<int> picks_left(results.size(), 0);
    for (size_t i : picked) ++picks_left[i];
    py::list out;
    for (size_t i : picked) {
      out.append(--picks_left[i] == 0 ? FromValue(std::move(results[i].second)) : FromValue(results[i].second));
    }
    return out;
  }

  // Runs the model `n` times from C++ on `feed` converted once (the inputs' and outputs' Python conversions
  // excluded), GIL released; returns the seconds of the n runs: the baseline bench/python_overhead.py compares
  // InferenceSession.run with.
  double TimeNativeRuns(const py::dict& feed, int64_t n) const {
    std::vector<NamedValue> inputs = Feed(feed);
    double seconds = 0;
    {
      py::gil_scoped_release nogil;
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < n; ++i) session_->RunValues(inputs);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    inputs.clear();
    return seconds;
  }

  // Writes the profiled runs as a Chrome trace to `path` and forgets them; returns how many there were.
  // `model_bytes`: the bytes a session from bytes was made of (the Python side keeps them), else None.
  size_t WriteProfile(const std::string& path, const py::object& model_bytes) const {
    std::vector<tools::ProfiledRun> runs;
    {
      std::lock_guard<std::mutex> lock(mu_);
      runs.swap(runs_);
    }
    // The trace records the model (`ferry check --html --profile` refuses a trace of another model). It is
    // fingerprinted when the first trace is written, not at creation, which profiling sessions alone pay for.
    std::string bytes;
    if (from_bytes_ && (py::isinstance<py::bytes>(model_bytes) || py::isinstance<py::bytearray>(model_bytes))) {
      bytes = model_bytes.cast<std::string>();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (fingerprint_.empty() && !from_bytes_) fingerprint_ = FileFingerprint(name_);
      if (fingerprint_.empty() && !bytes.empty()) {
        fingerprint_ = BytesFingerprint({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
      }
    }
    tools::WriteProfileTrace(runs, "ferry " + name_, path, fingerprint_);
    return runs.size();
  }

  std::string dump_ir() const { return session_->DumpIr(); }

  py::dict predict_memory() const {
    const MemoryPrediction& p = session_->PredictMemory();
    py::dict d;
    d["weights_bytes"] = p.weights_bytes;
    d["kernel_bytes"] = p.kernel_bytes;
    d["arena_bytes"] = p.arena_bytes;
    d["lower_bound"] = p.lower_bound;
    d["io_bytes"] = p.io_bytes;
    d["workspace_bytes"] = p.workspace_bytes;
    d["jit_code_bytes"] = p.jit_code_bytes;
    d["total_bytes"] = p.total();
    d["unknown"] = p.unknown;
    return d;
  }

  // `ferry run --report --json`'s document, as text.
  std::string placement_json() const { return FormatPlacementJson(session_->placement()); }

 private:
  // The feed dict as Ferry values (convert.h), each read as the input it names is declared.
  std::vector<NamedValue> Feed(const py::dict& feed) const {
    std::vector<NamedValue> inputs;
    inputs.reserve(feed.size());
    for (const auto& [key, value] : feed) {
      const std::string name = py::str(key).cast<std::string>();
      inputs.emplace_back(name, ToValue(value, FindInput(name), "input '" + name + "'"));
    }
    return inputs;
  }

  const IoInfo* FindInput(const std::string& name) const {
    for (const IoInfo& i : session_->inputs()) {
      if (i.name == name) return &i;
    }
    for (const IoInfo& i : session_->overridable_initializers()) {
      if (i.name == name) return &i;
    }
    return nullptr;
  }

  std::unique_ptr<Session> session_;
  std::string name_;
  bool from_bytes_ = false;
  mutable std::string fingerprint_;  // the model's (core/file_fingerprint.h), for the profile trace
  mutable std::mutex mu_;
  mutable std::vector<tools::ProfiledRun> runs_;
};

// The inputs a caller feeds, read from the model file (or bytes) without its weights and without a session:
// what SessionOptions.add_free_dimension_override_by_name needs to find the inputs a symbol appears in.
py::list ModelInputs(const py::object& model) {
  std::vector<IoInfo> inputs;
  if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model)) {
    const std::string bytes = model.cast<std::string>();
    py::gil_scoped_release nogil;
    inputs = ReadModelInputs(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  } else {
    const std::string path = py::str(model).cast<std::string>();
    py::gil_scoped_release nogil;
    inputs = ReadModelInputs(path);
  }
  py::list out;
  for (const IoInfo& info : inputs) {
    py::dict d;
    d["name"] = info.name;
    if (info.has_shape) {
      py::list dims;
      for (size_t i = 0; i < info.dims.size(); ++i) {
        dims.append(info.dims[i] >= 0     ? py::object(py::int_(info.dims[i]))
                    : info.dim_names[i].empty() ? py::object(py::none())
                                                : py::object(py::str(info.dim_names[i])));
      }
      d["shape"] = dims;
    } else {
      d["shape"] = py::none();
    }
    out.append(d);
  }
  return out;
}

}  // namespace

SessionOptions SessionOptionsFrom(const py::dict& d) {
  SessionOptions o;
  o.backends = Get<std::vector<std::string>>(d, "backends", o.backends);
  o.allow_fallback = Get<bool>(d, "allow_fallback", o.allow_fallback);
  o.pins = Get<std::vector<std::pair<std::string, std::string>>>(d, "pins", o.pins);
  o.plugins = Get<std::vector<std::string>>(d, "plugins", o.plugins);
  o.threads = Get<int>(d, "threads", o.threads);
  o.isa = Get<std::string>(d, "isa", o.isa);
  o.optimization_level = Get<int>(d, "optimization_level", o.optimization_level);
  o.disabled_passes = Get<std::vector<std::string>>(d, "disabled_passes", o.disabled_passes);
  o.legalize = Get<bool>(d, "legalize", o.legalize);
  o.input_shapes = Get<std::map<std::string, std::vector<int64_t>>>(d, "input_shapes", o.input_shapes);
  o.memory_arena = Get<bool>(d, "memory_arena", o.memory_arena);
  o.memory_limit = Get<int64_t>(d, "memory_limit", o.memory_limit);
  o.deterministic = Get<bool>(d, "deterministic", o.deterministic);
  try {
    o.adapt_threads = SessionOptions::ParseThreadAdaptation(Get<std::string>(d, "adapt_threads", "auto"));
  } catch (const ferry::InvalidArgumentError& e) {
    throw ferry::InvalidArgumentError(std::string("ferry.adapt_threads: ") + e.what());
  }
  return o;
}

}  // namespace ferry::python

PYBIND11_MODULE(_ferry, m) {
  using namespace ferry::python;
  m.doc() = "Ferry's extension module; use the package `ferry` (docs/python.md).";
  RegisterErrors(m);
  m.attr("MAX_THREADS") = ferry::kMaxThreads;
  m.attr("__version__") = FERRY_VERSION;
  m.def("host_isa", [] { return ferry::DefaultIsa().ToString(); },
        "The CPU extensions Ferry uses on this machine (narrowed by FERRY_ISA), e.g. 'avx2,avx512f,fma'.");
  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const py::dict&>(), py::arg("model"), py::arg("options"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("overridable_initializers", &PySession::overridable_initializers)
      .def("metadata", &PySession::metadata)
      .def("run", &PySession::Run, py::arg("output_names"), py::arg("feed"), py::arg("profile") = false)
      .def("write_profile", &PySession::WriteProfile, py::arg("path"), py::arg("model_bytes") = py::none())
      .def("time_native_runs", &PySession::TimeNativeRuns, py::arg("feed"), py::arg("n"))
      .def("dump_ir", &PySession::dump_ir)
      .def("predict_memory", &PySession::predict_memory)
      .def("placement_json", &PySession::placement_json);
  m.def("model_inputs", &ModelInputs, py::arg("model"),
        "The inputs a caller feeds (name, shape with ints, symbol names and None), read without the weights.");
  RegisterTools(m);
}
