#!/bin/sh
# build.sh SOURCE_DIR [CACHE_DIR]: builds the Rust test programs of this folder (the
# variants rjemp, rjemp_lto, rjemu, rjemu_lto, rjemv0, rmimalloc, rsys; see each Cargo.toml)
# offline, from Debian's crate registry, into CACHE_DIR/bin, for tests/integration/
# rust_e2e.sh. ctest runs it as the fixture "rust" (tests/CMakeLists.txt).
#
# CACHE_DIR (default SOURCE_DIR/build-rust, which .gitignore's /build*/ covers; `make
# clean` leaves it) outlives a build directory, so `make test` and `make test-sanitize`
# of one clone build once. It holds a copy of the projects (cargo writes Cargo.lock beside
# them, never in the source tree; copied with their times, so cargo's own checks hold),
# one CARGO_TARGET_DIR shared by all variants, and a stamp: the hash of this folder, the
# toolchain's versions and the registry's crates. A matching stamp skips cargo entirely.
#
# jemalloc compiles from C source in jemalloc-sys's build script (about 2 minutes on 2
# cores). cargo runs a build script again whenever the script's own compilation differs,
# and the LTO setting is part of the profile that compiles it (cargo's unit graph shows
# the host units of an lto = "fat" build with lto "fat"; build-override cannot set lto): so
# jemalloc is built four times, prefixed and unprefixed, with LTO and without. rjemv0 shares
# rjemp's: its v0 mangling is given to its own crate only (`cargo rustc -- -C
# symbol-mangling-version=v0`; the sites are there), where RUSTFLAGS would change every
# unit, the build scripts' included, and build jemalloc a fifth time.
#
# A machine without cargo, the registry's jemalloc-sys or libmimalloc fails here, naming
# what to install: the project installs everything through scripts/setup.sh.
set -eu
SRC=$(cd "$1" && pwd)
CACHE=${2:-$SRC/build-rust}
HERE=$SRC/tests/programs/rust/cargo
REG=/usr/share/cargo/registry
VARIANTS="rjemp rjemp_lto rjemv0 rjemu rjemu_lto rmimalloc rsys"

missing() {
    echo "heapsift: the Rust tests need $1; run 'make setup' (sh scripts/setup.sh installs it)" >&2
    exit 1
}

# rustup's proxies live in ~/.cargo/bin, which a test's PATH may lack
[ -x "${HOME:-/root}/.cargo/bin/cargo" ] && PATH=${HOME:-/root}/.cargo/bin:$PATH && export PATH
command -v cargo >/dev/null 2>&1 || missing "cargo (Debian package cargo, or rustup's)"
command -v rustc >/dev/null 2>&1 || missing "rustc (Debian package rustc, or rustup's)"
ls -d "$REG"/jemalloc-sys-0.3.* >/dev/null 2>&1 ||
    missing "jemalloc-sys 0.3 in $REG (Debian package librust-jemalloc-sys-dev)"
MI=$(cc -print-file-name=libmimalloc.so)
[ -e "$MI" ] || missing "libmimalloc.so (Debian package libmimalloc-dev)"

mkdir -p "$CACHE"
# one build at a time per cache (two ctest runs of one clone)
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/lock"
    flock 9
fi
key=$( (cd "$HERE" && find . -type f ! -path './rustc_hold/*' | LC_ALL=C sort | xargs sha256sum
    cargo -V; rustc -vV; ls "$REG"; readlink -f "$MI") | sha256sum | cut -c1-32)
uptodate=1
[ "$(cat "$CACHE/stamp" 2>/dev/null)" = "$key" ] || uptodate=0
for v in $VARIANTS; do
    [ -x "$CACHE/bin/$v" ] || uptodate=0
done
if [ $uptodate = 1 ]; then
    echo "rust programs: up to date in $CACHE/bin"
    exit 0
fi

rm -rf "$CACHE/src" "$CACHE/bin" "$CACHE/stamp"
mkdir -p "$CACHE/src/.cargo" "$CACHE/bin"
cp -Rp "$HERE/." "$CACHE/src/"
cp -p "$HERE/config.toml" "$CACHE/src/.cargo/config.toml"
export CARGO_TARGET_DIR="$CACHE/target"
# the environment's own flags would change what is tested (and what cargo shares)
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS CARGO_BUILD_RUSTFLAGS CARGO_BUILD_TARGET CARGO_PROFILE_RELEASE_LTO
start=$(date +%s)
for v in $VARIANTS; do
    t0=$(date +%s)
    out=$CARGO_TARGET_DIR/release/$v
    if [ $v = rjemv0 ]; then
        (cd "$CACHE/src/$v" && cargo rustc --release --offline -j 2 -- -C symbol-mangling-version=v0) ||
            { echo "heapsift: cargo rustc of $v failed" >&2; exit 1; }
    else
        (cd "$CACHE/src/$v" && cargo build --release --offline -j 2) ||
            { echo "heapsift: cargo build of $v failed" >&2; exit 1; }
    fi
    cp -p "$out" "$CACHE/bin/$v"
    echo "rust programs: $v built in $(($(date +%s) - t0)) s"
done
echo "$key" >"$CACHE/stamp"
echo "rust programs: all built in $(($(date +%s) - start)) s, in $CACHE/bin"
