#!/usr/bin/env bash
# libferry_runtime.so holds the runtime only: it loads no Graphviz, gRPC or Boost library and defines no CLI11,
# Boost, gRPC or server symbol (those live in the tools, the server and the CLI).
# Usage: runtime_deps_test.sh LIBFERRY_RUNTIME_SO
set -euo pipefail
lib="$1"
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$lib" ] || fail "no $lib"
deps=$(ldd "$lib")
echo "$deps"
if grep -Ei 'libgvc|libcgraph|libcdt|libgrpc|libboost|libabsl|libcli11' <<<"$deps"; then
  fail "libferry_runtime.so links a tool or server dependency (above)"
fi
symbols=$(nm -D --defined-only -C "$lib")
for pattern in 'CLI::' 'boost::' 'grpc::' 'ferry::server::' 'ferry::tools::' 'gvContext' 'agopen'; do
  if grep -F -m3 "$pattern" <<<"$symbols"; then fail "libferry_runtime.so defines $pattern symbols (above)"; fi
done
grep -q 'ferry::Session::Create' <<<"$symbols" || fail "libferry_runtime.so does not define ferry::Session::Create"
echo "runtime_deps: libferry_runtime.so links no Graphviz/gRPC/Boost/CLI11 and defines no tool or server symbol"
