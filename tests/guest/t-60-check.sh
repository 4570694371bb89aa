# SPDX-License-Identifier: GPL-2.0
# mmfixctl check on the running kernel's own BTF (/sys/kernel/btf/vmlinux):
# the answers expected for this series (check_expect, which
# tests/host/check also uses on the BTF extracted from the same kernel
# image), then, with mmfix loaded, the fixes check says apply are exactly
# the ones the module marks applicable.
# fixes: populate_drain anon_fault unmap_drain lru_add_free_dead khugepaged_scan

# check_expect SERIES: lines "mmfixctl check" must print on the Debian
# build of SERIES (facts: docs/kernels.md, KERNEL-FACTS).
check_expect() {
	case $1 in
	6.1) cat <<-EOF
		issue memcg_vmstats_percpu: not affected
		  vmstats_percpu:      offset 1808, cacheline 28
		  memory_events[]:     offset 1544, size 72 (9 elements), cachelines 24-25
		issue vma_refcnt_cacheline: not affected
		  vm_refcnt:           absent
		  __vm_anon_pgoff_hi:  absent
		  populate_vma_page_range    out of line
		  folio_add_new_anon_rmap    inlined or absent
		  unmap_region               out of line
		  khugepaged                 out of line
		  khugepaged_scan_mm_slot    inlined or absent
		  collapse_scan_mm_slot      inlined or absent
		fix populate_drain: applies
		fix anon_fault: does not apply
		fix unmap_drain: applies
		fix lru_add_free_dead: applies
		fix khugepaged_scan: applies
		EOF
		;;
	6.12) cat <<-EOF
		issue memcg_vmstats_percpu: not affected
		  vmstats_percpu:      offset 1352, cacheline 21
		  memory_events[]:     offset 1160, size 72 (9 elements), cachelines 18-19
		issue vma_refcnt_cacheline: not affected
		  vm_refcnt:           absent
		  __vm_anon_pgoff_hi:  absent
		  populate_vma_page_range    out of line
		  folio_add_new_anon_rmap    out of line
		  vms_complete_munmap_vmas   out of line
		  khugepaged                 out of line
		  khugepaged_scan_mm_slot    inlined or absent
		  collapse_scan_mm_slot      inlined or absent
		fix populate_drain: applies
		fix anon_fault: does not apply
		fix unmap_drain: applies
		fix lru_add_free_dead: applies
		fix khugepaged_scan: applies
		EOF
		;;
	7.2) cat <<-EOF
		issue memcg_vmstats_percpu: not affected
		  vmstats_percpu:      offset 1280, cacheline 20
		  memory_events[]:     offset 1048, size 80 (10 elements), cachelines 16-17
		issue vma_refcnt_cacheline: not affected
		  vm_refcnt:           offset 128, cacheline 2
		  __vm_anon_pgoff_hi:  absent
		  populate_vma_page_range    out of line
		  folio_add_new_anon_rmap    out of line
		  khugepaged                 out of line
		  khugepaged_scan_mm_slot    inlined or absent
		  collapse_scan_mm_slot      inlined or absent
		fix populate_drain: applies
		fix anon_fault: does not apply
		fix unmap_drain: does not apply
		fix lru_add_free_dead: does not apply
		fix khugepaged_scan: applies
		EOF
		;;
	7.3) cat <<-EOF
		issue memcg_vmstats_percpu: not affected
		  vmstats_percpu:      offset 1152, cacheline 18
		  memory_events[]:     offset 960, size 80 (10 elements), cachelines 15-16
		issue vma_refcnt_cacheline: affected
		  vm_refcnt:           offset 128, cacheline 2
		  __vm_anon_pgoff_hi:  offset 132, cacheline 2
		  populate_vma_page_range    out of line
		  folio_add_new_anon_rmap    out of line
		  khugepaged                 out of line
		  khugepaged_scan_mm_slot    inlined or absent
		  collapse_scan_mm_slot      inlined or absent
		fix populate_drain: applies
		fix anon_fault: applies
		fix unmap_drain: does not apply
		fix lru_add_free_dead: does not apply
		fix khugepaged_scan: applies
		EOF
		;;
	esac
}

# check_missing OUTPUT EXPECTED: the expected lines OUTPUT lacks.
check_missing() {
	printf '%s\n' "$2" | while IFS= read -r line; do
		printf '%s\n' "$1" | grep -qFx -- "$line" || echo "[$line]"
	done
}

t_begin check
want=$(check_expect "$SERIES")
if [ -z "$want" ]; then
	t_skip check "no expected answers for series $SERIES"
	return 0
