#!/usr/bin/env bash
# ksim's GPU figures, on a machine with an NVIDIA GPU and its driver but no Rust and no
# network, running a release `ksim` built elsewhere.
#
#   gpu-figures.sh OUTDIR
#
# Run it from a bundle made by `scripts/gpu-bundle.sh BUNDLE` on a machine with Rust and
# network (BUNDLE/ksim, BUNDLE/examples/, BUNDLE/opencl/libOpenCL.so.1 from Debian's
# ocl-icd-libopencl1, and this script), or from a checkout after `cargo build --release`
# (then the system's libOpenCL.so.1 is used).
#
# It finds the driver's OpenCL library (libnvidia-opencl.so.1), points the ICD loader at
# it through OCL_ICD_VENDORS, lists the device, runs `ksim gpu compare` on every example,
# then `ksim gpu bench` for Blelloch's scan with 1D (heap) vs 2D (level x node) tree
# storage: one work-group from n = 2 up to the device's work-group limit, then the
# multi-group pipelines up to 2^20. CSVs, figures and logs go to OUTDIR.
#
# If NVIDIA's OpenCL library is not there, it says what it found and stops (exit 3): it
# never falls back to another backend, so its figures are always the GPU's.
#
# Environment: KSIM (the binary), KSIM_EXAMPLES (the examples folder), KSIM_BENCH_REPEAT
# (timed runs per point, default 20), KSIM_MAX_N (largest pipeline size, default 2^20),
# KSIM_PARTS (which parts to run, default "compare storage warp pipeline"), KSIM_WARP_SIZE
# (the warp part's lock-step warp width, default 32).
set -uo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)

say() { echo "gpu-figures: $*"; }
fail() { echo "gpu-figures: $*" >&2; exit "${2:-2}"; }

# --- the program and its examples ------------------------------------------------------
ksim=${KSIM:-}
for candidate in "$here/ksim" "$here/../target/release/ksim"; do
    [[ -z $ksim && -x $candidate ]] && ksim=$candidate
done
[[ -n $ksim && -x $ksim ]] || fail "no ksim binary: set KSIM or put a release build beside this script"
examples=${KSIM_EXAMPLES:-}
for candidate in "$here/examples" "$here/../examples"; do
    [[ -z $examples && -d $candidate ]] && examples=$candidate
done
[[ -n $examples && -d $examples ]] || fail "no examples folder: set KSIM_EXAMPLES"
say "ksim: $ksim ($("$ksim" --version))"

# --- the OpenCL ICD loader -------------------------------------------------------------
loader_dir=
if [[ -e $here/opencl/libOpenCL.so.1 ]]; then
    loader_dir=$here/opencl
elif ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 '; then
    say "ICD loader: the system's ($(ldconfig -p | grep 'libOpenCL\.so\.1 ' | head -1 | sed 's/.*=> //'))"
else
    fail "no OpenCL ICD loader: put libOpenCL.so.1 (Debian's ocl-icd-libopencl1) in $here/opencl/ (scripts/gpu-bundle.sh does)"
fi
[[ -n $loader_dir ]] && say "ICD loader: $loader_dir/libOpenCL.so.1"

# --- NVIDIA's OpenCL implementation ----------------------------------------------------
nv_lib=
search_dirs=(/usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib
    /usr/lib64 /usr/lib /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu/nvidia/current)
nv_lib=$(ldconfig -p 2>/dev/null | grep 'libnvidia-opencl\.so\.1 ' | head -1 | sed 's/.*=> //')
if [[ -z $nv_lib ]]; then
    for d in "${search_dirs[@]}"; do
        if [[ -e $d/libnvidia-opencl.so.1 ]]; then nv_lib=$d/libnvidia-opencl.so.1; break; fi
    done
fi
if [[ -z $nv_lib ]]; then
    echo "gpu-figures: NVIDIA's OpenCL library (libnvidia-opencl.so.1) was not found." >&2
    echo "  looked in: ldconfig's cache and ${search_dirs[*]}" >&2
    echo "  nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" >&2
    echo "  NVIDIA libraries found:" >&2
    for d in "${search_dirs[@]}"; do ls "$d"/libnvidia-* "$d"/libcuda* 2>/dev/null; done | sed 's/^/    /' >&2
    echo "  /etc/OpenCL/vendors: $(ls /etc/OpenCL/vendors 2>&1 | tr '\n' ' ')" >&2
    echo "  Without it ksim cannot reach the GPU through OpenCL; install the driver's OpenCL component." >&2
    exit 3
fi
say "NVIDIA OpenCL: $nv_lib"
mkdir -p "$out/icd"
echo "$nv_lib" >"$out/icd/nvidia.icd"
export OCL_ICD_VENDORS=$out/icd
export LD_LIBRARY_PATH=${loader_dir:+$loader_dir:}$(dirname "$nv_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
    date -u '+date: %Y-%m-%dT%H:%M:%SZ'
    echo "ksim: $("$ksim" --version)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
} >"$out/machine.txt"
"$ksim" gpu devices | tee "$out/devices.txt"
status=${PIPESTATUS[0]}
[[ $status -eq 0 ]] || fail "ksim gpu devices failed (exit $status): see above" 3
grep -qi nvidia "$out/devices.txt" || fail "OpenCL lists no NVIDIA device (see $out/devices.txt)" 3
device=NVIDIA

parts=" ${KSIM_PARTS:-compare storage warp pipeline} "
part() { [[ $parts == *" $1 "* ]]; }

