#!/usr/bin/env bash
# Instructions per simulated cycle of each kind of core, under callgrind: runs the release
# build of `examples/core_cycles` at two K values per kind and divides the instruction
# difference by the cycle difference, so start-up and elaboration cancel (the method of
# docs/performance.md). Needs valgrind.
#
# usage: scripts/core_cycles.sh [KIND...]   (default: every kind the example knows; ieee_vcd and
# ieee_fst trace every signal to a file, so they include the tracer's cost)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(ieee ieee4 nvidia nvidia4 sparse mx int mem ieee_vcd ieee_fst)
cargo build --release -q --example core_cycles
bin="$root/target/release/examples/core_cycles"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() { # $1 kind, $2 K -> "instructions cycles"
  local cycles ir
  cycles=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" "$1" "$2" \
    2>"$tmp/err" | tail -n 1)
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
  echo "$ir $cycles"
}
for kind in "${kinds[@]}"; do
  read -r ir1 c1 < <(measure "$kind" 512)
  read -r ir2 c2 < <(measure "$kind" 1024)
  echo "$kind: $(( (ir2 - ir1) / (c2 - c1) )) instructions per cycle ($c1 and $c2 cycles)"
done
