#!/usr/bin/env bash
# The test command (README: "Run the tests"). Installs what the tests need, then runs every
# test of the workspace. On CI (CI=true or KSIM_REQUIRE_OPENCL=1) the OpenCL tests must run
# on PoCL: a missing OpenCL platform fails them instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x scripts/install-opencl.sh ]; then
    scripts/install-opencl.sh
fi
# Debian's clang-15: ksim's C front end (lang/src/cl/clang), the clang PoCL uses.
if ! command -v clang-15 >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang-15
fi
# Graphviz's dot: `ksim graph --format svg` lays its graphs out with it (tests/teach_graph_layout.rs).
if ! command -v dot >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends graphviz
fi
# Headless chromium for the HTML trace page's test (tests/teach_html.rs).
if [ -x scripts/install-chromium.sh ]; then
    scripts/install-chromium.sh
fi
if [ "${CI:-}" = "true" ]; then
    export KSIM_REQUIRE_OPENCL="${KSIM_REQUIRE_OPENCL:-1}"
    # The GPUVerify conformance test needs ../shared/corpora beside the checkout.
    export KSIM_REQUIRE_CORPUS="${KSIM_REQUIRE_CORPUS:-1}"
    # The HTML page's test must run in chromium, not skip.
    export KSIM_REQUIRE_BROWSER="${KSIM_REQUIRE_BROWSER:-1}"
    # The graph layout test must run Graphviz, not skip it.
    export KSIM_REQUIRE_GRAPHVIZ="${KSIM_REQUIRE_GRAPHVIZ:-1}"
fi

cargo build --release --workspace --all-targets
cargo test --release --workspace
