#!/usr/bin/env bash
# Runs acco_tour and checks that every step reported: the probe, the four pinned bench cases on
# two emulated devices (ok, a rate above zero), the two scheduling policies with no failed task,
# and the daemon: two simulated devices read back over HTTP, stopped after 3 s with rounds taken.
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
grep -qE '^serve: listening on 127\.0\.0\.1:[0-9]+, 2 device\(s\)$' <<<"$out" || fail "no serve line"
read_back=$(grep -cE '^serve: device [01] \(.+\): [0-9]+ W$' <<<"$out" || true)
[[ $read_back -eq 2 ]] || fail "expected the 2 simulated devices read back, got $read_back"
grep -qE '^serve: stopped by the end of --duration after [0-9]+ round\(s\)$' <<<"$out" ||
  fail "the daemon did not stop after its duration"
echo PASSED
