# SPDX-License-Identifier: GPL-2.0
# Permissions: every writable file under /sys/kernel/mmfix is owned by
# root with no group or world write bit; an unprivileged user (uid/gid
# 65534, no groups, via asuser) can read the state and run mmfixctl
# status, but every write fails with EACCES and changes nothing, mmfixctl
# enable/disable/unload/transition --revert refuse with exit 1 and say
# root is needed, and the module can neither be removed nor loaded.
# Sourced by /init after lib.sh.

. /tests/lib-reliability.sh

NOBODY="asuser 65534 65534"

# state: every readable file's content, to compare before/after.
state() {
	local f
	for f in $(find "$MMFIX_SYS" -type f -perm /444 | sort); do
		case $f in
		# counters move on their own; switches and text must not
		*/fixes/*/enabled|*/fixes/*/applicable|*/fixes/*/reason|*/stats/enabled|*/version|*/kernel)
			echo "$f $(cat "$f")" ;;
		esac
	done
	echo "klp $(cat "$MMFIX_KLP/enabled") $(cat "$MMFIX_KLP/transition")"
}

t_begin permissions
rel_require permissions || return 0
mmfix_require_ko permissions || return 0
if ! mmfix_load; then
	t_fail permissions-load "$MMFIX_ERR"
	return 0
fi
# one fix on, so that "disable" has something to change
first=$(rel_applicable_fixes | head -n 1)
[ -z "$first" ] || echo 1 >"$MMFIX_SYS/fixes/$first/enabled"

writable=$(rel_writable_files)
nfixes=$(rel_fixes | wc -l)
bad_mode=$(find "$MMFIX_SYS" \( -perm /022 -o ! -user 0 \) -print)
[ -z "$bad_mode" ] || ls -l $bad_mode
t_check writable-files-root-only-no-group-or-world-write test -z "$bad_mode"
t_check unprivileged-user-is-really-unprivileged sh -c \
	"test \"\$($NOBODY id -u)\" = 65534 && ! $NOBODY sh -c 'echo x >/proc/sys/vm/drop_caches' 2>/dev/null"

before=$(state)
# reads work
t_check unprivileged-can-read-every-readable-file $NOBODY sh -c \
	"for f in \$(find $MMFIX_SYS -type f -perm /444); do cat \$f >/dev/null || exit 1; done"
out=$($NOBODY mmfixctl status 2>&1); rc=$?
echo "$out"
t_check unprivileged-mmfixctl-status-works test "$rc" = 0 -a -n "$(echo "$out" | grep '^fix ')"

# writes fail with EACCES (sh reports "Permission denied")
denied=0 nwritable=0
for f in $writable; do
	nwritable=$((nwritable + 1))
	for v in 0 1; do
		msg=$($NOBODY sh -c "echo $v >$f" 2>&1) && { echo "ACCEPTED: $v > $f"; continue; }
		case $msg in *"Permission denied"*) denied=$((denied + 1)) ;; *) echo "$f: $msg" ;; esac
	done
done
t_check unprivileged-writes-all-fail-eacces test "$denied" = $((nwritable * 2))

# mmfixctl refuses and says why
ctl_refuses() {	# ARGS...: exit 1 and "root is needed"
	local out rc
	out=$($NOBODY mmfixctl "$@" 2>&1); rc=$?
	echo "mmfixctl $*: exit $rc: $out"
	[ "$rc" = 1 ] && echo "$out" | grep -q 'root is needed'
}
fixes_refused=0
for fx in $(rel_fixes); do
	ctl_refuses enable "$fx" && ctl_refuses disable "$fx" && fixes_refused=$((fixes_refused + 1))
done
t_check unprivileged-mmfixctl-enable-disable-refused-clearly test "$fixes_refused" = "$nfixes"
t_check unprivileged-mmfixctl-unload-refused-clearly ctl_refuses unload
t_check unprivileged-mmfixctl-transition-revert-refused-clearly ctl_refuses transition --revert
t_check unprivileged-cannot-rmmod sh -c "! $NOBODY rmmod mmfix 2>/dev/null && test -d /sys/module/mmfix"
after=$(state)
t_check unprivileged-changed-nothing test "$before" = "$after" ||
	printf 'before:\n%s\nafter:\n%s\n' "$before" "$after"

mmfix_unload || t_fail permissions-unload "$MMFIX_ERR"
t_check unprivileged-cannot-insmod sh -c "! $NOBODY insmod $MMFIX_KO 2>/dev/null && test ! -e /sys/module/mmfix"

rel_report permissions writable_files=$nwritable \
	bad_modes=$(printf '%s' "$bad_mode" | grep -c .) \
	unprivileged_writes=$((nwritable * 2)) refused_eacces=$denied \
	mmfixctl_fix_refusals=$fixes_refused fixes=$nfixes
