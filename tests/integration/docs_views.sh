#!/bin/sh
# docs/views.md's examples, run: every fenced block's `$ ` lines are run in order, as the
# doc says (from a directory where build/ and tests/ are the build and source trees', with
# build/ on PATH), in one shell in a temp directory, and each command's stdout is compared
# with the lines the doc shows after it:
#  - the profile header the doc says it cuts (leading File:, Build ID:, Type:, Time:,
#    Duration: lines and heapsift's comment line) is dropped, the source tree's absolute
#    path is cut from source paths, trailing blanks and trailing empty lines are ignored;
#  - rate-1 profiles and the seeded ones (sites and grow at a fixed --seed: the same output
#    on every run, as docs/sampling.md "Reproducibility" says; sites' two threads run the
#    same code, so which one gets which seed does not matter) are compared exactly;
#  - what depends on the run's timing is masked on both sides: the `lifetime` label values
#    under `--tags` (a free's bucket), `suspects`' slope, R^2 and "over Ns", `lifetimes`'
#    <1ms, 1ms-1s, >=1s, short% and median columns and the header's freed-within/after
#    shares; alloc, live, kind, growth, noise, last, rises, verdict and stacks stay exact;
#  - Go's profile (go.pb.gz, tests/lib/gogen at MemProfileRate 1): the Go runtime's own
#    allocations are sampled at its default rate, and its small objects (96-byte sudogs)
#    land on varying stacks, so only the main.* rows (and runtime.main, their root; in
#    `collapsed`, the main.main stacks of 64 kB or more) are compared, names exactly and
#    numbers within 0.1% (approx below; runtime.main moved by 8 kB of 46 MB, 0.017%,
#    between two runs on a loaded machine);
#  - a command exits 0 unless the doc shows its status with a following `$ echo $?`;
#    `flamegraph -o FILE` and `graph -o FILE.svg` must write an SVG to FILE.
# Then every option docs/views.md names (outside the examples) is checked against
# `heapsift VERB --help`: a section's options against its verb (an option inside a
# `heapsift VERB2 ...` span against VERB2), "Options every view takes" against every verb
# with a section (but a verb the line says `not` to), and `--opt a|b|c` values too.
# Go (make setup installs it) is required: a missing go fails the test.
# Usage: docs_views.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" docs_views
src=$(cd "$2" && pwd)
doc=$src/docs/views.md
hs_need_built "$CLI" "$LIB" "$BUILD/programs/sites" "$BUILD/programs/labeled" \
    "$BUILD/programs/leakseries" "$BUILD/programs/lifeprog" "$BUILD/programs/grow"
command -v go >/dev/null 2>&1 ||
    { echo "FAIL: go not found: docs/views.md's tree and collapsed examples run Go's runtime/pprof (make setup installs it)" >&2; exit 1; }

