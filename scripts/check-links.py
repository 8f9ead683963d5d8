#!/usr/bin/env python3
"""scripts/check-links.py: every relative link in the project's Markdown resolves.

    python3 scripts/check-links.py [FILE.md ...]

Default files: README.md, docs/*.md, CONTRIBUTING.md, bench/README.md. A link
`[text](target)` whose target is not a URL must name a file or folder that exists
(relative to the Markdown file), and a `#anchor` (alone, or after a `.md` path) must be
the anchor of one of that file's headings as GitHub makes it: lower case, everything but
letters, digits, `_`, `-` and spaces dropped, spaces turned into `-`, `-1`, `-2`... added
to repeats. Code blocks and code spans are not read. Exits 1 and names each broken link.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["README.md", "docs/*.md", "CONTRIBUTING.md", "bench/README.md"]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text):
    """(line number, line) for each line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading):
    """The anchor GitHub gives a heading's text (before repeats are numbered)."""
    text = LINK.sub(lambda m: m.group(1), heading)
    text = CODE_SPAN.sub(lambda m: m.group(2), text)
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = "".join(c for c in text if c.isalnum() or c in "_- ")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """Every heading anchor of a Markdown file."""
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check(path):
    """The broken links of one file, as messages."""
    broken = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        line = CODE_SPAN.sub("", line)
        for m in LINK.finditer(line):
            target = m.group(2)
            if not target or EXTERNAL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: ({target})"
            if not dest.exists():
                broken.append(f"{where}: no such file {file_part}")
            elif anchor:
                if dest.suffix != ".md" or dest.is_dir():
                    broken.append(f"{where}: an anchor into a file that is not Markdown")
                elif anchor not in anchors(dest):
                    broken.append(f"{where}: {dest.relative_to(ROOT)} has no heading #{anchor}")
    return broken


def main(args):
    patterns = args or DEFAULT
    files = []
    for pattern in patterns:
        matched = sorted(ROOT.glob(pattern)) if not Path(pattern).is_absolute() else [Path(pattern)]
        if not matched:
            print(f"no file matches {pattern}")
            return 1
        files.extend(p.resolve() for p in matched)
    broken = []
    links = 0
    for path in files:
        broken.extend(check(path))
        links += sum(
            1
            for _, line in prose_lines(path.read_text(encoding="utf-8"))
            for m in LINK.finditer(CODE_SPAN.sub("", line))
            if m.group(2) and not EXTERNAL.match(m.group(2))
        )
    for message in broken:
        print(message)
    print(f"{len(files)} files, {links} relative links, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
