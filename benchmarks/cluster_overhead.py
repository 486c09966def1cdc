"""grade-batch on a local Dask cluster against grade-batch --jobs J, on the same N notebooks.

    .venv/bin/python benchmarks/cluster_overhead.py --sizes 500 2000 [--workers 2]

For each size, builds N filled-in ps2 notebooks (honest ones from examples/make_class.py, as
nbgrader_vs_batch.py does), grades them with `grade-batch --jobs WORKERS` and with
`grade-batch --scheduler tcp://127.0.0.1:PORT` on a `dask scheduler` and WORKERS × `dask worker
--nthreads 1` started here on 127.0.0.1 (kept up across sizes, as a cluster would be), checks
that the two grades.csv are identical, and prints for each: wall seconds of the whole command
(start-up included), the ratio, the peak resident memory of the command's own process tree
(for --scheduler: the client alone, the workers are not its children; while grading, and with
the reports written at the end), and the CPU seconds
per submission spent by the client, the scheduler and the workers (with their sandboxes).
The last lines project 100,000 submissions on W workers from those CPU costs.
"""
from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import proc_stat  # noqa: E402
from nbgrader_vs_batch import honest_class, tree_rss_kib  # noqa: E402


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its live descendants, with the children each has reaped."""
    stats = proc_stat.every()
    return sum(sum(int(x) for x in stats[p][11:15]) for p in proc_stat.family(pid, stats)) / proc_stat.TICK


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(workers: int, folder: Path) -> tuple[str, list[subprocess.Popen]]:
    dask = str(Path(sys.executable).parent / "dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True, "cwd": folder}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              **quiet)]
    procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard",
                                "--local-directory", str(folder / f"worker{i}")], **quiet) for i in range(workers)]
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):
        os.killpg(proc.pid, signal.SIGTERM)
    for proc in reversed(procs):
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def measured(cmd: list[str], out: Path) -> tuple[float, int, int, float]:
    """Wall seconds, peak resident KiB of the command's process tree while it grades (before
    it writes out/grades.csv) and over the whole run (the reports included), and its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        grading = peak = 0
        while proc.poll() is None:
            rss = tree_rss_kib(proc.pid)
            peak = max(peak, rss)
            if not (out / "grades.csv").exists():
                grading = max(grading, rss)
            time.sleep(0.05)
        seconds = time.monotonic() - start
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{' '.join(cmd[3:5])} failed: {log.read()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, grading, peak, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 2000], help="class sizes")
    parser.add_argument("--workers", type=int, default=2, help="dask workers, and --jobs for the local run")
    parser.add_argument("--project", type=int, nargs="*", default=[2, 16, 64, 256], help="workers to project for")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        address, procs = start_cluster(args.workers, tmp)
        try:
            from distributed import Client

            with Client(address, set_as_default=False) as client:
                worker_pids = list(client.run(os.getpid).values())
            scheduler_pid = procs[0].pid
            for n in args.sizes:
                folder = tmp / f"class{n}"
                honest_class(folder, n)
                base = [sys.executable, "-m", "autograder.cli", "grade-batch", str(folder / "submitted"),
                        "--assignment", "ps2"]
                local_s, _, local_kib, _ = measured([*base, "--out", str(tmp / f"local{n}"), "--jobs",
                                                     str(args.workers)], tmp / f"local{n}")
                sched0, workers0 = tree_cpu_seconds(scheduler_pid), sum(map(tree_cpu_seconds, worker_pids))
                dask_s, client_grading_kib, client_kib, client_cpu = measured(
                    [*base, "--out", str(tmp / f"dask{n}"), "--scheduler", address], tmp / f"dask{n}")
                sched_cpu = tree_cpu_seconds(scheduler_pid) - sched0
                worker_cpu = sum(map(tree_cpu_seconds, worker_pids)) - workers0
                same = (tmp / f"local{n}" / "grades.csv").read_text() == (tmp / f"dask{n}" / "grades.csv").read_text()
                print(f"N = {n}: --jobs {args.workers} {local_s:6.1f} s ({1000 * local_s / n:5.1f} ms/submission, "
                      f"peak {local_kib // 1024} MiB, all processes); "
                      f"--scheduler, {args.workers} workers {dask_s:6.1f} s ({1000 * dask_s / n:5.1f} ms/submission); "
                      f"ratio {dask_s / local_s:.2f}; grades.csv identical: {same}")
                print(f"        client peak {client_grading_kib // 1024} MiB while grading, "
                      f"{client_kib // 1024} MiB with the reports")
                print(f"        CPU ms per submission: client {1000 * client_cpu / n:.1f}, "
                      f"scheduler {1000 * sched_cpu / n:.1f}, workers with their sandboxes {1000 * worker_cpu / n:.1f}")
                if not same:
                    raise SystemExit("the cluster's grades differ from the local pool's")
            per_worker, per_client = worker_cpu / n, max(client_cpu, sched_cpu) / n
            for w in args.project:
                minutes = max(100_000 * per_worker / w, 100_000 * per_client) / 60
                print(f"projection, 100,000 submissions on {w} one-core workers: about {minutes:.0f} min "
                      f"(workers {100_000 * per_worker / w / 60:.1f} min, "
                      f"client or scheduler at least {100_000 * per_client / 60:.1f} min)")
        finally:
            stop(procs)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
