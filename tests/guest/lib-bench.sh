# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib-bench.sh - the row format and the off/on summary shared
# by the benchmarks (bench-*.sh).  Source it after lib.sh:
#
#	bench_row METRIC CONFIG off|on REP VALUE	# one measurement
#	bench_summary ROWS_FILE				# medians and on/off
#	bench_pairs ROWS_FILE				# on/off per repetition
#
# bench_row prints "BENCH <metric>\t<config>\t<state>\t<rep>\t<value>".
# bench_summary reads such lines and prints, sorted, one line per
# (metric, config):
#	SUMMARY <metric>\t<config>\t<off median>\t<on median>\t<on/off>
# with "-" for a state that was not measured and for a ratio that cannot
# be taken (one state missing, or an off median of 0).
# bench_pairs prints, per (metric, config), the ratio on/off of each
# repetition (the off and on run measured next to each other) as
#	PAIRS <metric>\t<config>\t<n>\t<median>\t<min>\t<max>
#
# Under tests/vm/boot --icount, 6.1 boots with one CPU and /init onlines
# the others before the first test (mmfixtest.online_cpus=1).


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

bench_pairs() {
	sed -n 's/^BENCH //p' "$1" | awk -F'\t' '
	{ v[$1 "\t" $2 "\t" $3 "\t" $4] = $5; mc[$1 "\t" $2] = 1; rep[$4] = 1 }
	END {
		for (m in mc) {
			c = 0
			for (r in rep) {
				off = v[m "\toff\t" r]; on = v[m "\ton\t" r]
				if (off == "" || on == "" || off + 0 == 0)
					continue
				a[++c] = on / off
			}
			if (!c)
				continue
			for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			med = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
			printf "PAIRS %s\t%d\t%.4f\t%.4f\t%.4f\n", m, c, med, a[1], a[c]
		}
	}' | sort
}
