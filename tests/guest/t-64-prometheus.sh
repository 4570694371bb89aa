# SPDX-License-Identifier: GPL-2.0
# mmfixctl export --textfile with Debian's prometheus-node-exporter: the
# node_exporter textfile collector serves the mmfix metrics over HTTP
# (guest loopback only) and they follow populate_drain being switched
# and the counters moving, and serve no hold metric while stats/hold_time
# is 0.  Needs the exporter in the initramfs:
#   tests/vm/run-suite --tests 't-64-*' \
#       --file /usr/bin/prometheus-node-exporter:/bin/ 7.3
# With /bin/promtool too (--file /usr/bin/promtool:/bin/) the export of
# the real module, histograms included, goes through "promtool check
# metrics".
# fixes: populate_drain

NE=/bin/prometheus-node-exporter
PD=/sys/kernel/mmfix/fixes/populate_drain
TF=/tmp/textfile
t_begin prometheus
if [ ! -x $NE ]; then
	t_skip node-exporter-serves-mmfix "no $NE in this initramfs"
	return 0
fi
if ! command -v mmfixctl >/dev/null || ! command -v populate >/dev/null; then
	t_skip node-exporter-serves-mmfix "no mmfixctl or populate in this initramfs"
	return 0
fi
mmfix_require_ko node-exporter-serves-mmfix || return 0
if ! mmfix_load; then
	t_fail prometheus-load "$MMFIX_ERR"
	return 0
fi

ip link set lo up
mkdir -p $TF
# scrape: node_exporter's /metrics; metric NAME{LABELS}: its value as an
# integer (Go writes large values as 1.2e+06)
scrape() { wget -q -O /tmp/metrics http://127.0.0.1:9100/metrics 2>/dev/null; }
metric() {
	awk -v m="$1" '$1 == m { printf "%.0f\n", $2; found = 1 }
		END { if (!found) print "none" }' /tmp/metrics
}
# sum of a metric over all its label sets (the lru_lock nodes)
metric_sum() {
	awk -v m="$1" 'index($1, m "{") == 1 || $1 == m { s += $2; found = 1 }
		END { if (found) printf "%.0f\n", s; else print "none" }' /tmp/metrics
}
export_scrape() { mmfixctl export --textfile $TF >/dev/null && scrape; }

mmfixctl stats on >/dev/null
echo 0 >$PD/enabled
mmfixctl export --textfile $TF
$NE --web.listen-address=127.0.0.1:9100 --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory=$TF \
	>/tmp/node-exporter.log 2>&1 &
ne=$!
if ! loop_until 30 scrape; then
	t_fail node-exporter-serves-mmfix "no answer on 127.0.0.1:9100: $(tail -n 3 /tmp/node-exporter.log)"
	kill $ne
	mmfix_unload
	return 0
fi
t_check node-exporter-serves-mmfix-up test "$(metric mmfix_up)" = 1
t_check node-exporter-textfile-parsed-without-error \
	test "$(metric node_textfile_scrape_error)" = 0 ||
	grep -i mmfix /tmp/node-exporter.log
t_check node-exporter-serves-state-active \
	test "$(metric 'mmfix_state{state="active"}')" = 1
t_check node-exporter-serves-fix-off \
	test "$(metric 'mmfix_fix_enabled{fix="populate_drain"}')" = 0

# fix off: every populate drains; lru_lock acquisitions move
d0=$(metric mmfix_populate_drain_drained_total)
a0=$(metric_sum mmfix_lru_lock_acquisitions_total)
populate churn -n 300 >/dev/null
export_scrape
d1=$(metric mmfix_populate_drain_drained_total)
a1=$(metric_sum mmfix_lru_lock_acquisitions_total)
t_check node-exporter-drained-counter-moves-with-fix-off \
	test "$((d1 - d0))" -ge 300 || echo "drained $d0 -> $d1"
t_check node-exporter-lru-lock-acquisitions-move \
	test "$a1" != none -a "$a1" -gt "$a0" || echo "acquisitions $a0 -> $a1"

# hold_time 0 (the default): no hold metric at all, not a misleading 0;
# with hold_time 1 the lru_lock holds are served and move
t_check node-exporter-no-hold-metrics-with-hold-time-0 \
	test "$(metric mmfix_stats_hold_time_enabled)" = 0 -a \
	"$(metric mmfix_lru_lock_hold_seconds_count)" = none -a \
	"$(metric_sum mmfix_lru_lock_node_hold_seconds_total)" = none -a \
	"$(metric_sum mmfix_mmap_lock_hold_max_seconds)" = none
# the wait histogram: cumulative buckets up to +Inf = _count
t_check node-exporter-serves-wait-histogram \
	test "$(metric 'mmfix_lru_lock_wait_seconds_bucket{le="+Inf"}')" != none -a \
	"$(metric 'mmfix_lru_lock_wait_seconds_bucket{le="+Inf"}')" = \
	"$(metric mmfix_lru_lock_wait_seconds_count)"
mmfixctl stats on hold_time >/dev/null
populate churn -n 300 >/dev/null
export_scrape
t_check node-exporter-lru-holds-served-with-hold-time-1 \
	test "$(metric mmfix_stats_hold_time_enabled)" = 1 -a \
	"$(metric mmfix_lru_lock_hold_seconds_count)" != none -a \
	"$(metric mmfix_lru_lock_hold_seconds_count)" != 0
if command -v promtool >/dev/null; then
	mmfixctl export >/tmp/export.prom
	t_check promtool-accepts-export-of-real-module \
		promtool check metrics </tmp/export.prom ||
		promtool check metrics </tmp/export.prom 2>&1 | head -n 5
fi
mmfixctl stats off hold_time >/dev/null

# fix on: populates skip the drain, the switch shows at the next scrape
mmfixctl enable populate_drain >/dev/null
s0=$(metric mmfix_populate_drain_skipped_total)
populate churn -n 300 >/dev/null
export_scrape
s1=$(metric mmfix_populate_drain_skipped_total)
t_check node-exporter-serves-fix-on \
	test "$(metric 'mmfix_fix_enabled{fix="populate_drain"}')" = 1
t_check node-exporter-skipped-counter-moves-with-fix-on \
	test "$((s1 - s0))" -ge 300 || echo "skipped $s0 -> $s1"
t_comment "prometheus: drained +$((d1 - d0)) (off), skipped +$((s1 - s0)) (on), lru_lock acquisitions +$((a1 - a0))"

# after the unload the same file says so
kill $ne 2>/dev/null
wait $ne 2>/dev/null
mmfix_unload || t_fail prometheus-unload "$MMFIX_ERR"
mmfixctl export --textfile $TF >/dev/null
t_check export-after-unload-says-not-loaded grep -qx 'mmfix_up 0' $TF/mmfix.prom
