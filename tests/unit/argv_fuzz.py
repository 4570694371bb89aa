#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Random argument vectors against a sanitizer build of mmfixctl.

usage: argv_fuzz.py BINARY TEMPLATE_TREE WORKDIR COUNT SEED

Each run gets a fresh copy of the fake sysfs tree TEMPLATE_TREE (so enable,
disable and unload act on a loaded module) through MMFIXCTL_SYSFS_ROOT,
with MMFIXCTL_FAKE_DELETE=1 so unload never calls delete_module().  Checks
that every run exits 0, 1 or 2 within the time limit, that no sanitizer
reported anything, and that stdout starting with "{" parses as JSON.
Prints the first few failures and "N runs, N failed"; exits 1 on failure.
"""
import json
import os
import random
import shutil
import subprocess
import sys

SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer",
                   b"UndefinedBehaviorSanitizer", b"runtime error:")

WORDS = [
    b"status", b"st", b"s", b"enable", b"en", b"disable", b"dis", b"unload",
    b"un", b"help", b"h", b"", b"-j", b"-p", b"-jp", b"-pj", b"-h", b"-V",
    b"--json", b"--pretty", b"--js", b"--pre", b"--help", b"--version",
    b"--root", b"--root=", b"--timeout", b"--timeout=1", b"--timeout=0",
    b"--", b"-", b"-x", b"-jx", b"--bogus", b"--root=/nonexistent",
    b"populate_drain", b"anon_fault", b"khugepaged_scan", b"populate",
    b"../../etc", b"populate_drain/../anon_fault", b"0", b"1", b"86400",
    b"86401", b"-1", b"18446744073709551616", b"1e3", b"%s%n%s",
    b"\xff\xfe", b"\x1b[2J",
]



def exit_ok(p):
    """0, 1 or 2; 3 to 7 only from status, which then says the state."""
    if p.returncode in (0, 1, 2):
        return True
    return 3 <= p.returncode <= 7 and (p.stdout.startswith(b"state:") or
                                       b'"state":' in p.stdout)

def random_bytes(rng, lo, hi):
    return bytes(rng.randrange(1, 256) for _ in range(rng.randint(lo, hi)))


def token(rng, root):
    r = rng.random()
    if r < 0.55:
        return rng.choice(WORDS)
    if r < 0.65:
        return rng.choice([root.encode(), b"/nonexistent", b"", b"."])
    if r < 0.90:
        return random_bytes(rng, 0, 40)
    if r < 0.95:
        return b"A" * rng.randint(4096, 120000)
    return random_bytes(rng, 20000, 120000)


def main():
    binary, template, workdir, count, seed = sys.argv[1:6]
    rng = random.Random(int(seed))
    root = os.path.join(workdir, "root")
    failed = 0
    env = dict(os.environ,
               MMFIXCTL_SYSFS_ROOT=root,
               MMFIXCTL_FAKE_DELETE="1",
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87")
    for i in range(int(count)):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(template, root, symlinks=True)
        argv = [binary.encode()] + [token(rng, root)
                                    for _ in range(rng.randint(0, 6))]
        why = None
        try:
            p = subprocess.run(argv, cwd=workdir, env=env, timeout=20,
                               stdin=subprocess.DEVNULL,
                               capture_output=True)
        except subprocess.TimeoutExpired:
            why = "timed out"
        else:
            if not exit_ok(p):
                why = "exit code %d" % p.returncode
            elif any(m in p.stderr for m in SANITIZER_MARKS):
                why = "sanitizer report"
            elif p.stdout.startswith(b"{"):
                try:
                    json.loads(p.stdout)
                except ValueError:
                    why = "stdout is not valid JSON"
        if why:
            failed += 1
            if failed <= 3:
                shown = [a[:60] + (b"..." if len(a) > 60 else b"")
                         for a in argv[1:]]
                print("run %d: %s: argv %r" % (i, why, shown))
                if why != "timed out":
                    print(p.stderr.decode(errors="replace")[:2000])
    print("%s runs, %d failed" % (count, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
