"""The source of every random decision a program generator makes, and the shrinker.

A program is a pure function of a sequence of integer choices (as in Hypothesis'
Conjecture engine): each ``choice(n)`` consumes one integer and reduces it modulo
``n``. A run drawn from a seed records the integers it used; shrinking edits that
record (drops chunks, lowers values towards 0) and replays it. Past the end of the
record every choice is 0, and the generator is written so that 0 is always the
simplest option (fewer ops, smaller shapes, float32, contiguous, plain values), so
shorter and smaller records mean simpler programs.

The same generator therefore runs from ``random.Random`` (fast: the CI bulk and the
campaign), from a recorded list (replay and shrinking) or from Hypothesis
(``st.lists(st.integers(...))``, which shrinks the list itself).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence


class Choices:
    """Draws integers from a seeded generator or replays a recorded list.

    Args:
        seed: seed of a ``random.Random`` that supplies fresh choices; ``None`` with
            ``record`` replays only (0 past its end).
        record: choices to replay first.
    """

    def __init__(self, seed: int | None = None, record: Sequence[int] = ()) -> None:
        self._rng = random.Random(seed) if seed is not None else None
        self._replay = list(record)
        self.record: list[int] = []

    def choice(self, n: int) -> int:
        """An integer in ``[0, n)``; 0 is the simplest option."""
        if n <= 1:
            return 0
        i = len(self.record)
        if i < len(self._replay):
            raw = self._replay[i]
        elif self._rng is not None:
            raw = self._rng.randrange(1 << 16)
        else:
            raw = 0
        self.record.append(raw)
        return raw % n

    def pick(self, options: Sequence):
        """One of ``options``; the first is the simplest."""
        return options[self.choice(len(options))]

    def chance(self, p: float) -> bool:
        """True with probability about ``p`` (False is the simple answer)."""
        return self.choice(1000) >= 1000 - int(p * 1000)

    def weighted(self, options: Sequence[tuple[float, object]]):
        """One of ``(weight, value)`` pairs; the first is the simplest."""
        total = sum(w for w, _ in options)
        x = self.choice(10_000) * total / 10_000
        for w, v in options:
            if x < w:
                return v
            x -= w
        return options[-1][1]


def shrink(record: list[int], still_fails: Callable[[list[int]], bool],
           max_tries: int = 400) -> list[int]:
    """Shortest/lowest record for which ``still_fails`` holds (greedy, like minithesis).

    Passes: drop chunks of 8, 4, 2, 1 choices; set single choices to 0; halve them.
    Stops after ``max_tries`` replays.
    """
    best = list(record)
    tries = 0

    def attempt(candidate: list[int]) -> bool:
        nonlocal best, tries
        tries += 1
        if candidate != best and still_fails(candidate):
            best = candidate
            return True
        return False

    improved = True
    while improved and tries < max_tries:
        improved = False
        for size in (8, 4, 2, 1):
            i = len(best) - size
            while i >= 0 and tries < max_tries:
                if attempt(best[:i] + best[i + size:]):
                    improved = True
                i -= 1
        for i in range(len(best)):
            if tries >= max_tries:
                break
            if best[i] != 0 and attempt(best[:i] + [0] + best[i + 1:]):
                improved = True
                continue
            while best[i] > 1 and tries < max_tries and attempt(
                    best[:i] + [best[i] // 2] + best[i + 1:]):
                improved = True
    return best
