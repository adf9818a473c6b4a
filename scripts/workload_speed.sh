#!/usr/bin/env bash
# Whole-network speed: a topology simulated end to end by `tcrtl workload run` (release build,
# 4 x 4, FP16, w = 1, each dataflow), and, when a Python with SCALE-Sim is given, SCALE-Sim's
# own run of the same topology on the same array and dataflow, on the same machine, one after
# the other. Prints, per dataflow, the simulated cycles, the wall seconds and the cycles per
# second of each, and their ratio. A measuring tool (docs/workloads.md, "Speed"), not a test.
#
# usage: scripts/workload_speed.sh [TOPOLOGY.csv] [SCALESIM_PYTHON] [ROUNDS]
#   TOPOLOGY.csv     a GEMM topology (Layer, M, N, K; default docs/workloads/transformer_block.csv)
#   SCALESIM_PYTHON  a python with `scalesim` installed (pip install scalesim "numpy<2"); omit
#                    to time this model only
#   ROUNDS           runs of each (default 3); the best of them is reported
#
# SCALE-Sim's figure counts its compute cycles ("Total Cycles" of COMPUTE_REPORT.csv, summed
# over the layers) over its wall time, interpreter start included (about 0.3 s here).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
topo=${1:-docs/workloads/transformer_block.csv}
py=${2:-}
rounds=${3:-3}
[ -f "$topo" ] || { echo "workload_speed: no topology $topo" >&2; exit 2; }
cargo build --release --quiet --bin tcrtl
tcrtl=$root/target/release/tcrtl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Arithmetic on decimals.
calc() { python3 -c "print($1)"; }

# Best wall time of `rounds` runs of the command given, in seconds.
best_of() {
  local best=""
  for _ in $(seq "$rounds"); do
    local t0 t1 s
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    s=$(calc "$t1 - $t0")
    if [ -z "$best" ] || [ "$(calc "int($s < $best)")" = 1 ]; then best=$s; fi
  done
  echo "$best"
}

for flow in os ws; do
  out=$work/tcrtl_$flow
  wall=$(best_of bash -c "rm -rf '$out' && '$tcrtl' workload run '$topo' --out '$out' --dataflow $flow")
  cycles=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['cycles'])" "$out/summary.json")
  printf '%s  tcrtl      %10d cycles  %8.3f s  %12.0f cycles/s\n' "$flow" "$cycles" "$wall" "$(calc "$cycles / $wall")"
  if [ -n "$py" ]; then
    ss=$work/ss_$flow
    mkdir -p "$ss"
    cat > "$ss/cfg" <<EOF
[general]
run_name = speed_$flow

[architecture_presets]
ArrayHeight:    4
ArrayWidth:     4
IfmapSramSzkB:    1024
FilterSramSzkB:   1024
OfmapSramSzkB:    1024
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Dataflow : $flow
Bandwidth : 10
ReadRequestBuffer: 32
WriteRequestBuffer: 32
MemoryBanks: 1

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
EOF
    # SCALE-Sim 3 reads a layout file even with custom layouts off: one default row a layer.
    python3 - "$topo" "$ss/layout.csv" <<'EOF'
import sys
names = [l.split(',')[0].strip() for l in open(sys.argv[1]).read().splitlines()[1:] if l.strip()]
head = ("Layer name,IFMAP Height Intraline Factor,IFMAP Width Intraline Factor,Filter Height "
        "Intraline Factor,Filter Width Intraline Factor,Channel Intraline Factor,Num Filter "
        "Intraline Factor,IFMAP Height Intraline Order,IFMAP Width Intraline Order,Channel "
        "Intraline Order,IFMAP Height Interline Order,IFMAP Width Interline Order,Channel "
        "Interline Order,Num Filter Intraline Order,Channel Intraline Order,Filter Height "
        "Intraline Order,Filter Width Intraline Order,Num Filter Interline Order,Channel "
        "Interline Order,Filter Height Interline Order,Filter Width Interline Order,\n")
with open(sys.argv[2], "w") as f:
    f.write(head)
    for n in names:
        f.write(n + ",1,1,1,1,1,1,0,1,2,0,1,2,0,1,2,3,0,1,2,3,\n")
EOF
    swall=$(best_of bash -c "rm -rf '$ss/out' && cd '$ss' && '$py' -m scalesim.scale -c cfg -t '$root/$topo' -l layout.csv -p out -i gemm -s N")
    report=$(find "$ss/out" -name COMPUTE_REPORT.csv | head -1)
    scycles=$(python3 -c "
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
print(sum(int(r[2]) for r in rows[1:] if len(r) > 2 and r[2].strip()))" "$report")
    printf '%s  SCALE-Sim  %10d cycles  %8.3f s  %12.0f cycles/s\n' "$flow" "$scycles" "$swall" "$(calc "$scycles / $swall")"
    printf '%s  ratio (tcrtl cycles/s over SCALE-Sim cycles/s): %.1f\n' "$flow" \
      "$(calc "($cycles / $wall) / ($scycles / $swall)")"
  fi
done
