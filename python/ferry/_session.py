"""InferenceSession, RunOptions and IOBinding with ONNX Runtime's names, argument orders, defaults and return types,
over ferry._ferry.Session (docs/python.md)."""
import os
import tempfile
import threading
import time
import warnings

import numpy as np

from . import _ferry
from ._options import FerryWarning, SessionOptions, resolve_providers
from ._types import ModelMetadata, NodeArg


class RunOptions:
    """onnxruntime.RunOptions. Ferry reads `terminate` (a run started after it is set raises) and keeps the
    logging fields (log_severity_level >= 3 silences FerryWarning for that run); run_tag is kept for the caller."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
        self._config = {}

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        if key not in self._config:
            raise _ferry.InvalidArgumentError("run config entry '%s' is not set" % key)
        return self._config[key]


def _model_source(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray)):
        return bytes(path_or_bytes), None
    if isinstance(path_or_bytes, os.PathLike) or isinstance(path_or_bytes, str):
        return os.fspath(path_or_bytes), os.fspath(path_or_bytes)
    raise _ferry.InvalidArgumentError(
        "InferenceSession: expected a model path (str or os.PathLike) or the model's bytes, got %s"
        % type(path_or_bytes).__name__)


def _free_dimension_shapes(model, free_dims, fixed):
    """input_shapes for ORT's free dimension overrides: each input whose every unknown dim is an overridden symbol
    gets its full dims (FixInputShapes then binds the symbol in the other inputs and outputs too)."""
    shapes = {}
    used = set()
    for info in _ferry.model_inputs(model):
        dims = info["shape"]
        if dims is None or info["name"] in fixed:
            continue
        if not any(isinstance(d, str) and d in free_dims for d in dims):
            continue
        resolved = []
        for d in dims:
            if isinstance(d, str) and d in free_dims:
                used.add(d)
                resolved.append(free_dims[d])
            else:
                resolved.append(d)
        if all(isinstance(d, int) for d in resolved):
            shapes[info["name"]] = resolved
    unused = sorted(set(free_dims) - used)
    return shapes, unused


class InferenceSession:
    """onnxruntime.InferenceSession: loads the model once (a path or its bytes) and runs it.

    providers: ONNX Runtime's names (CPUExecutionProvider -> Ferry's cpu backend with ref fallback,
    CUDAExecutionProvider -> the cuda backend, then cpu and ref) or Ferry backend names ("cpu", "ref", "cuda", a
    plugin's). Errors raise ferry.Error subclasses (InvalidModelError, UnsupportedError, InvalidArgumentError,
    ResourceExhaustedError, InternalError) with the CLI's messages."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if kwargs:
            raise _ferry.InvalidArgumentError(
                "InferenceSession: unexpected keyword argument(s) %s" % ", ".join(sorted(kwargs)))
        self._model, self._model_path = _model_source(path_or_bytes)
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        if not isinstance(self._sess_options, SessionOptions):
            raise _ferry.InvalidArgumentError("sess_options must be a ferry.SessionOptions, got %s"
                                              % type(self._sess_options).__name__)
        self._profiling_start_ns = 0
        self._create(providers, provider_options)

    # -- creation -------------------------------------------------------------------------------------------

    def _warn(self, message):
        if self._sess_options.log_severity_level < 3:
            warnings.warn(message, FerryWarning, stacklevel=4)

    def _create(self, providers, provider_options):
        backends, names, options = resolve_providers(providers, provider_options)
        opts = self._sess_options._ferry_options(backends, self._warn)
        if self._sess_options._free_dims:
            extra, unused = _free_dimension_shapes(self._model, self._sess_options._free_dims,
                                                   opts.get("input_shapes", {}))
            for name in unused:
                self._warn("free dimension override '%s' matches no input of the model" % name)
            opts["input_shapes"] = dict(opts.get("input_shapes", {}), **extra)
        self._session = _ferry.Session(self._model, opts)
        self._providers, self._provider_options = names, options
        self._backends = backends
        self._inputs = [NodeArg._from_info(i) for i in self._session.inputs()]
        self._outputs = [NodeArg._from_info(o) for o in self._session.outputs()]
        self._overridable = [NodeArg._from_info(o) for o in self._session.overridable_initializers()]
        self._output_names = [o.name for o in self._outputs]
        if self._sess_options.enable_profiling:
            self._profiling_start_ns = time.monotonic_ns()
        if self._sess_options.optimized_model_filepath:
            self._write_optimized(opts)

    def _write_optimized(self, opts):
        """ORT's optimized_model_filepath: the graph Ferry's passes make for these backends, written as ONNX."""
        source = self._model_path
        tmp = None
        if source is None:
            tmp = tempfile.NamedTemporaryFile(suffix=".onnx", delete=False)
            tmp.write(self._model)
            tmp.close()
            source = tmp.name
        try:
            _ferry.optimize_json(source, os.fspath(self._sess_options.optimized_model_filepath),
                                 opts["optimization_level"], opts.get("input_shapes", {}), list(self._backends),
                                 opts.get("isa", ""), opts.get("disabled_passes", []), 0, opts.get("legalize", False),
                                 False)
        finally:
            if tmp is not None:
                os.unlink(tmp.name)

    # -- what the model is ----------------------------------------------------------------------------------

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return list(self._overridable)

    def get_modelmeta(self):
        return ModelMetadata(self._session.metadata())

    def get_session_options(self):
        return self._sess_options

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {name: dict(o) for name, o in zip(self._providers, self._provider_options)}

    def set_providers(self, providers=None, provider_options=None):
        """Re-creates the session on other providers (as ORT does)."""
        self._create(providers, provider_options)

    def disable_fallback(self):
        """As ORT's: from now on every node must run on the first provider's backend (re-creates the session)."""
        self._sess_options.add_session_config_entry("ferry.allow_fallback", "0")
        self._create(self._providers, self._provider_options)

    def enable_fallback(self):
        self._sess_options.add_session_config_entry("ferry.allow_fallback", "1")
        self._create(self._providers, self._provider_options)

    # -- running --------------------------------------------------------------------------------------------

    def _names(self, output_names):
        if output_names is None:
            return []
        if isinstance(output_names, str):
            raise _ferry.InvalidArgumentError("output_names must be a list of names, got the string %r"
                                              % output_names)
        return [str(n) for n in output_names]

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` (a dict of input name -> NumPy array, anything with __dlpack__, a list
        for a sequence input, None for an empty optional) and returns the outputs named in `output_names` (None
        or []: every output, in the model's order) as a list of NumPy arrays (lists for sequences, None for an
        empty optional). The GIL is released while the model runs; one session may run on many threads."""
        if run_options is not None and run_options.terminate:
            raise _ferry.InvalidArgumentError("run: RunOptions.terminate is set")
        if not isinstance(input_feed, dict):
            raise _ferry.InvalidArgumentError("input_feed must be a dict of input name -> value, got %s"
                                              % type(input_feed).__name__)
        return self._session.run(self._names(output_names), input_feed, bool(self._sess_options.enable_profiling))

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on another thread and calls callback(outputs, user_data, error): `error` is "" on success, else the
        message (outputs then None), as ORT's run_async."""
        names = self._names(output_names)

        def work():
            try:
                out = self.run(names, input_feed, run_options)
            except Exception as e:  # noqa: BLE001 (handed to the callback, as ORT does)
                callback(None, user_data, str(e) or type(e).__name__)
                return
            callback(out, user_data, "")

        t = threading.Thread(target=work, name="ferry-run-async", daemon=True)
        t.start()
        return t

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    def end_profiling(self):
        """Writes the runs profiled since the session was created (or since the last call) as a Chrome trace,
        PREFIX_<date>.json in the current directory, and returns its name ("" when profiling is off)."""
        if not self._sess_options.enable_profiling:
            return ""
        name = "%s_%s.json" % (self._sess_options.profile_file_prefix, time.strftime("%Y-%m-%d_%H-%M-%S"))
        self._session.write_profile(name, self._model if self._model_path is None else None)
        return name

    def get_profiling_start_time_ns(self):
        return self._profiling_start_ns

    # -- Ferry's own ----------------------------------------------------------------------------------------

    def placement(self):
        """Where each node runs and why (`ferry run --report --json`), as a dict."""
        import json
        return json.loads(self._session.placement_json())

    def predict_memory(self):
        """The memory the session needs for its inputs' static shapes (`ferry check --memory`), in bytes."""
        return self._session.predict_memory()

    def dump_ir(self):
        """The graph the session runs, after the optimizer, in Ferry's IR text form."""
        return self._session.dump_ir()


class IOBinding:
    """onnxruntime.IOBinding for host memory: inputs bound once and reused across runs; outputs bound to arrays
    the caller preallocated are filled in place (the results are copied into them after each run), the others
    are returned by get_outputs() / copy_outputs_to_cpu()."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = []  # [(name, array or None)]
        self._results = None

    @staticmethod
    def _check_device(device_type, device_id):
        if str(device_type).lower() != "cpu" or int(device_id) != 0:
            raise _ferry.InvalidArgumentError(
                "IOBinding binds host memory only (device_type 'cpu', device_id 0), got %s:%s"
                % (device_type, device_id))

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[str(name)] = arr_on_cpu

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds memory at `buffer_ptr` (an address in this process) as an input of `element_type` (a NumPy
        dtype) and `shape`; the memory must stay valid until the binding is cleared."""
        self._check_device(device_type, device_id)
        self._inputs[str(name)] = _wrap_pointer(buffer_ptr, element_type, shape, writable=False)

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Binds an output: to the memory at `buffer_ptr` (with element_type and shape), which each run fills in
        place, or, without a buffer, to a new array per run."""
        self._check_device(device_type, device_id)
        name = str(name)
        if buffer_ptr is None:
            self._outputs.append((name, None))
            return
        if element_type is None or shape is None:
            raise _ferry.InvalidArgumentError("bind_output '%s': buffer_ptr needs element_type and shape" % name)
        self._outputs.append((name, _wrap_pointer(buffer_ptr, element_type, shape, writable=True)))

    def bind_output_array(self, name, array):
        """Ferry's shorthand: binds a preallocated, C-contiguous, writable NumPy array as an output."""
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous or not array.flags.writeable:
            raise _ferry.InvalidArgumentError(
                "bind_output_array '%s': expected a C-contiguous, writable NumPy array" % name)
        self._outputs.append((str(name), array))

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = []
        self._results = None

    def synchronize_inputs(self):
        pass  # host memory: nothing to wait for

    def synchronize_outputs(self):
        pass

    def get_outputs(self):
        if self._results is None:
            raise _ferry.InvalidArgumentError("IOBinding.get_outputs: run_with_iobinding has not run")
        return list(self._results)

    def copy_outputs_to_cpu(self):
        return [np.array(r, copy=True) if isinstance(r, np.ndarray) else r for r in self.get_outputs()]

    def _run(self, run_options):
        names = [n for n, _ in self._outputs] or None
        results = self._session.run(names, self._inputs, run_options)
        if not self._outputs:
            self._results = results
            return
        out = []
        for (name, target), value in zip(self._outputs, results):
            if target is None:
                out.append(value)
                continue
            if not isinstance(value, np.ndarray):
                raise _ferry.InvalidArgumentError("output '%s' is not a tensor; bind it without a buffer" % name)
            if value.shape != target.shape or value.dtype != target.dtype:
                raise _ferry.InvalidArgumentError(
                    "output '%s' is %s%s, the bound buffer %s%s" % (name, value.dtype, list(value.shape),
                                                                     target.dtype, list(target.shape)))
            np.copyto(target, value)
            out.append(target)
        self._results = out


def _wrap_pointer(buffer_ptr, element_type, shape, writable):
    """A NumPy array over memory at `buffer_ptr` (no copy)."""
    import ctypes
    dtype = np.dtype(element_type)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise _ferry.InvalidArgumentError("shape %s has a negative dim" % (list(shape),))
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if int(buffer_ptr) == 0 and count > 0:
        raise _ferry.InvalidArgumentError("buffer_ptr is null")
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(int(buffer_ptr))
    arr = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
    if not writable:
        arr.flags.writeable = False
    return arr
