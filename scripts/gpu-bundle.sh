#!/usr/bin/env bash
# Makes a folder that `gpu-figures.sh` runs from on a GPU machine without Rust or network:
#
#   scripts/gpu-bundle.sh BUNDLE      # here: needs cargo, and apt-get for the ICD loader
#   BUNDLE/gpu-figures.sh OUTDIR      # there: needs the NVIDIA driver (with its OpenCL)
#
# BUNDLE gets a stripped release `ksim`, the examples, this repository's gpu-figures.sh,
# and opencl/libOpenCL.so.1 unpacked from Debian's ocl-icd-libopencl1 package (the ICD
# loader; the GPU machine's driver provides the implementation, libnvidia-opencl.so.1).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 BUNDLE" >&2
    exit 2
fi
bundle=$1
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$bundle/opencl"
bundle=$(cd "$bundle" && pwd)

(cd "$root" && cargo build --release --bin ksim)
cp "$root/target/release/ksim" "$bundle/ksim"
strip "$bundle/ksim"
rm -rf "$bundle/examples"
cp -r "$root/examples" "$bundle/examples"
cp "$root/scripts/gpu-figures.sh" "$bundle/gpu-figures.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download ocl-icd-libopencl1 >/dev/null)
dpkg -x "$work"/ocl-icd-libopencl1_*.deb "$work/x"
cp -L "$work"/x/usr/lib/*/libOpenCL.so.1 "$bundle/opencl/libOpenCL.so.1"
echo "gpu-bundle: $bundle ($(du -sh "$bundle" | cut -f1)): run $bundle/gpu-figures.sh OUTDIR on the GPU machine"
