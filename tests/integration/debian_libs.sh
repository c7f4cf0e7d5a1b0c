#!/bin/sh
# debian_libs: stacks that pass through Debian's own glibc, which is built without frame
# pointers: allocations made by strdup, getline and fopen on the program's behalf, and by a
# qsort comparator that glibc calls back (tests/programs/sites.c, mode "libc"), at
# HEAPSIFT_RATE=1, with the default unwinder and each DWARF-based one (dwarf, libgcc).
# The program's calling function must appear above the libc frame, values must be exact, and
# main must be above every site.
# usage: debian_libs.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" debian-libs
PROG=$BUILD/programs/sites
hs_need_go
hs_need_built "$LIB" "$PROG"

for unwind in default dwarf libgcc; do
    out="$T/libc.$unwind.pb.gz"
    rc=0
    if [ $unwind = default ]; then
        HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" libc --expect \
            >"$T/expect" 2>"$T/stderr" || rc=$?
    else
        HEAPSIFT_UNWIND=$unwind HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" \
            libc --expect >"$T/expect" 2>"$T/stderr" || rc=$?
    fi
    if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
        fail "$unwind unwinder: sites libc: status $rc, profile $([ -s "$out" ] && echo written || echo missing)"
        show "$T/stderr" 5
        continue
    fi
    for st in inuse_space alloc_objects; do
        col=$([ $st = inuse_space ] && echo 6 || echo 3)
        if gotop "$out" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
            table <"$T/go.$st" >"$T/go.$st.tab"
            compare "$unwind unwinder, $st" "$T/expect" "$T/go.$st.tab" "$col" 0 ||
                { fail "$unwind unwinder: go tool pprof -top -sample_index=$st"; show "$T/go.$st"; }
        else
            fail "$unwind unwinder: go tool pprof -top: $(head -3 "$T/go.$st.err")"
        fi
    done
    if ! traces "$out" >"$T/traces" 2>"$T/traces.err"; then
        fail "$unwind unwinder: go tool pprof -traces: $(head -3 "$T/traces.err")"
        continue
    fi
    # site_strdup/site_getline/site_fopen: never the leaf (glibc's function is), main above.
    # cmp_alloc: the leaf, with glibc's qsort frames, then site_qsort, then main above it.
    awk -F ';' '
        function base(s) { sub(/\(.*$/, "", s); return s }
        function has_main(from,   j) { for (j = from; j <= NF; j++) if (base($j) == "main") return 1
                                        return 0 }
        { for (i = 1; i <= NF; i++) {
              nm = base($i)
              if (nm == "site_strdup" || nm == "site_getline" || nm == "site_fopen") {
                  seen[nm]++
                  if (i == 1) { printf "%s is the leaf, the glibc frame below it is missing: %s\n", nm, $0; bad++ }
                  if (!has_main(i + 1)) { printf "main missing above %s: %s\n", nm, $0; bad++ }
              }
          }
          if (base($1) == "cmp_alloc") {
              seen["cmp_alloc"]++; q = 0
              for (i = 2; i <= NF; i++) if (base($i) == "site_qsort") { q = i; break }
              if (!q) { printf "site_qsort missing above cmp_alloc (unwinding through qsort failed): %s\n", $0; bad++ }
              else if (q == 2) { printf "no glibc qsort frame between cmp_alloc and site_qsort: %s\n", $0; bad++ }
              else if (!has_main(q + 1)) { printf "main missing above site_qsort: %s\n", $0; bad++ }
          } }
        END { n = split("site_strdup site_getline site_fopen cmp_alloc", want, " ")
              for (i = 1; i <= n; i++) if (!(want[i] in seen)) { printf "no stack contains %s\n", want[i]; bad++ }
              exit bad > 0 }' "$T/traces" >&2 ||
        { fail "$unwind unwinder: stacks through glibc (go tool pprof -traces, collapsed, leaf first)"
          grep -E 'site_|cmp_alloc' "$T/traces" | sort | uniq -c | sort -rn | head -20 | sed 's/^/    | /' >&2; }
done

if [ $FAILS -ne 0 ]; then
    echo "debian_libs: $FAILS check(s) failed" >&2
    exit 1
fi
echo "debian_libs: ok"
