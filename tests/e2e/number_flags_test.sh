#!/usr/bin/env bash
# Numbers in flag values are whole numbers (src/core/parse_number.h): text after a number ("1abc"), blanks, inf/nan
# and overflow are refused with the flag and the text named, where a prefix used to be read silently (--range
# x=0,1abc ran as 0,1); usage errors, exit 2. Also what stays accepted: a leading '+', exponents, units after
# --memory-limit's number. And the range of thread counts.
# Usage: number_flags_test.sh path/to/ferry
set -u
FERRY="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

M="$ROOT/models/quickstart_cnn.onnx"

# --range LO,HI (run and bench share the parser): both values whole and finite.
expect range_trailing_junk 2 "--range input: expected LO,HI, got '0,1abc'" -- \
  "$FERRY" run "$M" --random --range input=0,1abc
expect range_low_junk 2 "--range input: expected LO,HI, got '0x,1'" -- "$FERRY" run "$M" --random --range input=0x,1
expect range_infinite 2 "--range input: expected LO,HI, got '-inf,inf'" -- \
  "$FERRY" run "$M" --random --range input=-inf,inf
expect range_one_value 2 "--range input: expected LO,HI, got '1'" -- "$FERRY" run "$M" --random --range input=1
expect range_order 2 "--range input: LO must be below HI" -- "$FERRY" run "$M" --random --range input=1,-1
expect range_signs_exponent 0 'logits: float32 \[1,10\]' -- "$FERRY" run "$M" --random --range input=-1e-1,+2.5E-1
expect bench_range_junk 2 "--range input: expected LO,HI, got '0,1abc'" -- \
  "$FERRY" bench "$M" --range input=0,1abc --iterations 1 --warmup 0

# --shape dims: whole non-negative integers.
expect shape_trailing_junk 2 "--shape input: bad dimension '28a' in '1x1x28x28a'" -- \
  "$FERRY" run "$M" --random --shape input=1x1x28x28a

# bench's integer and percentile lists.
expect bench_batch_junk 2 "--batch: '2x' is not an integer" -- "$FERRY" bench "$M" --batch 1,2x
expect bench_batch_overflow 2 "--batch: '99999999999999999999' is not an integer" -- \
  "$FERRY" bench "$M" --batch 99999999999999999999
expect bench_threads_above_int 2 "--threads: 99999999999 is above 1024" -- \
  "$FERRY" bench "$M" --threads 99999999999
expect bench_percentile_junk 2 "--percentiles: '99x' is not a number" -- "$FERRY" bench "$M" --percentiles 50,99x
expect bench_percentile_nan 2 "--percentiles: 'nan' is not a number" -- "$FERRY" bench "$M" --percentiles nan

# Intra-op thread counts: 0 (all cores) to 1024 (ferry/limits.h kMaxThreads) wherever one is given; 100000 used to
# crash `ferry run` inside OpenMP. The library refuses them too (tests/runtime/session_options_test.cc).
expect run_threads_above_max 2 "--threads: 100000 is out of range: expected 0 \(all cores\) to 1024" -- \
  "$FERRY" run "$M" --random --threads 100000
expect run_threads_just_above_max 2 "--threads: 1025 is out of range" -- "$FERRY" run "$M" --random --threads 1025
expect run_threads_negative 2 "--threads: -1 is out of range" -- "$FERRY" run "$M" --random --threads=-1
expect run_threads_junk 2 "--threads: '4x' is not an integer" -- "$FERRY" run "$M" --random --threads 4x
expect check_threads_above_max 2 "--threads: 100000 is out of range" -- "$FERRY" check "$M" --memory --threads 100000
expect serve_threads_above_max 2 "--threads: 100000 is out of range" -- "$FERRY" serve "$ROOT/no/such/repo" --threads 100000
expect compare_threads_above_max 2 "--a 'cpu:threads=100000': bad value in 'threads=100000' \(expected an integer in 0..1024\)" -- \
  "$FERRY" compare "$M" --a cpu:threads=100000
expect compare_threads_negative 2 "--b 'ref:threads=-1': bad value in 'threads=-1' \(expected an integer in 0..1024\)" -- \
  "$FERRY" compare "$M" --b ref:threads=-1

# check --memory-limit: a number, then an optional unit.
expect memory_limit_unit_junk 2 "--memory-limit: expected a positive size like 512M, 2G or 1048576, got '1.5Mx'" -- \
  "$FERRY" check "$M" --memory-limit 1.5Mx
expect memory_limit_space 2 "--memory-limit: expected a positive size .*, got '1.5 M'" -- \
  "$FERRY" check "$M" --memory-limit "1.5 M"
expect memory_limit_exponent 3 'exceeds --memory-limit 100.0 KiB' -- "$FERRY" check "$M" --memory-limit 1e2K
expect memory_limit_fraction 0 'total' -- "$FERRY" check "$M" --memory-limit 1.5GiB

# compare's configuration integers and per-output tolerances.
expect compare_opt_junk 2 "--b 'ref:opt=2x': bad value in 'opt=2x' \(expected an integer in 0..3\)" -- \
  "$FERRY" compare "$M" --b ref:opt=2x
expect compare_tolerance_junk 2 \
  "--per-output: expected NAME=ATOL\[,RTOL\], got 'logits=0.1x' \('0.1x' is not a tolerance >= 0\)" -- \
  "$FERRY" compare "$M" --per-output logits=0.1x
expect compare_tolerance_inf 2 "'inf' is not a tolerance >= 0" -- "$FERRY" compare "$M" --per-output logits=1e-3,inf

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
