#!/usr/bin/env bash
# Runs acco_tour and checks that every step reported: the probe, the four pinned bench cases on
# two emulated devices (ok, a rate above zero) and the two scheduling policies with no failed task.
# Usage: check_tour.sh ACCO_TOUR [SYSROOT]
set -euo pipefail
tour=${1:?usage: check_tour.sh ACCO_TOUR [SYSROOT]}
shift
out=$("$tour" "$@")
echo "$out"
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
grep -q '^probe: .*NUMA node(s)' <<<"$out" || fail "no probe line"
ok=$(grep -cE '^bench: (h2d|d2h)_pinned_(plain|engine) +host [01] .* ok [0-9.]+ GB/s$' <<<"$out" || true)
[[ $ok -eq 8 ]] || fail "expected 8 ok bench lines (4 cases x 2 devices), got $ok"
if grep -E '^bench: .* 0\.00 GB/s$' <<<"$out"; then
  fail "a bench case moved nothing"
fi
runs=$(grep -cE '^schedule: (dmda|eager), [0-9]+ task\(s\), makespan [0-9.]+ s, efficiency [0-9]+%, 0 failed$' <<<"$out" || true)
[[ $runs -eq 2 ]] || fail "expected 2 schedule lines with no failed task, got $runs"
echo PASSED
