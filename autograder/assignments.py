"""Which exercises make up each assignment (the table in CONTRACTS.md), in notebook order."""
from __future__ import annotations

import importlib

ASSIGNMENTS: dict[str, tuple[str, ...]] = {
    "ps1": ("softmax", "raw_self_attention", "wired_attention", "score_spread"),
    "ps2": ("causal_mask", "scaled_dot_product_attention", "attention_shapes",
            "fused_self_attention", "attention_with_biases"),
    "ps3": ("previous_token_head", "qk_circuit", "ov_circuit", "multi_head_attention"),
}


def exercises(assignment: str) -> tuple[str, ...]:
    try:
        return ASSIGNMENTS[assignment]
    except KeyError:
        raise ValueError(
            f"unknown assignment {assignment!r}; choose one of {', '.join(ASSIGNMENTS)}"
        ) from None


def exercise_module(name: str):
    """The module of checks for one exercise: autograder/exercises/<name>.py."""
    return importlib.import_module(f"autograder.exercises.{name}")


def exercise_points(name: str) -> float:
    """Points an exercise is worth: the sum over its checks (the checks are the source)."""
    import numpy as np

    total = sum(c.points for c in exercise_module(name).checks(np.random.default_rng(0)))
    return int(total) if float(total).is_integer() else total
