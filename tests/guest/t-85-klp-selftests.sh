# SPDX-License-Identifier: GPL-2.0
#
# t-85-klp-selftests: the kernel's own livepatch selftests as an external
# oracle (issue #30).  Debian's tools/testing/selftests/livepatch of this
# very build and its test_klp_* modules (tests/klp-selftests/build, in
# /opt/klp) run twice: on the stock kernel, then with mmfix loaded and
# every fix it patched switched on.  Each selftest script that passes
# without mmfix must pass with it.
#
# Debian's scripts run unchanged, under a static bash, from their own
# directory (7.x/6.12 insmod test_modules/NAME.ko from there; 6.1
# modprobes by name, so the modules go to /lib/modules/$(uname -r)/klp-selftests
# with a depmod index for the test's time).  What busybox lacks comes from
# /opt/klp/bin (GNU date, stat, comm, procps sysctl, kmod); /bin/stat, which
# functions.sh calls by path, is a bash function calling GNU stat.
#
# mmfixtest.klp=LIST (comma-separated script names without .sh, e.g.
# test-livepatch,test-state) runs only those; "all" runs every test-*.sh
# of the series (make soak: tests/klp-selftests/run).  Without it, the CI
# size of make test: $KLP_CI below, test-state.sh (cumulative patches
# with klp_state, which replace mmfix's) and test-shadow-vars.sh (the
# shadow variable API mmfix uses), 20-110 s of guest time for both runs.
# The others take 20-140 s each per run under TCG on a busy host (6.12's
# test-syscall.sh 138 s, test-callbacks.sh 102 s): make soak only.
#
# Replacement: a selftest loading a replace=1 patch (test_klp_atomic_replace)
# replaces mmfix's patch too.  After each script of the second run the test
# notes whether mmfix's patch was replaced, checks that mmfix then unloads
# (PASS/FAIL klp-<script>-mmfix-unloads-after-replace) and loads it again
# for the next script.  A script that fails with mmfix only because it
# assumes it is the only livepatch (it counts /sys/kernel/livepatch/*) is
# a SKIP that says so, not a pass.

KLP=/opt/klp
KLP_DIR=$KLP/livepatch
# one script's limit: the selftests wait 60 s at most per step, but
# test-ftrace.sh turns the function tracer on for all functions three
# times (~35 s each under TCG): mmfixtest.klp_timeout=600 for it
KLP_TIMEOUT=$(cmdline_get klp_timeout || echo 150)
KLP_SYS=/sys/kernel/livepatch

if [ ! -x "$KLP/bin/bash" ] || [ ! -f "$KLP_DIR/functions.sh" ]; then
	t_skip klp-selftests "no $KLP in this initramfs (tests/klp-selftests/build)"
	return 0
fi
mmfix_require_ko klp-selftests-with-mmfix || return 0

# klp_reset: leave no test_klp_* livepatch or module behind (a script that
# died midway), reversing a transition that does not end.  1 if one stays.
klp_reset() {
	local p m i
	for p in "$KLP_SYS"/test_klp_*; do
		[ -d "$p" ] || continue
		if ! loop_until 30 file_is "$p/transition" 0; then
			echo "klp_reset: ${p##*/} still in transition after 30 s, reversing"
			echo 0 >"$p/enabled" 2>/dev/null
		fi
		file_is "$p/enabled" 1 && echo 0 >"$p/enabled" 2>/dev/null
		loop_until 60 test ! -d "$p" || { echo "klp_reset: ${p##*/} stays"; return 1; }
	done
	for i in 1 2 3; do
		for m in /sys/module/test_klp_*; do
			[ -d "$m" ] || continue
			rmmod "${m##*/}" 2>/dev/null
		done
	done
	for m in /sys/module/test_klp_*; do
		[ -d "$m" ] || continue
		echo "klp_reset: module ${m##*/} stays loaded"
		return 1
	done
	return 0
}

# klp_run SCRIPT RUN: run one selftest script; sets KLP_RC (0 pass, 4
# skip, else fail), KLP_WHY (the line that says why) and KLP_SECS.
klp_run() {
	local s=$1 run=$2 log=/tmp/klp-$2-$1.log start
	start=$(now_cs)
	(cd "$KLP_DIR" && PATH=$KLP/bin:$PATH KDIR=$KLP_DIR \
		timeout -s KILL "$KLP_TIMEOUT" "$KLP/bin/bash" -c \
		'function /bin/stat { stat "$@"; }; . "$0"' "./$s.sh") \
		</dev/null >"$log" 2>&1
	KLP_RC=$?
	KLP_SECS=$(( ($(now_cs) - start) / 100 ))
	echo "----- $s ($run): exit $KLP_RC after $KLP_SECS s"
	cat "$log"
	KLP_WHY=$(grep -m1 -E '^(ERROR|SKIP):|skip all tests' "$log")
	[ -n "$KLP_WHY" ] || KLP_WHY=$(grep -v '^TEST:.* ok$' "$log" | grep -m1 .)
	[ "$KLP_RC" -ne 137 ] || KLP_WHY="killed after $KLP_TIMEOUT s${KLP_WHY:+; $KLP_WHY}"
	KLP_OKS=$(grep -c '^TEST:.* ok$' "$log")
	KLP_WHY=$(echo "$KLP_WHY" | tr -d '\r' | cut -c1-200)
}

