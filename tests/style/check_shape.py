#!/usr/bin/env python3
"""The shape the code keeps (docs/ARCHITECTURE.md, "Small parts"):

- no function of harness/, reports/ or lock_impls/ is longer than 100 lines,
  counted from the line of its opening brace to its closing one;
- Boost.Fiber is reached only through the fiber facade, harness/core/fibers.*.

usage: check_shape.py PROJECT_DIR   (prints each offence; status 1 if any)
"""
import pathlib
import re
import sys

LIMIT = 100
FOLDERS = ("harness", "reports", "lock_impls")
NOT_A_FUNCTION = re.compile(
    r"\b(if|for|while|switch|catch|namespace|class|struct|union|enum|do|else|try)\b|=\s*$|"
    r"^\s*$|\[[^\]]*\]\s*(\([^)]*\))?[^)]*$")


def code_of(text):
    """The text with comments, string and character literals blanked, lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end + len(m.group(1)) + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path):
    """(first line, length, signature) of each outermost function body over LIMIT."""
    code = code_of(path.read_text())
    found, stack, head, line = [], [], "", 1
    for c in code:
        if c == "{":
            is_function = (not any(kind == "function" for kind, _, _ in stack) and ")" in head
                           and not NOT_A_FUNCTION.search(head.split(")")[0] + ")"))
            stack.append(("function" if is_function else "block", line, head.strip()))
            head = ""
        elif c == "}":
            if stack:
                kind, start, signature = stack.pop()
                if kind == "function" and line - start + 1 > LIMIT:
                    found.append((start, line - start + 1, " ".join(signature.split())[:80]))
            head = ""
        elif c == ";":
            head = ""
        else:
            head += c
        if c == "\n":
            line += 1
    return found


def main(project):
    project = pathlib.Path(project)
    offences = []
    for folder in FOLDERS:
        for path in sorted((project / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h") or "libraries" in path.parts:
                continue
            name = path.relative_to(project)
            for start, length, signature in long_functions(path):
                offences.append(f"{name}:{start}: {length} lines (limit {LIMIT}): {signature}")
            if re.search(r"boost/fiber|boost::fibers", path.read_text()) and \
                    not str(name).startswith("harness/core/fibers."):
                offences.append(f"{name}: uses Boost.Fiber directly (harness/core/fibers.h is "
                                "the only door)")
    for offence in offences:
        print(offence)
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
