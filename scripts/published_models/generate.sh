#!/usr/bin/env bash
# Replays the published tensor-core models of Khattak and Mikaitis (repository
# north-numerical-computing/MATLAB-tensor-core, BSD 2-Clause; not part of this project) on the
# same random rows for every model, input format and output format, under GNU Octave, and
# writes the sets in the layout of the measurement sets:
#   OUT/MODEL/FORMAT/{a_MODEL_FORMAT.txt, b_MODEL_FORMAT.txt, c_MODEL_fp32.txt,
#                     d_MODEL_fp32.txt[, d_MODEL_fp16.txt]}
# so that `tcrtl verify measurements OUT/MODEL/FORMAT --format FORMAT --preset P` replays them.
#
# usage: scripts/published_models/generate.sh MODELS_DIR OUT [ROWS]
#   MODELS_DIR: the `models` folder of a checkout of that repository. The CDNA3 rows (MI300XMC)
#   need models/MI300MC.m, deleted from the repository's latest commit: add it to MODELS_DIR
#   from commit b4bf135 (`git show b4bf135:models/MI300MC.m`).
# needs: octave-cli (Debian package octave), python3.
set -euo pipefail
models=$1; out=$2; rows=${3:-128}
here=$(cd "$(dirname "$0")" && pwd)
seed=2026
# MODEL FORMAT K OUTPUTS
while read -r model fmt k outs; do
  [ -z "$model" ] && continue
  dir="$out/$model/$fmt"
  mkdir -p "$dir"
  python3 "$here/make_rows.py" "$fmt" "$k" "$rows" "$seed" "$dir" "$model"
  for o in ${outs//,/ }; do
    python3 "$here/replay_set.py" "$models" "$model" "$fmt" "$o" "$dir" "$model" "$fmt"
  done
  echo "$model $fmt: $(wc -l < "$dir/c_${model}_fp32.txt") rows, outputs $outs"
done <<'TABLE'
V100TC fp16 32 fp32,fp16
A100TC fp16 32 fp32,fp16
A100TC bf16 32 fp32
A100TC tf32 16 fp32
AdaTC fp16 32 fp32,fp16
AdaTC bf16 32 fp32
AdaTC tf32 16 fp32
AdaTC e4m3 64 fp32,fp16
AdaTC e5m2 64 fp32,fp16
L40STC fp16 32 fp32,fp16
L40STC bf16 32 fp32
L40STC tf32 16 fp32
L40STC e4m3 64 fp32,fp16
L40STC e5m2 64 fp32,fp16
H100TC fp16 32 fp32,fp16
H100TC bf16 32 fp32
H100TC tf32 16 fp32
H100TC e4m3 64 fp32,fp16
H100TC e5m2 64 fp32,fp16
B200TC fp16 32 fp32,fp16
B200TC bf16 32 fp32
B200TC tf32 16 fp32
B200TC e4m3 64 fp32
B200TC e5m2 64 fp32
B200TCRN fp16 32 fp32,fp16
B200TCRN bf16 32 fp32
B200TCRN tf32 16 fp32
B200TCRN e4m3 64 fp32
B200TCRN e5m2 64 fp32
MI100MC fp16 32 fp32
MI100MC bf16 32 fp32
MI210MC fp16 32 fp32
MI210MC bf16 32 fp32
MI300XMC fp16 32 fp32
MI300XMC bf16 32 fp32
MI300XMC tf32 16 fp32
TABLE
