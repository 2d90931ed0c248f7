#!/usr/bin/env bash
# Builds, on this machine, an epaminondas binary for the GPU machines that sessions are sometimes
# lent (the `device` tool: one H100 or H200, 16 cores). Those machines have PyTorch 2.11.0+cu130,
# no Rust and no network, and a call takes at most 64 MiB of files along, so the binary is built
# here and carried, stripped, and runs there against that machine's own PyTorch
# (`scripts/gpu-run.sh`). This is the way session 9 trained `gpu-8x96-gen16`, written down so that
# a lent GPU's half hour goes to training rather than to the build.
#
# tch 0.26 is written against libtorch 2.13.0, so the build uses 2.11.0's headers and libraries,
# taken from the PyPI wheel of the same build as the GPU machines' (torch 2.11.0+cu130), with
#   - LIBTORCH_BYPASS_VERSION_CHECK=1, and
#   - a copy of torch-sys in which every generated wrapper that does not compile against 2.11's
#     headers (operations 2.11 lacks or declares differently: philox random numbers, lanczos
#     upsampling, two attention kernels; none used by this program) throws instead.
# The wheel's CUDA library is not linked: `scripts/gpu-run.sh` preloads the GPU machine's own.
#
# Result: .gpu/epaminondas (git-ignored). Name `.gpu` in the device call's carry. On a CPU machine
# the binary runs too, against the 2.11 libraries kept in the cache:
#   LD_LIBRARY_PATH=$CACHE/libtorch-2.11.0-gpu-kit/lib .gpu/epaminondas ...
#
# Idempotent; the first call downloads about 530 MB and compiles for about 5 minutes on 2 cores.
# Environment: EPAMINONDAS_CACHE overrides the cache folder (default ~/.cache/epaminondas).
set -euo pipefail

CACHE="${EPAMINONDAS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/epaminondas}"
CHECKOUT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEEL=torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl
WHEEL_SHA256=0f68f4ac6d95d12e896c3b7a912b5871619542ec54d3649cf48cc1edd4dd2756
WHEELS="$CACHE/wheels"
KIT="$CACHE/libtorch-2.11.0-gpu-kit"
TARGET="$CHECKOUT/target/gpu-kit"

say() { echo "gpu-kit: $*" >&2; }
die() { say "error: $*"; exit 1; }

command -v python3 >/dev/null || die "python3 is needed (pip downloads the wheel, zipfile unpacks it)"
command -v g++ >/dev/null || die "g++ is needed (it finds the wrappers that 2.11 cannot compile)"

# libtorch_cpu.so links the CUDA runtime and profiler libraries even when no GPU is used; the
# CPU set-up's wheels of them (same major version, 13) serve for linking here.
bash "$CHECKOUT/scripts/setup-libtorch.sh"

# 1. The 2.11.0 wheel, pinned by hash.
mkdir -p "$WHEELS"
if ! { [ -f "$WHEELS/$WHEEL" ] && [ "$(sha256sum "$WHEELS/$WHEEL" | cut -d' ' -f1)" = "$WHEEL_SHA256" ]; }; then
  rm -f "$WHEELS/$WHEEL"
  say "downloading torch 2.11.0 (about 530 MB)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --python-version 3.12 --implementation cp torch==2.11.0 -d "$WHEELS"
  [ "$(sha256sum "$WHEELS/$WHEEL" | cut -d' ' -f1)" = "$WHEEL_SHA256" ] || die "$WHEEL does not match its pinned sha256"
fi

# 2. A libtorch folder of its headers and the libraries tch links.
if [ ! -f "$KIT/done" ]; then
  rm -rf "$KIT"
  mkdir -p "$KIT/lib"
  say "unpacking libtorch 2.11.0 into $KIT"
  python3 - "$WHEELS" "$WHEEL" "$KIT" <<'EOF'
import glob, os, shutil, sys, zipfile
wheels, wheel, kit = sys.argv[1:]
def copy(archive, member, dest):
    with archive.open(member) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
