#!/usr/bin/env bash
# Trains for at most SECONDS on a lent GPU machine (scripts/gpu-run.sh) and copies what the run
# makes into OUT as it appears: the log, metrics.csv, opponents.csv and the newest checkpoints.
# A lent machine keeps nothing once given back, and a call cut by its limit returns only what is
# already in OUT, so the copying goes on while training runs rather than after it.
#   bash scripts/gpu-lease.sh 560 "$OUT" runs/gpu-sparring-ab \
#       --config configs/gpu-sparring-alphabeta.toml --init-from models/gpu-8x96-sparring-gen4.safetensors
# With `distill` after RUN it distils instead (`epaminondas distill --run RUN ...`), and copies
# state.json and the newest students (checkpoints/step-*) rather than generations:
#   bash scripts/gpu-lease.sh 560 "$OUT" runs/distill-6x64 distill \
#       --teacher models/gpu-8x96-sparring-ab-gen1.safetensors --config configs/distill-6x64.toml
# The call brings back at most 8 files, so OUT gets the 4 newest checkpoints besides the log and
# the two text files a run or a distillation writes. Killing the trainer at the deadline is safe: checkpoints are written and renamed
# whole, and a generation's finished games stay in its journal for `train --run RUN` to resume.
set -uo pipefail  # not -e: a copy that fails must not stop the copying
[ $# -ge 3 ] || { echo "usage: gpu-lease.sh SECONDS OUT RUN [distill] [ARGS...]" >&2; exit 2; }
SECONDS_ALLOWED=$1 OUT=$2 RUN=$3
shift 3
COMMAND=train
if [ "${1:-}" = distill ]; then COMMAND=distill; shift; fi
CHECKOUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"

# Copies FILE into OUT under its own name, whole or not at all (a copy cut by the deadline leaves
# only a .tmp, which the next round overwrites).
publish() {
  cp "$1" "$OUT/$(basename "$1").tmp" && mv "$OUT/$(basename "$1").tmp" "$OUT/$(basename "$1")"
}

copy_results() {
  for file in metrics.csv opponents.csv state.json; do
    [ -f "$RUN/$file" ] && publish "$RUN/$file"
  done
  rm -f "$OUT"/gen-*.safetensors.tmp "$OUT"/step-*.safetensors.tmp
  # A run's generations (not generation 0, the network it began with), or a distillation's
  # students.
  for checkpoint in $(ls "$RUN"/checkpoints/gen-*.safetensors "$RUN"/checkpoints/step-*.safetensors 2>/dev/null | grep -v 'gen-000000' | tail -4); do
    [ -f "$OUT/$(basename "$checkpoint")" ] || publish "$checkpoint"
  done
  # Older checkpoints make way for newer ones within the limit of files.
  ls "$OUT"/gen-*.safetensors "$OUT"/step-*.safetensors 2>/dev/null | head -n -4 | xargs -r rm -f || true
}

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$OUT/train.log" 2>&1 || true
( while sleep 10; do copy_results; done ) &
COPIER=$!
status=0
timeout "$SECONDS_ALLOWED" bash "$CHECKOUT/scripts/gpu-run.sh" "$COMMAND" --run "$RUN" "$@" >>"$OUT/train.log" 2>&1 || status=$?
kill "$COPIER" 2>/dev/null || true
copy_results
echo "gpu-lease: $COMMAND stopped with status $status (124: the deadline)" >>"$OUT/train.log"
