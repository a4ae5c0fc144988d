#!/usr/bin/env bash
# The fast executor against commit 1aff568 (the first measurements of issue 29), side by
# side in one run: builds that commit's ksim (release) from `git archive` in its own folder
# and target beside this tree, builds this tree, and runs the same commands with both
# binaries, alternately, REPS times each. Prints the median CPU time (user + system, from
# /usr/bin/time -f %U+%S) of each binary and the ratio now ÷ then per command.
#
#   scripts/bench-regress.sh [REPS] [COMMIT]     # default: 5 repetitions, 1aff568
#
# Commands (both binaries; all at one worker, so that CPU time is the executor's work):
#   races examples/kogge_stone.ksim -D n=2^20 --input in=random:1 --jobs 1
#   verify-scan examples/kogge_stone.ksim -D n=2^20
#   run --engine fast examples/kogge_stone.ksim -D n=2^16 --input in=random:1 --jobs 1
# No absolute figure is a baseline: only the ratios of one run mean anything on a shared
# machine, and both binaries meet the same load.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
commit=${2:-1aff568}

old_dir=target/regress-$commit
if [[ ! -x $old_dir/target/release/ksim ]]; then
    rm -rf "$old_dir/src"
    mkdir -p "$old_dir/src"
    git archive "$commit" | tar -x -C "$old_dir/src"
    (cd "$old_dir/src" && CARGO_TARGET_DIR=../target cargo build --release --quiet --bin ksim)
fi
cargo build --release --quiet --bin ksim
old=$PWD/$old_dir/target/release/ksim
new=$PWD/target/release/ksim

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

commands=(
    "races examples/kogge_stone.ksim -D n=1048576 --input in=random:1 --jobs 1"
    "verify-scan examples/kogge_stone.ksim -D n=1048576"
    "run --engine fast examples/kogge_stone.ksim -D n=65536 --input in=random:1 --jobs 1"
)

# CPU seconds (user + system) of one command, its output discarded; exit status 1 is a
# verdict, not a failure.
cpu() {
    local rc=0
    /usr/bin/time -o "$work/time" -f "%U+%S" "$@" >/dev/null 2>&1 || rc=$?
    if [[ $rc -gt 1 ]]; then
        echo "failed ($rc): $*" >&2
        exit 2
    fi
    tail -1 "$work/time" | awk -F+ '{ print $1 + $2 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "$commit: $old"
echo "now ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with uncommitted changes')): $new"
echo "median of $reps runs each, alternately; CPU seconds (user + system)"
echo
printf '| command | %s (s) | now (s) | now ÷ %s |\n|---|---|---|---|\n' "$commit" "$commit"
for c in "${commands[@]}"; do
    : >"$work/old"
    : >"$work/new"
    for ((i = 0; i < reps; i++)); do
        # shellcheck disable=SC2086
        cpu "$old" $c >>"$work/old"
        # shellcheck disable=SC2086
        cpu "$new" $c >>"$work/new"
    done
    o=$(median <"$work/old")
    n=$(median <"$work/new")
    printf '| `ksim %s` | %.2f | %.2f | %.2f |\n' "$c" "$o" "$n" "$(awk -v a="$n" -v b="$o" 'BEGIN { print a / b }')"
done
