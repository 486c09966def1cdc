"""The catalogue of known mistakes (CONTRACTS.md), and finding which one a wrong answer made.

Diagnosis is empirical: every mistake variant kept beside solutions/ (the right answer
with one edit) runs on the same inputs as the student's code, in the grader's process;
a mistake is named when its output, and no other mistake's, matches the student's.
"""
from __future__ import annotations

import enum

import numpy as np

from . import course

# The engine's own outcomes; a course's mistakes have its words (its explanations.py).
OWN = {
    "not_implemented": (
        "{func} still raises NotImplementedError: replace the `raise NotImplementedError()` "
        "line in its cell with your code."),
    "timeout": (
        "{func} ran past the time limit{limit_txt}, so these checks could not finish. Look for "
        "a loop that never ends, or one that runs over far more elements than it needs."),
    "crashed": "",
}


class Audience(enum.Enum):
    """Who reads an explanation: the student it is written to, or the instructor it is about."""
    STUDENT = "student"
    INSTRUCTOR = "instructor"


def third_person(verb: str) -> str:
    """A verb in the present tense as it agrees with "the student": "returns", "divides",
    "passes", "tries", "has", "is"."""
    irregular = {"are": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in irregular:
        return irregular[verb]
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


class Subject(str):
    """Who an explanation's sentence is about: "you", or "the student" (third person). Named
    with the verb that follows it, ``{you:return}``, it gives the verb agreeing with it: "you
    return", "the student returns". A template writes a present-tense verb after it that way;
    a past one (``{you} divided``) agrees with both alone."""
    third: bool

    def __new__(cls, words: str, third: bool) -> "Subject":
        subject = super().__new__(cls, words)
        subject.third = third
        return subject

    def __format__(self, verb: str) -> str:
        if not verb:
            return str(self)
        return f"{self} {third_person(verb) if self.third else verb}"


# The words an explanation's template names by audience ("{Your} weights are too flat.
# {fix}Subtract ..."): each template is written once, and read to the student or about them.
WORDS = {
    Audience.STUDENT: {"Your": "Your", "your": "your", "You": Subject("You", False), "you": Subject("you", False),
                       "fix": ""},
    Audience.INSTRUCTOR: {"Your": "The student's", "your": "the student's", "You": Subject("The student", True),
                          "you": Subject("the student", True), "fix": "The fix: "},
}


# How an id reads in a summary line; the ids themselves are the contract's.
LABELS = {"crashed": "raised an error", "not_implemented": "not implemented yet", "timeout": "ran out of time"}


def label(mistake: str) -> str:
    return LABELS.get(mistake, mistake.replace("_", " "))


def explanations() -> dict[str, str]:
    """Every id that has words: the course's mistakes and the engine's own outcomes."""
    return {**course.current().explanations.EXPLANATIONS, **OWN}


def known(mistake: str) -> bool:
    return mistake in OWN or mistake in course.current().explanations.EXPLANATIONS


def overflow() -> str | None:
    """The mistake a course takes non-finite output beside finite output for, where no
    catalogued mistake reproduces it (its explanations' OVERFLOW; None: it names none)."""
    return getattr(course.current().explanations, "OVERFLOW", None)


def explain(mistake: str, who: Audience = Audience.STUDENT, **ctx) -> str:
    """The explanation of a mistake, with the numbers of this input where they are known: the
    course's phrases for its exercise's numbers, and the engine's for its own (a time limit);
    in the words of ``who`` reads it (``WORDS``)."""
    words = course.current().explanations
    template = getattr(words, "FOR_EXERCISE", {}).get((mistake, ctx.get("func"))) or explanations()[mistake]
    fields = {**WORDS[who], "func": ctx.get("func", f"{WORDS[who]['your']} function"),
              "limit_txt": f" of {ctx['limit']:g} s" if ctx.get("limit") else ""}
    if mistake not in OWN:
        fields.update(words.fields({k: v for k, v in ctx.items() if k not in ("func", "limit")}))
    return template.format(**fields)


def context(call) -> dict:
    """Numbers an explanation can quote, read off a call's inputs."""
    from .assignments import exercise  # the declarations import this module

    try:
        return exercise(call.func).numbers(call)
    except (ValueError, LookupError, AttributeError, TypeError, ZeroDivisionError):
        return {}  # inputs of another form than the exercise's: quote no numbers


def diagnose(ref, call, got: np.ndarray, pick, atol: float, rtol: float) -> str | None:
    """The id of the known mistake whose output on ``call`` matches ``got``, when it is the only
    one: an output that two different mistakes give cannot say which of them was made, so it
    names neither. (A function's own entry and one it inherits may share an id: that is one.)"""
    found: set[str] = set()
    for mistake, fn in ref.mistakes(call.func):
        if mistake in found:
            continue
        try:
            with np.errstate(all="ignore"):
                candidate = np.asarray(pick(fn(*call.args, **call.kwargs)))
        except Exception:  # noqa: BLE001 - a variant may not apply to these shapes
            continue
        if candidate.shape == got.shape and np.allclose(
                got.astype(np.float64), candidate.astype(np.float64), atol=atol, rtol=rtol, equal_nan=True):
            found.add(mistake)
    return found.pop() if len(found) == 1 else None
