#!/usr/bin/env python3
"""The checks of check_libraries.py that read a pause-longer-than-lease
cell's runs, on hand-made runs: each passes what a complete history shows
and fails what it cannot show."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_libraries  # noqa: E402

LIBRARY = "some-lock"


def acquire_ok(index, value):
    return {"index": index, "time_ns": index, "process": "c2", "type": "ok", "f": "acquire",
            "lock": "L", "value": value}


def overlap(timing_only, because):
    return {"kind": "mutual-exclusion", "class": "unclassified", "events": [1, 2],
            "overlap": {"unclassified_because": because, "timing_only": timing_only,
                        "explanation": "unclassified: …"}}


class CheckDated(unittest.TestCase):
    def run_check(self, events, violations):
        """check_dated over one run of LIBRARY with `events` as its history
        and `violations` as its check's; True when it passed."""
        with tempfile.TemporaryDirectory() as directory:
            story = os.path.join(directory, "pause-longer-than-lease")
            os.makedirs(os.path.join(story, LIBRARY))
            with open(os.path.join(story, LIBRARY, "history.jsonl"), "w") as out:
                out.writelines(json.dumps(event) + "\n" for event in events)
            run = {"algorithm": LIBRARY, "history": f"{LIBRARY}/history.jsonl",
                   "check": {"violations": violations}}
            with open(os.path.join(story, "results.json"), "w") as out:
                json.dump({"runs": [run]}, out)
            cell = {"results": "pause-longer-than-lease/results.json"}
            try:
                check_libraries.check_dated(directory, cell, LIBRARY)
            except SystemExit:
                return False
            return True

    def test_a_dated_history_with_a_grant_window_passes(self):
        self.assertTrue(self.run_check([acquire_ok(0, {"attempt_ns": 5})],
                                       [overlap(True, "grant-window")]))

    def test_an_undated_winning_try_fails(self):
        self.assertFalse(self.run_check([acquire_ok(0, {"attempt_ns": 5}), acquire_ok(1, {})], []))

    def test_unrecorded_renewals_fail(self):
        self.assertFalse(self.run_check([acquire_ok(0, {"attempt_ns": 5, "renews": True})], []))
        self.assertTrue(self.run_check(
            [acquire_ok(0, {"attempt_ns": 5, "renews": True, "renewals_recorded": True})], []))

    def test_an_overlap_unclassified_for_want_of_data_fails(self):
        self.assertFalse(self.run_check([acquire_ok(0, {"attempt_ns": 5})],
                                        [overlap(False, "no-lease")]))


if __name__ == "__main__":
    unittest.main()
