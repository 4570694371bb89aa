# SPDX-License-Identifier: GPL-2.0
# fixes=: the fixes a load patches at all (issue #19).  A fix left out
# must cost nothing: none of its functions is redirected, which the
# kernel's own ftrace accounting shows (tracing/enabled_functions lists
# every function with an ftrace callback; the livepatch's carry the
# IPMODIFY flag).  Checked against a default load first, whose every
# patched function must show there, so the check can fail.
#   load: fixes=populate_drain patches populate_drain's functions only;
#     the others read patched 0 with the reason, list no function and
#     refuse to be switched on; populate_drain works; with it
#     enable=recommended switches on populate_drain only.
#   fixes=recommended patches (and enable=recommended switches on)
#     exactly the recommended set.
#   refusals, each registering nothing: an unknown name, an empty list,
#     enable= naming a fix fixes= leaves out, a list of which nothing
#     applies here.
#   upgrade (mmfix_alt.ko): to a build that leaves out a fix that is on
#     is refused with A unchanged; with it off, "mmfixctl upgrade KO
#     fixes LIST" carries only LIST, and the default upgrade keeps the
#     patched set; "fixes all" patches every fix again.
# Sourced by /init after lib.sh.

KO_NEXT=/lib/mmfix/mmfix_alt.ko
F=/sys/kernel/mmfix/fixes
EF=/sys/kernel/tracing/enabled_functions
NOT_PATCHED='applies here, but not patched: mmfix was loaded with fixes= without it'

t_begin fixes-param
mmfix_require_ko fixes-param || return 0
if [ ! -r "$EF" ]; then
	t_skip fixes-param "no $EF (tracefs not mounted?)"
	return 0
fi
mark=$(kmsg_mark fixes-param)

# redirected FN...: the FNs that have an ftrace callback (one per line)
redirected() {
	local fn
	for fn in "$@"; do
		grep -q "^$fn " "$EF" && echo "$fn"
	done
}

# nothing_registered: no module, no /sys/kernel/mmfix, no livepatch
nothing_registered() {
	! test -d /sys/module/mmfix && ! test -d /sys/kernel/mmfix &&
		! test -d "$MMFIX_KLP"
}

### default load: every applicable fix patched ###############################

if ! mmfix_load; then
	t_fail fixes-param-default-load "$MMFIX_ERR"
	return 0
fi
all_fns= applies= inapplicable=
for d in $F/*; do
	fix=${d##*/}
	if [ "$(cat "$d/applicable")" = 1 ]; then
		applies="$applies $fix"
		all_fns="$all_fns $(cat "$d/functions")"
	else
		inapplicable="$inapplicable $fix"
	fi
done
others_fns=
for fix in $applies; do
	[ "$fix" = populate_drain ] && continue
	others_fns="$others_fns $(cat "$F/$fix/functions")"
done
pd_fns=$(cat "$F/populate_drain/functions")
khs_fns=$(cat "$F/khugepaged_scan/functions")
t_comment "applies:$applies; not here:$inapplicable"
t_check fixes-param-default-patches-every-applicable sh -c \
	"for d in $F/*; do test \"\$(cat \$d/patched)\" = \"\$(cat \$d/applicable)\" || exit 1; done"
# the oracle sees the livepatch's callbacks
t_check fixes-param-default-functions-redirected \
	test "$(redirected $all_fns | wc -l)" = "$(echo $all_fns | wc -w)" ||
	echo "redirected: $(redirected $all_fns | tr '\n' ' ') of $all_fns"
mmfix_unload || t_fail fixes-param-default-unload "$MMFIX_ERR"
t_check fixes-param-unload-redirects-nothing test -z "$(redirected $all_fns)"

### fixes=populate_drain ######################################################

# enable=recommended with fixes=: only the recommended fixes that are
# patched go on (populate_drain is recommended on every series; the
# other recommended ones, left out, stay off and do not fail the load)
if ! mmfix_load fixes=populate_drain enable=recommended; then
	t_fail fixes-param-load-one "$MMFIX_ERR"
	return 0
fi
t_pass fixes-param-load-one
bad= nrec=0
for d in $F/*; do
	want=0
	if [ "$(cat "$d/recommended")" = 1 ]; then
		nrec=$((nrec + 1))
		[ "$(cat "$d/patched")" = 0 ] || want=1
	fi
	file_is "$d/enabled" $want || bad="$bad ${d##*/}=$(cat "$d/enabled")"
