#!/usr/bin/env bash
# The hostile-input table of docs/reliability.md: each hostile input run through one or
# two `prooflog` binaries, with its exit code (or signal), wall time and peak RSS.
#
#   scripts/hostile_table.sh AFTER_BIN [BEFORE_BIN]
#
# With two binaries the table has a "before" and an "after" column group (BEFORE_BIN
# first). The inputs are generated into a temporary directory. Every run is bounded:
# `ulimit -v` (HOSTILE_ULIMIT_KB, default 8000000 KiB) and `timeout` (HOSTILE_TIMEOUT,
# default 60 s), so a binary without limits cannot take the machine down. Needs GNU
# time (/usr/bin/time) and python3 (to write the large inputs).
#
# Exit column: the exit code; `124 (timeout)` when `timeout` stopped the run,
# `SIGNAME` when a signal ended it.
set -euo pipefail

after="${1:?usage: scripts/hostile_table.sh AFTER_BIN [BEFORE_BIN]}"
before="${2:-}"
after="$(realpath "$after")"
[ -n "$before" ] && before="$(realpath "$before")"
ulimit_kb="${HOSTILE_ULIMIT_KB:-8000000}"
secs="${HOSTILE_TIMEOUT:-60}"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cd "$dir"

# ---- inputs -------------------------------------------------------------------------
python3 - <<'EOF'
import json

def write(name, text):
    with open(name, "w") as f:
        f.write(text)

write("parens.dl", "q(1).\np(x) :- q(y), x = " + "(" * 12000 + "y" + ")" * 12000 + ".\n")
write("minus.dl", "q(1).\np(x) :- q(y), x = " + "-" * 20000 + "y.\n")
write("plus.dl", "q(1).\np(x) :- q(y), x = y" + " + y" * 50000 + ".\n")
write("body.dl", "q(1).\np(x) :- " + "(" * 10000 + "q(x)" + ")" * 10000 + ".\n")
write("goal.txt", "p(" + "(" * 12000 + "1" + ")" * 12000 + ")")
write("e.dl", ".decl e(a: symbol)\n.output e\n")
write("deep.json", '{"e": [' + "[" * 70000 + "]" * 70000 + "]}\n")
write("count.dl", "n(0).\nn(y) :- n(x), y = x + 1.\n")
write("cartesian.dl", "a(x) :- r(x).\nc(x, y, z) :- a(x), a(y), a(z).\n.output c\n")
write("r.json", json.dumps({"r": [[i] for i in range(3000)]}))
write("passage.txt", "The tenant shall pay the rent on the first day of the month. " * 6600)
sentence = ("The tenant shall pay the rent on the first day of the month and the "
            "landlord shall not. ")
