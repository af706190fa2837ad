#!/usr/bin/env bash
# Side-by-side comparison of prooflog with its peers on the benchmark workloads.
#
#   bench/compare.sh [WORKLOAD…]   (default: every workload but tc_8k, points_to_3k
#                                   and cspa_4x, which HEAVY=1 adds; REPS=5 runs each)
#
# Writes each workload as Soufflé files (examples/workload.rs dump), then, in
# interleaved rounds (so that a change in machine load hits every engine alike):
#   prooflog CLI   `prooflog run NAME.dl --fact-dir NAME --count` (provenance on, on
#                  every core and with --threads 1, and --no-provenance; the whole
#                  process: parse, load, evaluate, print)
#   in process     examples/workload.rs run NAME {prooflog-provenance,
#                  prooflog-no-provenance,ascent}: evaluation only, no file loading
#   Soufflé        interpreted (`souffle -F dir`) and compiled (`souffle -o`, run
#                  with its default one thread), the program's `.output` turned into
#                  `.printsize`, when `souffle` is on PATH or at $SOUFFLE
#   Nemo           `nmo`, when on PATH or at $NEMO
# and prints, per workload and engine, the median wall time of REPS runs and the
# median peak resident memory (`/usr/bin/time -v`). Peers not found are listed as
# skipped.
set -euo pipefail
# (A decimal point in $EPOCHREALTIME and in awk's numbers, whatever the locale.)
export LC_ALL=C
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
OUT=${OUT:-target/compare}
mkdir -p "$OUT"

cargo build --release -q -p prooflog-cli
cargo build --release -q -p prooflog --example workload
# Where cargo put them: CARGO_TARGET_DIR when set, else target/.
TARGET=${CARGO_TARGET_DIR:-target}
PL=$TARGET/release/prooflog
WL=$TARGET/release/examples/workload
"$WL" dump "$OUT" "$@"
if [ $# -gt 0 ]; then names=("$@"); else mapfile -t names < <("$WL" list ${HEAVY:+--heavy}); fi
# The workloads ascent has a version of (asked once, not by running each).
mapfile -t with_ascent < <("$WL" list --heavy --ascent)

SOUFFLE=${SOUFFLE:-$(command -v souffle || true)}
NEMO=${NEMO:-$(command -v nmo || true)}
skipped=()
[ -n "$SOUFFLE" ] && [ -x "$SOUFFLE" ] || { skipped+=("souffle (not on PATH, \$SOUFFLE unset)"); SOUFFLE=; }
[ -n "$NEMO" ] && [ -x "$NEMO" ] || { skipped+=("nemo (nmo not on PATH, \$NEMO unset)"); NEMO=; }

# measure LABEL WORKLOAD CMD…: one run, appends "workload label seconds kib" to $OUT/runs.
# The wall time is taken around the run to the microsecond (`/usr/bin/time` reports
# hundredths of a second, which rounds the small workloads to nothing); it includes
# starting `/usr/bin/time` itself, alike for every engine.
measure() {
  local label=$1 name=$2; shift 2
  local log="$OUT/time.log" start=$EPOCHREALTIME
  if /usr/bin/time -v "$@" >"$OUT/last.out" 2>"$log"; then
    local wall kib end=$EPOCHREALTIME
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.6f", b - a }')
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    echo "$name $label $wall $kib" >>"$OUT/runs"
  else
    echo "$name $label FAIL FAIL" >>"$OUT/runs"
  fi
}

: >"$OUT/runs"
# Soufflé counts its output relations (`.printsize`) as prooflog does with --count,
# rather than writing every tuple.
for name in "${names[@]}"; do
  if [ -n "$SOUFFLE" ]; then
    sed 's/^\.output /.printsize /' "$OUT/$name.dl" >"$OUT/$name.count.dl"
    "$SOUFFLE" -o "$OUT/$name.souffle" "$OUT/$name.count.dl" 2>/dev/null || echo "souffle -o failed on $name" >&2
  fi
done
for rep in $(seq "$REPS"); do
  for name in "${names[@]}"; do
    # A weighted workload's edges come from its JSON file, with their confidences
    # (its program's `.input` would add each edge again at confidence 1).
    prog=$OUT/$name.dl
    facts=(--fact-dir "$OUT/$name")
    if [ -f "$OUT/$name.json" ]; then
      prog=$OUT/$name.weighted.dl
      sed '/^\.input /d' "$OUT/$name.dl" >"$prog"
      facts=(--facts "$OUT/$name.json")
    fi
    measure cli_prov "$name" "$PL" run "$prog" "${facts[@]}" --count
    measure cli_prov_1thread "$name" "$PL" run "$prog" "${facts[@]}" --count --threads 1
    measure cli_noprov "$name" "$PL" run "$prog" "${facts[@]}" --count --no-provenance
    measure inproc_prov "$name" "$WL" run "$name" prooflog-provenance
    measure inproc_noprov "$name" "$WL" run "$name" prooflog-no-provenance
    [[ " ${with_ascent[*]} " == *" $name "* ]] && measure inproc_ascent "$name" "$WL" run "$name" ascent
    if [ -n "$SOUFFLE" ]; then
      measure souffle_interp "$name" "$SOUFFLE" -F "$OUT/$name" "$OUT/$name.count.dl"
      [ -x "$OUT/$name.souffle" ] && measure souffle_compiled "$name" "$OUT/$name.souffle" -F "$OUT/$name"
    fi
    if [ -n "$NEMO" ]; then
      measure nemo "$name" "$NEMO" -I "$OUT/$name" "$OUT/$name.dl"
    fi
  done
done

echo "Median of $REPS interleaved runs per cell: wall milliseconds / peak RSS MiB (whole process)."
echo "inproc_* = examples/workload.rs (evaluation only timed inside; process wall shown here)."
awk '
  { key=$1" "$2; n[key]++; w[key, n[key]]=$3; m[key, n[key]]=$4; if (!($2 in seenl)) { seenl[$2]=1; labels[++nl]=$2 } if (!($1 in seenw)) { seenw[$1]=1; wls[++nw]=$1 } }
  function med(a, key, k,   i, j, t, v) { for (i=1;i<=k;i++) v[i]=a[key,i]; for (i=1;i<=k;i++) for (j=i+1;j<=k;j++) if (v[j]+0<v[i]+0) { t=v[i]; v[i]=v[j]; v[j]=t } return v[int((k+1)/2)] }
  END {
    printf "| workload |"; for (l=1;l<=nl;l++) printf " %s |", labels[l]; printf "\n|---|"; for (l=1;l<=nl;l++) printf "---|"; printf "\n"
    for (i=1;i<=nw;i++) { printf "| %s |", wls[i]; for (l=1;l<=nl;l++) { key=wls[i]" "labels[l]; if (n[key]) { if (w[key,1]=="FAIL") printf " fail |"; else printf " %.1f ms / %.1f MiB |", med(w,key,n[key])*1000, med(m,key,n[key])/1024 } else printf " – |" } printf "\n" }
  }' "$OUT/runs"
if [ ${#skipped[@]} -gt 0 ]; then
  echo; echo "Skipped peers:"; printf '  %s\n' "${skipped[@]}"
fi