# klp_mmfix_on: mmfix loaded, its patch enabled, every patched fix on.
klp_mmfix_on() {
	local f on=
	if ! mmfix_loaded; then
		mmfix_load enable=recommended || return 1
	fi
	if ! file_is "$MMFIX_KLP/enabled" 1; then
		MMFIX_ERR="mmfix loaded but its patch is not enabled"
		return 1
	fi
	for f in /sys/kernel/mmfix/fixes/*; do
		file_is "$f/patched" 1 || continue
		file_is "$f/enabled" 1 || echo 1 >"$f/enabled" 2>/dev/null
		if ! file_is "$f/enabled" 1; then
			MMFIX_ERR="fix ${f##*/} is patched but will not switch on"
			return 1
		fi
		on="$on ${f##*/}"
	done
	KLP_FIXES_ON=${on# }
	[ -n "$on" ] || { MMFIX_ERR="no fix patched"; return 1; }
}

scripts=
KLP_CI=test-shadow-vars,test-state
want=$(cmdline_get klp || echo "$KLP_CI")
for t in "$KLP_DIR"/test-*.sh; do
	t=${t##*/}
	t=${t%.sh}
	case ",$want," in ,all,|*",$t,"*) scripts="$scripts $t" ;; esac
done
[ -n "$scripts" ] || { t_fail klp-selftests "no selftest script matches mmfixtest.klp=$want"; return 0; }
t_comment "klp selftests from $(cat "$KLP/source" 2>/dev/null || echo '?'):$scripts"

other=$(ls "$KLP_SYS" 2>/dev/null)
if [ -n "$other" ]; then
	t_fail klp-selftests-no-livepatch-at-start "already loaded: $other"
	return 0
fi

# 6.1 modprobes the test modules by name
rel=$(uname -r)
made_moddir=
[ -d "/lib/modules/$rel" ] || made_moddir=1
mkdir -p "/lib/modules/$rel/klp-selftests"
cp "$KLP_DIR"/test_modules/*.ko "/lib/modules/$rel/klp-selftests/"
"$KLP/bin/depmod" -a "$rel" 2>&1 | grep -v 'modules.builtin\|modules.order' || true

### run 1: the stock kernel ####################################################
t_begin klp-selftests-without-mmfix
passed=
for s in $scripts; do
	klp_reset >/dev/null
	klp_run "$s" without
	case $KLP_RC in
	0) t_pass "klp-$s-without-mmfix"; passed="$passed $s" ;;
	4) t_skip "klp-$s-without-mmfix" "the selftest skips here: $KLP_WHY" ;;
	*) t_fail "klp-$s-without-mmfix" "stock kernel, exit $KLP_RC after $KLP_OKS ok: $KLP_WHY" ;;
	esac
	t_comment "klp $s without mmfix: exit $KLP_RC, $KLP_OKS tests ok, $KLP_SECS s"
done
klp_reset || t_fail klp-selftests-without-mmfix-cleanup "a test livepatch or module stays (see .out)"

### run 2: mmfix loaded, every patched fix on ##################################
t_begin klp-selftests-with-mmfix
for s in $scripts; do
	klp_reset >/dev/null
	if ! klp_mmfix_on; then
		t_fail "klp-$s-with-mmfix" "mmfix not on before the script: $MMFIX_ERR"
		continue
	fi
	klp_run "$s" with
	# mmfix's state after the script: still enabled, or replaced
	if mmfix_loaded && [ ! -d "$MMFIX_KLP" ]; then
		t_comment "klp $s: mmfix's patch was replaced (atomic replace by a test patch)"
		if command -v mmfixctl >/dev/null; then
			ctl "klp-$s" status
			t_comment "klp $s: mmfixctl status after the replace exits $CTL_RC: $(head -n 1 "/tmp/ctl-klp-$s")"
		fi
		klp_reset >/dev/null
		if mmfix_unload; then
			t_pass "klp-$s-mmfix-unloads-after-replace"
		else
			t_fail "klp-$s-mmfix-unloads-after-replace" "$MMFIX_ERR"
		fi
	elif [ -d "$MMFIX_KLP" ] && ! file_is "$MMFIX_KLP/transition" 0; then
		t_comment "klp $s: mmfix's patch is in transition after the script"
	fi
	case $KLP_RC in
	0) t_pass "klp-$s-with-mmfix" ;;
	4) t_skip "klp-$s-with-mmfix" "the selftest skips with mmfix loaded: $KLP_WHY" ;;
	*)	case " $passed " in
		*" $s "*)
			# The selftest counts /sys/kernel/livepatch/* (7.2+:
			# test-livepatch.sh's atomic replace case): it assumes
			# it is the only livepatch, mmfix is one more
			# or reads its own stack_order (test-sysfs.sh: 1, but
			# mmfix is first on the stack)
			if echo "$KLP_WHY" | grep -q 'Expecting .* listed, found\|stack_order: '; then
				t_skip "klp-$s-with-mmfix" "cannot run beside another livepatch: it assumes it is the only one ($KLP_WHY) after $KLP_OKS ok"
			else
				t_fail "klp-$s-with-mmfix" "passes without mmfix, fails with it: exit $KLP_RC after $KLP_OKS ok: $KLP_WHY"
			fi ;;
		*) t_skip "klp-$s-with-mmfix" "fails without mmfix too (exit $KLP_RC): $KLP_WHY" ;;
		esac ;;
	esac
	t_comment "klp $s with mmfix (fixes on: ${KLP_FIXES_ON:-?}): exit $KLP_RC, $KLP_OKS tests ok, $KLP_SECS s"
done
klp_reset || t_fail klp-selftests-with-mmfix-cleanup "a test livepatch or module stays (see .out)"
if mmfix_unload; then
	t_pass klp-selftests-mmfix-unloads-after
else
	t_fail klp-selftests-mmfix-unloads-after "$MMFIX_ERR"
fi

if [ -n "$made_moddir" ]; then
	rm -rf "/lib/modules/$rel"
else
	rm -rf "/lib/modules/$rel/klp-selftests"
	"$KLP/bin/depmod" -a "$rel" >/dev/null 2>&1
fi
