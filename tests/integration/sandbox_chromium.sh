#!/bin/sh
# sandbox_chromium: issue 39's second case, Debian's Chromium with its sandbox, which it
# uses for any user that is not root: a namespace sandbox (the zygote, pid 1 of a PID
# namespace, chrooted into an empty directory) and a seccomp filter in every renderer,
# whose refused calls crash it (sigsys_handlers.cc: "seccomp-bpf failure in syscall").
# The test runs Chromium headless as the unprivileged user nobody (runuser), without
# heapsift and under `heapsift run`, on a page that builds 5000 rows with JavaScript.
# Checks:
#  - the page's DOM (--dump-dom) is the same under heapsift: before issue 39 every
#    renderer died on heapsift's stack probe (process_vm_readv, syscall 0x136) and the run
#    hung; then the zygote died of heapsift's descriptor check in its chroot helper;
#  - no "seccomp-bpf failure" line, no crash, status 0;
#  - the browser process leaves its profile, go tool pprof reads every profile written;
#  - the renderers leave theirs: each is a raw clone of the zygote (no fork handler runs),
#    the init of a PID namespace of its own, in a chroot, under a filter that kills it for
#    a refused call. The zygote's init, pid 1 of its namespace, made spare spools when it
#    started, and each renderer took one at its first sample (spool_child.c): at least
#    one profile of a --type=renderer process, named PID.spareK.pb.gz, with samples;
#    every spare profile is said by run ("of another PID namespace"); no "is lost" line,
#    no spool or spare left behind.
#  - at --rate 1 every kind of process leaves its profile: the browser, the zygote's init
#    and the zygote it forks (in its chroot: it cannot create a file, and takes a spare),
#    the GPU process, the network and storage services, the renderers, crashpad's handler.
# Skips (77) when Chromium or runuser is missing, when there is no user nobody, or
# off x86-64; under CI a missing Chromium fails.
# usage: sandbox_chromium.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sandbox_chromium
hs_need_go
hs_need_built "$LIB" "$CLI"
CHROMIUM=${HS_CHROMIUM:-/usr/bin/chromium}
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
if [ ! -x "$CHROMIUM" ]; then
    [ -z "${CI:-}" ] || { echo "FAIL: $CHROMIUM is not installed (scripts/setup.sh)" >&2; exit 1; }
    echo "SKIP: $CHROMIUM is not installed (sh scripts/setup.sh installs it)"
    exit 77
fi
command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1 ||
    { echo "SKIP: runuser or the user nobody is missing"; exit 77; }
AS=""
[ "$(id -u)" = 0 ] && AS="runuser -u nobody --"
chmod 755 "$T"

cat >"$T/page.html" <<'EOF2'
<!doctype html><html><head><title>start</title></head><body><div id="root"></div>
<script>
const root = document.getElementById('root');
for (let i = 0; i < 5000; i++) {
  const d = document.createElement('div');
  d.textContent = 'row ' + i;
  root.appendChild(d);
}
document.title = 'rows ' + root.children.length;
</script></body></html>
EOF2
chmod 644 "$T/page.html"

# browse NAME [WRAPPER...]: Chromium, sandboxed, as nobody; waits for its processes.
browse() {
    name=$1
    shift
    mkdir -p "$T/home-$name" "$T/ud-$name" "$T/prof-$name"
    chown nobody "$T/home-$name" "$T/ud-$name" "$T/prof-$name" 2>/dev/null || true
    ST=0
    mkdir -p "$T/tmp-$name"
    chown nobody "$T/tmp-$name" 2>/dev/null || true
    timeout -k 5 120 $AS env HOME="$T/home-$name" TMPDIR="$T/tmp-$name" "$@" "$CHROMIUM" --headless --disable-gpu \
        --user-data-dir="$T/ud-$name" --dump-dom "file://$T/page.html" \
        >"$T/$name.out" 2>"$T/$name.err" || ST=$?
    hs_until 30 "$name: Chromium's processes to end" '! pgrep -f -- "$T/ud-$name" >/dev/null 2>&1'
}

browse plain
[ "$ST" -eq 0 ] || { fail "Chromium without heapsift: status $ST"; show "$T/plain.err"; }
grep -q '<title>rows 5000</title>' "$T/plain.out" ||
    { fail "Chromium without heapsift: no title 'rows 5000'"; show "$T/plain.out" 5; }
