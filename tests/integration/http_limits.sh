#!/bin/sh
# http_limits: slow and hostile clients (docs/http.md, "Limits") against
# tests/programs/http_app.c's endpoint:
#  - 8 connections that send half a request head and stall, plus 4 that request a
#    profile and never read it (12: under the per-address limit of 16, which a flood
#    from one address does reach, below), held until the test has its answers: a normal
#    client is still answered while the 8 stalled ones are still open (a serving thread
#    they blocked would answer only once the 10 s idle timeout closed them), and the
#    program keeps allocating and answering its commands meanwhile;
#  - 40 connections at once from one address: at most 16 are served (per-address
#    limit); once they close, a normal client is answered;
#  - a 64 KiB request head (over the 32 KiB per connection) is refused, not served;
#  - afterwards the endpoint and the program are fine (valid profile, exit status 0).
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-limits
. "$(dirname "$0")/../lib/http.sh"
http_need
app_start
app old 16 >/dev/null
PORT=${URL##*:}

mkfifo "$T/release"
python3 - "$PORT" "$T/release" >"$T/attack.out" 2>&1 <<'PY' &
import socket, sys
port = int(sys.argv[1])
held = []
for i in range(8):    # slowloris: half a head, then silence
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n"); held.append(s)
for i in range(4):    # ask for a profile, never read it
    s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /debug/pprof/heap?display=svg HTTP/1.1\r\nHost: x\r\n\r\n"); held.append(s)
print("held", len(held), flush=True)
open(sys.argv[2]).readline()  # the test has its answers
alive = 0
for s in held[:8]:  # still open: nothing from the server, neither an answer nor a close
    try:
        s.recv(1, socket.MSG_DONTWAIT)
    except BlockingIOError:
        alive += 1
print("still held", alive, flush=True)
PY
A=$!
# Act once the 12 connections are held (the attacker says so), not after a guess.
hs_until 30 "the attack's 12 connections held" "grep -q '^held 12\$' '$T/attack.out'" || true
t0=$(date +%s%N)
code=$(get /debug/pprof/heap "$T/during.pb.gz")
t1=$(date +%s%N)
[ "$code" = 200 ] || fail "a normal client during the stall: status $code after $(((t1 - t0) / 1000000)) ms"
app window 8 >/dev/null || fail "the program did not answer during the stall"
timeout 30 sh -c 'echo done >"$1"' sh "$T/release" || fail "the attack did not wait for the release"
wait "$A" || true
grep -q '^still held 8$' "$T/attack.out" ||
    { fail "the 8 stalled connections were not all open when the normal client was answered"; show "$T/attack.out"; }

python3 - "$PORT" >"$T/flood.out" 2>&1 <<'PY'
import socket, sys, time
port = int(sys.argv[1])
socks, served = [], 0
for i in range(40):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=30); socks.append(s)
    except OSError:
        pass
for s in socks:
    try:
        s.sendall(b"GET /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\n\r\n")
    except OSError:
        pass
deadline = time.time() + 30  # each is answered or closed at once; a loaded machine may take a while
for s in socks:
    try:
        s.settimeout(max(0.05, deadline - time.time()))
        if s.recv(64).startswith(b"HTTP/1.1 200"):
            served += 1
    except OSError:
        pass
print("served", served, "of", len(socks))
PY
served=$(awk '/^served/ { print $2 }' "$T/flood.out")
[ -n "$served" ] && [ "$served" -ge 1 ] && [ "$served" -le 16 ] ||
    { fail "40 connections from one address: want 1..16 served"; show "$T/flood.out"; }
# The flood's sockets are closed (its process exited); the endpoint notices on its next
# round, so the normal client is tried until it is answered, within 30 s.
hs_until 30 "a normal client after the flood answered" \
    '[ "$(get /debug/pprof/symbol "$T/sym" --max-time 10)" = 200 ]' || true

st=0
python3 - "$PORT" >"$T/big.out" 2>&1 <<'PY' || st=$?
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
try:
    s.sendall(b"GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n")
    r = s.recv(64)
except OSError as e:
    r = b"closed"
print("answer", r[:12].decode(errors="replace") or "closed")
PY
# The client must have run to its verdict: a crash would print no answer line at all.
[ "$st" = 0 ] && grep -q '^answer ' "$T/big.out" ||
    { fail "the 64 KiB request head client failed (status $st)"; show "$T/big.out"; }
! grep -q 'answer HTTP/1.1 200' "$T/big.out" || { fail "a 64 KiB request head was served"; show "$T/big.out"; }
[ "$(get /debug/pprof/heap "$T/after.pb.gz")" = 200 ] && [ "$(site "$T/after.pb.gz" inuse_space site_old)" = 1048576 ] ||
    fail "no valid profile after the attacks"
app_stop
[ "$FAILS" -eq 0 ] && echo "http_limits: ok"
exit $((FAILS > 0))
