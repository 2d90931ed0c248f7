#!/usr/bin/env bash
# Plays matches on a lent GPU machine (scripts/gpu-run.sh) for at most SECONDS, the records
# written straight into OUT as games finish, so that a call cut by its limit still brings back
# every finished game. The network plays on the GPU by simulations (the clock of a GPU search
# would make it another player than on the CPU it is measured on); the machine's 16 cores run
# the games side by side and alphabeta's searches:
#   bash scripts/gpu-matches.sh 480 "$OUT" 15 --seed 50 --games 400 \
#       net:models/anchored-values-6x64-step1600.safetensors:sims=1000 alphabeta:time=1
# Arguments after PARALLEL are `epaminondas match`'s; --device cuda, --parallel PARALLEL and
# --records OUT/match.txt are added, and its output goes to OUT/match.log.
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: gpu-matches.sh SECONDS OUT PARALLEL MATCH-ARGS..." >&2; exit 2; }
SECONDS_ALLOWED=$1 OUT=$2 PARALLEL=$3
shift 3
CHECKOUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$OUT/match.log" 2>&1 || true
nproc >>"$OUT/match.log"
status=0
timeout "$SECONDS_ALLOWED" bash "$CHECKOUT/scripts/gpu-run.sh" match --device cuda --parallel "$PARALLEL" \
  --records "$OUT/match.txt" "$@" >>"$OUT/match.log" 2>&1 || status=$?
echo "gpu-matches: match stopped with status $status (124: the deadline)" >>"$OUT/match.log"
