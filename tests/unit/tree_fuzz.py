#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Random fake sysfs and /proc contents against a sanitizer build of mmfixctl.

usage: tree_fuzz.py BINARY WORKDIR COUNT SEED

Where argv_fuzz.py varies the arguments over one well-formed tree, this
varies the trees: every file mmfixctl reads (version, kernel, each fix's
enabled/applicable/patched/reason/counters, the livepatch's enabled/transition/
signal, the lock statistics, and /proc/PID/task/TID/{patch_state,comm,
stat,stack} through MMFIXCTL_PROC_ROOT) gets random contents (empty,
binary, huge, numbers out of range, no newline), or is missing, a
directory, a FIFO or a symlink.  Each run then does one of status,
enable, disable, transition (optionally --signal/--revert), unload
(MMFIXCTL_FAKE_DELETE, short timeout), stats (optionally --reset) or
watch, text or JSON.  Checks that every run exits 0, 1 or 2 in time,
that no sanitizer reported anything, and that -j output parses as JSON.
Prints the first failures and "N runs, N failed"; exits 1 on failure.
"""
import json
import os
import random
import shutil
import subprocess
import sys

SANITIZER_MARKS = (b"AddressSanitizer", b"LeakSanitizer",
                   b"UndefinedBehaviorSanitizer", b"runtime error:")
FIXES = ["populate_drain", "anon_fault", "khugepaged_scan", "zz_newer"]




def json_values(out, stream):
    """The JSON values in out: exactly one, or with stream (watch, one
    object per interval) one or more, each of them an object."""
    text = out.decode()
    dec = json.JSONDecoder()
    values, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        value, pos = dec.raw_decode(text, pos)
        values.append(value)
    if not values or (len(values) > 1 and not stream):
        raise ValueError("%d JSON values" % len(values))
    if stream and not all(isinstance(v, dict) for v in values):
        raise ValueError("a watch value is not an object")
    return values

def exit_ok(p):
    """0, 1 or 2; 3 to 7 only from status, which then says the state."""
    if p.returncode in (0, 1, 2):
        return True
    return 3 <= p.returncode <= 7 and (p.stdout.startswith(b"state:") or
                                       b'"state":' in p.stdout)

def rbytes(rng, lo, hi):
    return bytes(rng.randrange(0, 256) for _ in range(rng.randint(lo, hi)))


def content(rng, kind):
    """Plausible or hostile contents for a file of the given kind."""
    r = rng.random()
    if r < 0.35:
        good = {
            "bool": rng.choice([b"0\n", b"1\n", b"0", b"1"]),
            "u64": str(rng.choice([0, 1, 7, 2**63, 2**64 - 1])).encode()
            + b"\n",
            "text": b"populate_vma_page_range() drains only VM_LOCKED\n",
            "state": rng.choice([b"-1\n", b"0\n", b"1\n"]),
            "stat": b"4243 (a) b) D 1 2 3\n",
            "stack": b"[<0>] handle_userfault+0x1d5/0x5e0\n"
                     b"[<0>] __mm_populate+0xe1/0x1a0\n",
            "hist": rng.choice([b"", b"0 3\n512 100\n",
                                b"9223372036854775808 1\n"]),
        }
        return good[kind]
    if r < 0.45:
        return b""
    if r < 0.60:
        return rng.choice([b"2\n", b"-1\n", b"18446744073709551616\n",
                           b" 1\n", b"1\n\n", b"0x1", b"\n", b"1 2\n",
                           b"(", b")", b"[<0>]", b"[<", b"] \n"])
    if r < 0.85:
        return rbytes(rng, 1, 200)
    if r < 0.95:
        return (rng.choice([b"1", b"x", b"\n", b"[<0>] f\n"])
                * rng.randint(4000, 40000))
    return rbytes(rng, 4090, 9000)


def put(rng, path, kind):
    """A regular file most of the time; sometimes none, a dir, a FIFO or
    a symlink."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        return
    r = rng.random()
    if r < 0.06:
        return
    if r < 0.08:
        os.makedirs(path, exist_ok=True)
        return
    if r < 0.10:
        os.mkfifo(path)
        return
    if r < 0.12:
        os.symlink(rng.choice(["/dev/zero", "/nonexistent", path]), path)
        return
    with open(path, "wb") as f:
        f.write(content(rng, kind))


