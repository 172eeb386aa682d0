"""PyTorch's top-level spellings of ops Volta has under other names (``ops/aliases.py``'s
in-place functions, ``*_copy`` forms and other names, and ``nn/aten_forms.py``'s ATen
forms of the ``nn.functional`` ops), against PyTorch on the same inputs: values, dtypes,
shapes, gradients, signatures, in-place identity and version bumps, and copies that
share no memory."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys

import numpy as np
import pytest
from torch_ref import compare

import volta_core as vt
from volta_core.views import storage

torch = pytest.importorskip("torch")

pytestmark = [
    # PyTorch's deprecation notes (frobenius_norm, nuclear_norm, qr, asarray's default), and
    # NumPy's on the NaNs nan_to_num_ is given to replace
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]

RNG = np.random.default_rng(0)


def _r(*shape, low=-1.0, high=1.0, dtype=np.float32):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _idx(*shape, n):
    return RNG.integers(0, n, size=shape).astype(np.int64)


UNARY_INPLACE = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_", "deg2rad_",
    "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_",
    "log1p_", "log2_", "log_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "zero_", "selu_", "celu_")
# inputs inside each function's domain
DOMAIN = {"acosh_": (1.2, 3.0), "arccosh_": (1.2, 3.0), "log_": (0.2, 2.0),
          "log2_": (0.2, 2.0), "log10_": (0.2, 2.0), "sqrt_": (0.2, 2.0), "rsqrt_": (0.2, 2.0),
          "reciprocal_": (0.5, 2.0), "acos_": (-0.9, 0.9), "arccos_": (-0.9, 0.9),
          "asin_": (-0.9, 0.9), "arcsin_": (-0.9, 0.9), "atanh_": (-0.9, 0.9),
          "arctanh_": (-0.9, 0.9)}

# PyTorch implements no derivative of these in-place forms (their out-of-place ops have one)
NO_TORCH_GRAD = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}

ALIASES = (
    *UNARY_INPLACE, "clamp_", "clip_", "clamp_min_", "clamp_max_", "fill_", "round_", "logit_",
    "nan_to_num_", "xlogy_", "ldexp_", "gcd_", "lcm_", "addmv_", "detach_", "conj_physical_",
    "fill", "rsub", "detach", "is_signed", "is_same_size", "is_conj", "is_neg", "is_inference",
    "get_device", "igamma", "igammac", "adjoint", "real", "qr", "unsafe_chunk", "unsafe_split",
    "split_with_sizes", "unsafe_split_with_sizes", "nonzero_static", "frobenius_norm",
    "nuclear_norm", "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy",
    "expand_copy", "permute_copy", "select_copy", "slice_copy", "split_copy",
    "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
    "unfold_copy", "unsqueeze_copy", "view_copy", "asarray", "frombuffer", "to_dlpack",
    "empty_permuted", "vmap", "cond", "is_autocast_cpu_enabled", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "set_autocast_enabled", "set_autocast_dtype",
    "set_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_gpu_dtype",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_anomaly_enabled", "get_deterministic_debug_mode",
    "set_deterministic_debug_mode")


def _aten_names():
    from volta_core.nn import aten_forms

    return tuple(aten_forms.__all__)


# -- the names, their laziness and their signatures ---------------------------------------

def test_every_name_is_torchs_and_volta_has_it():
    for name in (*ALIASES, *_aten_names()):
        assert callable(getattr(torch, name)), name
        assert callable(getattr(vt, name)), name


def test_aten_forms_resolve_lazily_and_are_listed():
    from volta_core.nn import aten_forms

    assert vt._ATEN_FORMS == frozenset(aten_forms.__all__)
    assert set(aten_forms.__all__) <= set(dir(vt))
    code = ("import sys, volta_core as vt\n"
            "assert 'volta_core.nn' not in sys.modules\n"
            "assert vt.conv2d is __import__('volta_core.nn.aten_forms', fromlist=['x']).conv2d\n"
            "assert vt.conv1d is vt.nn.functional.conv1d\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def _stub_overloads() -> dict[str, list[list[tuple[str, bool]]]]:
    """PyTorch's typing stubs of its C functions: every overload's ``(name, keyword-only)``
    arguments (``out`` left out)."""
    import os

    found: dict[str, list] = {}
    root = os.path.join(os.path.dirname(torch.__file__), "_C")
    for stub in ("_VariableFunctions.pyi", "__init__.pyi"):
        with open(os.path.join(root, stub)) as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                a = node.args
                found.setdefault(node.name, []).append(
                    [(x.arg, False) for x in a.posonlyargs + a.args]
                    + [(x.arg, True) for x in a.kwonlyargs if x.arg != "out"])
    return found


STUBS = _stub_overloads()


def _shape(sig: inspect.Signature) -> list[tuple[str, bool]]:
    return [(p.name, p.kind is p.KEYWORD_ONLY) for p in sig.parameters.values()
            if p.name != "out"]


def _torch_overloads(name: str) -> list[list[tuple[str, bool]]]:
    if name in STUBS:
        return STUBS[name]
    try:
        return [_shape(inspect.signature(getattr(torch, name)))]
    except (TypeError, ValueError):  # a binding documented by its docstring's first line
        line = getattr(torch, name).__doc__.strip().splitlines()[0]
        a = ast.parse(f"def f{line[len(name):].split(' -> ')[0]}: pass").body[0].args
        return [[(x.arg, False) for x in a.args] + [(x.arg, True) for x in a.kwonlyargs]]


@pytest.mark.parametrize("name", [*ALIASES, *_aten_names()])
def test_signature_is_one_of_pytorchs_overloads(name):
    """Argument names, order and positional/keyword-only kinds are those of one of
    PyTorch's overloads (Volta merges overloads that differ only in types)."""
    def key(shape):  # positional in order; the keyword-only ones in any order
        return [a for a in shape if not a[1]], sorted(a for a in shape if a[1])

    got = _shape(inspect.signature(inspect.unwrap(getattr(vt, name))))
    overloads = _torch_overloads(name)
    assert key(got) in [key(o) for o in overloads], (got, overloads)


