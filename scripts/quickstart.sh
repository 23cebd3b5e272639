#!/usr/bin/env bash
# Quick start: install dependencies, build, and run the small CNN shipped in models/ on the reference backend.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what `ferry run` needs: the build packages (not the test ones) and the CLI (not the tests).
./scripts/setup.sh --build
FERRY_BUILD_TESTS=OFF TARGETS=ferry-cli ./scripts/build.sh
echo
echo "+ build/bin/ferry run models/quickstart_cnn.onnx --input input=models/quickstart_cnn_input.npy --output-dir build/quickstart-out --repeat 5"
build/bin/ferry run models/quickstart_cnn.onnx --input input=models/quickstart_cnn_input.npy \
  --output-dir build/quickstart-out --repeat 5