# --- 1. the examples: $T/cmds holds "N<TAB>DOC_LINE<TAB>COMMAND", $T/exp.N the output shown
awk -v dir="$T" '
    /^```/ { infence = !infence; n_in = 0; next }
    !infence { next }
    /^\$ / {
        n++; n_in = 1
        printf "%d\t%d\t%s\n", n, NR, substr($0, 3) > (dir "/cmds")
        f = dir "/exp." n; printf "" > f; next
    }
    n_in { print > (dir "/exp." n) }
' "$doc"
[ -s "$T/cmds" ] || { echo "FAIL: no \$ command found in $doc" >&2; exit 1; }
ncmd=$(wc -l <"$T/cmds")

mkdir "$T/work"
ln -s "$BUILD" "$T/work/build"
ln -s "$src/tests" "$T/work/tests"
# The script: each command in a brace group of its own (so a trailing # comment is fine),
# starting with the previous command's status in $? (for `echo $?`).
{
    echo 'cd "$1" || exit 99'
    echo '__s=0'
    while IFS='	' read -r n line cmd; do
        printf '( exit $__s ); {\n%s\n} >"$2/out.%s" 2>"$2/err.%s"\n__s=$?\necho $__s >"$2/rc.%s"\n' \
            "$cmd" "$n" "$n" "$n"
    done <"$T/cmds"
} >"$T/run.sh"
for v in $(env | sed -n 's/^\(HEAPSIFT_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
PATH=$BUILD:$PATH GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod GO111MODULE=on \
    sh "$T/run.sh" "$T/work" "$T" || { echo "FAIL: the examples' script failed (status $?)" >&2; exit 1; }

# norm MODE: drop the cut header, cut the source tree's path, trailing blanks and empty lines
# at the end; MODE masks what depends on timing (see above).
norm() {
    awk -v src="$src/" -v mode="$1" '
        hdr == 0 && /^(File|Build ID|Type|Time|Duration): |^heapsift [0-9]/ { next }
        { hdr = 1
          while ((i = index($0, src)) > 0) $0 = substr($0, 1, i - 1) substr($0, i + length(src))
          sub(/[ \t]+$/, "") }
        mode == "tags" {
            if ($0 ~ /^ lifetime: /) { inlt = 1; print; next }
            if ($0 == "") inlt = 0
            if (inlt) next
        }
        mode == "suspects" {
            if ($1 == "Leak" && $2 == "suspects:") sub(/ over [0-9.]+[a-z]*s,/, " over *,")
            else if ($1 ~ /\/s$/) { $1 = "*"; $5 = "*" }
        }
        mode == "lifetimes" {
            if ($1 == "Lifetimes") { sub(/; [0-9.]+% freed within/, "; *% freed within")
                                     sub(/, [0-9.]+% freed after/, ", *% freed after") }
            else if ($1 != "alloc") { $2 = "*"; $3 = "*"; $4 = "*"; $6 = "*"; $7 = "*" }
        }
        mode == "gotree" && !(/^ +flat +flat%/ || $NF == "runtime.main" || $NF ~ /^main\./) { next }
        mode == "gocollapsed" && ($0 !~ /;main\.main;/ || $NF < 65536) { next }
        { lines[++n] = $0 }
        END { while (n > 0 && lines[n] == "") n--
              for (i = 1; i <= n; i++) print lines[i] }'
}

# approx EXPECTED ACTUAL: same lines and fields; a percentage within 0.1% of itself
# (+0.011 for 2-decimal rounding), another number (with the same unit, or a bare 0) within
# 0.1% of the largest one on its line (+0.011): the Go runtime's few kB moving onto a
# 46 MB root passes, a changed leading digit in the doc does not.
approx() {
    awk 'function num(s) { return match(s, /^[-+]?[0-9]+(\.[0-9]+)?/) ? substr(s, 1, RLENGTH) : "" }
        function abs(v) { return v < 0 ? -v : v }
        NR == FNR { e[++ne] = $0; next }
        { a[++na] = $0 }
        END {
            if (ne != na) { print "line counts differ: " ne " shown, " na " printed"; exit 1 }
            for (i = 1; i <= ne; i++) {
                sx = e[i]; sy = a[i]; sub(/^[ \t]+/, "", sx); sub(/^[ \t]+/, "", sy)
                nx = split(sx, x, /[ \t]+/); ny = split(sy, y, /[ \t]+/)
                if (nx != ny) { print "line " i " has " nx " fields shown, " ny " printed"; exit 1 }
                scale = 0
                for (j = 1; j <= nx; j++) {
                    if ((p = num(x[j])) != "" && x[j] !~ /%$/ && abs(p) > scale) scale = abs(p)
                    if ((q = num(y[j])) != "" && y[j] !~ /%$/ && abs(q) > scale) scale = abs(q)
                }
                for (j = 1; j <= nx; j++) {
                    if (x[j] == y[j]) continue
                    p = num(x[j]); q = num(y[j])
                    ux = substr(x[j], length(p) + 1); uy = substr(y[j], length(q) + 1)
                    if (p == "" || q == "" || (ux != uy && !(ux == "" && p == 0) && !(uy == "" && q == 0))) {
                        print "line " i ": \"" x[j] "\" shown, \"" y[j] "\" printed"; exit 1 }
                    m = abs(p) > abs(q) ? abs(p) : abs(q)
                    tol = (ux == "%" || uy == "%") ? 1e-3 * m + 0.011 : 1e-3 * scale + 0.011
                    if (abs(p - q) > tol) { print "line " i ": " x[j] " shown, " y[j] " printed"; exit 1 }
                }
            }
        }' "$1" "$2"
}

checked=0
while IFS='	' read -r n line cmd; do
    rc=$(cat "$T/rc.$n")
    next=$(awk -F '\t' -v n=$((n + 1)) '$1 == n { print $3 }' "$T/cmds")
    if [ "$rc" -ne 0 ] && [ "$next" != 'echo $?' ]; then
        fail "docs/views.md:$line: \`$cmd\` exited $rc (the doc shows no \`echo \$?\` after it)"
        show "$T/err.$n" 10
    fi
    mode=exact
    case $cmd in
        *--tags*) mode=tags ;;
        *"heapsift suspects"*) mode=suspects ;;
        *"heapsift lifetimes"*) mode=lifetimes ;;
        *"heapsift tree"*go.pb.gz*) mode=gotree ;;
        *"heapsift collapsed"*go.pb.gz*) mode=gocollapsed ;;
    esac
    norm "$mode" <"$T/exp.$n" >"$T/e.$n"
    norm "$mode" <"$T/out.$n" >"$T/a.$n"
    case $mode in
        go*) why=$(approx "$T/e.$n" "$T/a.$n") || {
                fail "docs/views.md:$line: \`$cmd\`: $why (only main.* rows compared)"
                diff -u "$T/e.$n" "$T/a.$n" | sed 's/^/    | /' >&2
            } ;;
        *) cmp -s "$T/e.$n" "$T/a.$n" || {
                fail "docs/views.md:$line: \`$cmd\`: the output differs from the doc's (- doc, + printed; mode $mode)"
                diff -u "$T/e.$n" "$T/a.$n" | sed 's/^/    | /' >&2
                [ ! -s "$T/err.$n" ] || show "$T/err.$n" 10
            } ;;
    esac
    case $cmd in
        *"heapsift flamegraph"*" -o "* | *"heapsift graph"*" -o "*".svg"*)
            svg=$(printf '%s\n' "$cmd" | sed 's/.* -o \([^ ]*\).*/\1/')
            grep -q '<svg' "$T/work/$svg" 2>/dev/null ||
                fail "docs/views.md:$line: \`$cmd\` wrote no SVG to $svg" ;;
    esac
    checked=$((checked + 1))
done <"$T/cmds"
[ "$checked" -eq "$ncmd" ] || fail "compared $checked of $ncmd commands"

# --- 2. the options the doc names, against each verb's --help
# "VERB OPTION VALUES DOC_LINE" (VALUES "-" or a|b|c); VERB "*" = every verb with a section;
# "!VERB OPTION" lines name verbs an "Options every view takes" row excludes.
awk '
    /^```/ { infence = !infence; next }
    infence { next }
    /^## / { verb = ""
             if (match($0, /^## `heapsift [a-z]+/)) verb = substr($0, 14, RLENGTH - 13)
             else if ($0 ~ /^## Options every view takes/) verb = "*"
             if (verb != "" && verb != "*") print "@verb", verb }
    /^# / { verb = "" }
    verb == "" { next }
    {
        line = $0; heading = (line ~ /^## /)
        # each backticked span (the heading is one span): its verb, then its options
        nsp = 0
        if (heading) { sp[++nsp] = line }
        else { rest = line
               while (match(rest, /`[^`]*`/)) { sp[++nsp] = substr(rest, RSTART + 1, RLENGTH - 2)
                                               rest = substr(rest, RSTART + RLENGTH) } }
        for (k = 1; k <= nsp; k++) {
            s = sp[k]; v = verb
            if (!heading && match(s, /^heapsift [a-z]+/)) v = substr(s, 10, RLENGTH - 9)
            nt = split(s, t, /[ \[\]`]+/)
            for (j = 1; j <= nt; j++) {
                o = t[j]; sub(/=.*$/, "", o)
                if (o !~ /^--[a-z][a-z-]*[a-z]$/ && !(heading && o ~ /^-[a-z]$/)) continue
                vals = "-"
                if (j < nt && t[j + 1] ~ /^[A-Za-z]+([\\]?[|][A-Za-z]+)+$/) { vals = t[j + 1]; gsub(/\\/, "", vals) }
                printf "%s %s %s %d\n", v, o, vals, NR
                if (v == "*") { rest2 = line
                    while (match(rest2, /not `[a-z]+`/)) {
                        printf "!%s %s\n", substr(rest2, RSTART + 5, RLENGTH - 6), o
                        rest2 = substr(rest2, RSTART + RLENGTH) } }
            }
        }
    }' "$doc" >"$T/opts"
verbs=$(awk '$1 == "@verb" { print $2 }' "$T/opts" | sort -u)
[ -n "$verbs" ] || fail "no \`heapsift VERB\` section found in $doc"
for v in $verbs run; do "$CLI" "$v" --help >"$T/help.$v" 2>&1 || fail "heapsift $v --help failed"; done
nopt=0
while read -r v o vals ln; do
    case $v in @verb | !*) continue ;; esac
    if [ "$v" = "*" ]; then targets=$verbs; else targets=$v; fi
    for t in $targets; do
        grep -qx "!$t $o" "$T/opts" && continue
        [ -f "$T/help.$t" ] || "$CLI" "$t" --help >"$T/help.$t" 2>&1 || { fail "docs/views.md:$ln: heapsift $t --help failed"; continue; }
        nopt=$((nopt + 1))
        grep -Eq -- "(^|[ ,])$o([ ,=]|\$)" "$T/help.$t" ||
            { fail "docs/views.md:$ln: $o is not in \`heapsift $t --help\`"; continue; }
        [ "$vals" = "-" ] && continue
        for w in $(printf '%s\n' "$vals" | tr '|' ' '); do
            grep -qw -- "$w" "$T/help.$t" || fail "docs/views.md:$ln: $o's value $w is not in \`heapsift $t --help\`"
        done
    done
done <"$T/opts"
[ "$nopt" -ge 50 ] || fail "only $nopt option checks: the doc's parser lost its way"

if [ "$FAILS" -ne 0 ]; then
    echo "docs_views: $FAILS failure(s)" >&2
    exit 1
fi
echo "docs_views: $ncmd example commands and $nopt option mentions match docs/views.md"
