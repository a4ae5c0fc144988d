#!/usr/bin/env bash
# Installs Debian's chromium for the test of the HTML trace page (tests/teach_html.rs runs
# it headless: --dump-dom and --screenshot). Idempotent (does nothing when chromium is
# installed), non-interactive, works as root without sudo and through sudo otherwise.
#
#   scripts/install-chromium.sh
set -euo pipefail

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if command -v chromium >/dev/null 2>&1 || installed chromium; then
    echo "install-chromium: chromium already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: apt-get not found; install chromium by hand (or set KSIM_CHROMIUM to its path)" >&2
    exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
    run() { "$@"; }
elif command -v sudo >/dev/null 2>&1; then
    run() { sudo "$@"; }
else
    echo "install-chromium: need root or sudo to install chromium" >&2
    exit 1
fi

echo "install-chromium: installing chromium"
run env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# fonts-dejavu-core: the page's text (and the screenshots) need a font with the paper's
# symbols (ε, ⊤, ⟨⟩).
run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
echo "install-chromium: done"
