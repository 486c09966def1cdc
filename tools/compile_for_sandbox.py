"""Byte-compile what a sandbox child may import from site-packages, and the given folders.

A sandbox's processes never write bytecode (they may write nowhere but their own folder), so
what they import must be compiled before the first sandbox starts, or each child compiles
numpy again. What that is comes from the zygote itself: the View it declares after importing
what a submission may import (``zygote.preload``), its entries that lie in a site-packages
folder. Everything else is compiled by whichever process first imports it (`make` leaves
bytecode writing on), so a package no test imports costs nothing.

Usage: python tools/compile_for_sandbox.py [FOLDER...]   (the checkout's own packages)
"""
import compileall
import os
import sys


def main(folders: list[str]) -> int:
    from autograder.sandbox import view, zygote

    sites = view.site_folders()
    declared = zygote.preload([]).read
    targets = [p for p in declared if any(view.inside(p, s) for s in sites)] + folders
    ok = True
    for path in targets:
        if os.path.isdir(path):
            ok &= bool(compileall.compile_dir(path, quiet=1, workers=0))
        elif path.endswith(".py"):
            ok &= bool(compileall.compile_file(path, quiet=1))
    print(f"compiled {len(targets)} folders and files for the sandbox", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
