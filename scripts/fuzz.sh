#!/usr/bin/env bash
# Runs one coverage-guided fuzz target (tests/fuzz/<TARGET>_fuzzer.cc) under libFuzzer with ASan and UBSan.
#
#   ./scripts/fuzz.sh TARGET SECONDS     # e.g. ./scripts/fuzz.sh import 600
#   ./scripts/fuzz.sh --list             # the targets
#   ./scripts/fuzz.sh --build            # build every target, fuzz none
#
# Installs clang and libFuzzer (Debian's clang, libfuzzer-14-dev) and Ferry's build dependencies, builds the target
# into build-fuzz/ (clang, -DFERRY_FUZZ=ON, RelWithDebInfo, no CUDA: nvcc compiles with gcc), and fuzzes it for
# SECONDS on one core, starting from
#   build-fuzz/corpus/TARGET      the corpus earlier runs grew (kept between runs; new inputs go here)
#   tests/fuzz/corpus/TARGET      the committed seeds and regression inputs (what ctest replays)
#   build-fuzz/seeds/TARGET       seeds taken from ../shared/onnx-tests and the repository's models (if any)
# with the target's dictionary (tests/fuzz/dict/). Per input: 25 s before it counts as a hang, 4 GiB of RSS and
# no single allocation over 4 GiB. Every crash, hang, leak or out-of-memory input is copied into
# tests/fuzz/corpus/TARGET/ as crash-/timeout-/leak-/oom-<sha1>, so the normal test command replays it from then
# on: fix the fault, keep the file. The last line is a summary; build-fuzz/results.jsonl gets one JSON record per
# run (scripts/fuzz_long.sh builds docs/reliability.md's table from them).
# FUZZ_JOBS=N builds with N jobs (default: all cores); FUZZ_NO_BUILD=1 skips the build (scripts/fuzz_long.sh runs
# targets side by side after one build); FUZZ_ARGS adds libFuzzer flags.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
TARGETS=(import check run npy tensor_proto kserve_json kserve_binary grpc_codec http model_config)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${TARGETS[@]}"
  exit 0
fi
BUILD_ONLY=0
if [ "${1:-}" = "--build" ]; then
  BUILD_ONLY=1
  set -- import 1
