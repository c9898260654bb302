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


def passes(check, events, violations):
    """`check(directory, cell)` over one run of LIBRARY with `events` as its
    history and `violations` as its check's; True when it passed."""
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
            check(directory, cell)
        except SystemExit:
            return False
        return True


class CheckDated(unittest.TestCase):
    def run_check(self, events, violations):
        return passes(lambda d, cell: check_libraries.check_dated(d, cell, LIBRARY),
                      events, violations)

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


def event(index, process, f, kind="ok"):
    return {"index": index, "time_ns": index, "process": process, "type": kind, "f": f,
            "lock": "L"}


def broken_lease(earlier, later, processes):
    return {"kind": "mutual-exclusion", "class": "broken-lease", "events": [earlier, later],
            "processes": processes, "explanation": "c2 acquired L while c3 held it"}


class CheckNoBrokenLease(unittest.TestCase):
    # c3 holds the lock from event 2; c1's late release at events 3-4 deletes
    # c3's key with an owner-blind unlock, and c2 is granted at event 5.
    HISTORY = [event(0, "c1", "acquire"), event(1, "c1", "release", "invoke"),
               event(2, "c3", "acquire"), event(3, "c1", "release", "invoke"),
               event(4, "c1", "release"), event(5, "c2", "acquire")]

    def run_check(self, violations, deletes_any_holder, history=None):
        return passes(lambda d, cell: check_libraries.check_no_broken_lease(
            d, cell, LIBRARY, deletes_any_holder), history or self.HISTORY, violations)

    def test_no_broken_lease_passes(self):
        self.assertTrue(self.run_check([overlap(True, "grant-window")], None))

    def test_a_broken_lease_fails_a_library_whose_unlock_deletes_only_its_own_key(self):
        self.assertFalse(self.run_check([broken_lease(2, 5, ["c3", "c2"])], None))

    def test_a_late_release_between_the_grants_explains_an_owner_blind_unlock(self):
        self.assertTrue(self.run_check([broken_lease(2, 5, ["c3", "c2"])], "a plain DEL"))

    def test_an_owner_blind_unlock_explains_no_other_broken_lease(self):
        # No release of c1 between the two grants.
        quiet = [event(0, "c1", "acquire"), event(1, "c1", "release"),
                 event(2, "c3", "acquire"), event(5, "c2", "acquire")]
        self.assertFalse(self.run_check([broken_lease(2, 5, ["c3", "c2"])], "a plain DEL", quiet))
        # c1's own lease broken: its release did not free someone else's key.
        self.assertFalse(self.run_check([broken_lease(0, 5, ["c1", "c2"])], "a plain DEL"))


if __name__ == "__main__":
    unittest.main()
