# expect: full
# base: reference
# Right answers that count what an earlier student left where this one can look: files in
# its folder, its TMPDIR and the shared temporary folders owned by another sandbox uid, or
# named as the hostile files name their plants. tests/test_isolation.py grades it after
# each attack; alone, nothing is there. It also needs its own folder to be writable, as
# every level promises.

import os

BREACHES = []


def breach(what):
    BREACHES.append(what)
    print("BREACH:", what)


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + len(BREACHES)  # right only while the sandbox held


def _leftovers():
    me = os.getuid()
    try:
        with open("mine.txt", "w") as f:
            f.write("kept")
        os.remove("mine.txt")
    except OSError as e:
        breach(f"could not write in its own folder: {e}")
    for folder in {os.getcwd(), os.environ.get("TMPDIR", "/tmp"), "/tmp", "/var/tmp", "/dev/shm"}:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            try:
                owner = os.lstat(os.path.join(folder, name)).st_uid
            except OSError:
                continue
            if "PLANTED" in name or name in ("numpy.py", "sitecustomize.py", "filler") or (owner >= 1_000_000_000 and owner != me):
                breach(f"{folder}/{name} left by someone else")


_leftovers()