fi
if ! command -v mmfixctl >/dev/null; then
	t_skip check "no mmfixctl in this initramfs"
	return 0
fi
t_check btf-exposed test -r /sys/kernel/btf/vmlinux

mmfixctl check >/tmp/check.out 2>&1
rc=$?
out=$(cat /tmp/check.out)
cat /tmp/check.out
t_check check-exits-0 test "$rc" = 0
version=$(mmfixctl --version | cut -d' ' -f2)
t_check check-names-running-kernel-supported grep -qFx \
	"kernel:   $(uname -r), series $SERIES, supported by mmfix $version" /tmp/check.out
# The running kernel is the build scripts/setup fetched, which the
# suite verified before booting it (tests/run-all).
t_check check-says-running-build-is-verified grep -qE \
	'^build:    Debian [^ ]+, verified build$' /tmp/check.out
missing=$(check_missing "$out" "$want")
t_check check-answers-expected-for-$SERIES test -z "$missing" ||
	{ echo "missing:"; echo "$missing"; }
# /sys/kernel/btf/vmlinux is world-readable: no root needed.  (The
# initramfs has no passwd file, which busybox su needs, and its root
# directory is mode 0700.)
grep -q '^nobody:' /etc/passwd 2>/dev/null ||
	echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
chmod 755 /
su -s /bin/sh nobody -c 'id -u; mmfixctl check' >/tmp/check.nobody 2>&1
t_check check-ran-as-uid-65534 test "$(head -n 1 /tmp/check.nobody)" = 65534
sed -i 1d /tmp/check.nobody
t_check check-works-unprivileged cmp /tmp/check.out /tmp/check.nobody ||
	cat /tmp/check.nobody

# A build verified here without one fix (mmfix-verify-build's line with
# that fix in its WITHOUT field): the fix still applies, with the
# module's reason, and the build line names it.  A /proc/version and a
# local list of our own (MMFIXCTL_PROC_ROOT, MMFIXCTL_LOCAL_LIST: tests
# only) make this kernel a Debian build the shipped list does not have.
mkdir -p /tmp/partial
sed 's/ Debian \([^ ]*\)/ Debian \1+partial/' /proc/version >/tmp/partial/version
dver=$(sed -n 's/.* Debian \([^ ]*+partial\) .*/\1/p' /tmp/partial/version)
printf 'build\t%s\t%s\t%s\tkhugepaged_scan\t2026-12-06\tt-60\t%s\n' \
	"$SERIES" "$dver" "$(uname -r)" "$version" >/tmp/partial/list
MMFIXCTL_PROC_ROOT=/tmp/partial MMFIXCTL_LOCAL_LIST=/tmp/partial/list \
	mmfixctl check >/tmp/check.partial 2>&1
t_check check-partial-build-names-fix-left-out grep -qFx \
	"build:    Debian $dver, verified build except khugepaged_scan (applies, not verified on this build: copied code differs)" \
	/tmp/check.partial || cat /tmp/check.partial
partial_reason() {
	grep -A1 -Fx 'fix khugepaged_scan: applies' /tmp/check.partial |
		grep -qFx '  applies, not verified on this build: its copied code differs (module/verified-builds)'
}
t_check check-partial-build-fix-applies-with-reason partial_reason
t_check check-partial-build-other-fixes-unchanged test \
	"$(grep -v khugepaged_scan /tmp/check.partial | grep -A1 '^fix ')" = \
	"$(grep -v khugepaged_scan /tmp/check.out | grep -A1 '^fix ')"

# The module's own verdicts: /sys/kernel/mmfix/fixes/<fix>/applicable.
mmfix_require_ko check-agrees-with-module || return 0
if ! mmfix_load; then
	t_fail check-agrees-with-module "$MMFIX_ERR"
	return 0
fi
bad=
for d in /sys/kernel/mmfix/fixes/*; do
	f=${d##*/}
	case $(cat "$d/applicable") in
	1) line="fix $f: applies" ;;
	*) line="fix $f: does not apply" ;;
	esac
	printf '%s\n' "$out" | grep -qFx "$line" || bad="$bad $f(module: $(cat "$d/applicable"))"
done
t_check check-agrees-with-module-applicable test -z "$bad" || echo "disagree:$bad"
mmfixctl check >/tmp/check.loaded 2>&1
t_check check-same-with-module-loaded cmp /tmp/check.out /tmp/check.loaded
mmfix_unload || t_fail check-unload "$MMFIX_ERR"