# -- in-place functions -----------------------------------------------------------------

@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_in_place_functions_match_pytorch(name):
    lo, hi = DOMAIN.get(name, (-2.0, 2.0))
    a = _r(3, 4, low=lo, high=hi)
    # on an intermediate, so that gradients flow to the leaf
    compare(lambda m, x: getattr(m, name)(x * 1.0), a, grad=name not in NO_TORCH_GRAD)
    if name in NO_TORCH_GRAD:  # PyTorch has none in place: the out-of-place op's
        compare(lambda m, x: getattr(m, name)(x * 1.0) if m is vt else
                getattr(m, name[:-1])(x * 1.0), a)
    for m in (vt, torch):
        x = m.tensor(a)
        before = x._version[0] if m is vt else x._version
        assert getattr(m, name)(x) is x
        assert (x._version[0] if m is vt else x._version) == before + 1


@pytest.mark.parametrize("call", [
    lambda m, x: m.clamp_(x * 1, -0.3, 0.4), lambda m, x: m.clamp_(x * 1, min=0.1),
    lambda m, x: m.clip_(x * 1, max=0.2), lambda m, x: m.clamp_min_(x * 1, 0.1),
    lambda m, x: m.clamp_max_(x * 1, -0.1), lambda m, x: m.fill_(x * 1, 2.5),
    lambda m, x: m.fill_(x * 1, m.tensor(1.5)), lambda m, x: m.round_(x * 10),
    lambda m, x: m.round_(x * 10, decimals=1), lambda m, x: m.logit_(x * 0.4 + 0.5, 0.05),
    lambda m, x: m.nan_to_num_(m.log(x)), lambda m, x: m.nan_to_num_(m.log(x), 1.0, 2.0, -3.0),
    lambda m, x: m.xlogy_(x * 1, 2.0), lambda m, x: m.xlogy_(x * 1, x.abs() + 0.5),
    lambda m, x: m.ldexp_(x * 1, m.tensor([1, 2, 0, 3])),
    lambda m, x: m.addmv_(x[0, :3] * 1, x[:, :3].t(), x[1, :3] * 1, beta=0.5, alpha=2),
    lambda m, x: m.sigmoid_(x * 1), lambda m, x: m.threshold_(x * 1, 0.1, -5.0),
    lambda m, x: m.celu_(x * 1, 0.5), lambda m, x: m.rrelu_(x * 1, 0.1, 0.3),
])
def test_in_place_functions_with_arguments_match_pytorch(call):
    compare(call, _r(3, 4))


@pytest.mark.parametrize("name,args", [
    ("clamp_", (-0.3, 0.4)), ("clip_", (None, 0.2)), ("clamp_min_", (0.1,)),
    ("clamp_max_", (0.1,)), ("fill_", (2.0,)), ("round_", ()), ("logit_", (0.1,)),
    ("nan_to_num_", ()), ("xlogy_", (2.0,)), ("threshold_", (0.1, 3.0)), ("celu_", (0.5,)),
    ("rrelu_", ()), ("dropout_", (0.5, True)), ("feature_dropout_", (0.5, True)),
    ("alpha_dropout_", (0.5, True)), ("feature_alpha_dropout_", (0.5, True)),
])
def test_in_place_functions_return_input_and_bump_its_version(name, args):
    a = _r(3, 4, low=0.1, high=0.9)
    for m in (vt, torch):
        x = m.tensor(a)
        before = x._version[0] if m is vt else x._version
        assert getattr(m, name)(x, *args) is x
        # one write in Volta; PyTorch's alpha dropouts write twice (a multiply, an add)
        assert (x._version[0] == before + 1) if m is vt else x._version > before


def test_integer_in_place_functions_match_pytorch():
    a, b = np.array([4, 6, -9, 0, 15], np.int64), np.array([6, 4, 6, 5, 10], np.int64)
    compare(lambda m, x, y: m.gcd_(x * 1, y), a, b)
    compare(lambda m, x, y: m.lcm_(x * 1, y), a, b)
    with pytest.raises(vt.DTypeError):  # a float result can't go into int64
        vt.sqrt_(vt.tensor(a))


def test_in_place_functions_refuse_non_tensors_and_leaves():
    with pytest.raises(TypeError, match="abs_"):
        vt.abs_(3.0)
    with pytest.raises(vt.VoltaError):
        vt.exp_(vt.ones(2, requires_grad=True))


