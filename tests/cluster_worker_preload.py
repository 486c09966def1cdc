"""Preloaded into the Dask workers of tests/test_cluster.py (``dask worker --preload``): stands in
for a submission that kills its grading worker's process.

No submission can do that through the sandbox (its code runs in a confined child, and the
worker's memory is not the child's), so the test marks one with a comment and this preload
SIGKILLs the worker process when it is handed the marked bytes, as the kernel's OOM killer
or a crash of the worker's own process would.
"""
import os
import signal

from autograder import cluster

MARKER = b"# test: this submission kills its grading worker"


def _grade_or_die(grade):
    def _grade(self, task):
        if task.snapshot.data is not None and MARKER in task.snapshot.data:
            os.kill(os.getpid(), signal.SIGKILL)
        return grade(self, task)

    _grade.kills_marked = True
    return _grade


if not getattr(cluster.SandboxPlugin.grade, "kills_marked", False):  # dask may import a preload twice
    cluster.SandboxPlugin.grade = _grade_or_die(cluster.SandboxPlugin.grade)
