# expect: full
# base: reference
# Isolation class 6, the filesystem half of 20.2: the environment's packages beyond those a
# submission may import. The sandbox shows numpy's folder, not its site-packages: this
# submission lists site-packages, imports packages installed there but never preloaded
# (pytest, hypothesis, nbformat, the grader's own autograder), and opens their files by path.
# Right on every exercise only while none of that works.

import importlib
import os

import numpy

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _look():
    site = os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))
    try:
        names = os.listdir(site)
        breach(f"listed site-packages ({len(names)} entries)")
    except OSError:
        pass
    for name in ("pytest", "hypothesis", "nbformat", "_pytest", "autograder.reference", "solutions"):
        try:
            importlib.import_module(name)
            breach(f"imported {name}")
        except Exception:  # noqa: BLE001 - whatever stops it, it is stopped
            pass
    for path in ("pytest/__init__.py", "_pytest/__init__.py", "hypothesis/__init__.py"):
        try:
            with open(os.path.join(site, path)) as f:
                f.read(1)
            breach(f"read {path} in site-packages")
        except OSError:
            pass


_look()