done
t_check fixes-param-enable-recommended-switches-on-only-patched-recommended \
	test -z "$bad" -a "$nrec" -ge 2 -a "$(cat $F/populate_drain/recommended)" = 1 ||
	echo "wrong:$bad; $nrec recommended"
klp_fns=$(ls "$MMFIX_KLP/vmlinux" | sed -n 's/,[0-9]*$//p' | sort)
t_check fixes-param-livepatch-has-only-the-fix \
	test "$(echo $klp_fns)" = "$(echo $pd_fns | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" ||
	echo "livepatch: $(echo $klp_fns); populate_drain: $pd_fns"
t_check fixes-param-left-out-not-redirected test -z "$(redirected $others_fns)" ||
	echo "still redirected: $(redirected $others_fns | tr '\n' ' ')"
t_check fixes-param-kept-redirected test -n "$(redirected $pd_fns)"
t_check fixes-param-kept-patched-and-on sh -c \
	"test \$(cat $F/populate_drain/patched) = 1 && test \$(cat $F/populate_drain/enabled) = 1"
bad=
for fix in $applies; do
	[ "$fix" = populate_drain ] && continue
	d=$F/$fix
	file_is "$d/patched" 0 || bad="$bad $fix(patched=$(cat "$d/patched"))"
	file_is "$d/applicable" 1 || bad="$bad $fix(applicable)"
	file_is "$d/reason" "$NOT_PATCHED" || bad="$bad $fix(reason: $(cat "$d/reason"))"
	test -z "$(cat "$d/functions")" || bad="$bad $fix(functions)"
	echo 1 >"$d/enabled" 2>/dev/null && bad="$bad $fix(switched on)"
	file_is "$d/enabled" 0 || bad="$bad $fix(enabled)"
done
t_check fixes-param-left-out-read-not-patched-and-refuse-on test -z "$bad" ||
	echo "wrong:$bad"
s0=$(cat $F/populate_drain/skipped)
populate churn -n 100 >/dev/null 2>&1
t_check fixes-param-kept-fix-works test "$(cat $F/populate_drain/skipped)" -ge "$((s0 + 100))"
if command -v mmfixctl >/dev/null; then
	other=${applies# }
	other=${other%% *}
	[ "$other" = populate_drain ] && other=$(echo $applies | cut -d' ' -f2)
	ctl en-left enable "$other"
	t_check fixes-param-mmfixctl-enable-left-out-refused sh -c \
		"test $CTL_RC != 0 && grep -q 'not patched' /tmp/ctl-en-left &&
		 test \$(cat $F/$other/enabled) = 0"
	ctl st-one -j status
	t_check fixes-param-mmfixctl-status-json-patched sh -c \
		"grep -q '\"patched\":false' /tmp/ctl-st-one && grep -q '\"patched\":true' /tmp/ctl-st-one"
fi

### upgrade #################################################################

if [ -f "$KO_NEXT" ] && command -v mmfixctl >/dev/null &&
   echo "$applies" | grep -qw khugepaged_scan; then
	mmfix_unload || t_fail fixes-param-unload-one "$MMFIX_ERR"
	if ! mmfix_load fixes=populate_drain,khugepaged_scan enable=populate_drain,khugepaged_scan; then
		t_fail fixes-param-upgrade-load-a "$MMFIX_ERR"
	else
		t_check fixes-param-upgrade-dropping-an-on-fix-refused sh -c \
			"! insmod $KO_NEXT upgrade=1 fixes=populate_drain 2>/dev/null &&
			 ! test -d /sys/module/mmfix_alt && ! test -d /sys/kernel/livepatch/mmfix_alt &&
			 test \$(cat /sys/kernel/mmfix/module) = mmfix"
		t_check fixes-param-upgrade-refusal-leaves-a-switchable sh -c \
			"echo 0 >$F/khugepaged_scan/enabled && echo 1 >$F/khugepaged_scan/enabled &&
			 test \$(cat $F/khugepaged_scan/enabled) = 1"
		ctl up-drop-on upgrade "$KO_NEXT" fixes populate_drain
		t_check fixes-param-mmfixctl-upgrade-dropping-an-on-fix-refused sh -c \
			"test $CTL_RC != 0 && ! test -d /sys/module/mmfix_alt &&
			 test \$(cat $F/khugepaged_scan/enabled) = 1"
		echo 0 >$F/khugepaged_scan/enabled
		ctl up-one upgrade "$KO_NEXT" fixes populate_drain
		alt_fns=$(ls /sys/kernel/livepatch/mmfix_alt/vmlinux 2>/dev/null |
			sed -n 's/,[0-9]*$//p' | sort)
		t_check fixes-param-upgrade-to-fewer sh -c \
			"test $CTL_RC = 0 && test \$(cat /sys/kernel/mmfix/module) = mmfix_alt &&
			 test '$(echo $alt_fns)' = '$(echo $pd_fns | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')' &&
			 test \$(cat $F/khugepaged_scan/patched) = 0 &&
			 test \$(cat $F/populate_drain/enabled) = 1" ||
			echo "mmfix_alt patches: $(echo $alt_fns)"
		t_check fixes-param-upgrade-to-fewer-unredirects \
			test -z "$(redirected $khs_fns)"
		# the default upgrade keeps what is patched
		ctl up-keep upgrade "$MMFIX_KO"
		t_check fixes-param-upgrade-keeps-patched-set sh -c \
			"test $CTL_RC = 0 && test \$(cat /sys/kernel/mmfix/module) = mmfix &&
			 test \$(cat $F/khugepaged_scan/patched) = 0 &&
			 test \$(cat $F/populate_drain/patched) = 1"
		ctl up-all upgrade "$KO_NEXT" fixes all
		t_check fixes-param-upgrade-fixes-all sh -c \
			"test $CTL_RC = 0 && test \$(cat /sys/kernel/mmfix/module) = mmfix_alt &&
			 test \$(cat $F/khugepaged_scan/patched) = 1 &&
			 echo 1 >$F/khugepaged_scan/enabled"
		t_check fixes-param-upgrade-fixes-all-redirects \
			test "$(redirected $khs_fns | wc -l)" = "$(echo $khs_fns | wc -w)"
	fi
	ctl unload-up unload
	t_check fixes-param-upgrade-unload sh -c \
		"test $CTL_RC = 0 && ! test -d /sys/module/mmfix_alt && ! test -d /sys/kernel/mmfix"
