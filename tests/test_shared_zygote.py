"""One zygote for a batch's workers (launch.shared): a socket per client, each client's children
its own, a client that leaves takes its children with it, and the zygote ends after the last."""
from __future__ import annotations

import json
import select
import threading
import time

import pytest

from autograder.sandbox import Sandbox, launch

TIMEOUT = 5.0
EXERCISES = [("first", [("first", (), {})])]


def _returns(n: int) -> str:
    return f"def first():\n    return {n}\n"


def _value(run) -> object:
    (outcome,) = run.exercises["first"].outcomes
    return outcome.value


@pytest.fixture
def pair():
    a, b = (Sandbox(launched=launched) for launched in launch.shared(2, []))
    assert a.level == b.level  # each has read its hello: what comes on its socket next is an answer
    yield a, b
    a.close()
    b.close()


def test_each_client_grades_its_own_submissions_in_turn(pair):
    a, b = pair
    assert [_value(s.run([_returns(n)], EXERCISES, TIMEOUT)) for s, n in ((a, 1), (b, 2), (a, 3))] == [1, 2, 3]


def test_a_client_grades_while_the_other_waits_on_a_child(pair):
    a, b = pair
    slow = threading.Thread(target=lambda: results.append(
        _value(a.run(["import time\ndef first():\n    time.sleep(1.0)\n    return 7\n"], EXERCISES, TIMEOUT))))
    results: list = []
    slow.start()
    assert _value(b.run([_returns(2)], EXERCISES, TIMEOUT)) == 2
    slow.join()
    assert results == [7]


def _while_running(a: Sandbox, then) -> object:
    """Run a one-second submission on ``a``; call ``then(child id)`` once its child is live."""
    results: list = []
    slow = threading.Thread(target=lambda: results.append(
        _value(a.run(["import time\ndef first():\n    time.sleep(1.0)\n    return 7\n"], EXERCISES, TIMEOUT))))
    slow.start()
    deadline = time.monotonic() + 10
    while not a.live and time.monotonic() < deadline:
        time.sleep(0.005)
    (child,) = list(a.live)
    then(child)
    slow.join()
    return results[0]


def test_a_client_cannot_end_another_clients_child(pair):
    a, b = pair
    assert _while_running(a, lambda child: b.sock.send(json.dumps({"op": "kill", "id": child}).encode())) == 7


def test_a_client_learns_nothing_of_another_clients_child(pair):
    a, b = pair
    answers: list = []

    def ask(child: int) -> None:
        b.sock.send(json.dumps({"op": "status", "id": child}).encode())
        answers.append(json.loads(b.sock.recv(4096)))

    assert _while_running(a, ask) == 7
    assert answers[0]["kind"] == "unknown"


def test_a_client_that_leaves_takes_its_children_and_the_other_goes_on(pair):
    a, b = pair
    child = b._spawn()  # handed out, its job never sent: it waits for one until someone ends it
    b.hand_over()  # b's socket closes, child and pipes not released by b
    assert select.select([child.pidfd], [], [], 10)[0] == [child.pidfd], "the leaving client's child still runs"
    assert _value(a.run([_returns(5)], EXERCISES, TIMEOUT)) == 5


def test_a_client_gone_before_its_hello_leaves_the_others_served():
    a, b = (Sandbox(launched=launched) for launched in launch.shared(2, []))
    a.hand_over()  # a batch's worker that had no student: its socket closes, its hello unread
    try:
        assert _value(b.run([_returns(6)], EXERCISES, TIMEOUT)) == 6
    finally:
        a.close()
        b.close()


def test_the_zygote_ends_after_its_last_client_and_not_before(pair):
    a, b = pair
    proc = a.proc
    started = time.monotonic()
    a.close()  # b still holds a socket: nothing to wait for yet
    assert time.monotonic() - started < 2
    assert proc.poll() is None
    assert _value(b.run([_returns(4)], EXERCISES, TIMEOUT)) == 4
    b.close()
    assert proc.poll() is not None
