#!/usr/bin/env bash
# Regenerates the teaching figures of README.md ("For teachers") and docs/teaching.md:
# a screenshot of the HTML trace page at the race of kogge_stone_racy, the race timeline,
# and the interleaving graph of a two-thread kernel as PNG. Needs a release build and
# chromium (scripts/install-chromium.sh).
#
#   scripts/teaching-figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ksim=target/release/ksim
chromium=${KSIM_CHROMIUM:-chromium}
out=docs/figures
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shot() { # shot URL PNG WIDTH HEIGHT [SCALE]
    "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$work/profile" --virtual-time-budget=3000 --force-device-scale-factor="${5:-1}" \
        --window-size="$3,$4" --screenshot="$2" "$1" 2>/dev/null
}

# The trace page, at the step after the race's second access (step 17 of the canonical
# schedule on ones).
"$ksim" trace examples/kogge_stone_racy.ksim -D n=4 --input in=ones --html "$work/race.html" >/dev/null || true
shot "file://$work/race.html#step=17" "$out/trace-page-race.png" 1600 1500

# The race timeline (found by exhaustive exploration).
"$ksim" explore examples/kogge_stone_racy.ksim -D n=4 --exhaustive --stop-on-race --no-reports \
    --timeline "$out/race-timeline.svg" >/dev/null 2>&1 || true

# The interleaving graphs of docs/teaching.md (laid out by Graphviz's dot).
"$ksim" graph tests/kernels/swap_halves.ksim --format svg > docs/img/swap_halves_graph.svg
"$ksim" graph tests/kernels/shared_write.ksim --format svg > docs/img/shared_write_graph.svg

# The interleaving graph of two threads that each write x[0] = tid.
"$ksim" graph tests/kernels/shared_write.ksim --format svg > "$work/graph.svg"
printf '<html><body style="margin:0;background:#fff">%s</body></html>' "$(cat "$work/graph.svg")" > "$work/graph.html"
size=$(sed -n 's/.*<svg[^>]* width="\([0-9.]*\)\(pt\)\{0,1\}" height="\([0-9.]*\)\(pt\)\{0,1\}".*/\1 \3/p' "$work/graph.svg" | head -1)
read -r w h <<<"${size:-800 600}"
# Graphviz gives the size in points: 4/3 of a CSS pixel each.
w=$(( ${w%.*} * 4 / 3 + 1 )) h=$(( ${h%.*} * 4 / 3 + 1 ))
shot "file://$work/graph.html" "$out/shared-write-graph.png" "${w%.*}" "${h%.*}" 2
echo "teaching-figures: wrote $out/trace-page-race.png $out/race-timeline.svg $out/shared-write-graph.png docs/img/swap_halves_graph.svg docs/img/shared_write_graph.svg"
