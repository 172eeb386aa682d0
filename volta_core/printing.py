"""``vt.set_printoptions``: how tensors print (precision, summarisation, line width and
scientific notation), as PyTorch's. Until it is called, tensors print with NumPy's own
defaults."""

from __future__ import annotations

from typing import Any

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)}
_options: dict[str, Any] = {}  # NumPy printoptions for Tensor.__repr__; empty: NumPy's


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print.

    Args:
        precision: digits after the decimal point.
        threshold: element count above which a tensor is summarised (``...``).
        edgeitems: items shown at each end of a summarised dim.
        linewidth: characters per line.
        profile: ``'default'``, ``'short'`` or ``'full'`` (PyTorch's presets), applied
            first.
        sci_mode: True forces scientific notation, False suppresses it, None decides.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, "
                             f"got {profile!r}")
        _options.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _options[key] = value
    if sci_mode is not None:
        _options.pop("formatter", None)
        _options["suppress"] = not sci_mode
        if sci_mode:
            digits = _options.get("precision", 4)
            _options["formatter"] = {"float_kind": lambda v: f"{v:.{digits}e}"}
    if _options.get("threshold") == float("inf"):
        import sys

        _options["threshold"] = sys.maxsize  # NumPy takes an int


def numpy_options() -> dict[str, Any]:
    """The NumPy printoptions ``Tensor.__repr__`` applies (empty until set)."""
    return _options


def format_host(host: Any) -> str:
    """``repr`` of a host array (``Backend.to_host``'s NumPy array) under the options."""
    if not _options:
        return repr(host)
    import sys

    # the host array's own library (NumPy, by to_host's contract): the core imports none
    lib = sys.modules[type(host).__module__.partition(".")[0]]
    with lib.printoptions(**_options):
        return repr(host)


__all__ = ["set_printoptions"]
