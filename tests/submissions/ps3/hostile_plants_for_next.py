# expect: full
# base: reference
# Isolation class 3, per worker instead of per child. It writes wherever it can (its own
# folder, /tmp, /var/tmp, /dev/shm, the package folders), plants numpy.py and
# sitecustomize.py for later students to import, fills its folder to the limit, and pre-creates
# the names a predictable next folder would have. correct_reports_leftovers.py, graded after
# it in tests/test_isolation.py, must find none of it. Writing into the package folders
# is a breach in itself.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


import numpy as _np


def _plant():
    fake = "raise SystemExit('planted by a classmate')\n"
    for folder in (os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~")):
        for name in ("numpy.py", "sitecustomize.py", "PLANTED-by-hostile", "sandbox-1-2"):
            try:
                with open(os.path.join(folder, name), "w") as f:
                    f.write(fake)
            except OSError:
                pass
    site = os.path.dirname(os.path.dirname(_np.__file__))
    try:
        with open(os.path.join(site, "PLANTED-by-hostile.py"), "w") as f:
            f.write(fake)
        breach("wrote into the package folder " + site)
    except OSError:
        pass
    try:
        with open("filler", "wb") as f:
            for _ in range(256):
                f.write(b"x" * (1 << 20))
    except OSError:
        pass


_plant()