else
	t_comment "upgrade checks need $KO_NEXT, mmfixctl and khugepaged_scan applying"
fi
mmfix_unload || t_fail fixes-param-unload "$MMFIX_ERR"

### fixes=recommended ########################################################

if ! mmfix_load fixes=recommended enable=recommended; then
	t_fail fixes-param-recommended-load "$MMFIX_ERR"
else
	t_check fixes-param-recommended-patches-the-recommended-set sh -c \
		"for d in $F/*; do
			test \"\$(cat \$d/patched)\" = \"\$(cat \$d/recommended)\" &&
			test \"\$(cat \$d/enabled)\" = \"\$(cat \$d/recommended)\" || exit 1
		 done"
	mmfix_unload || t_fail fixes-param-recommended-unload "$MMFIX_ERR"
fi

### refusals: nothing registered ##############################################

nothing=${inapplicable# }
nothing=${nothing%% *}
for args in "fixes=nosuchfix" "fixes=" "fixes=populate_drain enable=khugepaged_scan" \
	    ${nothing:+"fixes=$nothing"}; do
	name=$(echo "${args:-x}" | sed "s/=\$/=empty/" | tr ' =,' '-_.')
	t_check "fixes-param-refused-$name" sh -c \
		"! insmod $MMFIX_KO $args 2>/dev/null && ! test -d /sys/module/mmfix &&
		 ! test -d /sys/kernel/mmfix && ! test -d $MMFIX_KLP"
done
dmesg_since "$mark" | grep '^mmfix: ' >/tmp/fixes-param.msgs
t_check fixes-param-refusals-say-why sh -c \
	"grep -q \"fixes=: unknown fix 'nosuchfix'\" /tmp/fixes-param.msgs &&
	 grep -q 'fixes=: no fix named' /tmp/fixes-param.msgs &&
	 grep -q 'enable=khugepaged_scan, but fixes= leaves it out' /tmp/fixes-param.msgs" ||
	cat /tmp/fixes-param.msgs
if [ -n "$nothing" ]; then
	t_check fixes-param-nothing-applies-says-why \
		grep -q 'none of the fixes named applies to this kernel' /tmp/fixes-param.msgs
fi
t_check fixes-param-leaves-nothing nothing_registered
dmesg_clean_since "$mark" && t_pass fixes-param-kernel-log-clean ||
	t_fail fixes-param-kernel-log-clean "see .out"