def test_new_tensor_methods_in_place_match_pytorch():
    a = _r(2, 3, low=-0.9, high=0.9)
    for name in ("acos_", "asinh_", "cosh_", "erf_", "deg2rad_", "fix_", "i0_", "igamma_"):
        args = (lambda m: (m.tensor(np.abs(a) + 0.5),)) if name == "igamma_" else (
            lambda m: ())
        compare(lambda m, x, n=name, f=args: getattr(x.abs() + 0.1 if n == "igamma_" else
                                                      x * 1, n)(*f(m)), a, grad=False)
    x = vt.tensor(a)
    assert x.conj_physical_() is x and not x.is_conj() and not x.is_neg()


# -- other names ---------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m, x: m.fill(x, 3.0), lambda m, x: m.fill(x, m.tensor(-1.5)),
    lambda m, x: m.rsub(x, 2.0), lambda m, x: m.rsub(x, 2.0, 3),
    lambda m, x: m.rsub(x, x[0] * 2, alpha=0.5), lambda m, x: m.detach(x) * x,
    # no gradient with respect to the first argument, in PyTorch as in Volta
    lambda m, x: m.igamma(x.detach().abs() + 0.5, x[0].abs() + 0.2),
    lambda m, x: m.igammac(x.detach().abs() + 0.5, x[0].abs() + 0.2),
    lambda m, x: m.adjoint(x), lambda m, x: m.real(x) * 2,
    lambda m, x: m.unsafe_chunk(x, 2, 1), lambda m, x: m.unsafe_split(x, 3, 1),
    lambda m, x: m.split_with_sizes(x, [1, 3], 1), lambda m, x: m.split_with_sizes(x, (2, 1)),
    lambda m, x: m.unsafe_split_with_sizes(x, [2, 2], dim=1),
    lambda m, x: m.frobenius_norm(x, (0, 1)), lambda m, x: m.frobenius_norm(x, 1, True),
    lambda m, x: m.frobenius_norm(x, dim=[0], keepdim=False),
    lambda m, x: m.nuclear_norm(x), lambda m, x: m.nuclear_norm(x, True),
    lambda m, x: m.nuclear_norm(x, (1, 0), keepdim=True),
    lambda m, x: m.nuclear_norm(x.reshape(2, 3, 2), dim=(1, 2)),
])
def test_other_names_match_pytorch(call):
    compare(call, _r(3, 4), tol=(1e-5, 1e-6))


def test_fill_gives_input_a_zero_gradient():
    for m in (vt, torch):
        x, v = m.ones(3, requires_grad=True), m.tensor(2.0, requires_grad=True)
        out = m.fill(x, v)
        assert out is not x and out.dtype == x.dtype
        out.sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad.tolist()), [0.0, 0.0, 0.0])
        assert v.grad.item() == 3.0
    compare(lambda m, x: m.fill(x, 2.7), np.array([1, 2], np.int64))


def test_queries_match_pytorch():
    a = _r(2, 3)
    for m in (vt, torch):
        x = m.tensor(a)
        assert m.is_signed(x) and not m.is_signed(m.tensor([1], dtype=m.uint8))
        assert m.is_same_size(x, x * 2) and not m.is_same_size(x, x.t())
        assert not m.is_conj(x) and not m.is_neg(x) and not m.is_inference(x)
        assert m.get_device(x) == -1
        assert m.detach_(x) is x and m.detach(x) is not x
    with pytest.raises(vt.ShapeError, match="adjoint"):
        vt.adjoint(vt.ones(3))
    with pytest.raises(TypeError, match="split_sizes"):
        vt.split_with_sizes(vt.ones(4), 2)
    with pytest.raises(vt.ShapeError, match="at most 2"):
        vt.frobenius_norm(vt.ones(2, 2, 2), (0, 1, 2))
    x = vt.tensor(a)
    assert vt.real(x) is x and vt.detach(vt.tensor(a, requires_grad=True)).requires_grad is False


def test_qr_function_matches_pytorch():
    a = _r(4, 3)
    for some in (True, False):
        q, r = torch.qr(torch.tensor(a), some)
        vq, vr = vt.qr(vt.tensor(a), some=some)
        assert tuple(vq.shape) == tuple(q.shape) and tuple(vr.shape) == tuple(r.shape)
        np.testing.assert_allclose((vq @ vr).numpy(), a, atol=1e-5)


def test_native_channel_shuffle_is_channel_shuffle():
    compare(lambda m, x: m.native_channel_shuffle(x, 2), _r(2, 6, 3), grad=False)
    x = vt.tensor(_r(2, 6, 3), requires_grad=True)  # PyTorch has no derivative: Volta's is
    vt.native_channel_shuffle(x, 3).sum().backward()  # channel_shuffle's
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 6, 3), np.float32))


def test_nonzero_static_matches_pytorch():
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], np.float32)
    for size, fill in ((5, -1), (2, -1), (3, 7), (0, -1)):
        compare(lambda m, x, s=size, f=fill: m.nonzero_static(x, size=s, fill_value=f), a,
                grad=False)
    compare(lambda m, x: m.nonzero_static(x[0, 0], size=2), a, grad=False)


# -- the *_copy forms ------------------------------------------------------------------------

