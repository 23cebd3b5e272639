"""SessionOptions, RunOptions and the providers, with ONNX Runtime's names mapped onto Ferry's options
(docs/python.md, "ONNX Runtime API -> Ferry")."""
import enum
import os
import warnings

from . import _ferry


class FerryWarning(UserWarning):
    """An ONNX Runtime option or argument that Ferry accepts but that has no effect here (the message says why)."""


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's levels, each mapped to a Ferry optimization level (docs/optimize.md): DISABLE_ALL -> 0,
    BASIC -> 1 (cleanups, constant folding), EXTENDED -> 2 (fusions), ALL and LAYOUT -> 3 (also the cpu
    backend's blocked layouts)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


_FERRY_LEVEL = {0: 0, 1: 1, 2: 2, 3: 3, 99: 3}


class ExecutionMode(enum.IntEnum):
    """ONNX Runtime's execution modes. Ferry runs a graph's nodes in order (ORT_SEQUENTIAL); ORT_PARALLEL is
    accepted with a FerryWarning."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


# Provider names: ONNX Runtime's, and Ferry's backend lists.
_PROVIDERS = {
    "CPUExecutionProvider": ["cpu", "ref"],
    "CUDAExecutionProvider": ["cuda"],
}


def get_available_providers():
    """The providers this build can run, as onnxruntime.get_available_providers(): CUDAExecutionProvider when the
    cuda backend is built in (it still needs a GPU at session creation), then CPUExecutionProvider."""
    names = _ferry.backend_names()
    out = []
    if "cuda" in names:
        out.append("CUDAExecutionProvider")
    out.append("CPUExecutionProvider")
    return out


def get_device():
    """'CPU', or 'GPU' when the cuda backend is built in (as onnxruntime.get_device())."""
    return "GPU" if "cuda" in _ferry.backend_names() else "CPU"


def _provider_name(p):
    if isinstance(p, (tuple, list)):
        if len(p) != 2 or not isinstance(p[1], dict):
            raise _ferry.InvalidArgumentError("providers: a (name, options dict) pair expected, got %r" % (p,))
        return p[0], dict(p[1])
    if not isinstance(p, str):
        raise _ferry.InvalidArgumentError("providers: a provider name or (name, options) expected, got %r" % (p,))
    return p, {}


def resolve_providers(providers, provider_options):
    """(backends, names, options): Ferry's backend list, the provider names as given, each one's options."""
    if providers is None or len(providers) == 0:
        providers = ["CPUExecutionProvider"]
    pairs = [_provider_name(p) for p in providers]
    if provider_options is not None:
        if len(provider_options) != len(pairs):
            raise _ferry.InvalidArgumentError(
                "provider_options has %d entries for %d providers" % (len(provider_options), len(pairs)))
        pairs = [(name, dict(opts or {})) for (name, _), opts in zip(pairs, provider_options)]
    known = set(_ferry.backend_names())
    backends = []
    for name, opts in pairs:
        if name in _PROVIDERS:
            targets = _PROVIDERS[name]
        elif name in known:
            targets = [name]
        else:
            raise _ferry.InvalidArgumentError(
                "unknown provider '%s' (Ferry takes %s, or a backend name: %s)"
                % (name, ", ".join(_PROVIDERS), ", ".join(sorted(known))))
        if opts:
            warnings.warn("provider options of %s are not used by Ferry: %s" % (name, ", ".join(sorted(opts))),
                          FerryWarning, stacklevel=4)
        for t in targets:
            if t not in backends:
                backends.append(t)
    # With CUDA asked for, the cpu backend (and ref) take what cuda does not run, as ORT falls back to its CPU EP.
    if "cuda" in backends:
        for t in ("cpu", "ref"):
            if t not in backends:
                backends.append(t)
    return backends, [n for n, _ in pairs], [o for _, o in pairs]


def _parse_shapes(text):
    shapes = {}
    for item in filter(None, (s.strip() for s in text.split(";"))):
        name, _, dims = item.partition("=")
        if not name or not dims:
            raise _ferry.InvalidArgumentError("ferry.input_shapes: expected NAME=DIMS;..., got '%s'" % item)
        try:
            shapes[name] = [int(d) for d in dims.replace(",", "x").split("x")]
        except ValueError:
            raise _ferry.InvalidArgumentError("ferry.input_shapes: '%s' is not DIMS like 1x3x224x224" % dims) from None
    return shapes


def _parse_pins(text):
    pins = []
    for item in filter(None, (s.strip() for s in text.split(";"))):
        node, _, backend = item.partition("=")
        if not node or not backend:
            raise _ferry.InvalidArgumentError("ferry.pins: expected NODE_OR_OP=BACKEND;..., got '%s'" % item)
        pins.append((node, backend))
    return pins


def _parse_bool(key, value):
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise _ferry.InvalidArgumentError("%s: expected 0/1 or true/false, got '%s'" % (key, value))


def _parse_int(key, value):
    try:
        return int(str(value).strip())
    except ValueError:
        raise _ferry.InvalidArgumentError("%s: expected an integer, got '%s'" % (key, value)) from None


# Ferry's own options, through SessionOptions.add_session_config_entry("ferry.KEY", value).
_FERRY_ENTRIES = {
    "ferry.memory_limit": ("memory_limit", _parse_int),
    "ferry.deterministic": ("deterministic", _parse_bool),
    "ferry.adapt_threads": ("adapt_threads", lambda k, v: str(v)),
    "ferry.isa": ("isa", lambda k, v: str(v)),
    "ferry.legalize": ("legalize", _parse_bool),
    "ferry.allow_fallback": ("allow_fallback", _parse_bool),
    "ferry.pins": ("pins", lambda k, v: _parse_pins(str(v))),
    "ferry.input_shapes": ("input_shapes", lambda k, v: _parse_shapes(str(v))),
    "ferry.disable_passes": ("disabled_passes", lambda k, v: [s for s in str(v).replace(";", ",").split(",") if s]),
    "ferry.backends": ("backends", lambda k, v: [s for s in str(v).split(",") if s]),
    "ferry.optimization_level": ("optimization_level", _parse_int),
}


class SessionOptions:
    """onnxruntime.SessionOptions, mapped onto Ferry's session options:

    intra_op_num_threads -> threads (0: every hardware thread); graph_optimization_level -> Ferry's level
    (GraphOptimizationLevel); optimized_model_filepath -> the optimized graph written as ONNX at creation (Ferry's
    passes for the session's backends, as `ferry optimize --target`); enable_profiling / profile_file_prefix ->
    a Chrome trace written by end_profiling(); enable_mem_pattern -> the planned activation arena;
    use_deterministic_compute -> deterministic (needs intra_op_num_threads > 0); log_severity_level -> 3 or more
    silences FerryWarning; register_custom_ops_library -> a Ferry plugin (include/ferry/plugin.h);
    add_free_dimension_override_by_name -> the symbolic dim fixed at creation. Ferry's own options go through
    add_session_config_entry("ferry.memory_limit", ...) (keys: docs/python.md). Options Ferry has no use for
    (inter_op_num_threads, ORT_PARALLEL, enable_cpu_mem_arena = False, ORT's own config keys) are accepted with a
    FerryWarning at session creation."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.optimized_model_filepath = ""
        self.enable_profiling = False
        self.profile_file_prefix = "ferry_profile"
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.enable_cpu_mem_arena = True
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.use_deterministic_compute = False
        self._config = {}
        self._custom_ops = []
        self._free_dims = {}

    def add_session_config_entry(self, key, value):
        """Sets a config entry: Ferry's own options as "ferry.KEY" (docs/python.md lists them; an unknown ferry.*
        key is an InvalidArgumentError); ONNX Runtime's keys are kept and warned about at session creation."""
        key = str(key)
        if key.startswith("ferry.") and key not in _FERRY_ENTRIES:
            raise _ferry.InvalidArgumentError(
                "unknown session config entry '%s' (Ferry's: %s)" % (key, ", ".join(sorted(_FERRY_ENTRIES))))
        if key in _FERRY_ENTRIES:
            _FERRY_ENTRIES[key][1](key, value)  # a malformed value fails here, naming the key
        self._config[key] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise _ferry.InvalidArgumentError("session config entry '%s' is not set" % key)
        return self._config[key]

    def register_custom_ops_library(self, path):
        """Loads a Ferry custom-op plugin (a shared library built against include/ferry/plugin.h) with the
        session; ONNX Runtime custom-op libraries are not Ferry plugins."""
        if not os.path.exists(path):
            raise _ferry.InvalidArgumentError("register_custom_ops_library: no such file '%s'" % path)
        self._custom_ops.append(os.fspath(path))

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes the symbolic dim `dim_name` to `dim_value` in every input that has it (ORT's free dimension
        override): the session then plans for static shapes, and runs must feed them."""
        if int(dim_value) < 0:
            raise _ferry.InvalidArgumentError("free dimension '%s' must be >= 0, got %d" % (dim_name, dim_value))
        self._free_dims[str(dim_name)] = int(dim_value)

    def _ferry_options(self, backends, warn):
        """The options dict of ferry._ferry.Session (and the warnings for what has no effect)."""
        level = int(self.graph_optimization_level)
        if level not in _FERRY_LEVEL:
            raise _ferry.InvalidArgumentError("graph_optimization_level %d is not one of ORT's levels" % level)
        if int(self.intra_op_num_threads) < 0:
            raise _ferry.InvalidArgumentError(
                "intra_op_num_threads must be >= 0, got %d" % int(self.intra_op_num_threads))
        o = {
            "backends": list(backends),
            "threads": int(self.intra_op_num_threads),
            "optimization_level": _FERRY_LEVEL[level],
            "memory_arena": bool(self.enable_mem_pattern),
            "deterministic": bool(self.use_deterministic_compute),
            "plugins": list(self._custom_ops),
        }
        for key, value in self._config.items():
            if key in _FERRY_ENTRIES:
                field, parse = _FERRY_ENTRIES[key]
                o[field] = parse(key, value)
            else:
                warn("session config entry '%s' is ONNX Runtime's; Ferry does not use it" % key)
        if int(self.inter_op_num_threads) > 1:
            warn("inter_op_num_threads has no effect: Ferry runs a graph's nodes one after another "
                 "(intra_op_num_threads sets the threads of each node)")
        if int(self.execution_mode) == ExecutionMode.ORT_PARALLEL:
            warn("execution_mode ORT_PARALLEL has no effect: Ferry runs a graph's nodes one after another")
        if not self.enable_cpu_mem_arena:
            warn("enable_cpu_mem_arena = False has no effect: Ferry's buffer pool is always on "
                 "(enable_mem_pattern = False turns the planned arena off)")
        return o
