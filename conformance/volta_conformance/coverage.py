"""Which public objects of ``volta_core`` exist, and which no case covers.

Public ops are the functions exported by ``volta_core`` and ``volta_core.nn.functional``,
minus :data:`NON_OPS` (creation, devices, dtypes, grad modes: not array ops). Layers are
the :class:`~volta_core.nn.Module` subclasses exported by ``volta_core.nn``, optimizers
the :class:`~volta_core.optim.Optimizer` subclasses exported by ``volta_core.optim``.
"""

from __future__ import annotations

import inspect
from typing import Any

NON_OPS = frozenset({
    # creation functions and random state: covered by the creation cases when present,
    # but not array ops
    "tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones", "empty", "full",
    "arange", "linspace", "eye", "rand", "randn", "randint", "randperm", "manual_seed", "seed",
    "get_num_threads", "set_num_threads",  # thread settings
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "generator_states", "set_generator_states", "bernoulli", "multinomial",
    "normal", "uniform",
    # devices, dtypes, grad modes, utilities
    "backends", "device", "get_default_device", "set_default_device", "synchronize",
    "enable_grad", "no_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled",
    # mixed precision: autocast state and the float32 matmul precision (tests/amp)
    "autocast", "is_autocast_enabled", "get_autocast_dtype", "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "get_dtype", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
    "is_tensor", "is_floating_point", "is_contiguous", "numel", "save", "load",
    "set_printoptions", "compile",
    # random state, creation of index grids and logspace, and type/shape queries
    "initial_seed", "get_rng_state", "set_rng_state", "poisson", "logspace", "tril_indices",
    "triu_indices", "broadcast_shapes", "can_cast", "typename", "is_complex", "is_nonzero",
    "range", "hann_window", "hamming_window", "blackman_window", "bartlett_window",
    "kaiser_window", "scalar_tensor", "empty_strided",
    # random ops: their values differ per backend generator by design
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "rrelu", "gumbel_softmax", "dropout_", "alpha_dropout_", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_",
    # PyTorch's top-level state functions (ops/aliases.py): autocast, anomaly detection,
    # determinism, and tensor queries, creation from buffers, transforms and control flow
    "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
    "set_autocast_enabled", "set_autocast_dtype", "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
    "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
    "autocast_decrement_nesting", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled", "get_deterministic_debug_mode", "set_deterministic_debug_mode",
    "is_signed", "is_same_size", "is_conj", "is_neg", "is_inference", "get_device",
    "asarray", "frombuffer", "to_dlpack", "empty_permuted", "vmap", "cond",
})
"""Exported functions that are not array ops, so need no conformance case."""

NON_LAYERS = frozenset({
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Parameter", "Buffer", "Identity", "RNNBase", "RNNCellBase",
})
"""Exported ``nn`` classes that are containers or bases, not layers."""


def _functions(module: Any) -> dict[str, Any]:
    out = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
            continue
        out[name] = obj
    return out


def public_ops() -> dict[str, Any]:
    """Public op functions by dotted path (``"add"``, ``"nn.functional.conv2d"``)."""
    import volta_core as vt

    ops = {n: f for n, f in _functions(vt).items() if n not in NON_OPS}
    try:
        import volta_core.nn.functional as F
    except Exception:  # nn being written: nothing to cover yet
        return ops
    known = {id(inspect.unwrap(f)) for f in ops.values()}
    for name, fn in _functions(F).items():
        if name not in NON_OPS and id(inspect.unwrap(fn)) not in known:
            ops[f"nn.functional.{name}"] = fn
    return ops


def _subclasses(module_path: str, base_path: str, skip: frozenset) -> dict[str, Any]:
    import importlib

    try:
        module = importlib.import_module(f"volta_core.{module_path}")
        base = getattr(module, base_path)
    except Exception:
        return {}
    return {f"{module_path}.{n}": c for n in dir(module) if not n.startswith("_")
            and n not in skip and inspect.isclass(c := getattr(module, n))
            and issubclass(c, base) and c is not base}


def public_layers() -> dict[str, Any]:
    """``nn`` layer classes (losses included) by dotted path (``"nn.Linear"``)."""
    return _subclasses("nn", "Module", NON_LAYERS)


def public_optimizers() -> dict[str, Any]:
    """Optimizer classes by dotted path (``"optim.SGD"``)."""
    return _subclasses("optim", "Optimizer", frozenset())


def covered_objects(cases: list) -> set[int]:
    """Ids of the objects the cases cover (their op, ``covers`` and ``needs`` aside)."""
    from .case import resolve

    ids = set()
    for case in cases:
        for path in (case.op, *case.covers):
            obj = resolve(path)
            if obj is not None:  # (vt's functions wrap the ops to take out=)
                ids.add(id(inspect.unwrap(obj)))
    return ids


def uncovered(cases: list | None = None) -> dict[str, list[str]]:
    """Public ops, layers and optimizers that exist but have no case, by kind."""
    if cases is None:
        from .cases import all_cases

        cases = all_cases()
    ids = covered_objects(cases)
    return {kind: sorted(p for p, obj in found.items() if id(inspect.unwrap(obj)) not in ids)
            for kind, found in (("ops", public_ops()), ("layers", public_layers()),
                                ("optimizers", public_optimizers()))}
