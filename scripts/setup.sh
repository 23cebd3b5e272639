#!/usr/bin/env bash
# Installs the Debian packages Ferry needs. Idempotent: installs only what is missing, and runs `apt-get update`
# once (only when something must be installed).
#   setup.sh          what the build and every test need (scripts/test.sh, CI)
#   setup.sh --build  what building the runtime, the tools and the CLI needs (scripts/quickstart.sh)
set -euo pipefail

BUILD_PACKAGES=(
  # build
  g++ cmake ninja-build pkg-config
  # ONNX protos, checker, shape inference, op schemas (1.12) and protobuf
  libonnx-dev libprotobuf-dev protobuf-compiler
  # libraries
  libfmt-dev nlohmann-json3-dev libcli11-dev
  # graph layout for the `ferry check --html` report (libgvc; graphviz registers the layout plugins)
  libgraphviz-dev graphviz
  # oneDNN for the `cpu` backend; its CMake config (built with the OpenCL GPU runtime) runs
  # find_package(OpenCL REQUIRED), and the OpenCL headers are only a Recommends of libdnnl-dev
  libdnnl-dev ocl-icd-opencl-dev
  # `ferry serve`: Boost.Beast/Asio (HTTP), gRPC with its protoc plugin
  libboost-dev libgrpc++-dev protobuf-compiler-grpc
  # the Python package `ferry` (python/): pybind11 against Debian's python3 and NumPy, DLPack's header
  python3 python3-dev pybind11-dev python3-numpy libdlpack-dev
)
TEST_PACKAGES=(
  # tests
  libgtest-dev libgmock-dev libonnx-testdata
  # the HTML report is rendered in headless Chromium (tests/e2e/check_html_test.sh)
  chromium
  # test models: exported from PyTorch with /usr/bin/python3
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  # the Python package's tests
  python3-pytest
)

case "${1:-}" in
  "") PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  --build) PACKAGES=("${BUILD_PACKAGES[@]}") ;;
  *) echo "usage: $0 [--build]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages are installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
