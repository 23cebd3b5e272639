#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (unit tests, the ONNX conformance ratchet, real models).
# Set FERRY_SANITIZE=1 to build into build-asan/ with AddressSanitizer and UBSan instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# ONNX Runtime (npm onnxruntime-node): the oracle of the tests that compare with it; they skip without it.
./scripts/install_ort.sh --soft
# The Python package is required here (its tests are part of the suite), except under the sanitizers: an
# ASan-instrumented extension module needs libasan preloaded into python3.
export CMAKE_ARGS="${CMAKE_ARGS:-} -DFERRY_PYTHON=ON"
if [ "${FERRY_SANITIZE:-0}" = "1" ]; then
  export BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_ARGS="-DFERRY_SANITIZE=ON -DFERRY_PYTHON=OFF"
fi
./scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
