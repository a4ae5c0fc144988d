#!/usr/bin/env bash
# ksim and Oclgrind side by side on the same Oclgrind launch files (.sim), in one run:
# wall time and peak memory of each command, and the ratios. Installs Oclgrind from
# Debian's packages (as scripts/install-opencl.sh installs PoCL) and builds ksim.
#
#   scripts/bench-oclgrind.sh [OUT.md]     # default: target/bench-oclgrind.md
#
# Launches: the global-memory Kogge-Stone scan of scripts/bench-oclgrind/ at n = 2^12,
# 2^14 and 2^16 (one work-group, clean and -D RACY), and every launch of
# ../shared/corpora/rodinia-opencl/CASES (its `# build:` options given to Oclgrind as
# --build-options; ksim reads them from the .sim itself). Commands, per launch:
#   oclgrind-kernel --data-races --uninitialized X.sim     ("oclgrind checks")
#   oclgrind-kernel X.sim                                   ("oclgrind plain")
#   ksim races X.sim                                        (fast executor + race check)
#   ksim run --engine fast X.sim                            (fast executor)
#   ksim run --engine reference X.sim                       (reference semantics)
# Each command runs once, the launches in turn, so that the machine's load falls on all of
# them alike; quote the ratios, not the times. A command that fails is shown as such.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench-oclgrind.md}

if ! command -v oclgrind-kernel >/dev/null; then
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq oclgrind >/dev/null
fi
cargo build --release --quiet --bin ksim
ksim=$PWD/target/release/ksim

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp scripts/bench-oclgrind/kogge_stone.cl "$work/"

# A .sim for the scan at n = 2^k: in = 0, 1, ..., n-1; out dumped.
scan_sim() { # k racy
    local n=$((1 << $1)) name=ks_$1$2
    {
        echo "# build:${2:+ -DRACY}"
        echo kogge_stone.cl
        echo kogge_stone
        echo "$n 1 1"
        echo "$n 1 1"
        echo "<size=$((4 * n)) int range=0:1:$((n - 1))>"
        echo "<size=$((4 * n)) int fill=0 dump>"
    } >"$work/$name.sim"
    echo "$work/$name.sim"
}

# Prints "SECONDS KIB" of one command (or "failed"), its output discarded. Exit status 1
# is a result (ksim found a race or a fault), not a failure.
measure() {
    local rc=0
    /usr/bin/time -o "$work/time" -f "%e %M" "$@" >/dev/null 2>&1 || rc=$?
    if [[ $rc -le 1 ]]; then tail -1 "$work/time"; else echo failed; fi
}

# a ÷ b with one decimal, or "≥N" when b is below time's resolution (0.01 s), or "-".
ratio() {
    if [[ $1 == failed || $2 == failed ]]; then echo -; else
        awk -v a="${1% *}" -v b="${2% *}" \
            'BEGIN { if (b < 0.01) printf "≥%.0f", a / 0.01; else printf "%.1f", a / b }'
    fi
}

secs() { if [[ $1 == failed ]]; then echo failed; else echo "${1% *}"; fi; }
mib() { if [[ $1 == failed ]]; then echo -; else awk -v k="${1#* }" 'BEGIN { printf "%.0f", k / 1024 }'; fi; }

launches=()
for k in 12 14 16; do
    launches+=("$(scan_sim $k "")" "$(scan_sim $k _racy)")
done
rodinia=../shared/corpora/rodinia-opencl
if [[ -f $rodinia/CASES ]]; then
    while read -r c; do
        [[ -z $c || $c == \#* ]] || launches+=("$rodinia/$c")
    done <"$rodinia/CASES"
fi

{
    echo "| launch | oclgrind checks (s) | ksim races (s) | oclgrind ÷ ksim | oclgrind plain (s) | ksim run fast (s) | oclgrind ÷ ksim | ksim run reference (s) | peak MiB oclgrind checks / ksim races |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >"$out"
for sim in "${launches[@]}"; do
    dir=$(dirname "$sim")
    build=$(sed -n 's/^# build:[[:space:]]*//p' "$sim" | head -1)
    name=$(basename "$sim" .sim)
    [[ $dir == "$work" ]] || name="$(basename "$dir")/$name"
    (
        cd "$dir"
        f=$(basename "$sim")
        oc=$(measure oclgrind-kernel --data-races --uninitialized --build-options "$build" "$f")
        op=$(measure oclgrind-kernel --build-options "$build" "$f")
        kr=$(measure "$ksim" races --no-reports "$f")
        kf=$(measure "$ksim" run --engine fast "$f")
        kref=$(measure "$ksim" run --engine reference "$f")
        echo "| $name | $(secs "$oc") | $(secs "$kr") | $(ratio "$oc" "$kr") | $(secs "$op") | $(secs "$kf") | $(ratio "$op" "$kf") | $(secs "$kref") | $(mib "$oc") / $(mib "$kr") |"
    ) | tee -a "$out"
done
echo "written: $out"
