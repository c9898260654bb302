#!/usr/bin/env python3
"""Checks the CI and Kubernetes examples under examples/ci without running them:
each file parses as YAML, every `locklab` command in it names a subcommand
and flags that `locklab SUBCOMMAND --help` lists, and the shard counts agree
(the matrix or completions, --shard I/N, and the directories merged).

usage: check_examples.py LOCKLAB EXAMPLES_DIR"""
import re
import subprocess
import sys
from pathlib import Path

import yaml


def strings(node):
    """Every string in a parsed YAML document, depth first."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def locklab_commands(text):
    """(arguments, the command's text) of each `locklab …` in a shell command line."""
    for segment in re.split(r"\|\||&&|;|\|", text):
        tokens = segment.split()
        for i, token in enumerate(tokens):
            if token == "locklab" or token.endswith("/locklab"):
                yield tokens[i + 1:], segment
                break


def main():
    locklab, examples = sys.argv[1], Path(sys.argv[2])
    problems, help_of, checked = [], {}, 0
    files = sorted(examples.glob("*.y*ml"))
    if not files:
        problems.append(f"{examples}: no examples found")
    for file in files:
        try:
            documents = [d for d in yaml.safe_load_all(file.read_text()) if d is not None]
        except yaml.YAMLError as e:
            problems.append(f"{file}: not YAML: {e}")
            continue
        shard_counts, merged_dirs = set(), []
        for document in documents:
            for text in strings(document):
                for args, segment in locklab_commands(text):
                    if not args:
                        problems.append(f"{file}: `locklab` without a subcommand in: {text}")
                        continue
                    sub = args[0]
                    if sub not in help_of:
                        run = subprocess.run([locklab, sub, "--help"], capture_output=True, text=True)
                        help_of[sub] = run.stdout if run.returncode == 0 else None
                    if help_of[sub] is None:
                        problems.append(f"{file}: `locklab {sub}` is not a command")
                        continue
                    for flag in (a.split("=")[0] for a in args[1:] if a.startswith("--")):
                        if not re.search(r"(^|[\s,])" + re.escape(flag) + r"\b", help_of[sub]):
                            problems.append(f"{file}: `locklab {sub}` has no flag {flag}")
                    # The N of --shard I/N, whatever shell or CI expression gives I.
                    shard_counts.update(re.findall(r"--shard\s+\S.*?/(\d+)\b", segment))
                    if sub == "merge":
                        dirs = []
                        for a in args[1:]:
                            if a.startswith("--"):
                                break
                            dirs.append(a)
                        merged_dirs.append(dirs)
                    checked += 1
        declared = set()
        for document in documents:
            if isinstance(document, dict):
                spec = document.get("spec") or {}
                if "completions" in spec and spec.get("completionMode") == "Indexed":
                    declared.add(str(spec["completions"]))
                for job in (document.get("jobs") or {}).values():
                    matrix = ((job or {}).get("strategy") or {}).get("matrix") or {}
                    if "shard" in matrix:
                        declared.add(str(len(matrix["shard"])))
        for dirs in merged_dirs:
            declared.add(str(len(dirs)))
        counts = shard_counts | declared
        if len(counts) > 1:
            problems.append(f"{file}: shard counts disagree: {sorted(counts)}")
        if not shard_counts or not merged_dirs:
            problems.append(f"{file}: expected sharded `locklab suite` runs and a `locklab merge`")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(files)} examples, {checked} locklab commands checked")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
