#!/usr/bin/env bash
# Runs scripts/check-deps on a small fake tree (modules base < mid < top, a docs/architecture.md
# table in that order) after planting one problem, and checks the exit code and the line it
# prints. Usage: check_deps_test.sh CHECK_DEPS CASE [SOURCE_DIR]. Case "consistent" expects the
# fake tree as written to pass; every other case expects exit 1 and its message. The real_tree_*
# cases copy SOURCE_DIR's modules, apps and docs/architecture.md instead and plant one problem.
# Backticks in single quotes are Markdown, not command substitutions.
# shellcheck disable=SC2016
set -euo pipefail
check_deps=$1
case_name=$2
source_dir=${3:-}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

module() {  # module NAME CMAKE-ARGS...: a module whose header, source and test include nothing
  local name=$1
  shift
  mkdir -p "$root/modules/$name/include/acco/$name" "$root/modules/$name/src" \
    "$root/modules/$name/test"
  printf 'acco_add_module(\n  NAME %s\n  SOURCES src/%s.cpp\n  %s\n  TESTS test/%s_test.cpp)\n' \
    "$name" "$name" "$*" "$name" >"$root/modules/$name/CMakeLists.txt"
  printf '#pragma once\n' >"$root/modules/$name/include/acco/$name/$name.hpp"
  printf '#include "acco/%s/%s.hpp"\n' "$name" "$name" >"$root/modules/$name/src/$name.cpp"
  printf '#include "acco/%s/%s.hpp"\n#include "acco/testing/matchers.hpp"\n' "$name" "$name" \
    >"$root/modules/$name/test/${name}_test.cpp"
}
include() {  # include FILE MODULE: FILE (under modules/) includes MODULE's header
  printf '#include <acco/%s/%s.hpp>\n' "$2" "$2" >>"$root/modules/$1"
}
table() {  # table ROW...: docs/architecture.md with one "| name | owns | deps |" row per ROW
  mkdir -p "$root/docs"
  {
    printf '# Architecture\n\n| module | what it owns | depends on |\n|---|---|---|\n'
    for row in "$@"; do
      printf '| `%s` | things | %s |\n' "${row%%:*}" "${row#*:}"
    done
    printf '\nAfter the table.\n'
  } >"$root/docs/architecture.md"
}

module base ''
module mid 'DEPS acco::base'
module top 'DEPS acco::mid PRIVATE_DEPS acco::base fmt::fmt'
include mid/include/acco/mid/mid.hpp base
include top/include/acco/top/top.hpp mid
include top/src/top.cpp base
table 'base:—' 'mid:`base`' 'top:`mid`; private: `base`'

expect=''
case $case_name in
  consistent) ;;
  upward_include)
    include base/src/base.cpp top
    expect='module base: modules/base/src/base.cpp:2: includes top, a higher layer (a later row of the table in docs/architecture.md)' ;;
  upward_declared)
    module base 'PRIVATE_DEPS acco::mid'
    include base/src/base.cpp mid
    table 'base:private: mid' 'mid:base' 'top:mid; private: base'
    expect='module base: modules/base/CMakeLists.txt:4: depends on mid, a higher layer (a later row of the table in docs/architecture.md)' ;;
  undeclared_include)
    include mid/src/mid.cpp top
    include top/src/top.cpp base  # still consistent itself
    expect='module mid: modules/mid/src/mid.cpp:2: includes top, which modules/mid/CMakeLists.txt does not declare' ;;
  unused_declaration)
    module mid 'DEPS acco::base'
    expect='module mid: modules/mid/CMakeLists.txt:4: declares base, which no source or header of modules/mid includes' ;;
  public_header_private_dep)
    include top/include/acco/top/top.hpp base
    expect='module top: modules/top/include/acco/top/top.hpp:3: a public header includes base, which modules/top/CMakeLists.txt declares PRIVATE_DEPS (it must be DEPS)' ;;
  test_undeclared)
    include mid/test/mid_test.cpp top
    expect='module mid: modules/mid/test/mid_test.cpp:3: a test includes top, which modules/mid/CMakeLists.txt declares neither DEPS nor TEST_DEPS' ;;
  no_such_module)
    include base/src/base.cpp mon
    expect='module base: modules/base/src/base.cpp:2: includes acco/mon/, which is no module' ;;
  table_differs)
    table 'base:—' 'mid:base, top' 'top:mid; private: base'
    expect='docs/architecture.md:6: module mid: the table says it depends on top, modules/mid/CMakeLists.txt does not declare it' ;;
  table_private_as_public)
    table 'base:—' 'mid:base' 'top:mid, base'
    expect='docs/architecture.md:7: module top: the table lists base as public, modules/top/CMakeLists.txt declares it PRIVATE_DEPS' ;;
  real_tree_upward_include)
    rm -rf "$root/modules" "$root/docs"
    mkdir -p "$root/docs"
    cp -r "$source_dir/modules" "$source_dir/apps" "$root/"
    cp "$source_dir/docs/architecture.md" "$root/docs/"
    "$check_deps" "$root" >/dev/null || { echo "FAIL: the copy of the real tree does not pass" >&2; exit 1; }
    line=$(($(wc -l <"$root/modules/core/src/units.cpp") + 1))
    printf '#include "acco/cli/app.hpp"\n' >>"$root/modules/core/src/units.cpp"
    expect="module core: modules/core/src/units.cpp:$line: includes cli, a higher layer (a later row of the table in docs/architecture.md)" ;;
  real_tree_table_differs)
    rm -rf "$root/modules" "$root/docs"
    mkdir -p "$root/docs"
    cp -r "$source_dir/modules" "$source_dir/apps" "$root/"
    sed 's/^\(| `topo` |.*\); private: `nvml` |$/\1 |/' "$source_dir/docs/architecture.md" \
      >"$root/docs/architecture.md"
    line=$(grep -n '^| `topo` |' "$root/docs/architecture.md" | cut -d: -f1)
    expect="docs/architecture.md:$line: module topo: modules/topo/CMakeLists.txt declares nvml, the table does not list it" ;;
  table_missing_row)
    table 'base:—' 'top:mid; private: base'
    expect='docs/architecture.md: module mid (modules/mid/CMakeLists.txt) has no row in the module table' ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2 ;;
esac

set +e
output=$("$check_deps" "$root" 2>&1)
rc=$?
set -e
printf '%s\n' "$output"
if [ -z "$expect" ]; then
  [ $rc -eq 0 ] || { echo "FAIL: expected exit 0, got $rc" >&2; exit 1; }
else
  [ $rc -eq 1 ] || { echo "FAIL: expected exit 1, got $rc" >&2; exit 1; }
  grep -qxF "check-deps: $expect" <<<"$output" ||
    { echo "FAIL: expected the line: check-deps: $expect" >&2; exit 1; }
fi
echo "PASS: $case_name"
