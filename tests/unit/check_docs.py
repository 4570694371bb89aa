#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that mmfixctl --help, the man page and the bash completion list
the same commands (in the same order) and the same options.

usage: check_docs.py HELP_TEXT_FILE MAN_PAGE COMPLETION_FILE

Commands come from the "Commands:" list of --help, the .TP headers of the
man page's COMMANDS section and $_mmfixctl_commands of the completion;
options from the synopses in --help (command list and "Options:"), the
.TP headers of COMMANDS and OPTIONS, and the completion's option lists.
Prints each disagreement; exits 1 if there is any.
"""
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def from_help(text):
    cmds, opts, section = [], set(), None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        if not line.strip():
            continue
        # A summary too long for its synopsis's line is indented deeper.
        if section == "Commands" and line.startswith(" " * 10):
            continue
        # A synopsis too long for one line goes on, indented, at a "[".
        if section == "Commands" and re.match(r"^ {3,}\[", line):
            opts.update(OPTION.findall(line))
            continue
        # The synopsis column ends at the first run of two spaces.
        head = re.match(r"\s*(\S.*?)(?:\s{2,}|$)", line).group(1)
        if section == "Commands":
            cmds.append(head.split()[0])
            opts.update(OPTION.findall(head))
        elif section == "Options":
            opts.update(OPTION.findall(head))
    return cmds, opts


def deroff(line):
    line = line.replace("\\-", "-")
    line = re.sub(r"\\f[BIRP]", "", line)
    line = re.sub(r"^\.(B|I|BI|BR|IR|RB|RI)\s+", "", line)
    return line.replace('"', "")


def from_man(text):
    cmds, opts, section, lines = [], set(), None, text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif line.startswith(".TP") and i + 1 < len(lines):
            head = deroff(lines[i + 1])
            if section == "COMMANDS":
                cmds.append(head.split()[0])
                opts.update(OPTION.findall(head))
            elif section == "OPTIONS":
                opts.update(OPTION.findall(head))
    return cmds, opts


def from_completion(path):
    # every _mmfixctl_*options list: the global one and each command's
    script = ('source "$1"; echo "$_mmfixctl_commands"; '
              'for v in $(compgen -v _mmfixctl_ | grep "options$"); do '
              'printf "%s " "${!v}"; done; echo')
    out = subprocess.run(["bash", "-c", script, "bash", path], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    return out[0].split(), set(out[1].split())


def main():
    help_path, man_path, comp_path = sys.argv[1:4]
    with open(help_path) as f:
        help_cmds, help_opts = from_help(f.read())
    with open(man_path) as f:
        man_cmds, man_opts = from_man(f.read())
    comp_cmds, comp_opts = from_completion(comp_path)

    bad = []
    if not help_cmds or not help_opts:
        bad.append("could not parse commands/options out of --help")
    for name, cmds, opts in (("man page", man_cmds, man_opts),
                             ("completion", comp_cmds, comp_opts)):
        if cmds != help_cmds:
            bad.append("%s commands %s != --help commands %s"
                       % (name, cmds, help_cmds))
        if opts != help_opts:
            bad.append("%s options differ from --help: extra %s, missing %s"
                       % (name, sorted(opts - help_opts),
                          sorted(help_opts - opts)))
    for b in bad:
        print(b)
    if not bad:
        print("commands %s; options %s" % (" ".join(help_cmds),
                                           " ".join(sorted(help_opts))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
