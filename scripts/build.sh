#!/usr/bin/env bash
# Configures and builds Ferry into build/ (Release unless BUILD_TYPE is set). Used by quickstart.sh and test.sh.
#   TARGETS="ferry-cli"   build only these targets (default: everything)
#   FERRY_BUILD_TESTS=OFF configure without the tests (they need GoogleTest: scripts/setup.sh without --build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TYPE="${BUILD_TYPE:-Release}"
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DFERRY_BUILD_TESTS="${FERRY_BUILD_TESTS:-ON}" \
  ${CMAKE_ARGS:-} >/dev/null
targets=()
for t in ${TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "${JOBS:-$(nproc)}" "${targets[@]}"
