# expect: full
# base: reference
# Hostile, but every answer is right as long as the sandbox hides the disk: qk_circuit adds
# the number of entries it can list in the solutions folder (directly and through /proc),
# ov_circuit adds 1 if it could write a file next to this submission. Full marks prove that
# both found nothing.

import os


def _visible_solution_files():
    found = 0
    for folder in ("@ROOT@/solutions", "@ROOT@", "/proc/1/root@ROOT@/solutions",
                   f"/proc/{os.getppid()}/root@ROOT@/solutions"):
        try:
            found += len(os.listdir(folder))
        except OSError:
            pass
    return found


def qk_circuit(W_Q, W_K):
    return W_Q @ W_K.T + _visible_solution_files()


LEAK = "@ROOT@/tests/submissions/ps3/LEAKED_by_hostile_snoops_filesystem.txt"


def _could_write_next_to_me():
    try:
        with open(LEAK, "w") as f:
            f.write("the sandbox let me write here")
        return 1
    except OSError:
        return 0


def ov_circuit(W_V, W_O):
    return W_V @ W_O + _could_write_next_to_me()
