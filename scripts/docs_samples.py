#!/usr/bin/python3
"""Re-runs the command samples of README.md and docs/*.md and checks that each one's output still has the shape
the page shows.

Usage: /usr/bin/python3 scripts/docs_samples.py [--root DIR] [--ferry PATH] [--min-checked N] [--list] [--update]
                                               [FILE...]

A sample is a fenced block whose first line is `$ build/bin/ferry ...`; each `$ COMMAND` line in it (a trailing
backslash continues it) is run from the project root with bash, and the lines up to the next `$ ` line are what
the page says it prints (stdout and stderr together). The shape is compared, not the figures: every number
becomes `#` (so do sizes with their unit, 1.5 MiB or 884.7K), whitespace and line breaks are ignored (pages wrap
long lines), and a line `...` in the page skips any output. The page's text between two `...` lines must appear
in the output in that order. So a renamed field, a changed message, a line added inside an excerpt or removed
from it fails; another latency does not. In a line of the page, a word `...` stands for any words, and `...` in a
word (`isa sse4.1,...;`) for any middle of it: for what differs between machines.

Skipped, and listed with the reason: a sample preceded by a line `<!-- sample: not checked: WHY -->` (output that
depends on timing order, another machine or a server), a command talking to a server (`--server`, `curl`), and a
command naming a file that does not exist here (a model made by scripts/gen_test_models.py or bench/ before the
test runs, or a file an earlier sample of another page writes). Exit 0 when every checked sample matches and at
least --min-checked were checked; 1 otherwise, printing the first difference of each failing sample.
"""

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?:\s*(?:[KMGT]i?B|B|[KMGT])(?![A-Za-z]))?")
SKIP_MARK = re.compile(r"<!--\s*sample:\s*not checked:\s*(.+?)\s*-->")


def shape_tokens(text):
    """The text as tokens with every number (and size) turned into '#'."""
    return NUMBER.sub("#", text).split()


def find_samples(path):
    """(line number, skip reason or None, [Step]) for every sample block of `path`."""
    lines = open(path, encoding="utf-8").read().split("\n")
    samples = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```") and i + 1 < len(lines) and lines[i + 1].startswith("$ build/bin/ferry"):
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            skip = None
            for k in range(max(0, i - 3), i):
                m = SKIP_MARK.search(lines[k])
                if m:
                    skip = m.group(1)
            samples.append((start + 1, skip, parse_block(lines, start, j)))
            i = j + 1
            continue
        i += 1
    return samples


class Step:
    def __init__(self, command, first):
        self.command = command
        self.expected = []
        self.first = first  # index in the file's lines of the first expected line

    def elided(self):
        return any(line.strip() == "..." or "..." in line.split() for line in self.expected)


def parse_block(lines, start, end):
    steps = []
    k = start
    while k < end:
        line = lines[k]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and k + 1 < end:
                k += 1
                command = command[:-1] + " " + lines[k].strip()
            steps.append(Step(command, k + 1))
        elif steps:
            steps[-1].expected.append(line)
        k += 1
    return steps


def missing_file(command, root):
    """A path the command names that does not exist (an input it reads), or None."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        return None
    writes = {"--plot", "--output-dir", "--profile", "--dump-ir", "--html", "--json-out"}
    # `ferry optimize IN OUT` writes its second positional argument.
    positional = [w for w in words if not w.startswith("-")]
    written = set()
    if len(positional) >= 4 and positional[0].endswith("ferry") and positional[1] == "optimize":
        written.add(positional[3])
    previous = ""
    for w in words:
        value = w.split("=", 1)[1] if "=" in w and not w.startswith("-") else w
        is_input = (previous not in writes and value not in written and "/" in value
                    and re.search(r"\.(onnx|npy|pb|so|json)$", value))
        # `ferry compare --inputs DIR` / `--reference DIR`: a folder the sample reads (not random/zeros/ones).
        is_input = is_input or (previous in ("--inputs", "--reference") and value not in ("random", "zeros", "ones"))
        if is_input and not os.path.exists(os.path.join(root, value)):
            return value
        previous = w
    return None


def chunks(expected):
    """The page's lines split at '...' lines: each chunk's tokens must appear contiguously, in order."""
    out, cur = [], []
    for line in expected:
        if line.strip() == "...":
            out.append(cur)
            cur = []
        else:
            cur += shape_tokens(line)
    out.append(cur)
    return [c for c in out if c]


def chunk_pattern(chunk):
    """A chunk as a regex over the space-joined output tokens: a token `...` stands for any tokens, and a token
    holding `...` (`sse#,...;`) for any token that starts and ends as it does."""
    parts = []
    for t in chunk:
        if t == "...":
            parts.append(r"(?:\S+ )*?")
        elif "..." in t:
            head, tail = t.split("...", 1)
            parts.append(re.escape(head) + r"\S*" + re.escape(tail) + " ")
        else:
            parts.append(re.escape(t) + " ")
    return re.compile("".join(parts))


