#!/bin/sh
# start: what heapsift costs /bin/true, by part, in instructions (callgrind: the machine's
# load does not move it). Rows: /bin/true alone; an empty LD_PRELOAD library linked with
# the given library's DT_NEEDED list (the floor of loading those dependencies); then each
# library given at its default rate (exit profile written) and at HEAPSIFT_RATE=0 (no
# profile). Columns: the whole process, and the inclusive counts of the parts: ld.so's
# loading and relocation (_dl_start), the library's constructor (lifecycle_ctor), the
# reach scan in it (hs_reach_detect), the entry-point decoder's dlopen in it
# (hs_patch_decoder), the exit profile's dump (dump_make, hs_gzip). Prints markdown.
# usage: sh bench/start.sh LIB [LIB...]   (each a libheapsift.so; labels are their paths)
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
parts='_dl_start lifecycle_ctor hs_reach_detect hs_patch_decoder dump_make hs_gzip'
cg() { # LABEL ENV...: one row
    label=$1
    shift
    env "$@" HEAPSIFT_OUT="$tmp/p.pb.gz" valgrind --tool=callgrind \
        --callgrind-out-file="$tmp/cg" /bin/true >/dev/null 2>"$tmp/err"
    total=$(sed -n 's/^summary: //p' "$tmp/cg")
    callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg" >"$tmp/ann" 2>/dev/null
    row="| $label | $total | +$((total - base)) |"
    for f in $parts; do
        n=$(awk -v f="$f" '{ n = $NF; sub(/.*:/, "", n); sub(/ .*/, "", n) }
            $0 ~ (":" f " ") { gsub(/,/, "", $1); print $1; exit }' "$tmp/ann")
        row="$row ${n:-0} |"
    done
    echo "$row"
    rm -f "$tmp/cg" "$tmp"/*.pb.gz
}
echo "| run | Ir, whole process | over alone | $(echo "$parts" | sed 's/ / | /g') |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
env X=1 HEAPSIFT_OUT="$tmp/p.pb.gz" valgrind --tool=callgrind --callgrind-out-file="$tmp/b" /bin/true >/dev/null 2>&1
base=$(sed -n 's/^summary: //p' "$tmp/b")
cg "/bin/true alone" X=1
for lib in "$@"; do
    libs=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\([^]]*\)\].*/\1/p' | grep -v '^ld-linux' |
        sed 's/^/-l:/' | tr '\n' ' ')
    echo 'void hs_empty(void); void hs_empty(void) {}' | cc -shared -fPIC -x c - -o "$tmp/empty.so" \
        -Wl,--no-as-needed $libs
    cg "empty library, NEEDED as $lib" LD_PRELOAD="$tmp/empty.so"
    cg "$lib" LD_PRELOAD="$lib"
    cg "$lib, rate 0" LD_PRELOAD="$lib" HEAPSIFT_RATE=0
done
