#!/bin/sh
# start_build: a real build, alone and under `heapsift run` (profiles of every process
# written at exit), side by side: heapsift's own library (the hs_common target: about 60
# C files, some 250 processes) from clean, at -j2, in interleaved rounds whose order
# rotates. Prints user, system and wall seconds per run, then the medians and their
# ratios to alone, as markdown. CPU (user+system) moves little with the machine's load;
# wall does: the load average is printed with it.
# usage: sh bench/start_build.sh SOURCE_DIR ROUNDS CLI [CLI...]   (each a heapsift binary)
set -eu
src=$(cd "$1" && pwd)
rounds=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake -S "$src" -B "$tmp/b" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
run() { # NAME CMD...: one clean build, "NAME user sys wall" appended to $tmp/runs
    name=$1
    shift
    cmake --build "$tmp/b" --target clean >/dev/null
    rm -rf "$tmp/p" && mkdir "$tmp/p"
    /usr/bin/time -f "%U %S %e" -o "$tmp/t" "$@" cmake --build "$tmp/b" -j2 --target hs_common \
        >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    echo "$name $(cat "$tmp/t") $(ls "$tmp/p" | wc -l)" >>"$tmp/runs"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
confs="alone $*"
for r in $(seq 1 "$rounds"); do # round r starts at configuration r mod n
    for c in $(echo $confs | awk -v r="$r" '{ for (i = 0; i < NF; i++) print $((i + r - 1) % NF + 1) }'); do
        if [ "$c" = alone ]; then run alone; else
            run "$c" "$c" run -q -o "$tmp/p/%p.pb.gz" --
        fi
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| run | user s | sys s | wall s | profiles |"
echo "| --- | --- | --- | --- | --- |"
awk '{ printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$tmp/runs"
echo
echo "| configuration | median user+sys s | CPU ratio | median wall s | wall ratio |"
echo "| --- | --- | --- | --- | --- |"
for c in $confs; do
    cpu=$(awk -v c="$c" '$1 == c { print $2 + $3 }' "$tmp/runs" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    wall=$(awk -v c="$c" '$1 == c { print $4 }' "$tmp/runs" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    [ "$c" = alone ] && { acpu=$cpu; awall=$wall; }
    echo "$c $cpu $wall $acpu $awall" |
        awk '{ printf "| %s | %.2f | %.3fx | %.2f | %.3fx |\n", $1, $2, $2 / $4, $3, $3 / $5 }'
done