def first_difference(text, chunk, start):
    """The longest prefix of `chunk` that matches from `start`, and what the output has where it stops."""
    best, at = 0, start
    for k in range(1, len(chunk) + 1):
        m = chunk_pattern(chunk[:k]).search(text, start)
        if not m:
            break
        best, at = k, m.end()
    page = " ".join(chunk[max(0, best - 4):best + 6])
    got = " ".join(text[at:].split()[:6])
    before = " ".join(text[:at].split()[-4:])
    return page, before + " | " + got


def run_step(command, root, ferry):
    cmd = command.replace("build/bin/ferry", shlex.quote(ferry)) if ferry else command
    r = subprocess.run(["bash", "-c", cmd], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    return r.stdout


def compare(output, expected):
    text = " ".join(shape_tokens(output)) + " "
    pos = 0
    for chunk in chunks(expected):
        m = chunk_pattern(chunk).search(text, pos)
        if not m:
            page, got = first_difference(text, chunk, pos)
            return "the page shows ... %s ...\n      the command prints ... %s ..." % (page, got)
        pos = m.end()
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=here)
    parser.add_argument("--ferry", default="", help="the ferry binary to run for build/bin/ferry")
    parser.add_argument("--min-checked", type=int, default=1)
    parser.add_argument("--list", action="store_true", help="list the samples and what would be done, run nothing")
    parser.add_argument("--update", action="store_true",
                        help="write the output of each failing sample that shows its output in full (no '...') "
                             "into its page; the elided ones are listed for a person to fix")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or [os.path.join(args.root, "README.md")] + sorted(glob.glob(os.path.join(args.root, "docs",
                                                                                                  "*.md")))
    # The commands run in a scratch folder holding a link to each top-level entry of the project, so that the
    # files they write (traces, outputs) land there, not in the checkout.
    scratch = tempfile.mkdtemp(prefix="ferry-docs-samples-")
    for entry in os.listdir(args.root):
        if not entry.startswith("."):
            os.symlink(os.path.join(args.root, entry), os.path.join(scratch, entry))
    checked = failed = skipped = updated = 0
    for path in files:
        rel = os.path.relpath(path, args.root)
        replacements = []  # (first line index, count, new lines) for --update
        for line, skip, steps in find_samples(path):
            for step in steps:
                command, expected = step.command, step.expected
                where = "%s:%d: $ %s" % (rel, line, command if len(command) < 100 else command[:97] + "...")
                reason = skip
                if reason is None and re.search(r"--server|\bcurl\b", command):
                    reason = "talks to a server"
                if reason is None:
                    f = missing_file(command, args.root)
                    if f:
                        reason = "no %s here" % f
                if reason is None and not any(e.strip() for e in expected):
                    reason = "the page shows no output"
                if reason:
                    print("skip  %s (%s)" % (where, reason))
                    skipped += 1
                    continue
                if args.list:
                    print("check %s" % where)
                    continue
                output = run_step(command, scratch, args.ferry)
                problem = compare(output, expected)
                checked += 1
                if problem and args.update and not step.elided():
                    replacements.append((step.first, len(expected), output.rstrip("\n").split("\n")))
                    print("updated %s" % where)
                    updated += 1
                elif problem:
                    failed += 1
                    print("FAIL  %s\n      %s" % (where, problem))
                else:
                    print("ok    %s" % where)
        if replacements:
            lines = open(path, encoding="utf-8").read().split("\n")
            for first, count, new in sorted(replacements, reverse=True):
                lines[first:first + count] = new
            open(path, "w", encoding="utf-8").write("\n".join(lines))
    shutil.rmtree(scratch, ignore_errors=True)
    print("%d checked, %d failed, %d skipped%s" % (checked, failed, skipped,
                                                 ", %d updated" % updated if args.update else ""))
    if args.list:
        return 0
    if checked < args.min_checked:
        print("expected at least %d checked samples" % args.min_checked)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
