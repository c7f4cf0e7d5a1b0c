#!/bin/sh
# sandbox_firefox: issue 39's case, Debian's Firefox ESR under its default sandbox. It
# defines malloc in its executable (the in-place hooks reach it); its content, RDD and
# utility processes, most of them forked by its fork server, install a seccomp filter once
# they have started. `heapsift run --rate 1` takes a headless screenshot of a page that
# builds a DOM with JavaScript. Checks:
#  - every process of the tree leaves a profile: the processes are counted independently
#    by a preloaded library of the test's own (tests/programs/lib/pidlog.c: each exec and
#    each forked child notes itself), the profiles are DIR/PID.pb.gz. crashhelper's parent
#    among them, which forks its daemon and ends with _exit while single-threaded: the
#    process the library started in writes its profile then (procexit.c), a forked
#    child (a shell's subshell) does not;
#  - the sandboxed processes' profiles are recovered from their spools, and run says so
#    (at least one content process);
#  - Firefox logs no "Sandbox: seccomp sandbox violation" line for a system call it does
#    not log without heapsift (48 lines before issue 39: getgroups, clone, unshare, then
#    process_vm_readv), and heapsift prints no "cannot" line;
#  - the screenshot is made, as without heapsift; go tool pprof reads every profile.
# About 10 s. Skips (77) when firefox-esr is not installed (scripts/setup.sh installs it)
# or off x86-64; under CI a missing Firefox fails.
# usage: sandbox_firefox.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sandbox_firefox
hs_need_go
hs_need_built "$LIB" "$CLI"
FIREFOX=${HS_FIREFOX:-/usr/bin/firefox-esr}
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
if [ ! -x "$FIREFOX" ]; then
    [ -z "${CI:-}" ] || { echo "FAIL: $FIREFOX is not installed (scripts/setup.sh)" >&2; exit 1; }
    echo "SKIP: $FIREFOX is not installed (sh scripts/setup.sh installs it)"
    exit 77
fi
cc -O2 -shared -fPIC -o "$T/pidlog.so" "$2/tests/programs/lib/pidlog.c" ||
    { fail "cannot build pidlog"; exit 1; }

cat >"$T/page.html" <<'EOF2'
<!doctype html><html><head><title>start</title></head><body><div id="root" style="display:none"></div>
<script>
const root = document.getElementById('root');
for (let i = 0; i < 5000; i++) { // hidden: a full-page screenshot of 5000 rows is too tall for Firefox
  const d = document.createElement('div');
  d.textContent = 'row ' + i;
  root.appendChild(d);
}
document.title = 'rows ' + root.children.length;
</script></body></html>
EOF2

# shoot NAME [WRAPPER...]: the screenshot T/NAME.png, Firefox's stderr in T/NAME.err, its
# profile directory and HOME T's own; waits until every process PIDLOG noted is gone.
shoot() {
    name=$1
    shift
    mkdir -p "$T/home-$name" "$T/ff-$name"
    ST=0
    # the wrapper (heapsift run) gets pidlog.so too: a command built with ASan (make
    # test-sanitize) refuses a preload ahead of its runtime unless told
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        HOME="$T/home-$name" PIDLOG="$T/$name.pids" LD_PRELOAD="$T/pidlog.so" timeout -k 5 120 "$@" \
        "$FIREFOX" --headless -no-remote -profile "$T/ff-$name" --screenshot "$T/$name.png" \
            "file://$T/page.html" >"$T/$name.out" 2>"$T/$name.err" || ST=$?
    hs_until 30 "$name: Firefox's processes to end" \
        '! for p in $(cut -d" " -f1 "$T/$name.pids"); do kill -0 $p 2>/dev/null && echo $p; done | grep -q .'
}

# violations NAME: the system call numbers of Firefox's violation lines, one per line, sorted.
violations() {
    sed -n 's/.*Sandbox: seccomp sandbox violation: .*syscall \([0-9]*\),.*/\1/p' "$T/$1.err" | sort -u
}

shoot plain
[ "$ST" -eq 0 ] && [ -s "$T/plain.png" ] || { fail "Firefox without heapsift: status $ST, no screenshot"; show "$T/plain.err"; }

mkdir "$T/prof"
shoot heapsift "$CLI" run --rate 1 -o "$T/prof/%p.pb.gz" --
[ "$ST" -eq 0 ] && [ -s "$T/heapsift.png" ] || { fail "Firefox under heapsift: status $ST, no screenshot"; show "$T/heapsift.err"; }

# The tree: every pid noted, but heapsift's own (the CLI and its probe, sh -c 'exit 4').
awk '{ last[$1] = $0 } END { for (p in last) print last[p] }' "$T/heapsift.pids" |
    grep -v -e " $CLI " -e " sh -c exit 4" >"$T/tree" || true
procs=0 profiles=0 missing=""
while read -r pid ppid how cmd; do
    procs=$((procs + 1))
    if [ -f "$T/prof/$pid.pb.gz" ]; then
        profiles=$((profiles + 1))
        go tool pprof -top "$T/prof/$pid.pb.gz" >/dev/null 2>"$T/gotop.err" ||
            { fail "go tool pprof cannot read $pid.pb.gz"; show "$T/gotop.err" 5; }
    else
        missing="$missing $pid($(echo "$cmd" | cut -c1-60))"
    fi
done <"$T/tree"
echo "sandbox_firefox: $procs processes, $profiles profiles"
[ "$procs" -ge 5 ] || { fail "only $procs processes noted: the count is broken"; show "$T/tree"; }
[ -z "$missing" ] || fail "processes without a profile:$missing"
rec=$(grep -c '^heapsift: process [0-9]* (firefox-esr) ran under a seccomp filter installed after it started (a sandbox), which let it write no profile; its live heap, recovered from its spool, went to ' "$T/heapsift.err" || true)
echo "sandbox_firefox: $rec sandboxed processes recovered from their spools"
[ "$rec" -ge 1 ] || { fail "no sandboxed process recovered"; show "$T/heapsift.err"; }

violations plain >"$T/v.plain"
violations heapsift >"$T/v.heapsift"
new=$(comm -13 "$T/v.plain" "$T/v.heapsift" | tr '\n' ' ')
[ -z "$new" ] || { fail "violation lines under heapsift only, system calls: $new"; grep Sandbox "$T/heapsift.err" | head -5 >"$T/v"; show "$T/v"; }
if grep 'heapsift: .*cannot' "$T/heapsift.err" >"$T/cannot"; then
    fail "heapsift could not do something"
    show "$T/cannot"
fi
[ "$FAILS" -eq 0 ] && echo "sandbox_firefox: ok"
exit $((FAILS > 0))