fi
if [ $# -ne 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 TARGET SECONDS   (targets: ${TARGETS[*]})" >&2
  exit 2
fi
TARGET=$1
SECONDS_TO_RUN=$2
if ! printf '%s\n' "${TARGETS[@]}" | grep -qx "$TARGET"; then
  echo "fuzz: unknown target '$TARGET' (targets: ${TARGETS[*]})" >&2
  exit 2
fi

# Dependencies: Ferry's own, then the fuzzing toolchain.
./scripts/setup.sh >/dev/null
FUZZ_PACKAGES=(clang libfuzzer-14-dev)
missing=()
for p in "${FUZZ_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "fuzz: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD=build-fuzz
if [ ! -f "$BUILD/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_FUZZ=ON \
    -DFERRY_CUDA=OFF >/dev/null
fi
if [ "$BUILD_ONLY" = 1 ]; then
  BUILD_TARGETS=("${TARGETS[@]/#/fuzz_}")
else
  BUILD_TARGETS=("fuzz_$TARGET")
fi
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  cmake --build "$BUILD" -j "${FUZZ_JOBS:-$(nproc)}" --target "${BUILD_TARGETS[@]}" >"$BUILD/build.log" 2>&1 || {
    tail -30 "$BUILD/build.log"
    echo "fuzz: building ${BUILD_TARGETS[*]} failed (log: $BUILD/build.log)" >&2
    exit 1
  }
fi
if [ "$BUILD_ONLY" = 1 ]; then
  echo "fuzz: built ${BUILD_TARGETS[*]} in $BUILD/bin"
  exit 0
fi

# Seeds from outside the committed corpus, gathered once per target.
SEEDS="$BUILD/seeds/$TARGET"
if [ ! -d "$SEEDS" ]; then
  mkdir -p "$SEEDS"
  ONNX_TESTS="$ROOT/../shared/onnx-tests/node"
  case "$TARGET" in
    import|check|run)
      cp models/*.onnx "$SEEDS/"
      if [ -d "$ONNX_TESTS" ]; then
        for m in "$ONNX_TESTS"/*/model.onnx; do cp "$m" "$SEEDS/$(basename "$(dirname "$m")").onnx"; done
      fi
      ;;
    tensor_proto)
      if [ -d "$ONNX_TESTS" ]; then
        for f in "$ONNX_TESTS"/*/test_data_set_0/input_0.pb; do
          cp "$f" "$SEEDS/$(basename "$(dirname "$(dirname "$f")")").pb"
        done
      fi
      ;;
    npy) cp models/*.npy "$SEEDS/" ;;
  esac
fi

case "$TARGET" in
  import|check|run|tensor_proto) DICT=onnx ;;
  kserve_json|kserve_binary) DICT=kserve_json ;;
  grpc_codec) DICT=kserve_json ;;
  *) DICT=$TARGET ;;
esac

CORPUS="$BUILD/corpus/$TARGET"
ARTIFACTS="$BUILD/artifacts/$TARGET"
mkdir -p "$CORPUS" "$ARTIFACTS"
LOG="$BUILD/fuzz-$TARGET.log"
start=$(date +%s)
set +e
# shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
"$BUILD/bin/fuzz_$TARGET" -max_total_time="$SECONDS_TO_RUN" -timeout=25 -rss_limit_mb=4096 -malloc_limit_mb=4096 \
  -dict="tests/fuzz/dict/$DICT.dict" -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 ${FUZZ_ARGS:-} \
  "$CORPUS" "tests/fuzz/corpus/$TARGET" "$SEEDS" >"$LOG" 2>&1
rc=$?
set -e
elapsed=$(( $(date +%s) - start ))

# libFuzzer stops at the first finding; the artifact it wrote names the kind (slow-unit- files are not findings).
crashes=0 hangs=0 ooms=0
for f in "$ARTIFACTS"/*; do
  [ -f "$f" ] || continue
  kind=$(basename "$f" | sed 's/-[0-9a-f]*$//')
  case "$kind" in
    crash|leak) crashes=$((crashes + 1)) ;;
    timeout) hangs=$((hangs + 1)) ;;
    oom) ooms=$((ooms + 1)) ;;
    *) rm -f "$f"; continue ;;
  esac
  dest="tests/fuzz/corpus/$TARGET/$kind-$(sha1sum "$f" | cut -c1-16)"
  cp "$f" "$dest"
  rm -f "$f"
  echo "fuzz: $kind input saved as $dest (replayed by ctest from now on)"
done
findings=$((crashes + hangs + ooms))

execs=$(awk '/^stat::number_of_executed_units:/ {n = $2} END {print n}' "$LOG")
peak=$(awk '/^stat::peak_rss_mb:/ {n = $2} END {print n}' "$LOG")
cov=$(grep -oE '^#[0-9]+.*cov: [0-9]+' "$LOG" | tail -1 | grep -oE 'cov: [0-9]+' | awk '{print $2}')
ft=$(grep -oE '^#[0-9]+.*ft: [0-9]+' "$LOG" | tail -1 | grep -oE 'ft: [0-9]+' | awk '{print $2}')
corpus=$(find "$CORPUS" -type f | wc -l)
printf '{"target": "%s", "date": "%s", "seconds": %d, "execs": %s, "cov": %s, "ft": %s, "corpus": %d, "crashes": %d, "hangs": %d, "ooms": %d, "peak_rss_mb": %s, "exit": %d}\n' \
  "$TARGET" "$(date -u +%Y-%m-%dT%H:%MZ)" "$elapsed" "${execs:-0}" "${cov:-0}" "${ft:-0}" "$corpus" \
  "$crashes" "$hangs" "$ooms" "${peak:-0}" "$rc" >>"$BUILD/results.jsonl"
echo "fuzz $TARGET: ${elapsed}s, ${execs:-0} executions, cov ${cov:-0}, ft ${ft:-0}, corpus $corpus," \
  "crashes $crashes, hangs $hangs, out-of-memory $ooms, peak RSS ${peak:-?} MB (log: $LOG)"
if [ "$rc" -ne 0 ] || [ "$findings" -gt 0 ]; then exit 1; fi
