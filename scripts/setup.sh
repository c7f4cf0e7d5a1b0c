#!/bin/sh
# Installs the Debian packages heapsift's build, tests and demo need, only those missing.
# Idempotent: a machine that has everything installs nothing and prints nothing.
# Called by `make demo` and `make test`; run it by hand with `sh scripts/setup.sh`.
# With arguments, installs those packages instead (bench/setup.sh passes its own list).
set -eu

need="cmake make gcc g++ pkg-config binutils zlib1g-dev libdw-dev libelf-dev \
golang-go libjemalloc2 libtcmalloc-minimal4 libjemalloc-dev google-perftools \
libgoogle-perftools-dev libzydis-dev clang-14 libclang-rt-14-dev python3 perl sqlite3 git redis-server \
redis-tools clang-format libmicrohttpd-dev libmicrohttpd12 prometheus wrk curl libcurl4-openssl-dev \
chromium graphviz"
# The browser tests (tests/web) need node and npm; a machine whose nodejs comes from
# elsewhere (with its own npm) keeps it.
command -v npm >/dev/null 2>&1 || need="$need nodejs npm"
# The reach tests build a Rust program; a machine with its own toolchain (rustup) keeps it.
command -v rustc >/dev/null 2>&1 || [ -x "${HOME:-/root}/.cargo/bin/rustc" ] || need="$need rustc"
# tests/integration/api_hooks.sh links programs against Debian's libmimalloc (issue 38).
# The Rust end-to-end tests (tests/programs/rust/cargo) build Cargo projects offline from
# Debian's crate registry: jemalloc-sys (and what it needs) and mimalloc's shared library.
command -v cargo >/dev/null 2>&1 || [ -x "${HOME:-/root}/.cargo/bin/cargo" ] || need="$need cargo"
need="$need librust-jemalloc-sys-dev libmimalloc-dev"
# The demangler (src/common/model/demangle.c) links libiberty.a.
need="$need libiberty-dev"
# tests/integration/sandbox_firefox.sh: Firefox ESR's content processes sandbox themselves
# with seccomp (issue 39).
need="$need firefox-esr"
if [ $# -gt 0 ]; then need="$*"; fi

missing=""
for p in $need; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "heapsift setup: installing$missing" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
