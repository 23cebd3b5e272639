"""Ferry: an inference runtime for ONNX models, with ONNX Runtime's Python API.

    import ferry
    sess = ferry.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {"input": x})

Existing onnxruntime code runs by changing the import (docs/python.md lists every difference). Beyond it:
ferry.check / ops / optimize / compare / bench, the CLI's tools returning the documents of their --json output.
"""
from . import _ferry
from ._ferry import (Error, InternalError, InvalidArgumentError, InvalidModelError, ResourceExhaustedError,
                     UnsupportedError)
from ._options import (ExecutionMode, FerryWarning, GraphOptimizationLevel, SessionOptions, get_available_providers,
                       get_device)
from ._session import InferenceSession, IOBinding, RunOptions
from ._tools import bench, check, compare, ops, optimize
from ._types import ModelMetadata, NodeArg

__version__ = _ferry.__version__


def from_dlpack(obj):
    """A NumPy array over a DLPack tensor's memory (no copy): numpy.from_dlpack. Ferry's outputs are NumPy
    arrays, which torch.from_dlpack reads without a copy too."""
    import numpy as np
    return np.from_dlpack(obj)


__all__ = [
    "Error", "InternalError", "InvalidArgumentError", "InvalidModelError", "ResourceExhaustedError",
    "UnsupportedError", "ExecutionMode", "FerryWarning", "GraphOptimizationLevel", "SessionOptions",
    "get_available_providers", "get_device", "InferenceSession", "IOBinding", "RunOptions", "bench", "check",
    "compare", "ops", "optimize", "ModelMetadata", "NodeArg", "from_dlpack", "__version__",
]
