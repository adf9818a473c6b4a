#!/usr/bin/env bash
# Instructions per simulated cycle of each kind of core, under callgrind: runs the release
# build of `examples/core_cycles` at two K values per kind and divides the instruction
# difference by the cycle difference, so start-up and elaboration cancel (the method of
# docs/performance.md). Needs valgrind.
#
# Two figures per kind: `step` counts only the instructions executed inside the simulator's
# clock step (`Simulator::step`: every block's combinational phase, the clock edge, the tracer
# and the watchdog), which is the simulated core's cost; `whole` counts the whole program,
# which also holds the work that grows with K outside the simulation (generating the random
# operands, compressing or quantising them, packing the memory image, checking the result).
#
# usage: scripts/core_cycles.sh [KIND...]   (default: every kind the example knows; ieee_vcd and
# ieee_fst trace every signal to a file, so they include the tracer's cost)
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(ieee ieee4 nvidia nvidia4 sparse mx int mem ws ws4 ws_mem ieee_vcd ieee_fst)
cargo build --release -q --example core_cycles
bin="$root/target/release/examples/core_cycles"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
measure() { # $1 kind, $2 K, $3 extra valgrind option -> "instructions cycles"
  local cycles ir
  cycles=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" ${3:+"$3"} "$bin" "$1" "$2" \
    2>"$tmp/err" | tail -n 1)
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
  echo "$ir $cycles"
}
step='--toggle-collect=tensorcore_rtl::rtl::sim::Simulator<*>::step'
for kind in "${kinds[@]}"; do
  read -r is1 c1 < <(measure "$kind" 512 "$step")
  read -r is2 c2 < <(measure "$kind" 1024 "$step")
  read -r iw1 _ < <(measure "$kind" 512)
  read -r iw2 _ < <(measure "$kind" 1024)
  echo "$kind: step $(( (is2 - is1) / (c2 - c1) )), whole $(( (iw2 - iw1) / (c2 - c1) )) instructions per cycle ($c1 and $c2 cycles)"
done
