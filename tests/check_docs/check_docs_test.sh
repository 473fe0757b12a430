#!/usr/bin/env bash
# Runs scripts/check-docs on small pages in a temporary directory, so that it cannot pass
# silently: a shown output with one wrong line fails with the page's line and a diff, --update
# writes the printed line back (after which the page passes), a block without a marker fails,
# "..." and masked rates and times match what varies, and a skip without a reason is refused.
# Usage: check_docs_test.sh CHECK_DOCS BUILD_DIR SOURCE_DIR CASE
# Backticks in single quotes are Markdown, not command substitutions.
# shellcheck disable=SC2016
set -euo pipefail
check_docs=$1
build=$2
source_dir=$3
case_name=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAILED: $case_name: $*" >&2
  [[ -f "$work/out" ]] && sed 's/^/  | /' "$work/out" >&2
  exit 1
}

# run EXPECTED_STATUS ARGS...: check-docs with ARGS, its output in $work/out.
run() {
  local expected=$1 status=0
  shift
  "$check_docs" --build "$build" "$@" >"$work/out" 2>&1 || status=$?
  [[ $status -eq $expected ]] || fail "exit $status, expected $expected"
}

expect_line() {  # expect_line TEXT: the output has a line containing TEXT
  grep -qF -- "$1" "$work/out" || fail "no line with '$1'"
}

# docs/bench.md shows `acco bench --list`; a copy with the host_memcpy line changed.
planted_page() {
  cp "$source_dir/docs/bench.md" "$work/bench.md"
  line=$(grep -n '^host_memcpy ' "$work/bench.md" | cut -d: -f1)
  [[ -n $line ]] || fail "docs/bench.md shows no host_memcpy line to change"
  sed -i "${line}s/one thread's memcpy/two threads' memcpy/" "$work/bench.md"
  command_line=$(grep -n '^\$ acco bench --list$' "$work/bench.md" | cut -d: -f1)
}

case $case_name in
  planted_wrong_line)
    planted_page
    run 1 "$work/bench.md"
    expect_line "bench.md:$command_line: \`acco bench --list\` prints other lines than the page shows"
    expect_line "-host_memcpy                two threads' memcpy"
    expect_line "+host_memcpy                one thread's memcpy"
    expect_line "@@ -$((line - 2)),"  # the page's line numbers, two lines of context
    expect_line "1 problem(s)"
    ;;
  update_writes_the_printed_line)
    planted_page
    run 0 --update "$work/bench.md"
    expect_line "updated 1 output(s)"
    cmp -s "$work/bench.md" "$source_dir/docs/bench.md" || fail "--update did not restore the page"
    run 0 "$work/bench.md"
    ;;
  unmarked_block)
    printf '# A page\n\n```\n$ acco bench --list\nh2d_pageable_plain\n```\n' >"$work/page.md"
    run 1 "$work/page.md"
    expect_line "page.md:3: this block shows a '\$ ' command but no <!-- check-docs --> marker"
    ;;
  ellipsis_and_masks)
    # Printed: a, b, a rate, a time and a date, then c, d, e.
    cat >"$work/page.md" <<'PAGE'
<!-- check-docs -->
```
$ printf 'a\nb\n1.52 GB/s in 3 ms at 2026-12-04T10:00:00Z\nc\nd\ne\n'
a
...
9.9   GB/s in 120 ms at 2025-01-01T00:00:00Z
...
e
```
PAGE
    run 0 "$work/page.md"
    expect_line "1 block(s) checked, 0 skipped with a reason, 0 problem(s)"
    # The words around a masked value still count.
    sed -i 's/GB\/s in 120 ms/GB\/s within 120 ms/' "$work/page.md"
    run 1 "$work/page.md"
    expect_line "+1.52 GB/s in 3 ms at 2026-12-04T10:00:00Z"
    ;;
  skip_needs_a_reason)
    printf '<!-- check-docs: skip -->\n```\n$ acco bench --list\n```\n' >"$work/page.md"
    run 2 "$work/page.md"
    expect_line "page.md:1: check-docs: skip needs a reason"
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASSED: $case_name"
