#!/usr/bin/env bash
# Screenshots of the proof views in headless Chromium, at 1280 and 800 pixels wide,
# to look at before and after a change to src/proof/render.rs.
#
#   scripts/screenshots.sh [OUT_DIR]       (default: target/screenshots, git-ignored)
#
# Needs `chromium` (Debian: apt-get install -y chromium) and, for the Graphviz
# picture, `dot` (apt-get install -y graphviz). PROOFLOG names the binary to use
# (default: target/release/prooflog, built if missing).
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=${1:-target/screenshots}
BIN=${PROOFLOG:-target/release/prooflog}
if [ ! -x "$BIN" ]; then
    cargo build --release -p prooflog-cli
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# A group of six drones, each membership cited to a page of a radar log: a proof wider
# than it is deep, with provenance fields a reader cites.
: > "$OUT/wide.jsonl"
for d in 1 2 3 4 5 6; do
    printf '{"predicate": "member", "args": [5, %d], "provenance": {"table": "DRONES", "edge_idx": %d, "doc_id": "radar-log-2024-03.pdf", "page": %d}}\n' \
        $((60 + d)) $((500 + d)) "$d" >> "$OUT/wide.jsonl"
done

# One proof with a negated premise and an edge that skips a layer.
"$BIN" prove --goal 'threatens(42, "airport")' --format html > "$OUT/threatens.html"
# A wide proof (an aggregate over six facts).
"$BIN" prove --evidence "$OUT/wide.jsonl" --goal 'group_size(5, 6)' --format html > "$OUT/wide.html"
# Several proofs on one page.
"$BIN" prove --evidence "$OUT/wide.jsonl" --all-matches \
    --goal 'threatens(g, z)' --goal 'group_size(g, n)' --format html > "$OUT/several.html"
"$BIN" prove --evidence "$OUT/wide.jsonl" --all-matches \
    --goal 'threatens(g, z)' --goal 'group_size(g, n)' --format dot > "$OUT/several.dot"

shoot() { # page width [height [png]]
    local profile png=${4:-$OUT/$1-$2.png}
    profile=$(mktemp -d)
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --window-size="$2,${3:-900}" \
        --screenshot="$png" "file://$OUT/$1.html" > /dev/null 2>&1
    rm -rf "$profile"
    echo "$png"
}

for page in threatens wide several; do
    for width in 1280 800; do
        shoot "$page" "$width"
    done
done
# The picture in the README (docs/img/proof-threatens.png): copy it there by hand
# after looking at it.
shoot threatens 900 720 "$OUT/readme-threatens.png"
if command -v dot > /dev/null; then
    dot -Tpng "$OUT/several.dot" > "$OUT/several-dot.png"
    echo "$OUT/several-dot.png"
fi
