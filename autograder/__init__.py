"""The attention chapter's grader (see README.md).

The judges multiply small matrices many thousand times a class. With a BLAS thread per core,
each product pays more for waking threads than for its arithmetic, and a batch's workers (one
per core) each wake a thread per core: ps4 graded at 82 ms a submission instead of 43
(benchmarks/per_set_cost.py). So every process that imports the grader before numpy uses one
BLAS thread, unless its caller chose otherwise. (The sandbox's children already do.)
"""
import os as _os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")
