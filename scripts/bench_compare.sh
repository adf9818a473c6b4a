#!/usr/bin/env bash
# Same-run speed comparison of the tensor-core benchmark between an older commit and the
# checkout: builds `cargo bench --bench tensor_core` at BASE (in a temporary git worktree with
# its own target directory, seeded with a copy of this checkout's release dependencies: two
# checkouts of the crate must not share one, as build.rs records the checkout's path) and here, then
# runs the two alternately, ROUNDS times, so the machine's drift hits both alike. Prints each
# run's throughput lines (simulated cycles per second) and, at the end, the median ratio.
#
# usage: scripts/bench_compare.sh BASE [FILTER] [ROUNDS]
#   BASE    a commit (e.g. the one before a change)
#   FILTER  criterion benchmark filter (default: fp16_w1_, i.e. untraced and VCD, w = 1)
#   ROUNDS  alternations (default 3)
#
# With BENCH_WAVES_DIR set (e.g. a folder on a RAM disk such as /dev/shm/tcrtl-bench), both
# trees' traced benches write their waveforms there instead of into their checkouts: the
# output file is synced to disk before it is renamed into place, and on a disk that sync,
# paid alike by both trees, would bound both traced figures.
set -euo pipefail
base=$1
filter=${2:-fp16_w1_}
rounds=${3:-3}
root=$(git rev-parse --show-toplevel)
cd "$root"
# A real `benches/waves` left by an earlier `cargo bench` would keep this tree's waveforms on
# disk (and every run's sync with them) while the base's go to the RAM disk: the traced ratio
# would then measure the disk. It is this checkout's ignored output: refuse, not delete it.
if [ -n "${BENCH_WAVES_DIR:-}" ] && [ -d "$root/benches/waves" ] && [ ! -L "$root/benches/waves" ]; then
  echo "bench_compare: $root/benches/waves is a directory; remove it (it holds only bench outputs) or unset BENCH_WAVES_DIR" >&2
  exit 2
fi
work=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true
  rm -rf "$work"
  if [ -n "${BENCH_WAVES_DIR:-}" ] && [ -L "$root/benches/waves" ]; then
    rm -f "$root/benches/waves"
  fi
}
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$work/base" "$base"
cargo bench --bench tensor_core --no-run -q
mkdir -p "$work/base/target"
cp -a "$root/target/release" "$work/base/target/release"
(cd "$work/base" && cargo bench --bench tensor_core --no-run -q)
if [ -n "${BENCH_WAVES_DIR:-}" ]; then
  # Where each tree's bench writes (`CARGO_MANIFEST_DIR/waves` of its bench target: the
  # root before the benchmarks became their own package, `benches/` after).
  mkdir -p "$BENCH_WAVES_DIR"
  for d in "$work/base/waves" "$work/base/benches/waves" "$root/benches/waves"; do
    if [ ! -e "$d" ] || [ -L "$d" ] || [ "$d" != "$root/benches/waves" ]; then
      rm -rf "$d"
      ln -s "$BENCH_WAVES_DIR" "$d"
    fi
  done
fi

run() { # $1 = directory, $2 = label
  (cd "$1" && cargo bench -q --bench tensor_core -- --noplot --warm-up-time 1 \
    --measurement-time 4 "$filter" 2>/dev/null) |
    awk -v who="$2" '/^tensor_core\//{name=$1} /thrpt:/ && $(NF-2) ~ /elem\/s$/ {print who, name, $(NF-3), $(NF-2)}'
}
: >"$work/rates"
for r in $(seq 1 "$rounds"); do
  run "$work/base" base | tee -a "$work/rates"
  run "$root" head | tee -a "$work/rates"
done
python3 - "$work/rates" <<'EOF'
import sys, statistics
unit = {"Kelem/s": 1e3, "Melem/s": 1e6, "Gelem/s": 1e9, "elem/s": 1.0}
rates = {}
for line in open(sys.argv[1]):
    who, name, value, u = line.split()
    rates.setdefault(name, {}).setdefault(who, []).append(float(value) * unit[u])
for name, r in sorted(rates.items()):
    if "base" in r and "head" in r:
        b, h = statistics.median(r["base"]), statistics.median(r["head"])
        print(f"{name}: base {b/1e6:.3f} M/s, head {h/1e6:.3f} M/s, ratio {h/b:.2f}")
EOF
