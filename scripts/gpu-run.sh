#!/usr/bin/env bash
# Runs .gpu/epaminondas (built on the development machine by scripts/gpu-kit.sh) on a lent GPU
# machine, against that machine's PyTorch 2.11.0+cu130: its libraries go on the library path,
# and libtorch_cuda.so is preloaded, because the binary was linked without it and libtorch
# registers its CUDA kernels only when that library is loaded. Arguments are epaminondas's:
#   bash scripts/gpu-run.sh train --config configs/gpu-refine.toml --run runs/gpu-refine \
#       --init-from models/cpu-8x96-gen35.safetensors
set -euo pipefail
CHECKOUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "gpu-run: error: $*" >&2; exit 1; }

[ -x "$CHECKOUT/.gpu/epaminondas" ] || die ".gpu/epaminondas is missing: run scripts/gpu-kit.sh on the development machine and name .gpu in the call's carry"
TORCH_LIB="$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')" ||
  die "python3 cannot import torch here"
[ -f "$TORCH_LIB/libtorch_cuda.so" ] || die "$TORCH_LIB has no libtorch_cuda.so: this PyTorch is not a CUDA build"
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_PRELOAD="$TORCH_LIB/libtorch_cuda.so${LD_PRELOAD:+ $LD_PRELOAD}"
exec "$CHECKOUT/.gpu/epaminondas" "$@"
