#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (unit tests, the ONNX conformance ratchet, real models).
# Set FERRY_SANITIZE=1 to build into build-asan/ with AddressSanitizer and UBSan instead.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${FERRY_SANITIZE:-0}" = "1" ]; then
  export BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo CMAKE_ARGS="-DFERRY_SANITIZE=ON"
fi
./scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
