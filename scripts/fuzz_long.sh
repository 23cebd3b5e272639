#!/usr/bin/env bash
# The long run behind docs/reliability.md (not part of CI): every fuzz target for SECONDS (default 600) under
# libFuzzer with ASan/UBSan, JOBS targets side by side (default 2), then the server soak
# (scripts/soak_serve.py, SOAK_SECONDS, default 600) against a Release `ferry serve`. Prints the results as the
# Markdown table docs/reliability.md keeps, and writes it to build-fuzz/long-run.md.
#
#   ./scripts/fuzz_long.sh [SECONDS] [JOBS]
#   SOAK_SECONDS=0 ./scripts/fuzz_long.sh ...   # the fuzz targets only
#   ./scripts/fuzz_long.sh --table              # the table again, from build-fuzz/results.jsonl and soak.json
#
# Exit 1 when any target found a crash, hang, leak or out-of-memory input, or the soak failed.
set -uo pipefail
cd "$(dirname "$0")/.."
TABLE_ONLY=0
if [ "${1:-}" = "--table" ]; then
  TABLE_ONLY=1
  shift
fi
SECONDS_EACH=${1:-600}
JOBS=${2:-2}
SOAK_SECONDS=${SOAK_SECONDS:-600}
status=0

if [ "$TABLE_ONLY" = 0 ]; then
./scripts/fuzz.sh --build || exit 1
: >build-fuzz/results.jsonl
rm -f build-fuzz/soak.json
mapfile -t targets < <(./scripts/fuzz.sh --list)
running=0
for t in "${targets[@]}"; do
  FUZZ_NO_BUILD=1 ./scripts/fuzz.sh "$t" "$SECONDS_EACH" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done

if [ "$SOAK_SECONDS" -gt 0 ]; then
  ./scripts/build.sh >/dev/null || exit 1
  /usr/bin/python3 scripts/soak_serve.py --seconds "$SOAK_SECONDS" --json build-fuzz/soak.json || status=1
fi
fi

/usr/bin/python3 - "$SECONDS_EACH" "$JOBS" <<'PY' | tee build-fuzz/long-run.md
import json, os, subprocess, sys
rows = list({r["target"]: r for r in map(json.loads, open("build-fuzz/results.jsonl"))}.values())  # last run each
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
date = min(r["date"] for r in rows) if rows else "?"
print(f"Run of {date} at commit {commit}: `./scripts/fuzz_long.sh {sys.argv[1]} {sys.argv[2]}` "
      f"({sys.argv[2]} targets at a time on this machine's {os.cpu_count()} cores).\n")
print("| target | seconds | executions | exec/s | coverage (edges) | features | corpus | crashes | hangs | out-of-memory | peak RSS (MB) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in sorted(rows, key=lambda r: r["target"]):
    rate = r["execs"] / max(1, r["seconds"])
    print(f"| {r['target']} | {r['seconds']} | {r['execs']:,} | {rate:,.0f} | {r['cov']:,} | {r['ft']:,} | "
          f"{r['corpus']:,} | {r['crashes']} | {r['hangs']} | {r['ooms']} | {r['peak_rss_mb']} |")
try:
    s = json.load(open("build-fuzz/soak.json"))
except OSError:
    sys.exit(0)
print(f"\nServer soak, `scripts/soak_serve.py --seconds {s['seconds']}`:\n")
print("| valid requests | failed | unavailable during reload | reloads | reload failures | slow connections | "
      "malformed requests | malformed not refused | RSS MB start / 30 s / peak / end | exit after SIGTERM |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
print(f"| {s['valid_requests']:,} | {s['valid_failed']} | {s['unavailable_during_reload']:,} | {s['reloads']} | "
      f"{s['reload_failed']} | {s['slow_connections']:,} | {s['malformed_requests']:,} | "
      f"{s['malformed_unanswered_or_accepted']} | {s['rss_mb_start']} / {s['rss_mb_after_30s']} / "
      f"{s['rss_mb_peak']} / {s['rss_mb_end']} | {s['exit']} |")
PY
exit $status
