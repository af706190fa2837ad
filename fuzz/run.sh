#!/usr/bin/env bash
# Run every cargo-fuzz target (or those named) for a fixed time each, under a memory
# ulimit, with debug assertions on (integer overflow panics) and no sanitizer (the
# code is safe Rust; libFuzzer's own RSS and time limits apply).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET…]      (default: 120 s, every target)
#
# FUZZ_ARGS adds libFuzzer options, e.g. FUZZ_ARGS="-max_len=65536 -len_control=0" for
# long inputs from the start; FUZZ_ULIMIT_KB sets the memory ulimit (default 4000000).
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Seeds come
# from fuzz/seeds/<target>/ (and the repository's test programs); the growing corpus
# is fuzz/corpus/<target>/, crashes land in fuzz/artifacts/<target>/. A crash fails
# the script; turn it into a regression test (a case under tests/fixtures/hostile/,
# or in tests/hostile_lib.rs or tests/fuzz_props.rs) and fix it.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-120}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
mem_kb="${FUZZ_ULIMIT_KB:-4000000}"
read -r -a extra <<< "${FUZZ_ARGS:-}"
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    if [ -d "seeds/$t" ]; then cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true; fi
    if [ "$t" = parse_program ]; then cp -n ../tests/programs/*.dl ../rules/drones/*.dl "corpus/$t/" 2>/dev/null || true; fi
    echo "== $t: ${secs}s"
    if ! ( ulimit -v "$mem_kb"; cargo +nightly fuzz run --sanitizer none --debug-assertions "$t" \
            "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 \
            -artifact_prefix="artifacts/$t/" -print_final_stats=1 ${extra[@]+"${extra[@]}"} ); then
        echo "!! $t failed: see fuzz/artifacts/$t/"
        status=1
    fi
done
exit $status
