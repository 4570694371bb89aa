# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/lib.sh - helpers for mmfix tests inside the QEMU guest
# (busybox ash).  /init sources this before each /tests/t-*.sh.
#
# Result protocol: one line per result on the results port (/dev/ttyS1),
# never mixed with kernel messages (those go to the console, ttyS0):
#
#	PASS <series>/<name>
#	FAIL <series>/<name>: <reason>
#	SKIP <series>/<name>: <reason>
#	# <comment>          (informational, ignored by the host)
#	DONE                 (written once by /init after the last test)
#
# Names say what the test proves, e.g. "populate-drain-skips-lru-drain".
# Example test:
#
#	t_check livepatch-sysfs-exists test -d /sys/kernel/livepatch
#	mmfix_require_ko populate-drain || return 0
#	mmfix_load || { t_fail populate-drain-load "$MMFIX_ERR"; return 0; }
#	...
#	mmfix_unload || t_fail populate-drain-unload "$MMFIX_ERR"

MMFIX_RESULTS_DEV=${MMFIX_RESULTS_DEV:-/dev/ttyS1}
MMFIX_RESULTS_LOG=${MMFIX_RESULTS_LOG:-/tmp/mmfix-results}
MMFIX_MOD=mmfix
MMFIX_KO=${MMFIX_KO:-/lib/mmfix/mmfix.ko}
MMFIX_KLP=/sys/kernel/livepatch/$MMFIX_MOD
# TCG is slow; a livepatch transition normally takes ~1 s here
MMFIX_TRANSITION_TIMEOUT=${MMFIX_TRANSITION_TIMEOUT:-60}
MMFIX_ERR=

### kernel command line ########################################################

# cmdline_get KEY: value of mmfixtest.KEY= on the kernel command line.
# (Prefix "mmfixtest." and not "mmfix.": modprobe would hand mmfix.* to
# the mmfix module as module parameters.)
cmdline_get() {
	local w
	for w in $(cat /proc/cmdline); do
		case $w in
		"mmfixtest.$1="*) echo "${w#*=}"; return 0 ;;
		esac
	done
	return 1
}

# The series under test: from the command line, else what mkinitrd
# recorded, else derived from uname -r (6.1.0-57-amd64 -> 6.1).
series_detect() {
	cmdline_get series && return 0
	if [ -s /etc/mmfix/series ]; then
		cat /etc/mmfix/series
		return 0
	fi
	uname -r | cut -d. -f1,2
}

SERIES=${SERIES:-$(series_detect)}
# Expected kernel release (e.g. 7.3.4+deb13-amd64), empty if unknown.
MMFIX_RELEASE=${MMFIX_RELEASE:-$(cmdline_get release ||
	cat /etc/mmfix/release 2>/dev/null || true)}

### results ####################################################################

# Send one line to the results port.  Each write opens and closes the
# port: the last close waits until the UART has sent everything, so no
# result is lost when the guest powers off right after.
t_emit() {
	if [ -c "$MMFIX_RESULTS_DEV" ]; then
		echo "$*" >>"$MMFIX_RESULTS_DEV"
	fi
	echo "$*" >>"$MMFIX_RESULTS_LOG"
	echo "$*"  # into the test output log too, for context
}

# t_begin GROUP: mark the start of a group of checks in the test log and
# the kernel log (names of results are not changed by it).
t_begin() {
	T_GROUP=$1
	echo "--- $1"
	kmsg_marker "begin-$1"
}

t_pass() { t_emit "PASS $SERIES/$1"; }
t_fail() { t_emit "FAIL $SERIES/$1: ${2:-failed}"; }
t_skip() { t_emit "SKIP $SERIES/$1: ${2:-skipped}"; }
t_comment() { t_emit "# $*"; }

# t_check NAME CMD...: PASS when CMD succeeds, else FAIL with its status
# and the last line it printed.
t_check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ -z "$out" ] || printf '%s\n' "$out"
	if [ $rc -eq 0 ]; then
		t_pass "$name"
	else
		t_fail "$name" "'$*' exited $rc${out:+: $(printf '%s\n' "$out" | tail -n 1)}"
	fi
	return $rc
}

### bounded waits ##############################################################

