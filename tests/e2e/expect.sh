# The assertion the e2e scripts share (source it after `set -u`; it counts into `passes` and `fails`):
#   expect NAME WANT_RC PATTERN -- CMD...   runs CMD (at most 300 s), and passes when it exits WANT_RC and its
#                                           output (stdout and stderr) matches the extended regex PATTERN.
fails=0
passes=0

expect() {
  local name="$1" want="$2" pattern="$3"
  shift 4
  local out rc
  out="$(timeout 300 "$@" 2>&1)"
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, want $want"; echo "$out" | head -20; fails=$((fails + 1)); return
  fi
  if ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name: output does not match /$pattern/"; echo "$out" | head -20; fails=$((fails + 1)); return
  fi
  echo "PASS $name"; passes=$((passes + 1))
}
