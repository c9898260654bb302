"""Reads a JUnit XML file with a standard XML parser and prints its
structure as JSON, so the C++ tests check what a CI system would read.
A file that is not well-formed XML exits 1 with the parser's message."""
import json
import sys
import xml.dom.minidom


def problem(case, tag):
    found = case.getElementsByTagName(tag)
    if not found:
        return None
    node = found[0]
    return {
        "message": node.getAttribute("message"),
        "type": node.getAttribute("type"),
        "text": "".join(n.data for n in node.childNodes if n.nodeType == n.TEXT_NODE),
    }


def main(path):
    try:
        document = xml.dom.minidom.parse(path)
    except Exception as error:  # the parser's own exception types vary
        print(f"{path}: not well-formed XML: {error}", file=sys.stderr)
        return 1
    root = document.documentElement
    out = {"root": root.tagName, "suites": []}
    for key in ("name", "tests", "failures", "errors", "skipped", "time"):
        out[key] = root.getAttribute(key)
    for suite in root.getElementsByTagName("testsuite"):
        entry = {key: suite.getAttribute(key)
                 for key in ("name", "tests", "failures", "errors", "skipped", "time")}
        entry["properties"] = {p.getAttribute("name"): p.getAttribute("value")
                               for p in suite.getElementsByTagName("property")}
        entry["cases"] = []
        for case in suite.getElementsByTagName("testcase"):
            outs = case.getElementsByTagName("system-out")
            skipped = case.getElementsByTagName("skipped")
            entry["cases"].append({
                "classname": case.getAttribute("classname"),
                "name": case.getAttribute("name"),
                "time": case.getAttribute("time"),
                "failure": problem(case, "failure"),
                "error": problem(case, "error"),
                "skipped": skipped[0].getAttribute("message") if skipped else None,
                "system_out": "".join(n.data for n in outs[0].childNodes) if outs else None,
            })
        out["suites"].append(entry)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