# Centiseconds since boot, from /proc/uptime ("12.34 ...").
now_cs() {
	local up frac
	read -r up _ </proc/uptime
	frac=${up#*.}
	echo $(( ${up%.*} * 100 + ${frac#0} ))
}

# loop_until TIMEOUT_S CMD...: retry CMD every 0.1 s until it succeeds
# (return 0) or TIMEOUT_S seconds pass (return 1).  Like
# tools/testing/selftests/livepatch/functions.sh, never wait unbounded.
loop_until() {
	local deadline
	deadline=$(( $(now_cs) + $1 * 100 ))
	shift
	while ! "$@"; do
		[ "$(now_cs)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
	return 0
}

file_is() { [ -e "$1" ] && [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

### kernel log #################################################################

# kmsg_marker TAG: put a marker line into the kernel log.
kmsg_marker() { echo "mmfix-test: marker $1" >/dev/kmsg; }

# kmsg_mark [TAG]: like kmsg_marker, but prints the tag, making one up
# when none is given:  mark=$(kmsg_mark); ...; kmsg_since "$mark"
kmsg_mark() {
	local tag=${1:-m$(now_cs)-$$}
	kmsg_marker "$tag"
	echo "$tag"
}

# dmesg_since TAG: kernel log lines after the last marker TAG, with the
# "[ time]" prefix removed so they can be compared to a transcript.
dmesg_since() {
	dmesg | awk -v m="mmfix-test: marker $1" '
		(i = index($0, m)) && i == length($0) - length(m) + 1 { buf = ""; seen = 1; next }
		seen { buf = buf $0 "\n" }
		END { printf "%s", buf }' | sed 's/^\[[ 0-9.]*\] //'
}

kmsg_since() { dmesg_since "$@"; }

# kmsg_has_marker TAG: is marker TAG in the kernel log?
kmsg_has_marker() {
	dmesg | awk -v m="mmfix-test: marker $1" '
		(i = index($0, m)) && i == length($0) - length(m) + 1 { seen = 1 }
		END { exit !seen }'
}

# dmesg_clean_since TAG: fail (and print them) if lines after marker TAG
# show a warning, oops or stack trace, or if the marker is not in the
# kernel log at all (never written, or overwritten): then nothing after
# it can be known to be clean.
MMFIX_BAD_KLOG='Call Trace|WARNING:|BUG:|Oops|Kernel panic|general protection|livepatch: .*(failed|error)'
dmesg_clean_since() {
	local bad
	if ! kmsg_has_marker "$1"; then
		echo "no marker '$1' in the kernel log"
		return 1
	fi
	bad=$(dmesg_since "$1" | grep -E "$MMFIX_BAD_KLOG")
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad"
	return 1
}

# summary_ratios_ok METRIC CONFIG...: a benchmark's output (lib-bench.sh
# SUMMARY lines) on stdin has, for every CONFIG, a "SUMMARY METRIC" row
# whose off and on medians are positive numbers and whose on/off ratio
# is theirs (to its 3 decimals); prints what is missing or wrong.
summary_ratios_ok() {
	local m=$1
	shift
	awk -F'\t' -v m="SUMMARY $m" -v want="$*" '
		function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
		BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) need[w[i]] = 1 }
		$1 == m && ($2 in need) {
			d = num($3) && num($4) && num($5) ? $4 / $3 - $5 : 1
			if (d < 0) d = -d
			if (d <= 0.0006 + 0.001 * $5) ok[$2] = 1
			else print "bad row: " $0
		}
		END {
			for (c in need) if (!(c in ok)) { print "no good " m " row for " c; bad = 1 }
			exit bad
		}'
}

# Helpers that also work as commands, e.g. in "sh -c '...'" or as the
# CMD of loop_until; /init installs a wrapper for each in /usr/local/bin.
MMFIX_LIB_COMMANDS="t_pass t_fail t_skip t_comment t_check loop_until file_is
	kmsg_marker kmsg_mark kmsg_has_marker kmsg_since dmesg_since dmesg_clean_since
	summary_ratios_ok
	mmfix_loaded mmfix_load mmfix_unload"

### the mmfix livepatch module #################################################

# mmfix_require_ko NAME: SKIP NAME (and return 1) if this initrd carries
# no module, e.g. a harness-only smoke run.
mmfix_require_ko() {
	[ -f "$MMFIX_KO" ] && return 0
	t_skip "$1" "no $MMFIX_KO in this initrd"
	return 1
}

mmfix_loaded() { [ -d "/sys/module/$MMFIX_MOD" ]; }

# mmfix_load [PARAM=VALUE...]: insmod and wait until the patch is enabled
# and its transition has finished.  On failure sets MMFIX_ERR, returns 1.
mmfix_load() {
	local out
	MMFIX_ERR=
	if mmfix_loaded; then
		MMFIX_ERR="mmfix already loaded"
		return 1
	fi
	if ! out=$(insmod "$MMFIX_KO" "$@" 2>&1); then
		MMFIX_ERR="insmod $MMFIX_KO $*: ${out:-failed}"
		return 1
	fi
	if ! loop_until 10 test -d "$MMFIX_KLP"; then
		MMFIX_ERR="$MMFIX_KLP did not appear after insmod"
		return 1
	fi
	if ! loop_until "$MMFIX_TRANSITION_TIMEOUT" file_is "$MMFIX_KLP/transition" 0; then
		MMFIX_ERR="patch transition did not finish in ${MMFIX_TRANSITION_TIMEOUT}s"
		return 1
	fi
	if ! file_is "$MMFIX_KLP/enabled" 1; then
		MMFIX_ERR="patch not enabled after load (enabled=$(cat "$MMFIX_KLP/enabled"))"
		return 1
	fi
	return 0
}

# ctl NAME ARGS...: mmfixctl ARGS, killed after CTL_TIMEOUT s (180);
# its output (stdout and stderr) in /tmp/ctl-NAME and echoed indented,
# its exit status in CTL_RC.
ctl() {
	local name=$1
	shift
	timeout -s KILL "${CTL_TIMEOUT:-180}" mmfixctl "$@" >"/tmp/ctl-$name" 2>&1
	CTL_RC=$?
	# awk, not sed: the arguments may hold a path's slashes
	awk -v p="  [mmfixctl $*] " '{ print p $0 }' "/tmp/ctl-$name"
}

# mmfix_unload: disable the patch, wait for the transition, for the klp
# sysfs dir to go and for the module refcount to drop, then rmmod.
# Nothing loaded is not an error.  On failure sets MMFIX_ERR, returns 1.
mmfix_unload() {
	local out
	MMFIX_ERR=
	if [ -d "$MMFIX_KLP" ]; then
		# a transition still running (e.g. a load that timed out) must
		# end before the patch can be disabled
		if ! loop_until "$MMFIX_TRANSITION_TIMEOUT" file_is "$MMFIX_KLP/transition" 0; then
			MMFIX_ERR="earlier patch transition still running after ${MMFIX_TRANSITION_TIMEOUT}s"
			return 1
		fi
		if file_is "$MMFIX_KLP/enabled" 1 &&
		   ! echo 0 >"$MMFIX_KLP/enabled"; then
			MMFIX_ERR="writing 0 to $MMFIX_KLP/enabled failed"
			return 1
		fi
		if ! loop_until "$MMFIX_TRANSITION_TIMEOUT" sh -c \
			"[ ! -d '$MMFIX_KLP' ] || [ \"\$(cat '$MMFIX_KLP/transition' 2>/dev/null)\" = 0 ]"; then
			MMFIX_ERR="unpatch transition did not finish in ${MMFIX_TRANSITION_TIMEOUT}s"
			return 1
		fi
		if ! loop_until 10 test ! -d "$MMFIX_KLP"; then
			MMFIX_ERR="$MMFIX_KLP still present after disabling"
			return 1
		fi
	fi
	mmfix_loaded || return 0
	if ! loop_until 10 file_is "/sys/module/$MMFIX_MOD/refcnt" 0; then
		MMFIX_ERR="module refcnt stuck at $(cat "/sys/module/$MMFIX_MOD/refcnt")"
		return 1
	fi
	if ! loop_until 10 sh -c "rmmod $MMFIX_MOD 2>/dev/null || ! [ -d /sys/module/$MMFIX_MOD ]"; then
		out=$(rmmod "$MMFIX_MOD" 2>&1)
		MMFIX_ERR="rmmod $MMFIX_MOD failed: $out"
		return 1
	fi
	return 0
}

# lp_remove NAME: disable livepatch NAME (a test livepatch of
# tests/guest/kmod; reversing its transition if one still runs), wait
# for its directory to go, rmmod it.  Nothing loaded is no error.
lp_remove() {
	local d=/sys/kernel/livepatch/$1
	if [ -d "$d" ]; then
		file_is "$d/enabled" 1 && echo 0 >"$d/enabled"
		loop_until 30 test ! -d "$d" || return 1
	fi
	[ -d "/sys/module/$1" ] || return 0
	loop_until 10 sh -c "rmmod $1 2>/dev/null || ! test -d /sys/module/$1"
}

# stats_wait_unhooked [S]: after stats/enabled 0, wait (up to S s, 10)
# until mmfix's lock statistics probes are gone: they stay for a second
# after switching off, in case the switch comes back on.  The lru_lock
# ftrace callbacks go last.
stats_wait_unhooked() {
	local i=0 n=$(( ${1:-10} * 10 ))
	while grep -q '\[mmfix\]' /sys/kernel/tracing/enabled_functions 2>/dev/null; do
		[ $i -lt $n ] || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# write_fails FILE VALUE GLOB: writing VALUE to FILE fails with an
# error message matching GLOB.
write_fails() {
	local out
	if out=$(sh -c "echo $2 >$1" 2>&1); then
		echo "echo $2 >$1 succeeded"
		return 1
	fi
	# shellcheck disable=SC2254
	case $out in
	$3) return 0 ;;
	*) echo "echo $2 >$1: $out"; return 1 ;;
	esac
}
