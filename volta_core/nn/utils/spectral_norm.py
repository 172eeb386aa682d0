"""Spectral normalisation (Miyato et al., 2018): ``w / sigma(w)``, with the largest
singular value ``sigma`` estimated by power iteration (PyTorch's hook-based form; see
:func:`volta_core.nn.utils.parametrizations.spectral_norm` for the newer one)."""

from __future__ import annotations

from typing import Any

from ...autograd.grad_mode import no_grad
from ...creation import randn
from ...cuda_graphs import write_state
from ...tensor import Tensor
from ..distance import normalize
from ..module import Module
from ..parameter import Parameter


def _default_dim(module: Module) -> int:
    from .. import conv

    names = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
    transposed = tuple(getattr(conv, n) for n in names if hasattr(conv, n))
    return 1 if isinstance(module, transposed) else 0


def _as_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` as a matrix with ``dim`` as its rows."""
    if dim != 0:
        order = [dim, *(d for d in range(weight.ndim) if d != dim)]
        weight = weight.permute(*order)
    return weight.reshape(weight.shape[0], -1)


def _store(buf: Tensor, value: Tensor) -> None:
    write_state(buf, value.array)


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to ``<name>_orig / sigma``,
    running the power iteration (updating ``<name>_u``, ``<name>_v``) in training mode."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.dim, self.eps = name, dim, eps
        self.n_power_iterations = n_power_iterations

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = _as_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    _store(v, normalize(mat.t() @ u, dim=0, eps=self.eps))
                    _store(u, normalize(mat @ v, dim=0, eps=self.eps))
        sigma = (u.detach().clone() * (mat @ v.detach().clone())).sum()
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        object.__delattr__(module, self.name)
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        del module._parameters[self.name + "_orig"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        object.__setattr__(module, self.name,
                           self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        if name not in module._parameters or module._parameters[name] is None:
            raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter "
                             f"{name!r}")
        weight = module._parameters[name]
        with no_grad():
            mat = _as_matrix(weight, dim)
            h, w = mat.shape
            u = normalize(randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            v = normalize(randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", weight)
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm before every forward.

    Adds the parameter ``<name>_orig`` and the buffers ``<name>_u``, ``<name>_v`` (the
    power-iteration vectors, updated in training mode).

    Args:
        module: the module.
        name: the weight's name.
        n_power_iterations: power iterations per forward in training.
        eps: the smallest norm when normalising.
        dim: the dim of the output channels (1 for ConvTranspose, else 0, when None).
    """
    SpectralNorm.apply(module, name, n_power_iterations,
                       _default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` becomes one plain parameter again."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")


__all__ = ["spectral_norm", "remove_spectral_norm"]
