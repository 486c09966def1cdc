"""folders.Walk's depth: a walk that may not go deeper than DEPTH says so (``too_deep``) only
for a folder ``deep`` counts. The grader's watch (usage.measure) counts a child's own folders and
those it may write, where it could hide what it holds from the count; not another's folders it
can only pass through, such as an earlier child's not yet reclaimed, which must not get the
next child stopped (tests/submissions/ps3/hostile_nests_folders.py made such a tree)."""
from __future__ import annotations

import os
import stat

import pytest

from autograder.sandbox.folders import DEPTH, Walk


def _nest(top, levels: int, mode: int = 0o755) -> None:
    here = top
    for _ in range(levels):
        here = here / "d"
        here.mkdir()
        here.chmod(mode)


def _deep_for(uid: int):
    """usage.measure's rule: a folder deeper than a walk goes counts if ``uid`` owns it or may write it."""
    return lambda st: st.st_uid == uid or bool(st.st_mode & stat.S_IWOTH)


def _into(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_IXOTH)


@pytest.mark.parametrize("levels, too_deep", [(DEPTH, False), (DEPTH + 2, True)])
def test_any_folder_counts_by_default(tmp_path, levels, too_deep):
    _nest(tmp_path, levels)
    walk = Walk(str(tmp_path), _into)
    list(walk.entries())
    assert walk.too_deep is too_deep


def test_anothers_deep_folders_do_not_count(tmp_path):
    _nest(tmp_path, DEPTH + 5)  # owned by this process's uid: "another's", seen from uid + 1
    walk = Walk(str(tmp_path), _into, deep=_deep_for(os.getuid() + 1))
    list(walk.entries())
    assert not walk.too_deep


def test_own_deep_folders_count(tmp_path):
    _nest(tmp_path, DEPTH + 5)
    walk = Walk(str(tmp_path), _into, deep=_deep_for(os.getuid()))
    list(walk.entries())
    assert walk.too_deep


def test_anothers_deep_folders_that_anyone_may_write_count(tmp_path):
    _nest(tmp_path, DEPTH + 5, mode=0o777)
    walk = Walk(str(tmp_path), _into, deep=_deep_for(os.getuid() + 1))
    list(walk.entries())
    assert walk.too_deep


def test_a_walk_past_depth_still_lists_every_sibling_it_may_reach(tmp_path):
    """Not going into one too-deep folder leaves its siblings to be said too (one of them may be
    the child's own)."""
    _nest(tmp_path, DEPTH)
    deepest = tmp_path.joinpath(*["d"] * DEPTH)
    (deepest / "a").mkdir()
    (deepest / "b").mkdir()
    (deepest / "b").chmod(0o777)
    walk = Walk(str(tmp_path), _into, deep=_deep_for(os.getuid() + 1))
    list(walk.entries())
    assert walk.too_deep  # "b", anyone may write it, though "a" was seen first or last
