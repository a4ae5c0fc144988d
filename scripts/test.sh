#!/usr/bin/env bash
# The test command (README: "Run the tests"). Installs what the tests need, then runs every
# test of the workspace. On CI (CI=true or KSIM_REQUIRE_OPENCL=1) the OpenCL tests must run
# on PoCL: a missing OpenCL platform fails them instead of skipping them.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x scripts/install-opencl.sh ]; then
    scripts/install-opencl.sh
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
fi

cargo build --release --workspace --all-targets
cargo test --release --workspace