def make_stats(rng, st):
    """The lock statistics files read by stats and watch."""
    os.makedirs(st)
    put(rng, os.path.join(st, "enabled"), "bool")
    put(rng, os.path.join(st, "reset"), "bool")
    for cls in ("lru_lock", "mmap_lock/read", "mmap_lock/write"):
        for f in ("acquisitions", "failed", "contended", "wait_ns",
                  "wait_max_ns", "holds", "hold_ns", "hold_max_ns"):
            put(rng, os.path.join(st, cls, f), "u64")
        for f in ("wait_hist", "hold_hist"):
            put(rng, os.path.join(st, cls, f), "hist")
    for f in ("acquisitions", "contended", "wait_ns", "hold_ns"):
        put(rng, os.path.join(st, "lru_lock", "node0", f), "u64")
    put(rng, os.path.join(st, "lru_lock", "unmatched"), "u64")
    put(rng, os.path.join(st, "mmap_lock", "untracked"), "u64")
    for w in ("hold", "wait"):
        for f, kind in (("ns", "u64"), ("pid", "u64"), ("tid", "u64"),
                        ("comm", "text"), ("mode", "text")):
            put(rng, os.path.join(st, "mmap_lock", "worst_%s_%s" % (w, f)),
                kind)


def make_tree(rng, root, proc):
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(proc, ignore_errors=True)
    m = os.path.join(root, "kernel", "mmfix")
    if rng.random() < 0.9:
        os.makedirs(m)
        put(rng, os.path.join(m, "version"), "text")
        put(rng, os.path.join(m, "kernel"), "text")
        for fix in rng.sample(FIXES, rng.randint(0, len(FIXES))):
            d = os.path.join(m, "fixes", fix)
            os.makedirs(d)
            put(rng, os.path.join(d, "enabled"), "bool")
            put(rng, os.path.join(d, "applicable"), "bool")
            put(rng, os.path.join(d, "patched"), "bool")
            put(rng, os.path.join(d, "reason"), "text")
            for c in range(rng.randint(0, 3)):
                put(rng, os.path.join(d, rng.choice(
                    ["drained", "skipped", "c%d" % c, ".hidden", "x" * 70])),
                    "u64")
        if rng.random() < 0.7:
            make_stats(rng, os.path.join(m, "stats"))
    if rng.random() < 0.8:
        lp = os.path.join(root, "kernel", "livepatch", "mmfix")
        os.makedirs(lp)
        put(rng, os.path.join(lp, "enabled"), "bool")
        put(rng, os.path.join(lp, "transition"), "bool")
        if rng.random() < 0.3:
            put(rng, os.path.join(lp, "signal"), "bool")
    os.makedirs(proc)
    for _ in range(rng.randint(0, 6)):
        pid = rng.choice(["1", "4242", "99999999999", "self", "0x10",
                          str(rng.randint(2, 40000))])
        for _ in range(rng.randint(1, 3)):
            tid = rng.choice([pid, str(rng.randint(2, 40000)), "abc"])
            t = os.path.join(proc, pid, "task", tid)
            os.makedirs(t, exist_ok=True)
            put(rng, os.path.join(t, "patch_state"), "state")
            put(rng, os.path.join(t, "comm"), "text")
            put(rng, os.path.join(t, "stat"), "stat")
            put(rng, os.path.join(t, "stack"), "stack")


def command(rng):
    fix = rng.choice(FIXES + ["", "../x"])
    args = rng.choice([
        ["status"], [], ["enable", fix], ["disable", fix], ["transition"],
        ["transition", "--signal"], ["transition", "--revert",
                                     "--timeout", "1"],
        ["unload", "--timeout", "1"], ["stats"], ["stats", "--reset"],
        ["watch", "--count", "2", "0.1"],
    ])
    if rng.random() < 0.5:
        args = [rng.choice(["-j", "-p"])] + args
    return args


def main():
    binary, workdir, count, seed = sys.argv[1:5]
    rng = random.Random(int(seed))
    root = os.path.join(workdir, "sys")
    proc = os.path.join(workdir, "proc")
    failed = 0
    env = dict(os.environ,
               MMFIXCTL_SYSFS_ROOT=root,
               MMFIXCTL_PROC_ROOT=proc,
               MMFIXCTL_FAKE_DELETE="1",
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87")
    for i in range(int(count)):
        make_tree(rng, root, proc)
        argv = [binary] + command(rng)
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
            elif argv[1:2] in (["-j"], ["-p"]):
                try:
                    json_values(p.stdout, "watch" in argv)
                except ValueError:
                    why = "stdout is not valid JSON"
        if why:
            failed += 1
            if failed <= 3:
                print("run %d: %s: argv %r" % (i, why, argv[1:]))
                if why != "timed out":
                    print(p.stdout.decode(errors="replace")[:1000])
                    print(p.stderr.decode(errors="replace")[:2000])
    print("%s runs, %d failed" % (count, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