if grep -q 'No usable sandbox\|--no-sandbox' "$T/plain.err"; then
    echo "SKIP: Chromium has no usable sandbox here (user namespaces)"
    exit 77
fi

browse heapsift "$CLI" run --rate 1 -o "$T/prof-heapsift/%p.pb.gz" --
[ "$ST" -eq 0 ] || { fail "Chromium under heapsift: status $ST"; show "$T/heapsift.err"; }
cmp -s "$T/plain.out" "$T/heapsift.out" || {
    fail "the page's DOM differs under heapsift ($(wc -c <"$T/heapsift.out") bytes, $(wc -c <"$T/plain.out") without)"
    show "$T/heapsift.out" 5
}
if grep -E 'seccomp-bpf failure|CRASHING|Zygote process exited|FATAL' "$T/heapsift.err" >"$T/bad"; then
    fail "Chromium's sandbox or zygote complained under heapsift:"
    show "$T/bad"
fi
browser="" n=0 renderers=0 kinds=""
for f in "$T/prof-heapsift"/*.pb.gz; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    if ! go tool pprof -top "$f" >"$T/gotop" 2>&1; then
        fail "go tool pprof cannot read $(basename "$f")"
        show "$T/gotop" 5
        continue
    fi
    cmd=$(sed -n 's/^process: pid=[0-9]* cmdline=//p' "$T/gotop")
    case "$cmd" in
    */chromium\ *--type=zygote*) [ "${f%.spare[0-9]*.pb.gz}" = "$f" ] || kinds="$kinds forked-zygote" ;;
    esac
    case "$cmd" in
    */chromium\ *--type=zygote*) kinds="$kinds zygote" ;;
    */chromium\ *--type=gpu-process*) kinds="$kinds gpu" ;;
    */chromium\ *--utility-sub-type=network.mojom.NetworkService*) kinds="$kinds network" ;;
    */chromium\ *--utility-sub-type=storage.mojom.StorageService*) kinds="$kinds storage" ;;
    */chrome_crashpad_handler\ *) kinds="$kinds crashpad" ;;
    esac
    case "$cmd" in
    */chromium\ *--type=renderer*)
        renderers=$((renderers + 1))
        case "$f" in
        *.spare[0-9]*.pb.gz) ;;
        *) fail "renderer profile $(basename "$f") is not named after a spare" ;;
        esac
        grep -q '^Showing nodes accounting for .* of [1-9][0-9.]*[kMG]*B total' "$T/gotop" ||
            { fail "renderer profile $(basename "$f") holds no sample"; show "$T/gotop" 8; }
        ;;
    */chromium\ *--type=*) ;;
    */chromium\ *) browser=$f ;;
    esac
done
lost=$(grep -c 'is lost' "$T/heapsift.err" || true)
spares=$(ls "$T/prof-heapsift" | grep -c '\.spare[0-9]*\.pb\.gz$' || true)
said=$(grep -c '^heapsift: process [0-9]* of another PID namespace (chromium) .* went to .*\.spare[0-9]*\.pb\.gz$' "$T/heapsift.err" || true)
echo "sandbox_chromium: $n profiles, $renderers of renderers, $spares from spares, $lost lost"
[ -n "$browser" ] || fail "no profile of the browser process"
for k in zygote forked-zygote gpu network storage crashpad; do
    case " $kinds " in
    *" $k "*) ;;
    *) fail "no profile of Chromium's $k process (profiles of:$kinds)" ;;
    esac
done
[ "$renderers" -ge 1 ] || { fail "no profile of a renderer"; show "$T/heapsift.err" 20; }
[ "$lost" = 0 ] || { fail "$lost profiles said lost"; grep 'is lost' "$T/heapsift.err" >&2; }
[ "$said" = "$spares" ] || fail "run said $said spare profiles recovered, $spares written"
left=$(ls -A "$T/tmp-heapsift" 2>/dev/null | grep -c 'spool$' || true)
[ "$left" = 0 ] || fail "$left spools left in TMPDIR: $(ls "$T/tmp-heapsift" | tr '\n' ' ')"
[ "$FAILS" -eq 0 ] && echo "sandbox_chromium: ok"
exit $((FAILS > 0))
