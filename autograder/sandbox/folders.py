"""Walking and removing folders a child may have written, from the trusted side.

Everything goes through descriptors and never follows a link: a child that leaves a link
where a folder was sends the walk nowhere. Both hold one descriptor per level they are
at, and so are bounded: a child can nest folders thousands deep, and ``shutil.rmtree``
recurses once per level (a RecursionError past about a thousand, which ended the zygote).
"""
from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

DEPTH = 64  # levels a walk goes below its root; deeper, it says so (Walk.too_deep)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Entry:
    folder: int  # descriptor of the folder it is in, open while the walk is below that folder
    path: str
    stat: os.stat_result

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


def _listing(fd: int) -> list[tuple[str, os.stat_result]]:
    try:
        with os.scandir(fd) as it:
            found = list(it)
    except OSError:
        return []
    out = []
    for e in found:
        try:
            out.append((e.name, e.stat(follow_symlinks=False)))
        except OSError:
            pass  # gone meanwhile
    return out


class Walk:
    """Every entry below ``root`` (``entries``), going into the folders on the root's own
    filesystem that ``into(stat)`` accepts, each once. ``too_deep``, afterwards: some
    folder it would have gone into lay more than DEPTH levels down, and ``deep(stat)`` (by
    default, any folder) says that one counts."""

    def __init__(self, root: str, into: Callable[[os.stat_result], bool],
                 deep: Callable[[os.stat_result], bool] = lambda st: True):
        self.root, self.into, self.deep, self.too_deep = root, into, deep, False

    def entries(self) -> Iterator[Entry]:
        try:
            top = os.open(self.root, _DIR)
        except OSError:
            return
        first = os.fstat(top)
        seen = {(first.st_dev, first.st_ino)}
        frames: list[tuple[int, list[str]]] = []  # (descriptor, paths of its sub-folders still to walk)
        fd, here = top, self.root.rstrip("/") or "/"
        try:
            while True:
                below = []
                for name, st in _listing(fd):
                    path = os.path.join(here, name)
                    yield Entry(fd, path, st)
                    key = (st.st_dev, st.st_ino)
                    if stat.S_ISDIR(st.st_mode) and st.st_dev == first.st_dev and key not in seen and self.into(st):
                        seen.add(key)
                        below.append((path, st))
                frames.append((fd, below))
                fd = -1
                while frames and fd < 0:
                    parent, pending = frames[-1]
                    if not pending:
                        os.close(parent)
                        frames.pop()
                        continue
                    here, st = pending.pop()
                    if len(frames) > DEPTH:  # not gone into: said, where it counts
                        self.too_deep |= self.deep(st)
                        continue
                    try:
                        fd = os.open(os.path.basename(here), _DIR, dir_fd=parent)
                    except OSError:
                        fd = -1
                if fd < 0:
                    return
        finally:
            for parent, _ in frames:
                os.close(parent)
            if fd >= 0:  # the folder being listed, not yet among the frames
                os.close(fd)


def remove_tree(parent: int, name: str) -> None:
    """Remove ``name`` in the folder ``parent`` (a descriptor) and all below it. A tree
    deeper than DEPTH is flattened on the way: its folders at that depth are moved up to
    its top, to be removed from there. What cannot be removed stays, as with
    ``rmtree(ignore_errors=True)``."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        _unlink(parent, name)
        return
    try:
        top = os.open(name, _DIR, dir_fd=parent)
    except OSError:
        return
    frames: list[tuple[int, str, list[str]]] = [(top, name, _emptied(top))]  # (descriptor, name, sub-folders left)
    while frames:
        fd, own, pending = frames[-1]
        if not pending:
            frames.pop()
            os.close(fd)
            try:
                os.rmdir(own, dir_fd=frames[-1][0] if frames else parent)
            except OSError:
                pass
            continue
        sub = pending.pop()
        if len(frames) >= DEPTH:
            fresh = f".removing-{secrets.token_hex(8)}"
            try:
                os.rename(sub, fresh, src_dir_fd=fd, dst_dir_fd=top)
                frames[0][2].append(fresh)
            except OSError:
                pass
            continue
        try:
            child = os.open(sub, _DIR, dir_fd=fd)
        except OSError:
            continue
        frames.append((child, sub, _emptied(child)))


def _emptied(fd: int) -> list[str]:
    """Unlink everything in the folder but its sub-folders; return their names."""
    folders = []
    for name, st in _listing(fd):
        if stat.S_ISDIR(st.st_mode):
            folders.append(name)
        else:
            _unlink(fd, name)
    return folders


def _unlink(folder: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=folder)
    except OSError:
        pass


def remove_path(path: str) -> None:
    """``remove_tree`` by path (its last part is not followed if it is a link)."""
    head, name = os.path.split(os.path.abspath(path))
    try:
        parent = os.open(head, _DIR)
    except OSError:
        return
    try:
        remove_tree(parent, name)
    finally:
        os.close(parent)


def remove_owned(folder: str, uid: int, into: Callable[[os.stat_result], bool]) -> None:
    """Remove what ``uid`` owns below ``folder`` (a folder it owns, whole), going into the
    other folders ``into`` accepts. For when the uid's processes are gone: nothing of it
    renames or creates meanwhile."""
    for e in Walk(folder, lambda st: st.st_uid != uid and into(st)).entries():
        if e.stat.st_uid == uid:
            remove_tree(e.folder, e.name)
