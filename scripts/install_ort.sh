#!/usr/bin/env bash
# Installs ONNX Runtime 1.30 for Node.js (npm onnxruntime-node, which bundles its CPU library with the contrib
# ops) into bench/ort/node_modules: the side-by-side benchmarks use it, and the tests use it as an oracle
# (tests/python/ort_oracle.py: contrib-op kernels, the files ONNX Runtime writes, `ferry optimize --target ort`).
# Node.js and npm come from Debian (nodejs, npm) when no `node` / `npm` is on PATH. Idempotent: does nothing when
# the installed package matches bench/ort/package-lock.json.
#   install_ort.sh           fail when it cannot be installed
#   install_ort.sh --soft    warn and exit 0 instead (scripts/test.sh: the tests that need it then skip)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SOFT=0
case "${1:-}" in
  "") ;;
  --soft) SOFT=1 ;;
  *) echo "usage: $0 [--soft]" >&2; exit 2 ;;
esac
fail() {
  if [ "$SOFT" = 1 ]; then
    echo "install_ort: WARNING: $1; the tests that compare with ONNX Runtime will be skipped" >&2
    exit 0
  fi
  echo "install_ort: $1" >&2
  exit 1
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install_ort: installing nodejs npm"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm; } ||
    fail "apt-get could not install nodejs and npm"
fi

cd "$ROOT/bench/ort"
want="$(sed -n 's/.*"onnxruntime-node": "\([^"]*\)".*/\1/p' package.json)"
have=""
if [ -f node_modules/onnxruntime-node/package.json ]; then
  have="$(node -p "require('./node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)"
fi
if [ -n "$have" ] && [ "$have" = "$want" ] && node -e "require('./node_modules/onnxruntime-node')" 2>/dev/null; then
  echo "install_ort: onnxruntime-node $have is installed"
  exit 0
fi
echo "install_ort: installing onnxruntime-node $want (npm ci)"
ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm ci --no-audit --no-fund --loglevel=error ||
  fail "npm ci in bench/ort failed (is the npm registry reachable?)"
node -e "require('./node_modules/onnxruntime-node')" || fail "onnxruntime-node does not load"
echo "install_ort: onnxruntime-node $want installed"
