"""``StateDictMapper``: chainable renames and reshapes to load weights from other tools.

Example (a PyTorch checkpoint saved from a ``DataParallel`` model, keeping only the
encoder, with one dense layer stored the other way round)::

    mapper = (StateDictMapper()
              .strip_prefix("module.")
              .select_keys(r"^encoder\\.")
              .rename_prefix("encoder.", "")
              .transpose("proj.weight"))
    model.load_state_dict(mapper(vt.io.load_state_dict("pytorch_model.safetensors")))

Patterns are regular expressions searched anywhere in a key (``re.search``); anchor
them with ``^`` and ``$`` to match whole keys. Steps run in the order they were added.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor

Step = tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]


class StateDictMapper:
    """A pipeline of key and value transformations applied to a ``{name: tensor}`` dict.

    Every method adds a step and returns the mapper, so calls chain. ``apply`` (or
    calling the mapper) returns a new dict; the input is not modified.

    Args:
        strict: raise if a step names an exact key (``rename``, ``transpose``) that is
            missing, or if a pattern given to ``transpose_pattern``/``select_keys``
            matches nothing (default: True).
    """

    def __init__(self, strict: bool = True) -> None:
        self.strict = strict
        self._steps: list[Step] = []

    # -- keys --------------------------------------------------------------------------
    def rename(self, old: str, new: str) -> StateDictMapper:
        """Rename the key ``old`` to ``new``."""
        def step(sd: dict[str, Any]) -> dict[str, Any]:
            self._require(sd, [old], f"rename({old!r}, {new!r})")
            return self._rekey(sd, lambda k: new if k == old else k, f"rename({old!r})")
        return self._add(f"rename({old!r}, {new!r})", step)

    def rename_regex(self, pattern: str, repl: str) -> StateDictMapper:
        """Rewrite every key with ``re.sub(pattern, repl, key)`` (groups as ``\\1``)."""
        rx = re.compile(pattern)
        return self._add(f"rename_regex({pattern!r}, {repl!r})",
                         lambda sd: self._rekey(sd, lambda k: rx.sub(repl, k),
                                                f"rename_regex({pattern!r})"))

    def rename_prefix(self, old: str, new: str) -> StateDictMapper:
        """Replace the prefix ``old`` by ``new`` in the keys that start with it."""
        def fn(k: str) -> str:
            return new + k[len(old):] if k.startswith(old) else k
        return self._add(f"rename_prefix({old!r}, {new!r})",
                         lambda sd: self._rekey(sd, fn, f"rename_prefix({old!r})"))

    def strip_prefix(self, prefix: str) -> StateDictMapper:
        """Remove ``prefix`` from the keys that start with it (e.g. ``"module."``)."""
        return self.rename_prefix(prefix, "")

    def add_prefix(self, prefix: str) -> StateDictMapper:
        """Put ``prefix`` in front of every key."""
        return self._add(f"add_prefix({prefix!r})",
                         lambda sd: {prefix + k: v for k, v in sd.items()})

    def map_keys(self, fn: Callable[[str], str]) -> StateDictMapper:
        """Rename every key with ``fn(key)``."""
        return self._add(f"map_keys({getattr(fn, '__name__', fn)})",
                         lambda sd: self._rekey(sd, fn, "map_keys"))

    def select_keys(self, *patterns: str) -> StateDictMapper:
        """Keep only the keys matching at least one of ``patterns``."""
        rxs = [re.compile(p) for p in patterns]

        def step(sd: dict[str, Any]) -> dict[str, Any]:
            if self.strict:
                unused = [p.pattern for p in rxs if not any(p.search(k) for k in sd)]
                if unused:
                    raise KeyError(f"StateDictMapper.select_keys: pattern(s) {unused} match "
                                   f"no key; keys are {_preview(sd)}")
            return {k: v for k, v in sd.items() if any(p.search(k) for p in rxs)}
        return self._add(f"select_keys{patterns}", step)

    def exclude_keys(self, *patterns: str) -> StateDictMapper:
        """Drop the keys matching any of ``patterns``."""
        rxs = [re.compile(p) for p in patterns]
        return self._add(f"exclude_keys{patterns}", lambda sd: {
            k: v for k, v in sd.items() if not any(p.search(k) for p in rxs)})

    # -- values ------------------------------------------------------------------------
    def transpose(self, *keys: str) -> StateDictMapper:
        """Swap the last two dimensions of the tensors at ``keys`` (``.T`` for a matrix)."""
        def step(sd: dict[str, Any]) -> dict[str, Any]:
            self._require(sd, list(keys), f"transpose{keys}")
            return {k: _swap(k, v) if k in keys else v for k, v in sd.items()}
        return self._add(f"transpose{keys}", step)

    def transpose_pattern(self, pattern: str) -> StateDictMapper:
        """Swap the last two dimensions of every tensor whose key matches ``pattern``."""
        rx = re.compile(pattern)

        def step(sd: dict[str, Any]) -> dict[str, Any]:
            hits = [k for k in sd if rx.search(k)]
            if self.strict and not hits:
                raise KeyError(f"StateDictMapper.transpose_pattern: {pattern!r} matches no "
                               f"key; keys are {_preview(sd)}")
            return {k: _swap(k, v) if rx.search(k) else v for k, v in sd.items()}
        return self._add(f"transpose_pattern({pattern!r})", step)

    def transform(self, fn: Callable[[Any], Any], pattern: str | None = None) -> StateDictMapper:
        """Replace each value ``v`` by ``fn(v)``, for the keys matching ``pattern`` (all
        keys when None). E.g. ``transform(lambda t: t.float(), r"\\.weight$")``."""
        rx = re.compile(pattern) if pattern is not None else None
        return self._add(f"transform({getattr(fn, '__name__', fn)}, {pattern!r})", lambda sd: {
            k: fn(v) if rx is None or rx.search(k) else v for k, v in sd.items()})

    # -- running -----------------------------------------------------------------------
    def apply(self, state_dict: dict[str, Any]) -> dict[str, Any]:
        """Run every step in order on ``state_dict``; return the new dict."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"StateDictMapper.apply: expected a dict, got "
                            f"{type(state_dict).__name__}")
        out = dict(state_dict)
        for _, step in self._steps:
            out = step(out)
        return out

    __call__ = apply

    def __len__(self) -> int:
        return len(self._steps)

    def __repr__(self) -> str:
        body = "".join(f"\n  .{name}" for name, _ in self._steps)
        return f"StateDictMapper(strict={self.strict}){body}"

    # -- helpers -----------------------------------------------------------------------
    def _add(self, name: str, step: Callable[[dict[str, Any]], dict[str, Any]]
             ) -> StateDictMapper:
        self._steps.append((name, step))
        return self

    def _require(self, sd: dict[str, Any], keys: list[str], step: str) -> None:
        missing = [k for k in keys if k not in sd]
        if missing and self.strict:
            hints = {k: difflib.get_close_matches(k, list(sd), n=3) for k in missing}
            detail = "; ".join(f"{k!r} (close: {h})" if h else repr(k) for k, h in hints.items())
            raise KeyError(f"StateDictMapper.{step}: missing key(s) {detail}; pass "
                           "strict=False to skip missing keys")

    @staticmethod
    def _rekey(sd: dict[str, Any], fn: Callable[[str], str], step: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        origin: dict[str, str] = {}
        clashes = []
        for k, v in sd.items():
            nk = fn(k)
            if nk in out:
                clashes.append(f"{origin[nk]!r} and {k!r} -> {nk!r}")
            out[nk] = v
            origin[nk] = k
        if clashes:
            raise ValueError(f"StateDictMapper.{step}: several keys map to one name: "
                             + "; ".join(clashes))
        return out


def _swap(key: str, value: Any) -> Any:
    ndim = getattr(value, "ndim", 0)
    if ndim < 2:
        raise ShapeError(f"StateDictMapper.transpose: {key!r} has shape "
                         f"{tuple(getattr(value, 'shape', ()))}; only tensors with >= 2 "
                         "dimensions can be transposed")
    return value.transpose(-2, -1) if isinstance(value, Tensor) else value.swapaxes(-2, -1)


def _preview(sd: dict[str, Any], n: int = 8) -> str:
    keys = list(sd)
    more = f" ... ({len(keys) - n} more)" if len(keys) > n else ""
    return str(keys[:n]) + more


__all__ = ["StateDictMapper"]
