# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154
# Sourced by bench/*/run after they set $series and cd to the top.
#
# bench_boot NAME LOG RUN-SUITE-ARGS...: build the guest programs and
# mmfix.ko for $series, boot it with run-suite (one hour at most, the
# full sizes take that long under TCG) and the given arguments, print
# its result lines, then write build/bench/NAME-$series.tsv from the
# BENCH rows of the guest's output LOG.  Fails if the boot failed.
bench_boot() {
	local name=$1 log=$2 tsv
	shift 2
	tsv=build/bench/$name-$series.tsv
	mkdir -p build/bench
	tests/guest/build-progs build/guest-progs
	scripts/build-module "$series" >/dev/null
	tests/vm/run-suite --timeout 3600 "$@" "$series" |
		grep -E '^(PASS|FAIL|SKIP)'
	printf 'metric\tconfig\tstate\trep\tvalue\n' >"$tsv"
	sed -n 's/^BENCH //p' "$log" >>"$tsv"
}

# bench_summary LOG: the SUMMARY rows (medians) with their header.
bench_summary() {
	printf 'metric\tconfig\toff\ton\ton/off\n'
	sed -n 's/^SUMMARY //p' "$1"
}

# bench_pairs LOG: the PAIRS rows (per-repetition ratios) with their header.
bench_pairs() {
	printf 'metric\tconfig\tn\tmedian\tmin\tmax\t(on/off per repetition)\n'
	sed -n 's/^PAIRS //p' "$1"
}

# bench_cost LOG: bench-overhead's COST rows (what a redirected call
# adds), CALLS rows and FIXCOST rows (the same, each fix loaded alone),
# with their headers; nothing when there are none.
bench_cost() {
	grep -q '^COST ' "$1" || return 0
	printf 'config\tns/op off\tadded ns/op\tredirected calls/op\tadded ns/call\n'
	sed -n 's/^COST //p' "$1"
	printf 'config\tredirected function\tcalls/op (no module)\n'
	sed -n 's/^CALLS //p' "$1"
	grep -q '^FIXCOST ' "$1" || return 0
	printf 'fix (loaded alone)\tadded ns/op churn-t1\tits calls/op\tadded ns/call\tits functions\n'
	sed -n 's/^FIXCOST //p' "$1"
	grep -q '^REDIRECT ' "$1" || return 0
	printf 'one redirected call (redirect: mlock2 ONFAULT, populate_drain alone)\tadded ns/call median\tmin\tmax\tn\n'
	sed -n 's/^REDIRECT /redirect\t/p' "$1"
}