torch = zipfile.ZipFile(os.path.join(wheels, wheel))
for name in torch.namelist():
    if name.startswith("torch/include/") and not name.endswith("/"):
        dest = os.path.join(kit, "include", name[len("torch/include/"):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        copy(torch, name, dest)
for lib in ["libc10.so", "libtorch_cpu.so", "libtorch.so", "libgomp.so.1"]:
    copy(torch, "torch/lib/" + lib, os.path.join(kit, "lib", lib))
for pattern, member in [("nvidia_cuda_runtime-13.*.whl", "nvidia/cu13/lib/libcudart.so.13"),
                        ("nvidia_cuda_cupti-13.*.whl", "nvidia/cu13/lib/libcupti.so.13")]:
    found = sorted(glob.glob(os.path.join(wheels, pattern)))
    if not found:
        sys.exit(f"gpu-kit: no {pattern} in {wheels}; run scripts/setup-libtorch.sh")
    copy(zipfile.ZipFile(found[-1]), member, os.path.join(kit, "lib", os.path.basename(member)))
EOF
  touch "$KIT/done"
fi

# 3. torch-sys, copied, with the wrappers 2.11 cannot compile made to throw.
(cd "$CHECKOUT" && cargo fetch --quiet)
TORCH_SYS_SRC="$(cd "$CHECKOUT" && cargo metadata --format-version 1 --locked 2>/dev/null |
  python3 -c 'import json, os, sys; m = json.load(sys.stdin); print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "torch-sys"))')"
[ -d "$TORCH_SYS_SRC" ] || die "cargo metadata did not name torch-sys's source folder"
TORCH_SYS="$CACHE/$(basename "$TORCH_SYS_SRC")-for-2.11"
if [ ! -f "$TORCH_SYS/stubbed" ]; then
  rm -rf "$TORCH_SYS"
  cp -r "$TORCH_SYS_SRC" "$TORCH_SYS"
  chmod -R u+w "$TORCH_SYS"
  say "finding the wrappers that do not compile against 2.11 (about a minute)"
  g++ -std=c++17 -fsyntax-only -w -D_GLIBCXX_USE_CXX11_ABI=1 -I"$KIT/include" \
    -I"$KIT/include/torch/csrc/api/include" "$TORCH_SYS/libtch/torch_api_generated.cpp" \
    2>"$TORCH_SYS/errors.txt" || true
  python3 - "$TORCH_SYS/libtch/torch_api_generated.cpp" "$TORCH_SYS/errors.txt" <<'EOF'
import re, sys
source_path, errors_path = sys.argv[1:]
lines = open(source_path).read().split("\n")
bad = {int(m.group(1)) for m in re.finditer(r"torch_api_generated\.cpp:(\d+):\d+: error", open(errors_path).read())}
stubbed = []
# From the bottom up, so that replacing a body leaves the line numbers above it as they were;
# `floor` is the first line of the wrapper stubbed last, so errors inside it are passed over.
floor = len(lines)
for number in sorted(bad, reverse=True):
    if number - 1 >= floor:
        continue
    # The wrapper around the failing line: `TYPE atg_NAME(...) {`, then `PROTECT(`, its body, `)`.
    start = number - 1
    while not re.match(r"\w[\w ]*\*? ?atg_\w+\(", lines[start]):
        start -= 1
    name = re.search(r"(atg_\w+)\(", lines[start]).group(1)
    floor = start
    protect = start + 1
    if lines[protect].strip() != "PROTECT(":
        sys.exit(f"gpu-kit: {name} is not laid out as expected (no PROTECT after its first line)")
    end = protect + 1
    while lines[end].strip() != ")":
        end += 1
    lines[protect + 1:end] = [f'    throw std::runtime_error("{name} is not in libtorch 2.11");']
    stubbed.append(name)
if not stubbed:
    sys.exit("gpu-kit: no wrapper failed to compile, so nothing was stubbed; is the include path right?")
open(source_path, "w").write("\n".join(lines))
print(f"gpu-kit: stubbed {len(stubbed)} wrappers: {', '.join(sorted(stubbed))}", file=sys.stderr)
EOF
  touch "$TORCH_SYS/stubbed"
fi

# 4. The build, in its own target folder. `--config patch` swaps torch-sys for the copy; cargo
# writes the patched source into Cargo.lock, so the checkout's lock file is put back afterwards.
LOCK_BACKUP="$(mktemp)"
cp "$CHECKOUT/Cargo.lock" "$LOCK_BACKUP"
trap 'cp "$LOCK_BACKUP" "$CHECKOUT/Cargo.lock"; rm -f "$LOCK_BACKUP"' EXIT
say "building (about 4 minutes on 2 cores the first time)"
(cd "$CHECKOUT" && LIBTORCH="$KIT" LIBTORCH_BYPASS_VERSION_CHECK=1 CARGO_TARGET_DIR="$TARGET" \
  cargo build --release --bin epaminondas --config "patch.crates-io.torch-sys.path=\"$TORCH_SYS\"")
mkdir -p "$CHECKOUT/.gpu"
strip -o "$CHECKOUT/.gpu/epaminondas" "$TARGET/release/epaminondas"
say "ready: .gpu/epaminondas ($(du -h "$CHECKOUT/.gpu/epaminondas" | cut -f1)); carry .gpu and run it there with scripts/gpu-run.sh"
