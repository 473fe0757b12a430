#!/usr/bin/env bash
# Installs a built acco tree into a fresh prefix, then configures, builds and runs the consumer
# project against it with find_package(acco). Checks that the shell completions and the man page
# are installed and that the consumer prints the Gen4 x16 link rate, then builds examples/ the
# same way, as a project of its own, and runs its tour (the probe, a quick bench and a scheduled
# workload through the installed headers and libraries alone).
#
# Usage: run_install_test.sh <cmake> <build dir> <consumer source dir> <generator> <initial cache>
#                            <examples source dir>
# The initial cache (written by tests/install/CMakeLists.txt) carries the build's compiler, build
# type and flags.
set -euo pipefail

if [[ $# -ne 6 ]]; then
  echo "usage: $0 <cmake> <build dir> <consumer source dir> <generator> <initial cache>" \
    "<examples source dir>" >&2
  exit 2
fi
cmake=$1 build_dir=$2 consumer_src=$3 generator=$4 initial_cache=$5 examples_src=$6

work=$(mktemp -d "${TMPDIR:-/tmp}/acco-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Run a step quietly; show its output only when it fails.
step() {
  local name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    echo "FAILED: $name: $*" >&2
    cat "$work/$name.log" >&2
    exit 1
  fi
}

step install "$cmake" --install "$build_dir" --prefix "$work/prefix"
# acco_ROOT: the initial cache already holds the build's CMAKE_PREFIX_PATH for the dependencies.
step configure "$cmake" -S "$consumer_src" -B "$work/build" -G "$generator" -C "$initial_cache" \
  -Dacco_ROOT="$work/prefix"
step build "$cmake" --build "$work/build" --verbose

# Warnings are acco's own business: they must not reach the consumer.
if grep -q acco_warnings "$work/build.log" "$work/prefix"/lib*/cmake/acco/*.cmake; then
  echo "FAILED: acco_warnings leaked into the installed package or the consumer's build" >&2
  exit 1
fi
# Test helpers are never installed.
if find "$work/prefix" -name '*test_support*' -o -name '*fake_nvml*' -o -name 'libnvidia-ml*' |
  grep -q .; then
  echo "FAILED: test helpers were installed:" >&2
  find "$work/prefix" -name '*test_support*' -o -name '*fake_nvml*' -o -name 'libnvidia-ml*' >&2
  exit 1
fi

# The shell completions and the man pages, generated from the command registry at build time.
for file in share/bash-completion/completions/acco share/zsh/site-functions/_acco \
  share/man/man1/acco.1 share/man/man1/acco-bench.1 share/man/man1/acco-power.1; do
  if [[ ! -s "$work/prefix/$file" ]]; then
    echo "FAILED: $file was not installed" >&2
    exit 1
  fi
done
if ! bash -c 'source "$1" && complete -p acco' _ "$work/prefix/share/bash-completion/completions/acco" |
  grep -q '^complete -F _acco acco$'; then
  echo "FAILED: the installed bash completion does not register _acco for acco" >&2
  exit 1
fi
if ! grep -q '^\.TH ACCO 1 ' "$work/prefix/share/man/man1/acco.1"; then
  echo "FAILED: the installed share/man/man1/acco.1 is not the acco(1) page" >&2
  exit 1
fi
if ! grep -q '^\.TH ACCO\\-BENCH 1 ' "$work/prefix/share/man/man1/acco-bench.1"; then
  echo "FAILED: the installed share/man/man1/acco-bench.1 is not the acco-bench(1) page" >&2
  exit 1
fi

output=$("$work/build/acco_consumer")
echo "consumer printed: $output"
# Gen4 x16: 16 GT/s * 16 lanes * 128/130 / 8 bits = 31507692307.69 bytes/s.
if ! awk -v got="$output" 'BEGIN {
       want = 31507692307.69
       if (got !~ /^[0-9.eE+-]+$/) exit 1
       diff = got - want; if (diff < 0) diff = -diff
       exit !(diff <= want * 1e-9)
     }'; then
  echo "FAILED: expected about 31507692307.69 (31.5 GB/s), got '$output'" >&2
  exit 1
fi

step configure-examples "$cmake" -S "$examples_src" -B "$work/examples" -G "$generator" \
  -C "$initial_cache" -Dacco_ROOT="$work/prefix"
step build-examples "$cmake" --build "$work/examples"
step run-tour bash "$examples_src/check_tour.sh" "$work/examples/acco_tour"
echo "examples: $(tail -n1 "$work/run-tour.log")"
echo "PASSED"
