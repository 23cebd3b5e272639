#!/usr/bin/env bash
# Configures and builds Ferry into build/ (Release unless BUILD_TYPE is set). Used by quickstart.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TYPE="${BUILD_TYPE:-Release}"
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}"
