#!/usr/bin/env bash
# Regenerates the lab waveforms and the GTKWave screenshots in docs/course/img/.
#
#   docs/course/shots.sh            (from the repository root)
#
# Needs: cargo, gtkwave, xvfb (xvfb-run), imagemagick (import) and python3 with numpy (the
# operands of lab 7). Each screenshot is GTKWave opened on a lab waveform with the save file the
# run wrote beside it, zoomed to fit, inside a virtual X display, captured with
# `import -window root`. The save files name the translate filter process `tcrtl wave-filter
# KIND` (docs/waves.md): the freshly built tcrtl is put first on PATH so that GTKWave finds it.
# Screenshots are pictures of a GUI: they are not byte-reproducible, the waveforms they show
# are. PROFILE=dev uses the debug build instead of the release one (quicker to build, slower to
# run).
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in gtkwave xvfb-run import; do
  command -v "$tool" >/dev/null || { echo "shots.sh: $tool not found" >&2; exit 2; }
done
python3 -c 'import numpy' 2>/dev/null || { echo "shots.sh: python3 with numpy not found" >&2; exit 2; }
out=docs/course/img
waves=$(mktemp -d)
trap 'rm -rf "$waves"' EXIT
profile=${PROFILE:-release}
case $profile in dev) bindir=target/debug ;; *) bindir=target/$profile ;; esac
cargo build --profile "$profile" --quiet --examples --bins
tcrtl=$bindir/tcrtl
export PATH="$PWD/$bindir:$PATH"

# Lab 0: the integer MAC mesh testbench (seed and row 0 of the mesh).
"$tcrtl" tb run mac_mesh --waves "$waves" >/dev/null
# Lab 1: one FP16 PE (the `cancellation` case of pe_fp16_mac).
"$tcrtl" tb run pe_fp16_mac --waves "$waves" >/dev/null
# Lab 2: a 4 x 4 x 4 iota GEMM: the skewed wavefront through the mesh.
"$tcrtl" gemm --m 4 --n 4 --k 4 --pattern iota --vcd "$waves/lab2_mesh.vcd" \
  --trace-glob 'controller.state' --trace-glob 'mesh.pe_*.a_in' --trace-glob 'mesh.pe_*.b_in' \
  --trace-glob 'mesh.pe_0_0.acc_0' --trace-glob 'mesh.pe_3_3.acc_0' >/dev/null
# Lab 3: an 8 x 8 x 4 GEMM of ones: four tiles, two accumulator sets, the drain.
"$tcrtl" gemm --m 8 --n 8 --k 4 --pattern ones --vcd "$waves/lab3_tiles.vcd" \
  --trace-glob 'controller.state' --trace-glob 'mesh.pe_0_0.a_ctl' --trace-glob 'mesh.pe_0_0.acc_*' \
  --trace-glob 'mesh.pe_3_0.acc_*' --trace-glob 'd_tag' --trace-glob 'd_out_0' >/dev/null
# Lab 4: an NVIDIA block FMA (Volta: n = 4) on w = 1 PEs: products gathered for four steps,
# the accumulator changing once per block, on the `fire` step.
"$tcrtl" gemm --m 4 --n 4 --k 8 --pattern iota --acc nvidia --preset volta \
  --vcd "$waves/lab4_blocks.vcd" --trace-glob 'controller.state' \
  --trace-glob 'mesh.pe_0_0.a_in' --trace-glob 'mesh.pe_0_0.b_in' --trace-glob 'mesh.pe_0_0.s1_ctl' \
  --trace-glob 'mesh.pe_0_0.gather_*' --trace-glob 'mesh.pe_0_0.acc_0' >/dev/null
# Lab 5: the sparse testbench (metadata beside A, selects, B multiplexers).
"$tcrtl" tb run sparse_2_4 --waves "$waves" >/dev/null
# Lab 6: the double-buffered GEMM through TMA (waveform narrowed to the pipeline).
"$tcrtl" tb run tma_gemm_pipeline --waves "$waves" >/dev/null
# Lab 7: an NVFP4 GEMM (4 x 4 x 32, w = 4, blocks of 16, tensor scales) on operands quantised
# by `tcrtl convert`: pe_0_0's scales, block sum, scale multiplier and acc_0.
python3 - "$waves" <<'PY'
import sys, numpy as np
r = np.random.default_rng(7)
np.save(sys.argv[1] + '/nxa.npy', r.standard_normal((4, 32)))
np.save(sys.argv[1] + '/nxbt.npy', r.standard_normal((32, 4)).T.copy())
PY
tsa=$("$tcrtl" convert --to nvfp4 --in "$waves/nxa.npy" --out "$waves/na.npy" \
  --scales-out "$waves/nsa.npy" | awk '/^tensor scale/ {print $3}')
tsb=$("$tcrtl" convert --to nvfp4 --in "$waves/nxbt.npy" --out "$waves/nbt.npy" \
  --scales-out "$waves/nsbt.npy" | awk '/^tensor scale/ {print $3}')
python3 - "$waves" <<'PY'
import sys, numpy as np
d = sys.argv[1]
np.save(d + '/nb.npy', np.load(d + '/nbt.npy').T.copy())
np.save(d + '/nsb.npy', np.load(d + '/nsbt.npy').T.copy())
PY
"$tcrtl" gemm --format nvfp4 --a "$waves/na.npy" --b "$waves/nb.npy" --a-scales "$waves/nsa.npy" \
  --b-scales "$waves/nsb.npy" --a-tensor-scale "$tsa" --b-tensor-scale "$tsb" --width 4 --check \
  --vcd "$waves/lab7_nvfp4.vcd" --trace-window 4:19 --trace-glob 'a_tscale' --trace-glob 'b_tscale' \
  --trace-glob 'mesh.pe_0_0.a_in' --trace-glob 'mesh.pe_0_0.b_in' --trace-glob 'mesh.pe_0_0.?_scale' \
  --trace-glob 'mesh.pe_0_1.a_scale' --trace-glob 'mesh.pe_1_0.b_scale' --trace-glob 'mesh.pe_0_0.s1_ctl' \
  --trace-glob 'mesh.pe_0_0.blk_sum' --trace-glob 'mesh.pe_0_0.scale_*' --trace-glob 'mesh.pe_0_0.acc_0' \
  >/dev/null

cat > "$waves/fit.tcl" <<'TCL'
gtkwave::/Time/Zoom/Zoom_Full
TCL

shot() { # shot NAME.vcd OUT.png [SAVE.gtkw: default, the one written beside NAME.vcd]
  local vcd=$waves/$1 gtkw=${3:-$waves/${1%.vcd}.gtkw} png=$2
  xvfb-run -a -s "-screen 0 1600x900x24" bash -c "
    gtkwave '$vcd' '$gtkw' -S '$waves/fit.tcl' >/dev/null 2>&1 &
    pid=\$!
    sleep 4
    import -window root '$png'
    kill \$pid"
  echo "wrote $png"
}
shot mac_mesh.vcd "$out/lab0_mac_mesh.png"
shot pe_fp16_mac.vcd "$out/lab1_pe_fp16.png"
shot lab2_mesh.vcd "$out/lab2_wavefront.png" "$PWD/docs/course/gtkw/lab2_wavefront.gtkw"
shot lab3_tiles.vcd "$out/lab3_tiles.png"
shot lab4_blocks.vcd "$out/lab4_blocks.png"
shot sparse_2_4.vcd "$out/lab5_sparse.png"
shot tma_gemm_pipeline.vcd "$out/lab6_tma_pipeline.png"
shot lab7_nvfp4.vcd "$out/lab7_nvfp4.png"