write("answer.txt", sentence * (4096 // len(sentence) + 1))
# The same size, a passage of one repeated phrase: every claim word occurs 45,000 times.
write("dense.txt", "the rent " * 45000)
dense = "The rent " + " ".join(["the rent"] * 9) + ". "
write("dense_answer.txt", dense * (4096 // len(dense) + 1))
write("errors.dl", "x. " * 100000 + "\n")
write("rules.dl", "".join(f"s{i}({i}).\nr{i}(x) :- s{i}(x).\n" for i in range(100000)))
write("path.dl", "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n")
write("chain.json", json.dumps({"edge": [[i, i + 1] for i in range(3000)]}))
# A long cited answer: `check` writes well over a pipe buffer of output.
write("cited.txt", "Drone 7 is a member of group 42 [HEDGE-42]. " * 20000)
write("csv.dl", ".decl e(a: symbol, b: symbol)\n.output e\n")
write("e.csv", '1,2\n3,"unterminated\n5,6\n7,8\n')
EOF

goal="$(cat goal.txt)"

# ---- measurement --------------------------------------------------------------------
# run BIN STDOUT ARGS…: one bounded run; prints "exit|wall|rss".
run() {
    local bin="$1" out="$2"
    shift 2
    local status
    set +e
    if [ "$out" = pipe ]; then
        # The reader takes one byte and leaves: a closed pipe.
        ( ulimit -v "$ulimit_kb"
          /usr/bin/time -v -o time.txt timeout "$secs" "$bin" "$@" 2>stderr.txt | head -c1 >/dev/null
          exit "${PIPESTATUS[0]}" )
    else
        ( ulimit -v "$ulimit_kb"
          /usr/bin/time -v -o time.txt timeout "$secs" "$bin" "$@" >"$out" 2>stderr.txt )
    fi
    status=$?
    set -e
    local exit wall rss
    exit="$status"
    if grep -q "Command terminated by signal" time.txt; then
        exit="$(kill -l "$(sed -n 's/.*Command terminated by signal \([0-9]*\).*/\1/p' time.txt)")"
        exit="SIG$exit"
    elif [ "$status" = 124 ]; then
        exit="124 (timeout)"
    elif [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then
        exit="SIG$(kill -l $((status - 128)))"
    fi
    wall="$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt)"
    rss="$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)"
    # m:ss.ss to seconds
    wall="$(awk -v t="$wall" 'BEGIN { n = split(t, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f s", s }')"
    rss="$(awk -v k="$rss" 'BEGIN { if (k >= 1048576) printf "%.1f GB", k / 1048576; else printf "%.0f MB", k / 1024 }')"
    # The error code the binary reported, if any (JSON on stderr).
    local code
    code="$(grep -o '"code": *"[a-z_]*"' stderr.txt | head -n1 | sed 's/.*"\([a-z_]*\)"$/\1/' || true)"
    if [ -z "$code" ] && grep -q "panicked\|stack overflow\|memory allocation" stderr.txt; then
        code="$(grep -o "panicked\|stack overflow\|memory allocation" stderr.txt | head -n1)"
    fi
    local limit
    limit="$(grep -o '"limit": *"[a-z_]*"' stderr.txt | head -n1 | sed 's/.*"\([a-z_]*\)"$/\1/' || true)"
    [ -n "$limit" ] && code="$code: $limit"
    [ -n "$code" ] && exit="$exit \`$code\`"
    echo "$exit|$wall|$rss"
}

case_row() {
    local label="$1" out="$2"
    shift 2
    local row="| $label |"
    if [ -n "$before" ]; then
        IFS='|' read -r e w r < <(run "$before" "$out" "$@")
        row="$row $e | $w | $r |"
    fi
    IFS='|' read -r e w r < <(run "$after" "$out" "$@")
    row="$row $e | $w | $r |"
    echo "$row"
}

if [ -n "$before" ]; then
    echo "| input | before: exit | time | peak RSS | after: exit | time | peak RSS |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
else
    echo "| input | exit | time | peak RSS |"
    echo "| --- | --- | --- | --- |"
fi
case_row "12,000 nested parentheses in an expression" out.txt run parens.dl --format json
case_row "20,000 unary minus signs" out.txt run minus.dl --format json
case_row "a chain of 50,000 \`+\`" out.txt run plus.dl --format json
case_row "10,000 parentheses around a body formula" out.txt run body.dl --format json
case_row "12,000 parentheses in \`--goal\`" out.txt prove --goal "$goal" --format json
case_row "70,000 nested JSON arrays in a \`--facts\` file" out.txt run e.dl --facts deep.json --format json
case_row "\`n(0). n(y) :- n(x), y = x + 1.\`" out.txt run count.dl --format json
case_row "3000×3000×3000 cartesian product" out.txt run cartesian.dl --facts r.json --count --format json
case_row "gate: 4 KB answer, 400 KB passage" out.txt gate --answer answer.txt --passage passage.txt --format json
case_row "gate: 4 KB answer, 400 KB passage of one repeated phrase" out.txt gate --answer dense_answer.txt --passage dense.txt --format json
case_row "100,000 parse errors on one line" out.txt run errors.dl --format json
case_row "100,000 independent rules" out.txt run rules.dl --count --format json
case_row "\`prove --goal 'path(x, y)' --limit 10\`, 3,000-node chain (4.5 M paths)" out.txt prove path.dl --facts chain.json --goal "path(x, y)" --limit 10 --format json
case_row "\`check \\| head -c1\` (closed pipe)" pipe check --answer cited.txt --allowed HEDGE-42 --format json
case_row "\`run > /dev/full\`" /dev/full run --format json
case_row "unterminated CSV quote" out.txt run csv.dl --facts e.csv --format json
case_row "\`/dev/zero\` as a facts file" out.txt run csv.dl --facts /dev/zero --format json
