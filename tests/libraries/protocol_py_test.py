#!/usr/bin/env python3
"""lock_impls/libraries/protocol.py, the Python adapters' protocol, on its
own: an uncaught exception in a library's thread is recorded as an
incident named by the thread's target, not by the number Python gave the
thread (which counts the threads the process made before)."""
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lock_impls", "libraries"))
import protocol  # noqa: E402


def _lock_renewer():
    raise RuntimeError("Lock lock:L is not acquired or it already expired.")


class ThreadIncidents(unittest.TestCase):
    def setUp(self):
        self.stderr, sys.stderr = sys.stderr, open(os.devnull, "w")
        protocol.watch_incidents()
        protocol.INCIDENTS.drain()

    def tearDown(self):
        sys.stderr.close()
        sys.stderr = self.stderr
        threading.excepthook = threading.__excepthook__

    def incident_of(self, thread):
        thread.start()
        thread.join()
        return protocol.INCIDENTS.drain()

    def test_an_unnamed_thread_is_named_by_its_target_whatever_came_before(self):
        for _ in range(3):  # threads made before it raise Python's count
            threading.Thread(target=lambda: None).start()
        incidents = self.incident_of(threading.Thread(target=_lock_renewer))
        self.assertEqual(len(incidents), 1)
        self.assertEqual(incidents[0]["kind"], "uncaught-exception")
        self.assertEqual(incidents[0]["message"],
                         "thread _lock_renewer: RuntimeError: Lock lock:L is not acquired or it already expired.")

    def test_a_named_thread_keeps_its_name(self):
        incidents = self.incident_of(threading.Thread(target=_lock_renewer, name="renewal-7"))
        self.assertTrue(incidents[0]["message"].startswith("thread renewal-7: RuntimeError"), incidents)


if __name__ == "__main__":
    unittest.main()
