# SPDX-License-Identifier: GPL-2.0
# mmfix.service's helper (contrib/systemd/mmfix-load, installed as
# /usr/libexec/mmfix/mmfix-load) run as systemd runs it: "start" loads
# mmfix with kmod's modprobe (options from /etc/modprobe.d) and waits for
# the transition; it fails with the reason when the module is not built
# for this kernel or the kernel refuses it, leaving nothing loaded;
# "stop" unloads through mmfixctl; both are fine when there is nothing to
# do.  Runs when the initramfs carries the helper, kmod and a depmod'ed
# /lib/modules (tests/host/deb puts the package's files in).
# fixes: populate_drain

t_begin mmfix-service
svc=/usr/libexec/mmfix/mmfix-load
if [ ! -x "$svc" ] || [ ! -x /bin/kmod ] ||
   [ ! -f "/lib/modules/$(uname -r)/modules.dep.bin" ]; then
	t_skip mmfix-service "no mmfix-load, kmod or modules.dep in this initramfs"
	return 0
fi
mkdir -p /tmp/kmod
ln -sf /bin/kmod /tmp/kmod/modprobe
ln -sf /bin/kmod /tmp/kmod/modinfo
# busybox sh prefers its own applets to PATH: name kmod's by path.
export MMFIXCTL=/bin/mmfixctl MODPROBE=/tmp/kmod/modprobe MODINFO=/tmp/kmod/modinfo
mmfix_unload || t_fail mmfix-service-unload-first "$MMFIX_ERR"
ko=$(/tmp/kmod/modinfo -n mmfix 2>/dev/null)

nothing_loaded() {
	[ ! -d /sys/module/mmfix ] && [ ! -d /sys/kernel/mmfix ]
}

mark=$(kmsg_mark)
out=$("$svc" start 2>&1)
rc=$?
t_check service-start-loads-mmfix-and-finishes-transition \
	sh -c "[ $rc = 0 ] && [ \"\$(cat /sys/kernel/livepatch/mmfix/transition)\" = 0 ] &&
	       [ \"\$(cat /sys/kernel/livepatch/mmfix/enabled)\" = 1 ]" ||
	echo "start: exit $rc: $out"
t_check service-start-shows-status sh -c 'echo "$1" | grep -q populate_drain' sh "$out" ||
	echo "start printed: $out"
t_check service-start-when-loaded-succeeds "$svc" start
out=$("$svc" stop 2>&1)
rc=$?
t_check service-stop-unloads-through-mmfixctl sh -c "[ $rc = 0 ] && [ ! -d /sys/module/mmfix ]" ||
	echo "stop: exit $rc: $out"
t_check service-stop-when-not-loaded-succeeds "$svc" stop
t_check service-start-stop-no-warnings dmesg_clean_since "$mark"

# Not built for this kernel: no module file where modules.dep points.
if [ -n "$ko" ] && mv "$ko" "$ko.away"; then
	out=$("$svc" start 2>&1)
	rc=$?
	mv "$ko.away" "$ko"
	t_check service-start-fails-not-built-for-this-kernel \
		sh -c "[ $rc = 1 ] && echo \"\$1\" | grep -q 'not built for this kernel'" sh "$out" ||
		echo "start without module: exit $rc: $out"
	t_check service-not-built-leaves-nothing-loaded nothing_loaded
else
	t_fail service-start-fails-not-built-for-this-kernel "modinfo finds no mmfix file ($ko)"
fi

# Refused by the kernel (here: an enable= the module rejects); the
# module's own log line is in the message.
conf=/etc/modprobe.d/mmfix.conf
cp "$conf" /tmp/mmfix.conf.saved 2>/dev/null || : >/tmp/mmfix.conf.saved
echo 'options mmfix enable=no_such_fix' >"$conf"
out=$("$svc" start 2>&1)
rc=$?
cp /tmp/mmfix.conf.saved "$conf"
t_check service-start-fails-refused-with-kernel-reason \
	sh -c "[ $rc = 1 ] && echo \"\$1\" | grep -q 'refused:.*unknown fix' " sh "$out" ||
	echo "start with a bad option: exit $rc: $out"
t_check service-refused-leaves-nothing-loaded nothing_loaded
