#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 60 s each) on a copy of
# the checked-in corpus. Needs only rustup: installs the nightly toolchain and
# cargo-fuzz if missing.
#
#   fuzz/run.sh            # 60 s per target
#   fuzz/run.sh 300 loader # 300 s, one target
#
# A crash stops the run and leaves the input in fuzz/artifacts/<target>/;
# copy it to fuzz/regressions/<target>/ so `cargo test` replays it forever.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(dispatch loader config)
fi

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2

# The bundled example tools are built once with the project's own (stable)
# toolchain; the nightly build of the fuzz targets embeds them as they are.
guests="$(cd .. && pwd)/target/guests"
(cd .. && cargo build --profile guest --target wasm32-wasip2 --target-dir "$guests" \
    -p calc -p text -p json)
export TOOLHOST_PREBUILT_GUESTS="$guests/wasm32-wasip2/guest"

for target in "${targets[@]}"; do
    work="$(mktemp -d)"
    echo "== fuzz $target for ${seconds}s (new inputs in $work)"
    cargo +nightly fuzz run "$target" "$work" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
done
