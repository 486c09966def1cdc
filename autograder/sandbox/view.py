"""The child's world, declared: every path a confined child may read, named from what the
zygote actually loaded, computed once in the zygote (``declare``).

The same ``View`` is both the full level's allow-list root (``confine.allow_list_root`` bind
mounts each entry, read-only, into an empty tmpfs; nothing else exists there) and Landlock's
rules at every level (``confine.landlock`` grants each entry, read-only; nothing else may be
opened). ``tests/test_census_paths.py`` derives what a probe child must reach from it, and
checks that the child reaches exactly that at every level and kernel variant.

What goes in:

- the standard library's folders (``sysconfig``'s stdlib and platstdlib), without the
  site-packages folders inside them;
- the package folder of each module a submission may import (``zygote.PRELOAD`` and what it
  imported in turn) that lives in a site-packages folder: ``numpy/``, not every package of
  the environment;
- every file the zygote has mapped once those imports ran and numpy did some linear algebra
  (``/proc/self/maps``): the interpreter, libpython, the C libraries, numpy's bundled
  OpenBLAS, the dynamic loader, the locale's ``LC_CTYPE``; plus ``/etc/ld.so.cache``;
- ``/dev/null`` (read and write) and ``/dev/urandom`` (read);
- the symbolic links on the way to any of these (``/lib64 -> usr/lib64``...), as links.

What never goes in, wherever it lies, also inside one of the folders above: the ``hidden``
paths (the course, its solutions, the submissions, the results: ``Sandbox(hide=...)``) and
the grader's own package. A folder that holds one of them is never granted whole: it is
replaced by its entries, recursively, minus what is hidden (``_cover``); so is a folder
holding a site-packages folder (the stdlib's own). What lies inside a hidden folder comes in
only when it is itself one of the things above (a checkout's ``.venv/``: its numpy, not the
checkout). The child's own folder is not in the View: each child adds it (its tmpfs, or its
private folder).
"""
from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

# Landlock's file access rights (linux/landlock.h): what a View entry grants
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 1 << 1, 1 << 2, 1 << 3
READ = EXECUTE | READ_FILE | READ_DIR
DEVICES = (("/dev/null", READ_FILE | WRITE_FILE), ("/dev/urandom", READ_FILE))
FILES = ("/etc/ld.so.cache",)  # how the dynamic loader finds a library by name (ctypes.CDLL)
OWN = str(Path(__file__).resolve().parents[1])  # the grader's own package: in memory, never on view


@dataclass(frozen=True)
class View:
    """Absolute, resolved paths. ``read``: folders (with all below them) and files the child
    may read, none inside another; ``devices``: (path, Landlock rights); ``links``: (path,
    target) of the symbolic links on the way to them; ``hidden``: what must never be
    reachable (for the census, and to check a View against)."""
    read: tuple[str, ...]
    devices: tuple[tuple[str, int], ...]
    links: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]

    def rules(self) -> list[tuple[str, int]]:
        """Landlock's rules: every entry read-only, the devices with their rights."""
        return [(p, READ) for p in self.read] + list(self.devices)

    def to_dict(self) -> dict:
        return {"read": list(self.read), "devices": [list(d) for d in self.devices],
                "links": [list(x) for x in self.links], "hidden": list(self.hidden)}

    @classmethod
    def from_dict(cls, d: dict) -> "View":
        return cls(tuple(d["read"]), tuple((str(p), int(r)) for p, r in d["devices"]),
                   tuple((str(p), str(t)) for p, t in d["links"]), tuple(d["hidden"]))


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def declare(hidden: Iterable[str], modules: Iterable[ModuleType]) -> View:
    """The View for a zygote that has imported ``modules`` (what a submission may import) and
    must keep ``hidden`` out of sight."""
    hidden = sorted({os.path.realpath(h) for h in (*hidden, OWN)})
    sites = site_folders()
    stdlib = [p for p in stdlib_folders() if not any(inside(p, s) for s in sites)]
    candidates = set(stdlib) | set(package_paths(modules, sites)) | set(mapped_files()) | set(FILES)
    read: set[str] = set()
    for c in candidates:
        if os.path.lexists(c):
            read.update(_cover(os.path.realpath(c), hidden, sites))
    read = set(_outermost(read))
    # The names a child uses that may not be resolved: sys.path, modules' files (for
    # tracebacks and lazy imports), the interpreter. The entries above are resolved already.
    files = [getattr(m, "__file__", None) for m in modules]
    names = {*sys.path, *(os.path.dirname(f) for f in files if isinstance(f, str)), sys.executable,
             *(d for d, _ in DEVICES)}
    links = sorted({link for n in names if n and n.startswith("/") for link in _links_along(n)})
    devices = tuple((p, r) for p, r in DEVICES if os.path.exists(p))
    return View(tuple(sorted(read)), devices, tuple(links), tuple(hidden))


def stdlib_folders() -> list[str]:
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix, "installed_base": sys.base_prefix,
            "installed_platbase": sys.base_exec_prefix}
    found = {sysconfig.get_path(k, vars=base) for k in ("stdlib", "platstdlib")}
    found.add(os.path.dirname(os.__file__))
    return sorted(os.path.realpath(p) for p in found if p and os.path.isdir(p))


