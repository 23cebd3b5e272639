#!/usr/bin/env bash
# Ferry against ONNX Runtime on this machine, side by side: installs what is needed (apt via scripts/setup.sh,
# onnxruntime-node 1.30 from npm into bench/ort/node_modules), builds Ferry, exports the benchmark models, and
# prints the comparison table (Markdown) for docs/performance.md. Extra arguments go to bench/compare_ort.py,
# e.g. --only resnet50 --batches 1 --threads 1 --rounds 5.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
./scripts/setup.sh
./scripts/build.sh
./scripts/install_ort.sh
/usr/bin/python3 bench/gen_bench_models.py build/bench-models
echo "# $(date -u +%Y-%m-%d) on $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) CPUs"
/usr/bin/python3 bench/compare_ort.py --ferry build/bin/ferry --models build/bench-models "$@"
