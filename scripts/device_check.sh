#!/usr/bin/env bash
# The one prepared GPU check of the `cuda` backend (docs/cuda.md, "Device checks"): run on a machine with an NVIDIA
# GPU (the H200 of issue 11) from the repository root. Fits ~12 minutes on 16 cores; each step has its own time
# limit and the script goes on after a failed step, so one run gives every figure it can.
#
#   OUT=/some/dir scripts/device_check.sh        # results under $OUT (default: build-gpu/device-check)
#
# Steps and what they write under $OUT:
#   1. device.txt          nvidia-smi and the CUDA runtime's view of the GPU
#   2. build.log           cmake -DFERRY_CUDA=ON (sm_80, sm_90) into build-gpu/; build of ferry, tests, conformance
#   3. gpu_tests.log       ctest -L gpu (every cuda kernel against ref; the quickstart model) + the no-GPU suites
#   4. conformance_cuda.json, expected_failures_cuda.txt, conformance.log
#                          the ONNX conformance suite on cuda,cpu,ref and its expected-failure list
#   5. bench_<model>_<fp32|fp16>.json, bench.log, bench_summary.txt
#                          ferry bench of resnet50, mobilenet_v2, bert_base, vit_b_16 at batch 1 and 32 on
#                          cuda,cpu: p50 latency and throughput (models from bench/gen_bench_models.py; float16
#                          copies from scripts/fp16_model.py)
#   6. check_<model>.txt   ferry check --backends cuda,cpu: which nodes fall back, copies at device boundaries
#   summary.txt            one line per step: ok / FAILED / skipped, with its seconds
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-build-gpu/device-check}"
mkdir -p "$OUT"
BUILD=build-gpu
JOBS="${JOBS:-$(nproc)}"
BUDGET_S="${BUDGET_S:-690}"   # stop starting new steps after this many seconds
MODELS_DIR="${MODELS_DIR:-$BUILD/bench-models}"
START=$SECONDS
: > "$OUT/summary.txt"

left() { echo $((BUDGET_S - (SECONDS - START))); }
# step NAME LIMIT_S COMMAND...: runs COMMAND with a time limit (capped by what is left), records the outcome.
step() {
  local name=$1 limit=$2
  shift 2
  local remaining
  remaining=$(left)
  if [ "$remaining" -lt 20 ]; then
    echo "$name: skipped (time budget spent)" | tee -a "$OUT/summary.txt"
    return 1
  fi
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  local t0=$SECONDS rc
  timeout "$limit" "$@"
  rc=$?
  local status=ok
  [ $rc -eq 124 ] && status="TIMED OUT after ${limit}s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && status="FAILED (exit $rc)"
  echo "$name: $status ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
  return $rc
}

# 1. The device.
{
  nvidia-smi || echo "nvidia-smi: not available"
  nvcc --version || true
} > "$OUT/device.txt" 2>&1

# 2. Build (only what the checks run).
build() {
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFERRY_CUDA=ON &&
    cmake --build "$BUILD" -j "$JOBS" --target ferry-cli ferry_tests ferry-conformance
}
if ! step build 330 build > "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  echo "build failed: see $OUT/build.log" | tee -a "$OUT/summary.txt"
  exit 1
fi
FERRY=$BUILD/bin/ferry

# 3. GPU-labelled tests, plus the declaration / host-logic suites.
gpu_tests() {
  "$BUILD/bin/ferry_tests" --gtest_filter='CudaDefs*:CudaShapes*' &&
    ctest --test-dir "$BUILD" -L gpu --output-on-failure -j 4
}
step gpu_tests 150 gpu_tests > "$OUT/gpu_tests.log" 2>&1

# 4. Conformance on cuda,cpu,ref: the failures are written as the cuda list (tests/conformance/expected_failures_cuda.txt
#    once reviewed).
step conformance 150 "$BUILD/bin/ferry-conformance" --backend cuda,cpu,ref -j "$JOBS" \
  --json "$OUT/conformance_cuda.json" --write-expected-failures "$OUT/expected_failures_cuda.txt" \
  > "$OUT/conformance.log" 2>&1

# 5. Benchmarks. The models are exported when /usr/bin/python3 has torch (bench/gen_bench_models.py).
MODELS="resnet50 mobilenet_v2 bert_base vit_b_16"
models() {
  /usr/bin/python3 bench/gen_bench_models.py "$MODELS_DIR" --only "${MODELS// /,}" || return 1
  for m in $MODELS; do
    [ -f "$MODELS_DIR/$m/model_fp16.onnx" ] ||
      /usr/bin/python3 scripts/fp16_model.py "$MODELS_DIR/$m/model.onnx" "$MODELS_DIR/$m/model_fp16.onnx" || return 1
  done
}
if step models 200 models > "$OUT/models.log" 2>&1; then
  : > "$OUT/bench.log"
  for m in $MODELS; do
    for precision in fp32 fp16; do
      model="$MODELS_DIR/$m/model.onnx"
      [ "$precision" = fp16 ] && model="$MODELS_DIR/$m/model_fp16.onnx"
      step "bench $m $precision" 40 "$FERRY" bench "$model" --backends cuda,cpu --batch 1,32 --warmup 3 \
        --iterations 20 --json > "$OUT/bench_${m}_${precision}.json" 2>> "$OUT/bench.log"
    done
    "$FERRY" check "$MODELS_DIR/$m/model.onnx" --backends cuda,cpu > "$OUT/check_$m.txt" 2>&1 || true
  done
  /usr/bin/python3 - "$OUT" > "$OUT/bench_summary.txt" 2>&1 <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
print(f"{'model':14} {'prec':5} {'batch':>5} {'p50 ms':>9} {'inferences/s':>13}")
for path in sorted(glob.glob(os.path.join(out, "bench_*_fp*.json"))):
    name = os.path.basename(path)[len("bench_"):-len(".json")]
    model, prec = name.rsplit("_", 1)
    try:
        doc = json.load(open(path))
    except Exception as e:  # an empty file: the step failed
        print(f"{model:14} {prec:5} no result ({e})")
        continue
    for r in doc.get("configurations", []):
        p50 = r.get("latency_ms", {}).get("p50")
        print(f"{model:14} {prec:5} {r.get('batch', '?'):>5} {p50!s:>9} {r.get('throughput_per_s', '?')!s:>13}")
EOF
fi
echo "total: $((SECONDS - START)) s" | tee -a "$OUT/summary.txt"