def site_folders() -> list[str]:
    """Every site-packages folder of this interpreter and of the installation it came from."""
    found = set(site.getsitepackages())
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    found |= {sysconfig.get_path(k, vars=base) for k in ("purelib", "platlib")}
    found |= {sysconfig.get_path(k) for k in ("purelib", "platlib")}
    found |= {p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")}
    if site.ENABLE_USER_SITE and site.USER_SITE:
        found.add(site.USER_SITE)
    return sorted({os.path.realpath(p) for p in found if p and os.path.isdir(p)})


def package_paths(modules: Iterable[ModuleType], sites: list[str]) -> list[str]:
    """The top-level package folder (or single-file module) in a site-packages folder of each
    of ``modules``; the stdlib's are covered by its folders, and modules from anywhere else
    (the grader's own) are already in memory."""
    out = set()
    for m in modules:
        path = getattr(m, "__path__", None)
        files = [getattr(m, "__file__", None), *(path if isinstance(path, (list, tuple)) else [])]
        for f in files:
            if not isinstance(f, str) or not f.startswith("/"):
                continue
            f = os.path.realpath(f)
            for s in sites:
                if inside(f, s) and f != s:
                    out.add(os.path.join(s, os.path.relpath(f, s).split("/")[0]))
    return sorted(out)


def mapped_files() -> list[str]:
    """Every file this process has mapped: the interpreter, the libraries it and its extension
    modules linked or dlopened, the loader, locale data."""
    out = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/") and not parts[5].endswith(" (deleted)"):
                out.add(parts[5].rstrip("\n"))
    return sorted(p for p in out if os.path.isfile(p))


def warm_numpy() -> None:
    """What a submission's numpy may load lazily, loaded now so that /proc/self/maps shows it:
    BLAS through matmul and linalg, LAPACK, the FFT, the random generators."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64))
    b = a @ a.T + np.eye(64)
    np.linalg.inv(b), np.linalg.eigh(b), np.linalg.svd(a), np.linalg.solve(b, a[:, 0]), np.linalg.qr(a)
    np.linalg.det(b), np.linalg.norm(a), np.einsum("ij,jk->ik", a, a), np.fft.fft(a[0]), np.fft.rfft(a[0])
    np.random.seed(0), np.random.rand(3), rng.integers(0, 5, 3)


def warm_import_caches() -> None:
    """Fill every sys.path folder's finder cache now, while the zygote may still list them:
    a child may not list a folder that is not granted whole (the stdlib's parent, a split
    site-packages), and a finder whose folder changed (the allow-list root's are new) would
    list it again on the child's first import."""
    import importlib.machinery

    for entry in sys.path:
        finder = sys.path_importer_cache.get(entry)
        if finder is None and os.path.isdir(entry or "."):
            finder = importlib.machinery.FileFinder(entry or ".", *_loaders())
            sys.path_importer_cache[entry] = finder
        if finder is not None and hasattr(finder, "find_spec"):
            finder.find_spec("__autograder_no_such_module__")


def _loaders():
    import importlib.machinery as m
    return [(m.ExtensionFileLoader, m.EXTENSION_SUFFIXES), (m.SourceFileLoader, m.SOURCE_SUFFIXES),
            (m.SourcelessFileLoader, m.BYTECODE_SUFFIXES)]


def _cover(path: str, hidden: list[str], sites: list[str]) -> list[str]:
    """``path`` minus everything ``hidden`` and every site-packages folder in it: ``path``
    itself when none lies in it, else its entries' covers (a symbolic link among them is not
    followed). A site-packages folder is never granted whole, and what a submission may
    import from one is a candidate of its own (``package_paths``)."""
    if path in hidden or path in sites:
        return []
    within = [x for x in (*hidden, *sites) if inside(x, path)]
    if not within:
        return [path]
    out: list[str] = []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    for e in entries:
        if not e.is_symlink():
            out += _cover(e.path, hidden, sites)
    return out


def _outermost(paths: Iterable[str]) -> list[str]:
    """``paths`` less those inside another of them."""
    paths = set(paths)
    return sorted(q for q in paths if not _has_ancestor_in(q, paths))


def _has_ancestor_in(p: str, paths: set[str]) -> bool:
    up = os.path.dirname(p)
    while up != p:
        if up in paths:
            return True
        p, up = up, os.path.dirname(up)
    return False


def _links_along(path: str) -> list[tuple[str, str]]:
    """The symbolic links met resolving ``path``: (where, what it says)."""
    out, seen = [], 0
    todo = path.strip("/").split("/")
    cur = "/"
    while todo and seen < 40:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            cur = os.path.dirname(cur)
            continue
        nxt = os.path.join(cur, part)
        if os.path.islink(nxt):
            seen += 1
            target = os.readlink(nxt)
            out.append((nxt, target))
            todo = [p for p in target.split("/") if p] + todo
            cur = "/" if target.startswith("/") else cur
        else:
            cur = nxt
    return out
