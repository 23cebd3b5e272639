#!/usr/bin/env bash
# Quick start: install dependencies, build, and run the small CNN shipped in models/ (cpu backend, ref fallback),
# from the CLI and from Python (`import ferry`, made importable for /usr/bin/python3 by scripts/install_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what `ferry run` and `import ferry` need: the build packages (not the test ones), the CLI and the Python
# package (not the tests).
./scripts/setup.sh --build
FERRY_BUILD_TESTS=OFF CMAKE_ARGS="${CMAKE_ARGS:-} -DFERRY_PYTHON=ON" TARGETS="ferry-cli ferry-python" ./scripts/build.sh
./scripts/install_python.sh
echo
echo "+ build/bin/ferry run models/quickstart_cnn.onnx --input input=models/quickstart_cnn_input.npy --output-dir build/quickstart-out --repeat 5"
build/bin/ferry run models/quickstart_cnn.onnx --input input=models/quickstart_cnn_input.npy \
  --output-dir build/quickstart-out --repeat 5
echo
code='import ferry, numpy as np; s = ferry.InferenceSession("models/quickstart_cnn.onnx"); print(s.run(None, {"input": np.load("models/quickstart_cnn_input.npy")})[0])'
echo "+ /usr/bin/python3 -c '$code'"
/usr/bin/python3 -c "$code"
