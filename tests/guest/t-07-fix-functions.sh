# SPDX-License-Identifier: GPL-2.0
# fixes/<fix>/functions names exactly what the livepatch core patched:
# together the fixes' lists are the function directories under
# /sys/kernel/livepatch/mmfix/vmlinux/ (NAME,SYMPOS), a fix that does
# not apply lists nothing, and mmfixctl status shows each list.
# Sourced by /init after lib.sh.

t_begin fix-functions
mmfix_require_ko fix-functions-load || return 0
if ! mmfix_load; then
	t_fail fix-functions-load "$MMFIX_ERR"
	return 0
fi

listed=$(cat /sys/kernel/mmfix/fixes/*/functions | sort)
patched=$(ls "$MMFIX_KLP/vmlinux" | sed -n 's/,[0-9]*$//p' | sort)
t_check fix-functions-are-the-patched-ones test "$listed" = "$patched" ||
	echo "fixes list [$(echo $listed)], livepatch has [$(echo $patched)]"

bad=
for d in /sys/kernel/mmfix/fixes/*; do
	fns=$(cat "$d/functions")	# sysfs sizes say nothing: read it
	if [ "$(cat "$d/applicable")" = 1 ]; then
		[ -n "$fns" ] || bad="$bad ${d##*/}(empty)"
	else
		[ -z "$fns" ] || bad="$bad ${d##*/}(lists $(echo $fns))"
	fi
done
t_check fix-functions-empty-exactly-when-not-applicable test -z "$bad" ||
	echo "wrong:$bad"

if command -v mmfixctl >/dev/null; then
	mmfixctl status >/tmp/t07.status 2>&1
	missing=
	for f in $listed; do
		grep -qw -- "$f" /tmp/t07.status || missing="$missing $f"
	done
	t_check fix-functions-in-mmfixctl-status test -z "$missing" ||
		{ echo "status lacks:$missing"; cat /tmp/t07.status; }
fi
mmfix_unload || t_fail fix-functions-unload "$MMFIX_ERR"
