#!/usr/bin/env bash
# Installs an OpenCL runtime for ksim's GPU backend on Debian/Ubuntu: the ICD loader
# (libOpenCL.so.1) and PoCL, a CPU OpenCL implementation, plus clinfo when available.
# Idempotent (does nothing when the packages are installed), non-interactive, works as
# root without sudo and through sudo otherwise.
#
#   scripts/install-opencl.sh            # loader + PoCL (+ clinfo)
#   KSIM_OPENCL_NO_CLINFO=1 scripts/install-opencl.sh
#
# A GPU's OpenCL ICD comes with its driver (e.g. NVIDIA's); this script only provides
# the loader and the CPU platform.
set -euo pipefail

packages=(ocl-icd-libopencl1 pocl-opencl-icd)
optional=()
if [[ "${KSIM_OPENCL_NO_CLINFO:-0}" != 1 ]]; then
    optional=(clinfo)
fi

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

missing=()
for p in "${packages[@]}" "${optional[@]}"; do
    installed "$p" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-opencl: ${packages[*]} ${optional[*]} already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-opencl: apt-get not found; install an OpenCL ICD loader and PoCL (or your GPU driver's ICD) by hand" >&2
    exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
    run() { "$@"; }
elif command -v sudo >/dev/null 2>&1; then
    run() { sudo "$@"; }
else
    echo "install-opencl: need root or sudo to install ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-opencl: installing ${missing[*]}"
run env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# The required packages must install; clinfo is a convenience.
required_missing=()
for p in "${packages[@]}"; do
    installed "$p" || required_missing+=("$p")
done
if [[ ${#required_missing[@]} -gt 0 ]]; then
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${required_missing[@]}"
fi
for p in "${optional[@]}"; do
    installed "$p" || run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" \
        || echo "install-opencl: optional package $p not installed (continuing)" >&2
done
echo "install-opencl: done"
