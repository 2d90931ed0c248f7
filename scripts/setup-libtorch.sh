#!/usr/bin/env bash
# Puts a CPU build of libtorch 2.13.0 (the version tch 0.26 is written against) in a cache outside
# the checkout and links it as `.libtorch`, which `.cargo/config.toml` hands to the tch build.
#
# libtorch is assembled from the PyPI wheels (reachable wherever pip works, unlike tch's own
# download server): torch (headers and libraries) plus the two CUDA runtime wheels that libtorch_cpu.so links
# against even on a CPU-only machine. libtorch_cuda.so is deliberately left out: without it tch
# builds for the CPU.
#
# Idempotent: a finished cache is verified (file checksums) and reused; a wheel whose hash does not
# match the pinned one (a truncated or interrupted download) is deleted and fetched again.
#
# Environment: EPAMINONDAS_CACHE overrides the cache folder (default ~/.cache/epaminondas).
set -euo pipefail

TORCH_VERSION=2.13.0
CACHE="${EPAMINONDAS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epaminondas}"
WHEELS="$CACHE/wheels"
DEST="$CACHE/libtorch-$TORCH_VERSION-cpu"
CHECKOUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINK="$CHECKOUT/.libtorch"

# The wheels are pinned by file name and hash. `--platform`/`--python-version` make pip fetch these
# exact files whatever Python the machine has (only the C++ libraries inside are used). pip takes
# `--platform` literally, so every manylinux tag the pinned wheels carry is listed.
WHEEL_SPECS=(
  "torch==$TORCH_VERSION torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl 60fcdcb2f3876e21146cb4524ef06397d727ca9ad5f020818547e25075fe3cb7"
  "nvidia-cuda-runtime==13.0.96 nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl 7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548"
  "nvidia-cuda-cupti==13.0.85 nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl 4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8"
)
# What goes into lib/: (wheel member, name in lib/).
LIB_MEMBERS=(
  "torch/lib/libc10.so"
  "torch/lib/libtorch_cpu.so"
  "torch/lib/libtorch.so"
  "torch/lib/libgomp.so.1"
  "nvidia/cu13/lib/libcudart.so.13"
  "nvidia/cu13/lib/libcupti.so.13"
)

say() { echo "setup-libtorch: $*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] ||
  die "the pinned wheels are for Linux x86_64, this is $(uname -s)-$(uname -m); point LIBTORCH at a libtorch $TORCH_VERSION of your own (see README)"
command -v python3 >/dev/null || die "python3 is needed (pip downloads the wheels, zipfile unpacks them)"
command -v sha256sum >/dev/null || die "sha256sum (coreutils) is needed to verify the downloads"

link_checkout() {
  ln -sfn "$DEST" "$LINK"
  say "libtorch $TORCH_VERSION (CPU) ready at $DEST, linked as $LINK"
}

# A finished cache holds a manifest of checksums written last; verifying it catches a cache that was
# damaged after the fact, not only one that was never finished.
if [ -f "$DEST/MANIFEST.sha256" ]; then
  if (cd "$DEST" && sha256sum --quiet --check MANIFEST.sha256 >/dev/null 2>&1); then
    link_checkout
    exit 0
  fi
  say "cached libtorch at $DEST fails its checksums; rebuilding it"
  rm -rf "$DEST"
fi

wheel_ok() { # file, expected hash
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

mkdir -p "$WHEELS"
for spec in "${WHEEL_SPECS[@]}"; do
  read -r requirement file hash <<<"$spec"
  path="$WHEELS/$file"
  if wheel_ok "$path" "$hash"; then
    continue
  fi
  [ -e "$path" ] && say "$file does not match its pinned sha256 (truncated or corrupt); fetching it again"
  rm -f "$path"
  say "downloading $requirement"
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_25_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --python-version 3.11 --implementation cp \
    --dest "$WHEELS" "$requirement" ||
    die "pip could not download $requirement (is PyPI reachable?)"
  wheel_ok "$path" "$hash" ||
    die "$path was downloaded but its sha256 is not $hash; delete $WHEELS and retry, or report the new hash"
done

# Assemble in a scratch folder beside the destination and rename it into place at the end, so an
# interrupted run never leaves a half-filled folder that looks finished.
STAGE="$(mktemp -d "$CACHE/.libtorch-stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
say "unpacking into $DEST"
python3 - "$STAGE" "$WHEELS" "${LIB_MEMBERS[@]}" <<'PY'
import os, shutil, sys, zipfile
stage, wheels, members = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(os.path.join(stage, "lib"))
for name in sorted(os.listdir(wheels)):
    if not name.endswith(".whl"):
        continue
    with zipfile.ZipFile(os.path.join(wheels, name)) as wheel:
        for info in wheel.infolist():
            if info.filename.startswith("torch/include/") and not info.is_dir():
                target = os.path.join(stage, info.filename[len("torch/"):])
            elif info.filename in members:
                target = os.path.join(stage, "lib", os.path.basename(info.filename))
            else:
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with wheel.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)  # zipfile checks each member's CRC as it reads
missing = [m for m in members if not os.path.exists(os.path.join(stage, "lib", os.path.basename(m)))]
if missing:
    sys.exit("setup-libtorch: error: the wheels lack " + ", ".join(missing))
if not os.path.isdir(os.path.join(stage, "include", "torch")):
    sys.exit("setup-libtorch: error: the torch wheel has no include/torch")
PY
echo "$TORCH_VERSION" >"$STAGE/build-version"
(cd "$STAGE" && find lib include build-version -type f -print0 | sort -z | xargs -0 sha256sum >MANIFEST.sha256)
rm -rf "$DEST"
chmod 755 "$STAGE"
mv "$STAGE" "$DEST"
trap - EXIT
link_checkout
