#!/usr/bin/env bash
# End-to-end tests of the `cuda` backend's CLI surface that need no GPU (docs/cuda.md): `ferry ops --backend cuda`,
# `ferry check --backends cuda,cpu --cc ...` (native at 8.0, hardware-layer fallback at 7.5, a bad --cc), and, on a
# machine without a GPU, the note of `check` without --cc and a session that fails naming the device (exit 1).
# Usage: cuda_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
source "$ROOT/tests/e2e/expect.sh"
MODEL="$ROOT/models/quickstart_cnn.onnx"

expect ops_cuda_listed 0 'cuda: 7\+ .*' -- "$FERRY" ops --backend cuda --op Add
expect ops_cuda_capability 0 'needs: compute capability 8.0' -- "$FERRY" ops --backend cuda --op Conv
expect check_cuda_80_native 0 'RUNNABLE: 23 native on cuda, 0 fall back' -- "$FERRY" check "$MODEL" --backends cuda,cpu --cc 8.0
expect check_cuda_75_fallback 0 'needs compute capability 8.0, the device has 7.5' -- "$FERRY" check "$MODEL" --backends cuda,cpu --cc 7.5
expect check_cuda_75_gate 3 'CHECK FAILED' -- "$FERRY" check "$MODEL" --backends cuda,cpu --cc 7.5 --fail-on fallback
expect check_cuda_bad_cc 2 'expected MAJOR.MINOR' -- "$FERRY" check "$MODEL" --backends cuda,cpu --cc eight
expect check_cuda_device_1 0 'RUNNABLE: 23 native on cuda:1' -- "$FERRY" check "$MODEL" --backends cuda:1,cpu --cc 9.0

# Without a GPU (nvidia-smi finds none): check notes it and judges against no GPU; a session refuses.
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect check_cuda_no_gpu_note 0 "note: backend 'cuda' \(device cuda:0\).*give --cc" -- "$FERRY" check "$MODEL" --backends cuda,cpu
  expect run_cuda_no_gpu 1 "error \[Unsupported\]: backend 'cuda' \(device cuda:0\)" -- "$FERRY" run "$MODEL" --random --backends cuda,cpu
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
