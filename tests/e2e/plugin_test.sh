#!/usr/bin/env bash
# End-to-end tests of custom-op plugins through the `ferry` CLI: the example Correlation plugin
# (examples/plugins/correlation) runs a model that mixes a standard op and the custom op, and matches a numpy
# reference; without the plugin the CLI says what is missing; broken plugins are refused with clear messages.
# Usage: plugin_test.sh path/to/ferry   (env FERRY_BUILD_DIR, FERRY_SOURCE_DIR; both default from the paths)
# Exit 77 (skipped) when /usr/bin/python3 lacks onnx or numpy.
set -euo pipefail
FERRY="$1"
SRC="${FERRY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
BUILD="${FERRY_BUILD_DIR:-$(cd "$(dirname "$FERRY")/.." && pwd)}"
PY=/usr/bin/python3
if ! "$PY" -c 'import onnx, numpy' >/dev/null 2>&1; then
  echo "SKIP: $PY lacks onnx or numpy"
  exit 77
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
PLUGIN="$BUILD/lib/libferry_correlation.so"
BAD_ABI="$BUILD/lib/libferry_test_bad_abi.so"
for f in "$PLUGIN" "$BAD_ABI"; do
  [ -f "$f" ] || { echo "FAIL setup: $f is missing (build the ferry_correlation and ferry_test_bad_abi targets)"; exit 1; }
done
"$PY" "$SRC/examples/plugins/correlation/make_model.py" "$TMP" >/dev/null
M="$TMP/correlation.onnx"
INPUTS=(--input "x1=$TMP/x1.npy" --input "x2=$TMP/x2.npy")

fails=0
passes=0
WHY=""

# run CMD...: runs it with stdout and stderr kept in $TMP/stdout and $TMP/stderr, and its exit status in RC
# (124 when it ran past 120 s: a hang fails the check instead of the whole test).
run() {
  RC=0
  timeout 120 "$@" >"$TMP/stdout" 2>"$TMP/stderr" || RC=$?
}
# Conditions on the last run: each returns non-zero with the reason in WHY.
want_rc() {
  [ "$RC" != 124 ] || { WHY="timed out after 120 s"; return 1; }
  [ "$RC" = "$1" ] || { WHY="exit $RC, want $1"; return 1; }
}
want_stderr() { grep -qF -- "$1" "$TMP/stderr" || { WHY="stderr does not mention '$1'"; return 1; }; }
want_stdout() { grep -qF -- "$1" "$TMP/stdout" || { WHY="stdout does not mention '$1'"; return 1; }; }
# want_json PYTHON: runs PYTHON with the last run's stdout parsed as JSON in `d`; it fails with sys.exit("why").
want_json() {
  WHY="$("$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))
def node(op):
    found = [n for n in d['nodes'] if n['op'] == op]
    if len(found) != 1: sys.exit(f'{len(found)} nodes with op {op}')
    return found[0]
$1" "$TMP/stdout" 2>&1)" || return 1
}

# check NAME FUNCTION: a PASS or FAIL line; on failure, the reason and the command's output.
check() {
  local name="$1"
  WHY=""
  if "$2"; then
    echo "PASS $name${WHY:+ ($WHY)}"
    passes=$((passes + 1))
  else
    echo "FAIL $name: $WHY"
    echo "--- stdout:"; head -c 3000 "$TMP/stdout"; echo
    echo "--- stderr:"; head -c 3000 "$TMP/stderr"; echo
    fails=$((fails + 1))
  fi
}

# a. With the plugin the model runs, and y matches the numpy reference of make_model.py.
run_with_plugin() {
  run "$FERRY" run "$M" "${INPUTS[@]}" --plugin "$PLUGIN" --output-dir "$TMP/out"
  want_rc 0 || return 1
  run "$PY" -c "
import numpy as np, sys
y = np.load(sys.argv[1]); e = np.load(sys.argv[2])
if y.shape != e.shape or y.dtype != e.dtype: sys.exit(f'y is {y.dtype}{list(y.shape)}, want {e.dtype}{list(e.shape)}')
d = float(np.abs(y - e).max()); print('max abs diff', d)
sys.exit(0 if d <= 1e-5 else f'max abs diff {d} > 1e-5')" "$TMP/out/y.npy" "$TMP/y_expected.npy"
  want_rc 0 || { WHY="$(cat "$TMP/stdout" "$TMP/stderr")"; return 1; }
  WHY="$(cat "$TMP/stdout")"
}
check run_with_plugin_matches_reference run_with_plugin

# b. Without the plugin the run fails and says which op is missing and how to provide it.
run_without_plugin() {
  run "$FERRY" run "$M" "${INPUTS[@]}"
  want_rc 1 && want_stderr "Correlation" && want_stderr "--plugin"
}
check run_without_plugin_names_op_and_flag run_without_plugin

# c. `ferry check` without the plugin: the report is produced (exit 0), the node is unsupported at the graph
#    layer, and the remedy points at --plugin; --fail-on unsupported turns that into exit 3.
check_without_plugin() {
  run "$FERRY" check "$M" --json
  want_rc 0 && want_json "
n = node('Correlation')
if n['verdict'] != 'unsupported': sys.exit(f\"verdict {n['verdict']!r}, want 'unsupported'\")
if n['layer'] != 'graph': sys.exit(f\"layer {n['layer']!r}, want 'graph'\")
if '--plugin' not in n['remedy']: sys.exit(f\"remedy {n['remedy']!r} does not mention --plugin\")"
}
check check_without_plugin_unsupported check_without_plugin
check_without_plugin_gate() {
  run "$FERRY" check "$M" --fail-on unsupported
  want_rc 3
}
check check_without_plugin_fail_on_unsupported check_without_plugin_gate

# d. `ferry check` with the plugin: the node is claimed by the plugin's backend, named after the file.
check_with_plugin() {
  run "$FERRY" check "$M" --plugin "$PLUGIN" --json
  want_rc 0 && want_json "
n = node('Correlation')
if n['backend'] != 'ferry_correlation': sys.exit(f\"backend {n['backend']!r}, want 'ferry_correlation'\")
if n['verdict'] == 'unsupported': sys.exit('verdict unsupported: ' + n['reason'])"
}
check check_with_plugin_claims_node check_with_plugin

# e. `ferry ops` lists the plugin's op under the plugin's backend.
ops_with_plugin() {
  run "$FERRY" ops --plugin "$PLUGIN" --json
  want_rc 0 && want_stdout "Correlation" && want_stdout "ferry_correlation"
}
check ops_with_plugin_lists_op ops_with_plugin
ops_plugin_backend() {
  run "$FERRY" ops --plugin "$PLUGIN" --backend ferry_correlation
  want_rc 0 && want_stdout "Correlation"
}
check ops_plugin_backend_filter ops_plugin_backend

# f. A plugin path that does not exist: exit 1, and the message names the path.
missing_plugin() {
  run "$FERRY" run "$M" "${INPUTS[@]}" --plugin "$TMP/missing.so"
  want_rc 1 && want_stderr "$TMP/missing.so"
}
check missing_plugin_named missing_plugin

# g. A plugin built for another ABI is refused before its init runs.
bad_abi_plugin() {
  run "$FERRY" run "$M" "${INPUTS[@]}" --plugin "$BAD_ABI"
  want_rc 1 && want_stderr "ABI" && want_stderr "999"
}
check bad_abi_plugin_refused bad_abi_plugin

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
