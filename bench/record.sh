# bench/record.sh: what a bench script's --record does. Sourced, not run; POSIX sh.
#
# bench_record BENCH_DIR SECTION_FILE: appends the Markdown section in SECTION_FILE to
# BENCH_DIR/history/YYYY-MM-DD.md, the day taken from the section's first "## " heading
# (UTC, as every heading gives it; today's UTC date if the heading has none), creating the
# file with its title when it is the day's first section. It does not touch RESULTS.md:
# that file holds one current table per benchmark, and which of its tables a section
# replaces (and how) is a judgement, so it prints a reminder on stderr instead.
bench_record() {
    br_dir=$1 br_section=$2
    br_day=$(sed -n 's/^## .*\([0-9]\{4\}-[0-9][0-9]-[0-9][0-9]\).*/\1/p' "$br_section" |
        head -n 1)
    [ -n "$br_day" ] || br_day=$(date -u '+%Y-%m-%d')
    br_file=$br_dir/history/$br_day.md
    mkdir -p "$br_dir/history" || return 1
    if [ ! -s "$br_file" ]; then
        {
            echo "# heapsift benchmark runs of $br_day"
            echo
            echo "Every section the bench scripts recorded on this day, in the order they appended them;"
            echo "the current figures are in [../RESULTS.md](../RESULTS.md)."
        } >"$br_file" || return 1
    fi
    # One blank line between sections, however the section starts.
    { echo; sed '/./,$!d' "$br_section"; } >>"$br_file" || return 1
    {
        echo
        echo "bench: appended to $br_file"
        echo "bench: now update the matching current table(s) at the top of $br_dir/RESULTS.md:"
        echo "bench:   replace each table this run measured by its new figures, and its heading's"
        echo "bench:   date, library commit and machine by this run's (see bench/README.md)."
    } >&2
}
