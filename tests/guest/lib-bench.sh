# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-bench.sh - the row format and the off/on summary shared
# by the benchmarks (bench-*.sh).  Source it after lib.sh:
#
#	bench_row METRIC CONFIG off|on REP VALUE	# one measurement
#	bench_summary ROWS_FILE				# medians and on/off
#
# bench_row prints "BENCH <metric>\t<config>\t<state>\t<rep>\t<value>".
# bench_summary reads such lines and prints, sorted, one line per
# (metric, config):
#	SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
# with "-" for a state that was not measured and for a ratio that cannot
# be taken (one state missing, or an off median of 0).

bench_row() { printf 'BENCH %s\t%s\t%s\t%s\t%s\n' "$@"; }

bench_summary() {
	sed -n 's/^BENCH //p' "$1" | awk -F'\t' '
	{ k = $1 "\t" $2 "\t" $3; v[k, ++n[k]] = $5; mc[$1 "\t" $2] = 1 }
	END {
		for (k in n) {
			c = n[k]
			for (i = 1; i <= c; i++) a[i] = v[k, i]
			for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
				if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
			med[k] = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
		}
		for (m in mc) {
			off = ((m "\toff") in med) ? med[m "\toff"] : "-"
			on = ((m "\ton") in med) ? med[m "\ton"] : "-"
			r = (off != "-" && on != "-" && off + 0) ? sprintf("%.3f", on / off) : "-"
			printf "SUMMARY %s\t%s\t%s\t%s\n", m, off, on, r
		}
	}' | sort
}