COPIES = [
    lambda m, x: m.alias_copy(x), lambda m, x: m.as_strided_copy(x, (2, 2), (1, 4), 1),
    lambda m, x: m.diagonal_copy(x), lambda m, x: m.diagonal_copy(x, 1, 1, 0),
    lambda m, x: m.expand_copy(x[:1], (3, 4)), lambda m, x: m.expand_copy(x, [2, -1, 4]),
    lambda m, x: m.permute_copy(x, (1, 0)), lambda m, x: m.select_copy(x, 1, -1),
    lambda m, x: m.slice_copy(x), lambda m, x: m.slice_copy(x, 1, 1, None, 2),
    lambda m, x: m.slice_copy(x, -1, -5, 10), lambda m, x: m.slice_copy(x, dim=0, end=2),
    lambda m, x: m.split_copy(x, 3, 1), lambda m, x: m.split_with_sizes_copy(x, [1, 2]),
    lambda m, x: m.squeeze_copy(x[:1]), lambda m, x: m.squeeze_copy(x[:1], 0),
    lambda m, x: m.squeeze_copy(x[:1, None], (0, 1)), lambda m, x: m.t_copy(x),
    lambda m, x: m.transpose_copy(x, 0, 1), lambda m, x: m.unbind_copy(x),
    lambda m, x: m.unbind_copy(x, 1), lambda m, x: m.unfold_copy(x, 1, 2, 1),
    lambda m, x: m.unsqueeze_copy(x, 1), lambda m, x: m.view_copy(x, (2, 6)),
    lambda m, x: m.view_copy(x, [-1]),
]


@pytest.mark.parametrize("call", COPIES)
def test_copies_match_pytorch_and_share_no_memory(call):
    a = _r(3, 4)
    compare(call, a)
    x = vt.tensor(a)
    outs = call(vt, x)
    for out in outs if isinstance(outs, tuple) else (outs,):
        assert storage(out) is not storage(x)
        assert out.is_contiguous()
        before = out.numpy().copy()
        x.add_(1.0)
        np.testing.assert_array_equal(out.numpy(), before)


def test_detach_copy_is_a_copy_outside_the_graph():
    x = vt.tensor(_r(3), requires_grad=True)
    out = vt.detach_copy(x)
    assert not out.requires_grad and storage(out) is not storage(x)
    np.testing.assert_array_equal(out.numpy(), x.detach().numpy())
    with pytest.raises(ValueError, match="step"):
        vt.slice_copy(vt.ones(3), 0, 0, 3, -1)


# -- creation -------------------------------------------------------------------------------

def test_asarray_shares_memory_when_it_can():
    for m in (vt, torch):
        a = np.ones(3, np.float32)
        t = m.asarray(a)
        a[0] = 5.0
        assert t[0].item() == 5.0
        assert m.asarray(a, dtype=m.float64)[1].item() == 1.0  # a copy
        with pytest.raises(ValueError):
            m.asarray(a, dtype=m.float64, copy=False)
        with pytest.raises(ValueError):
            m.asarray([1, 2], copy=False)
        c = m.asarray(a, copy=True)
        a[1] = 7.0
        assert c[1].item() == 1.0
        x = m.ones(2)
        assert m.asarray(x) is x and m.asarray(x, dtype=m.float32) is x
        assert m.asarray(x, copy=True) is not x
        assert m.asarray(x, dtype=m.float64).dtype == m.float64
        with pytest.raises(ValueError):
            m.asarray(x, dtype=m.int64, copy=False)
        assert m.asarray([1, 2.5]).dtype == m.float32 and m.asarray(3).dtype == m.int64
        assert m.asarray(np.float64(2.0)).dtype == m.float64
        buf = bytearray(np.float32([1.0, 2.0]).tobytes())
        b = m.asarray(buf, dtype=m.float32)
        buf[0:4] = np.float32(9.0).tobytes()
        assert b.tolist() == [9.0, 2.0]


def test_asarray_requires_grad_and_history():
    for m in (vt, torch):
        w = m.ones(2, requires_grad=True)
        assert m.asarray(w).requires_grad
        y = m.asarray(w * 2, requires_grad=True)
        assert y.requires_grad and y.grad_fn is not None
        assert m.asarray(w, copy=True).grad_fn is not None
        assert not m.asarray(w * 2, requires_grad=False).requires_grad
        r = m.asarray(np.ones(2), requires_grad=True)
        assert r.requires_grad and r.is_leaf
    x = vt.ones(2)
    r = vt.asarray(x, requires_grad=True)  # a new leaf over x's memory; x is untouched
    assert r.requires_grad and not x.requires_grad and storage(r) is storage(x)