# --- every example, simulator vs device ------------------------------------------------
if part compare; then
say "gpu compare on every example (n = 256 and 1024)"
: >"$out/compare.txt"
for f in "$examples"/*.ksim; do
    for n in 256 1024; do
        line=$("$ksim" gpu compare "$f" -D n=$n --device $device --repeat 3 2>&1 | tail -1)
        rc=$?
        echo "$(basename "$f") n=$n exit=$rc $line" | tee -a "$out/compare.txt"
    done
done
fi

# --- 1D vs 2D tree storage -------------------------------------------------------------
repeat=${KSIM_BENCH_REPEAT:-20}
max_n=${KSIM_MAX_N:-1048576}
wg=$(sed -n 's/.*max work-group size \([0-9]*\).*/\1/p' "$out/devices.txt" | head -1)
local_kib=$(sed -n 's/.*local memory \([0-9]*\) KiB.*/\1/p' "$out/devices.txt" | head -1)
wg=${wg:-1024}
local_bytes=$(( ${local_kib:-48} * 1024 ))
# The largest power of two n each single-group kernel fits (see examples/*.ksim): the 1D
# heap runs n/2 work-items with 4n local ints (tree, in, out); the 2D tree runs n
# work-items with n(log2 n + 3) local ints.
fits1d() { local n=$1; (( n / 2 <= wg && 16 * n <= local_bytes )); }
fits2d() { local n=$1 l=0 m=$1; while (( m > 1 )); do m=$((m / 2)); l=$((l + 1)); done
    (( n <= wg && 4 * n * (l + 3) <= local_bytes )); }
max1d=2; while fits1d $((max1d * 2)) && (( max1d * 2 <= 1024 )); do max1d=$((max1d * 2)); done
max2d=2; while fits2d $((max2d * 2)) && (( max2d * 2 <= 1024 )); do max2d=$((max2d * 2)); done
say "gpu bench, one work-group: 1D n = 2..$max1d, 2D n = 2..$max2d (work-group limit $wg, local memory $local_bytes bytes)"
b1="$examples/blelloch_tree1d.ksim"
b2="$examples/blelloch_tree2d.ksim"
labels=(--label blelloch_tree1d=1D --label blelloch_tree2d=2D)

# --- simulated cost with lock-step warps vs device time ----------------------------------
# The single-group scans with `--warp-size W`: does the SIMT cost (warp instructions)
# predict device time better than statements executed? Both fits (R²) are printed.
if part warp; then
w=${KSIM_WARP_SIZE:-32}
say "gpu bench --warp-size $w, one work-group scans"
warp_csvs=()
for k in kogge_stone sklansky brent_kung blelloch_tree1d blelloch_tree2d; do
    max=$max1d; [[ $k == blelloch_tree2d ]] && max=$max2d
    "$ksim" gpu bench "$examples/$k.ksim" -D "n=2..$max" --repeat "$repeat" --device $device \
        --warp-size "$w" --csv "$out/warp-$k.csv" --quiet 2>&1 | tee "$out/warp-$k.txt"
    warp_csvs+=("$out/warp-$k.csv")
done
for cost in steps warp-instructions; do
    say "sim vs real, cost = $cost"
    "$ksim" plot "${warp_csvs[@]}" --sim-vs-real --cost "$cost" --size 9x6.5in --dpi 200 \
        --plot "$out/warp-simreal-$cost.png" 2>&1 | tee "$out/warp-simreal-$cost.txt"
done
fi

if part storage; then
"$ksim" gpu bench "$b1" -D "n=2..$max1d" --repeat "$repeat" --device $device --csv "$out/tree1d.csv" 2>&1 | tee "$out/tree1d.txt"
"$ksim" gpu bench "$b2" -D "n=2..$max2d" --repeat "$repeat" --device $device --csv "$out/tree2d.csv" 2>&1 | tee "$out/tree2d.txt"
say "the same with ksim's harness inside the timed kernel (--include-harness)"
"$ksim" gpu bench "$b1" -D "n=2..$max1d" --repeat "$repeat" --device $device --include-harness --csv "$out/tree1d_harness.csv" --quiet 2>&1 | tee "$out/tree1d_harness.txt"
"$ksim" gpu bench "$b2" -D "n=2..$max2d" --repeat "$repeat" --device $device --include-harness --csv "$out/tree2d_harness.csv" --quiet 2>&1 | tee "$out/tree2d_harness.txt"
"$ksim" plot "$out/tree1d.csv" "$out/tree2d.csv" "${labels[@]}" --title "Blelloch scan, one work-group" \
    --plot "$out/storage.png" --plot "$out/storage.svg" --plot "$out/storage.pdf" 2>&1
"$ksim" plot "$out/tree1d.csv" "$out/tree2d.csv" "${labels[@]}" --sim-vs-real --size 7x2.6in --dpi 200 \
    --plot "$out/simreal.png" --plot "$out/simreal.pdf" 2>&1 | tee "$out/simreal.txt"
fi
if part pipeline; then
say "gpu bench, multi-group pipelines, n = 2048..$max_n"
"$ksim" gpu bench scan:tree1d scan:tree2d -D "n=2048..$max_n" --repeat "$repeat" --device $device \
    --csv "$out/pipeline.csv" --plot "$out/pipeline.png" --plot "$out/pipeline.svg" --plot "$out/pipeline.pdf" 2>&1 | tee "$out/pipeline.txt"
fi
say "done: $(ls "$out" | tr '\n' ' ')"