def test_frombuffer_and_dlpack_share_memory():
    buf = bytearray(np.arange(6, dtype=np.int32).tobytes())
    for m in (vt, torch):
        t = m.frombuffer(buf, dtype=m.int32, count=3, offset=4)
        assert t.tolist() == [1, 2, 3] and t.dtype == m.int32
    v = vt.frombuffer(buf, dtype=vt.int32)
    buf[0:4] = np.int32(-4).tobytes()
    assert v[0].item() == -4
    x = vt.arange(4.0)
    back = torch.from_dlpack(vt.to_dlpack(x)) if hasattr(torch, "from_dlpack") else None
    assert back is None or back.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_empty_permuted_has_pytorchs_shape_and_strides():
    for size, order in (((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((5,), (0,)), ((), ())):
        t = torch.empty_permuted(size, order)
        v = vt.empty_permuted(size, order, dtype=vt.float64, requires_grad=True)
        assert tuple(v.shape) == tuple(t.shape) and v.stride() == t.stride()
        assert v.dtype == vt.float64 and v.requires_grad
    with pytest.raises(vt.ShapeError):
        vt.empty_permuted((2, 3), (1, 1))
    with pytest.raises(vt.ShapeError):
        vt.empty_permuted((2, 3), (0,))


# -- control flow and transforms ---------------------------------------------------------------

def test_cond_runs_the_chosen_branch():
    x = _r(3)
    for m in (vt, torch):
        t = m.tensor(x)
        assert m.allclose(m.cond(t.sum() > 100, lambda a: a + 1, lambda a: a * 2, (t,)), t * 2)
        assert m.allclose(m.cond(True, lambda a, b: a + b, lambda a, b: a - b, [t, t]), t * 2)
    with pytest.raises(vt.ShapeError):
        vt.cond(vt.ones(2), lambda: 0, lambda: 1)
    with pytest.raises(TypeError):
        vt.cond("yes", lambda: 0, lambda: 1)


def test_vmap_is_vt_func_vmap():
    assert vt.vmap is vt.func.vmap
    out = vt.vmap(lambda r: r.sum())(vt.ones(3, 2))
    assert out.tolist() == [2.0, 2.0, 2.0]


# -- state ---------------------------------------------------------------------------------

def test_autocast_state_functions():
    assert not vt.is_autocast_cpu_enabled() and vt.is_autocast_cache_enabled()
    assert vt.get_autocast_cpu_dtype() == vt.bfloat16
    assert vt.get_autocast_gpu_dtype() == vt.float16
    try:
        vt.set_autocast_cpu_dtype(vt.float16)
        vt.set_autocast_enabled("cpu", True)
        assert vt.is_autocast_cpu_enabled() and vt.get_autocast_cpu_dtype() == vt.float16
        w = vt.ones(3, 3, requires_grad=True)
        assert (w @ w).dtype == vt.float16
        vt.set_autocast_cpu_enabled(False)
        assert not vt.is_autocast_enabled("cpu")
        vt.set_autocast_enabled(True)  # PyTorch's deprecated CUDA form
        assert vt.is_autocast_enabled("cuda")
        vt.set_autocast_enabled("cuda", False)
        vt.set_autocast_gpu_dtype(vt.bfloat16)
        assert vt.get_autocast_dtype("cuda") == vt.bfloat16
        with pytest.raises(vt.DTypeError):
            vt.set_autocast_dtype("cpu", vt.float64)
        assert vt.autocast_increment_nesting() == 1
        vt.set_autocast_cache_enabled(False)
        assert not vt.is_autocast_cache_enabled()
        vt.set_autocast_cache_enabled(True)
        vt.clear_autocast_cache()
        assert vt.autocast_decrement_nesting() == 0
        vt.clear_autocast_cache()
    finally:
        vt.set_autocast_enabled("cpu", False)
        vt.set_autocast_enabled("cuda", False)
        vt.set_autocast_cpu_dtype(vt.bfloat16)
        vt.set_autocast_gpu_dtype(vt.float16)
        vt.set_autocast_cache_enabled(True)
    with vt.autocast("cpu"):
        assert vt.is_autocast_cpu_enabled()
        vt.set_autocast_cpu_enabled(False)
        assert not vt.is_autocast_cpu_enabled()
    assert not vt.is_autocast_cpu_enabled()


def test_deterministic_debug_mode_round_trips():
    before = (vt.are_deterministic_algorithms_enabled(),
              vt.is_deterministic_algorithms_warn_only_enabled())
    try:
        for mode, want in ((1, 1), ("error", 2), ("default", 0), (2, 2), ("warn", 1), (0, 0)):
            vt.set_deterministic_debug_mode(mode)
            assert vt.get_deterministic_debug_mode() == want
        assert vt.are_deterministic_algorithms_enabled() is False
        with pytest.raises(ValueError, match="debug_mode"):
            vt.set_deterministic_debug_mode(3)
        with pytest.raises(ValueError, match="debug_mode"):
            vt.set_deterministic_debug_mode("loud")
        with pytest.raises(TypeError):
            vt.set_deterministic_debug_mode(1.0)
    finally:
        vt.use_deterministic_algorithms(before[0], warn_only=before[1])


def test_anomaly_state_functions():
    assert not vt.is_anomaly_enabled()
    try:
        vt.set_anomaly_enabled(True, check_nan=False)
        assert vt.is_anomaly_enabled() and not vt.is_anomaly_check_nan_enabled()
        assert vt.autograd.is_anomaly_enabled()
    finally:
        vt.set_anomaly_enabled(False)
    assert not vt.is_anomaly_enabled()


# -- the ATen forms of the nn.functional ops ---------------------------------------------------

@pytest.mark.parametrize("call,arrays", [
    (lambda m, x, w, b: m.conv1d(x, w, b, 2, 1), (_r(2, 3, 9), _r(4, 3, 3), _r(4))),
    (lambda m, x, w, b: m.conv1d(x, w, b, padding="same"), (_r(2, 3, 9), _r(4, 3, 3), _r(4))),
    (lambda m, x, w, b: m.conv2d(x, w, b, (2, 1), 1, 1, 1), (_r(2, 3, 6, 5), _r(4, 3, 3, 3),
                                                              _r(4))),
    (lambda m, x, w: m.conv2d(x, w, groups=3, dilation=2), (_r(1, 6, 7, 7), _r(6, 2, 2, 2))),
    (lambda m, x, w, b: m.conv3d(x, w, b, padding=1), (_r(1, 2, 4, 4, 4), _r(3, 2, 3, 3, 3),
                                                       _r(3))),
    (lambda m, x, w, b: m.conv_transpose1d(x, w, b, 2, 1, 1), (_r(2, 4, 5), _r(4, 3, 3),
                                                               _r(3))),
    (lambda m, x, w, b: m.conv_transpose2d(x, w, b, stride=2), (_r(1, 3, 4, 4),
                                                                _r(3, 2, 3, 3), _r(2))),
    (lambda m, x, w: m.conv_transpose3d(x, w, None, 2), (_r(1, 2, 3, 3, 3), _r(2, 2, 2, 2, 2))),
    (lambda m, x, w, b: m.convolution(x, w, b, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
     (_r(2, 3, 5, 5), _r(4, 3, 3, 3), _r(4))),
    (lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [1], True, [1], 1),
     (_r(2, 4, 5), _r(4, 3, 3), _r(3))),
    (lambda m, x, w, b: m.convolution(x, w, b, [1, 1, 1], [0, 0, 0], [1, 1, 1], False,
                                      [0, 0, 0], 2), (_r(1, 4, 3, 3, 3), _r(2, 2, 2, 2, 2),
                                                      _r(2))),
    (lambda m, x, w, b: m.conv_tbc(x, w, b, 1), (_r(7, 2, 3), _r(3, 3, 5), _r(5))),
    (lambda m, x, w, b: m.layer_norm(x, (4,), w, b, 1e-3, False), (_r(2, 3, 4), _r(4),
                                                                    _r(4))),
    (lambda m, x: m.layer_norm(x, [3, 4]), (_r(2, 3, 4),)),
    (lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-4, True), (_r(2, 4, 3), _r(4), _r(4))),
    (lambda m, x: m.group_norm(x, 1), (_r(2, 4, 3),)),
    (lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
     (_r(4, 3, 2), _r(3), _r(3))),
    (lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
     (_r(2, 3, 5), _r(3), _r(3))),
    (lambda m, x, w: m.rms_norm(x, [4], w, 1e-6), (_r(2, 3, 4), _r(4))),
    (lambda m, w, i: m.embedding(w, i), (_r(6, 3), _idx(2, 4, n=6))),
    (lambda m, w, i: m.embedding(w, i, 2), (_r(6, 3), np.array([0, 2, 2, 5]))),
    (lambda m, w, i: m.embedding(w, i, -2, True), (_r(6, 3), np.array([0, 4, 4, 5]))),
    (lambda m, x: m.selu(x), (_r(3, 4),)), (lambda m, x: m.celu(x, 0.7), (_r(3, 4),)),
    (lambda m, x: m.rrelu(x), (_r(3, 4),)), (lambda m, x: m.rrelu(x, 0.2, 0.4, False),
                                             (_r(3, 4),)),
    (lambda m, x, w: m.prelu(x, w), (_r(2, 3, 4), _r(3))),
    (lambda m, x: m.hardshrink(x, 0.3), (_r(3, 4),)),
    (lambda m, x: m.threshold_(x * 1, 0.2, 9.0), (_r(3, 4),)),
    (lambda m, x: m.max_pool1d(x, 2), (_r(2, 3, 9),)),
    (lambda m, x: m.max_pool1d(x, [3], [2], [1], [1], True), (_r(2, 3, 9),)),
    (lambda m, x: m.max_pool1d_with_indices(x, 3, 2), (_r(2, 3, 9),)),
    (lambda m, x: m.max_pool2d(x, 2), (_r(1, 2, 6, 6),)),
    (lambda m, x: m.max_pool2d(x, (3, 2), (), 1, 1, True), (_r(1, 2, 7, 6),)),
    (lambda m, x: m.max_pool3d(x, 2, stride=1), (_r(1, 2, 3, 4, 4),)),
    (lambda m, x: m.avg_pool1d(x, 3), (_r(2, 3, 9),)),
    (lambda m, x: m.avg_pool1d(x, 3, 2, 1, True, False), (_r(2, 3, 9),)),
    (lambda m, x: m.adaptive_avg_pool1d(x, 4), (_r(2, 3, 11),)),
    (lambda m, x: m.adaptive_max_pool1d(x, 4), (_r(2, 3, 11),)),
    (lambda m, x: m.pixel_shuffle(x, 2), (_r(1, 8, 2, 3),)),
    (lambda m, x: m.pixel_unshuffle(x, 2), (_r(1, 2, 4, 6),)),
    (lambda m, x: m.channel_shuffle(x, 3), (_r(2, 6, 2, 2),)),
    (lambda m, x, y: m.cosine_similarity(x, y), (_r(4, 5), _r(4, 5))),
    (lambda m, x, y: m.cosine_similarity(x, y, 0, 1e-6), (_r(4, 5), _r(4, 5))),
    (lambda m, x, y: m.pairwise_distance(x, y, 1.5, 1e-6, True), (_r(4, 5), _r(4, 5))),
    (lambda m, x, y, w, b: m.bilinear(x, y, w, b), (_r(4, 3), _r(4, 2), _r(5, 3, 2), _r(5))),
    (lambda m, x: m.constant_pad_nd(x, (1, 2)), (_r(2, 3),)),
    (lambda m, x: m.constant_pad_nd(x, [-1, 2, 0, 1], 2.5), (_r(2, 4),)),
    (lambda m, x, g: m.grid_sampler(x, g, 0, 0, False), (_r(1, 2, 4, 5), _r(1, 3, 2, 2))),
    (lambda m, x, g: m.grid_sampler(x, g, 1, 1, True), (_r(1, 2, 4, 5), _r(1, 3, 2, 2))),
    (lambda m, x, g: m.grid_sampler_2d(x, g, 2, 2, False), (_r(1, 2, 4, 5), _r(1, 3, 2, 2))),
    (lambda m, x, g: m.grid_sampler_3d(x, g, 0, 1, False), (_r(1, 2, 3, 4, 4),
                                                            _r(1, 2, 2, 2, 3))),
    (lambda m, t: m.affine_grid_generator(t, [2, 1, 3, 4], False), (_r(2, 2, 3),)),
    (lambda m, t: m.affine_grid_generator(t, (1, 1, 2, 3, 2), True), (_r(1, 3, 4),)),
])
def test_aten_forms_match_pytorch(call, arrays):
    compare(call, *arrays, tol=(1e-4, 1e-5))


@pytest.mark.parametrize("name", ["lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"])
def test_rnn_cells_match_pytorch(name):
    gates = {"lstm_cell": 4, "gru_cell": 3}.get(name, 1)
    x, h, c = _r(2, 3), _r(2, 4), _r(2, 4)
    w_ih, w_hh, b_ih, b_hh = _r(gates * 4, 3), _r(gates * 4, 4), _r(gates * 4), _r(gates * 4)

    def call(m, x, h, c, w_ih, w_hh, b_ih, b_hh):
        state = (h, c) if name == "lstm_cell" else h
        return getattr(m, name)(x, state, w_ih, w_hh, b_ih, b_hh)

    compare(call, x, h, c, w_ih, w_hh, b_ih, b_hh, tol=(1e-5, 1e-6))
    compare(lambda m, x, h, c, w_ih, w_hh: getattr(m, name)(
        x, (h, c) if name == "lstm_cell" else h, w_ih, w_hh), x, h, c, w_ih, w_hh)
    with pytest.raises(vt.ShapeError):
        getattr(vt, name)(vt.tensor(x[0]), (vt.tensor(h[0]), vt.tensor(c[0]))
                          if name == "lstm_cell" else vt.tensor(h[0]), vt.tensor(w_ih),
                          vt.tensor(w_hh))


def test_batch_and_instance_norm_update_running_statistics_as_pytorch():
    x, w, b = _r(4, 3, 5), _r(3), _r(3)
    for fn in ("batch_norm", "instance_norm"):
        stats = {}
        for m in (vt, torch):
            mean, var = m.zeros(3), m.ones(3)
            out = getattr(m, fn)(m.tensor(x), m.tensor(w), m.tensor(b), mean, var, True, 0.3,
                                 1e-5, True)
            stats[m] = [np.asarray(t.tolist()) for t in (out, mean, var)]
        for got, want in zip(stats[vt], stats[torch]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    mean, var = _r(3), _r(3, low=0.5, high=1.5)
    compare(lambda m, x, w, b, mu, v: m.batch_norm(x, w, b, mu.detach(), v.detach(), False,
                                                   0.1, 1e-5, False),
            x, w, b, mean, var, tol=(1e-5, 1e-6))


def test_embedding_renorm_matches_pytorch():
    w, i = _r(5, 3, low=-3, high=3), np.array([0, 2, 2, 4])
    tw, vw = torch.tensor(w), vt.tensor(w)
    assert torch.embedding_renorm_(tw, torch.tensor(i), 1.0, 2.0) is tw
    before = vw._version[0]
    assert vt.embedding_renorm_(vw, vt.tensor(i), 1.0, 2.0) is vw
    assert vw._version[0] > before
    np.testing.assert_allclose(vw.numpy(), tw.numpy(), rtol=1e-6)


LOSSES = [
    ("kl_div", lambda m, r, x, y: m.kl_div(x.log_softmax(-1), y.softmax(-1), r), None),
    ("kl_div", lambda m, r, x, y: m.kl_div(x, y, r, log_target=True), None),
    ("binary_cross_entropy_with_logits",
     lambda m, r, x, y: m.binary_cross_entropy_with_logits(x, y.sigmoid(), y.detach().abs(),
                                                           x[0].detach().abs() + 0.5, r),
     None),
    ("binary_cross_entropy_with_logits",
     lambda m, r, x, y: m.binary_cross_entropy_with_logits(x, y.sigmoid(), reduction=r), None),
    ("cosine_embedding_loss",
     lambda m, r, x, y: m.cosine_embedding_loss(x, y, m.tensor([1.0, -1.0, 1.0]), 0.1, r),
     None),
    ("hinge_embedding_loss",
     lambda m, r, x, y: m.hinge_embedding_loss(x, y.sign(), 0.5, r), None),
    ("margin_ranking_loss",
     lambda m, r, x, y: m.margin_ranking_loss(x, y, y.sign(), 0.1, r), None),
    ("triplet_margin_loss",
     lambda m, r, x, y: m.triplet_margin_loss(x, y, x * y, 0.5, 1.5, 1e-6, True, r), None),
    ("poisson_nll_loss",
     lambda m, r, x, y: m.poisson_nll_loss(x, y.abs() * 3, True, True, 1e-8, r), None),
    ("poisson_nll_loss",
     lambda m, r, x, y: m.poisson_nll_loss(x.abs(), y.abs(), False, False, 1e-6, r), None),
]


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name,call,_", LOSSES)
def test_losses_take_int_reductions_as_pytorch(name, call, _, reduction):
    compare(lambda m, x, y: call(m, reduction, x, y), _r(3, 4), _r(3, 4), tol=(1e-5, 1e-6))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_ctc_loss_takes_an_int_reduction(reduction):
    t, n, c = 6, 2, 4
    logits = _r(t, n, c, low=-2, high=2)
    targets = np.array([[1, 2, 3], [2, 2, 0]], np.int64)
    compare(lambda m, lp, tg: m.ctc_loss(lp.log_softmax(-1), tg, [6, 5], [3, 2], 0,
                                         reduction), logits, targets, tol=(1e-5, 1e-5))
    compare(lambda m, lp, tg: m.ctc_loss(lp.log_softmax(-1), tg, m.tensor([6, 5]),
                                         m.tensor([3, 2]), reduction=reduction,
                                         zero_infinity=True), logits, targets,
            tol=(1e-5, 1e-5))


@pytest.mark.parametrize("bad", [3, -1, "mean", 1.0, True])
def test_a_wrong_int_reduction_names_the_op_and_the_values(bad):
    x = vt.ones(2, 3)
    for name, call in [("kl_div", lambda r: vt.kl_div(x, x, r)),
                       ("margin_ranking_loss",
                        lambda r: vt.margin_ranking_loss(x, x, x, 0.0, r)),
                       ("ctc_loss", lambda r: vt.ctc_loss(x[None], vt.ones(2, 1, dtype=vt.int64),
                                                          [1, 1], [1, 1], 0, r))]:
        with pytest.raises(ValueError, match=rf"{name}.*0 \(none\), 1 \(mean\) or 2 \(sum\)"):
            call(bad)


def test_grid_sampler_rejects_unknown_modes():
    with pytest.raises(ValueError, match="interpolation_mode"):
        vt.grid_sampler(vt.ones(1, 1, 2, 2), vt.zeros(1, 1, 1, 2), 3, 0, False)
    with pytest.raises(vt.ShapeError):
        vt.grid_sampler_3d(vt.ones(1, 1, 2, 2), vt.zeros(1, 1, 1, 2), 0, 0, False)


# -- dropout -----------------------------------------------------------------------------------

DROPOUTS = ("dropout", "alpha_dropout", "feature_alpha_dropout", "feature_dropout")


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropouts_off_return_the_input_as_pytorch(name):
    a = _r(2, 3, 4)
    for m in (vt, torch):
        x = m.tensor(a)
        assert getattr(m, name)(x, 0.5, False) is x
        assert getattr(m, name)(x, 0.0, True) is x
        assert getattr(m, name + "_")(x, 0.5, False) is x
        with pytest.raises((ValueError, RuntimeError)):
            getattr(m, name)(x, 1.5, True)


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropouts_in_training(name):
    a = _r(8, 16, 5, low=0.5, high=1.5)
    x = vt.tensor(a)
    vt.manual_seed(3)
    out = getattr(vt, name)(x, 0.4, True)
    assert out.shape == x.shape and out.dtype == x.dtype
    if name in ("dropout", "alpha_dropout", "feature_alpha_dropout"):  # nn.functional's op
        vt.manual_seed(3)
        same = getattr(vt.nn.functional, name)(x, 0.4, True)
        np.testing.assert_array_equal(out.numpy(), same.numpy())
    if name == "feature_dropout":  # whole (n, c) channels kept (scaled) or zeroed
        o = out.numpy()
        kept = np.isclose(o, a / 0.6, rtol=1e-6).all(-1)
        assert (kept | (o == 0).all(-1)).all()
        assert 0 < kept.mean() < 1
    y = vt.tensor(a)
    before = y._version[0]
    vt.manual_seed(3)
    assert getattr(vt, name + "_")(y, 0.4, True) is y and y._version[0] == before + 1
    np.testing.assert_array_equal(y.numpy(), out.numpy())


def test_feature_dropout_needs_two_dims_in_training():
    for m in (vt, torch):
        with pytest.raises((ValueError, RuntimeError), match="2 dimensions"):
            m.feature_dropout(m.ones(3), 0.5, True)
        x = m.ones(3)
        assert m.feature_dropout(x, 0.5, False) is x


def test_dropout_gradient_is_the_mask():
    x = vt.tensor(_r(4, 5), requires_grad=True)
    out = vt.feature_dropout(x, 0.5, True)
    out.sum().backward()
    mask = out.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-6)


def test_rrelu_generator_is_refused_only_when_drawing():
    g = vt.Generator()
    vt.rrelu(vt.ones(2), training=False, generator=g)
    with pytest.raises(NotImplementedError, match="generator"):
        vt.rrelu(vt.ones(2), training=True, generator=g)
