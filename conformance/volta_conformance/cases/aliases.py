"""Cases of PyTorch's top-level spellings of ops Volta has under other names: the
in-place functions (``vt.sigmoid_(x)``), the ``*_copy`` forms of the view ops, ATen's
other names (``rsub``, ``igamma``, ``split_with_sizes``...) and the ATen forms of the
``nn.functional`` ops (``vt.conv2d``, ``vt.layer_norm``, int loss reductions...).

Every case id has the tag ``top`` (``abs_/top``, ``kl_div/top_none``): ``-k /top`` runs
them all. The in-place forms write into an intermediate (``x * 1``), so that the
gradient reaches the input and the input itself stays unmodified.
"""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, INT, Arg, OpCase


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    """A case ``{op}/top`` (``{op}/top_{name}`` when ``name``)."""
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    tag = f"top_{name}" if name else "top"
    return OpCase(f"{op}/{tag}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


def X(*shape: int, low: float = -1.0, high: float = 1.0, grad: bool = True) -> Arg:
    return Arg(tuple(shape), low, high, grad=grad)


def I(*shape: int, n: int) -> Arg:  # noqa: E743 - an index tensor in [0, n)
    return Arg(tuple(shape), 0, n, kind="index")


A34 = X(3, 4)

# -- in-place functions ------------------------------------------------------------------

_DOMAIN = {"acosh_": (1.2, 3.0), "arccosh_": (1.2, 3.0), "log_": (0.2, 2.0),
           "log2_": (0.2, 2.0), "log10_": (0.2, 2.0), "log1p_": (-0.5, 2.0),
           "sqrt_": (0.2, 2.0), "rsqrt_": (0.2, 2.0), "reciprocal_": (0.5, 2.0),
           "acos_": (-0.9, 0.9), "arccos_": (-0.9, 0.9), "asin_": (-0.9, 0.9),
           "arcsin_": (-0.9, 0.9), "atanh_": (-0.9, 0.9), "arctanh_": (-0.9, 0.9),
           "tan_": (-1.2, 1.2), "i0_": (-2.0, 2.0)}
_UNARY = ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
          "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_",
          "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_",
          "i0_", "log10_", "log1p_", "log2_", "log_", "neg_", "negative_", "rad2deg_",
          "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
          "square_", "tan_", "tanh_", "trunc_", "zero_", "selu_", "celu_", "rrelu_",
          "conj_physical_")
_NO_GRAD = ("ceil_", "floor_", "trunc_", "fix_", "i0_")  # step functions; i0: PyTorch's own

CASES: list = [
    case("", name, X(3, 4, low=_DOMAIN.get(name, (-2.0, 2.0))[0],
                     high=_DOMAIN.get(name, (-2.0, 2.0))[1]),
         fn=lambda x, n=name: getattr(vt, n)(x * 1.0), grad=name not in _NO_GRAD)
    for name in _UNARY
]
CASES += [
    case("", "detach_", A34, fn=lambda x: vt.detach_(x * 1.0), grad=False),
    case("", "clamp_", A34, fn=lambda x: vt.clamp_(x * 1.0, -0.3, 0.4)),
    case("", "clip_", A34, fn=lambda x: vt.clip_(x * 1.0, max=0.2)),
    case("", "clamp_min_", A34, fn=lambda x: vt.clamp_min_(x * 1.0, 0.1)),
    case("", "clamp_max_", A34, fn=lambda x: vt.clamp_max_(x * 1.0, -0.1)),
    case("", "fill_", A34, fn=lambda x: vt.fill_(x * 1.0, 2.5)),
    case("", "fill", A34, X(), fn=lambda x, v: vt.fill(x, v)),
    case("", "round_", A34, fn=lambda x: vt.round_(x * 10.0, decimals=1), grad=False),
    case("", "logit_", X(3, 4, low=0.1, high=0.9), fn=lambda x: vt.logit_(x * 1.0, 0.05)),
    case("", "nan_to_num_", A34, fn=lambda x: vt.nan_to_num_(vt.log(x), 1.0, 2.0, -3.0)),
    case("", "xlogy_", A34, X(3, 4, low=0.5, high=2.0),
         fn=lambda x, y: vt.xlogy_(x * 1.0, y)),
    case("", "ldexp_", A34, Arg((4,), kind="int64", ints=(-2, 4)),
         fn=lambda x, e: vt.ldexp_(x * 1.0, e)),
    case("", "gcd_", A34, A34, fn=lambda a, b: vt.gcd_(a * 1, b), dtypes=INT, grad=False),
    case("", "lcm_", A34, A34, fn=lambda a, b: vt.lcm_(a * 1, b), dtypes=INT, grad=False),
    case("", "addmv_", X(3), X(3, 4), X(4),
         fn=lambda v, m, w: vt.addmv_(v * 1.0, m, w, beta=0.5, alpha=2.0)),
    case("", "threshold_", A34, fn=lambda x: vt.threshold_(x * 1.0, 0.1, -5.0)),
]

# -- other names of existing ops -----------------------------------------------------------

CASES += [
    case("", "rsub", A34, X(4), fn=lambda x, y: vt.rsub(x, y, alpha=2)),
    case("scalar", "rsub", A34, fn=lambda x: vt.rsub(x, 1.5, 3)),
    case("", "detach", A34, fn=lambda x: vt.detach(x) * x),
    case("", "igamma", X(3, 4, low=0.5, high=3.0, grad=False), X(3, 4, low=0.1, high=3.0)),
    case("", "igammac", X(3, 4, low=0.5, high=3.0, grad=False), X(3, 4, low=0.1, high=3.0)),
    case("", "adjoint", X(2, 3, 4), fn=lambda x: vt.adjoint(x) * 1.0),
    case("", "real", A34, fn=lambda x: vt.real(x) * 2.0),
    case("", "qr", A34, fn=lambda m: vt.qr(m.mT)[1].abs()),
    case("", "unsafe_chunk", A34, chunks=2, dim=1),
    case("", "unsafe_split", A34, split_size=3, dim=1),
    case("", "split_with_sizes", A34, split_sizes=[1, 3], dim=1),
    case("", "unsafe_split_with_sizes", A34, split_sizes=(2, 1)),
    case("", "nonzero_static", A34, fn=lambda x: vt.nonzero_static(x > 0, size=8),
         grad=False),
    case("pad", "nonzero_static", A34, fn=lambda x: vt.nonzero_static(x > 2, size=3,
                                                                      fill_value=7),
         grad=False),
    case("", "frobenius_norm", X(2, 3, 4), dim=(0, 2), keepdim=True),
    case("", "nuclear_norm", A34, tol=2.0),
    case("dim", "nuclear_norm", X(2, 3, 4), dim=(0, 2), tol=2.0),
]

# -- the *_copy forms ------------------------------------------------------------------------

CASES += [
    case("", "alias_copy", A34),
    case("", "detach_copy", A34, grad=False),
    case("", "as_strided_copy", A34, size=(2, 2), stride=(1, 4), storage_offset=1),
    case("", "diagonal_copy", X(3, 4, 2), offset=1, dim1=1, dim2=0),
    case("", "expand_copy", X(3, 1), size=(2, -1, 4)),
    case("", "permute_copy", X(2, 3, 4), dims=(2, 0, 1)),
    case("", "select_copy", A34, dim=1, index=-1),
    case("", "slice_copy", A34, dim=1, start=1, end=None, step=2),
    case("", "split_copy", A34, split_size=3, dim=1),
    case("", "split_with_sizes_copy", A34, split_sizes=[1, 2]),
    case("", "squeeze_copy", X(1, 3, 1), dim=(0, 2)),
    case("", "t_copy", A34),
    case("", "transpose_copy", X(2, 3, 4), dim0=0, dim1=2),
    case("", "unbind_copy", A34, dim=1),
    case("", "unfold_copy", A34, dimension=1, size=2, step=1),
    case("", "unsqueeze_copy", A34, dim=1),
    case("", "view_copy", A34, size=(2, 6)),
]

# -- the ATen forms of the nn.functional ops ---------------------------------------------------

CASES += [
    case("", "conv2d", X(2, 3, 6, 5), X(4, 3, 3, 3), X(4), stride=(2, 1), padding=1),
    case("", "convolution", X(2, 3, 5, 5), X(4, 3, 3, 3), X(4),
         fn=lambda x, w, b: vt.convolution(x, w, b, [1, 1], [1, 0], [1, 1], False, [0, 0], 1)),
    case("transposed", "convolution", X(2, 4, 5), X(4, 3, 3), X(3),
         fn=lambda x, w, b: vt.convolution(x, w, b, [2], [1], [1], True, [1], 1)),
    case("", "conv_tbc", X(7, 2, 3), X(3, 3, 5), X(5), pad=1),
    case("", "layer_norm", X(2, 3, 4), X(4), X(4),
         fn=lambda x, w, b: vt.layer_norm(x, [4], w, b, 1e-5, True)),
    case("", "group_norm", X(2, 4, 3), X(4), X(4),
         fn=lambda x, w, b: vt.group_norm(x, 2, w, b, 1e-5, True)),
    case("", "batch_norm", X(4, 3, 2), X(3), X(3), X(3, grad=False),
         X(3, low=0.5, high=1.5, grad=False),
         fn=lambda x, w, b, m, v: (lambda rm, rv: (
             vt.batch_norm(x, w, b, rm, rv, True, 0.2, 1e-5, True), rm, rv))(m * 1, v * 1)),
    case("eval", "batch_norm", X(4, 3), X(3), X(3), X(3, grad=False),
         X(3, low=0.5, high=1.5, grad=False),
         fn=lambda x, w, b, m, v: vt.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, False)),
    case("", "instance_norm", X(2, 3, 5), X(3), X(3),
         fn=lambda x, w, b: vt.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True)),
    case("", "embedding", X(7, 3), I(2, 5, n=7), fn=lambda w, i: vt.embedding(w, i, 0)),
    case("", "embedding_renorm_", X(7, 3, low=-2.0, high=2.0), I(6, n=7),
         fn=lambda w, i: vt.embedding_renorm_(w * 1.0, i, 1.0, 2.0), grad=False),
    case("", "selu", A34), case("", "celu", A34, alpha=0.7),
    case("", "max_pool1d", X(2, 3, 9), kernel_size=3),
    case("", "max_pool1d_with_indices", X(2, 3, 9), kernel_size=3, stride=2, padding=1),
    case("", "max_pool2d", X(1, 2, 7, 6), kernel_size=(3, 2), stride=(), padding=1,
         ceil_mode=True),
    case("", "max_pool3d", X(1, 2, 3, 4, 4), kernel_size=2, stride=1),
    case("", "avg_pool1d", X(2, 3, 9), kernel_size=3, stride=2, padding=1, ceil_mode=True,
         count_include_pad=False),
    case("", "adaptive_max_pool1d", X(2, 3, 11), output_size=4),
    case("", "constant_pad_nd", X(2, 4), pad=[-1, 2, 0, 1], value=2.5),
    case("", "grid_sampler", X(1, 2, 4, 5), X(1, 3, 2, 2, low=-1.2, high=1.2),
         interpolation_mode=0, padding_mode=1, align_corners=False, tol=2.0),
    case("", "grid_sampler_2d", X(1, 2, 4, 5), X(1, 3, 2, 2, low=-1.2, high=1.2),
         interpolation_mode=1, padding_mode=2, align_corners=True, tol=2.0),
    case("", "grid_sampler_3d", X(1, 2, 3, 4, 4), X(1, 2, 2, 2, 3, low=-1.2, high=1.2),
         interpolation_mode=0, padding_mode=0, align_corners=False, tol=2.0),
    case("", "affine_grid_generator", X(2, 2, 3), size=[2, 1, 3, 4], align_corners=False),
    case("", "lstm_cell", X(2, 3), X(2, 4), X(2, 4), X(16, 3), X(16, 4), X(16), X(16),
         fn=lambda x, h, c, wi, wh, bi, bh: vt.lstm_cell(x, (h, c), wi, wh, bi, bh)),
    case("", "gru_cell", X(2, 3), X(2, 4), X(12, 3), X(12, 4), X(12), X(12)),
    case("", "rnn_tanh_cell", X(2, 3), X(2, 4), X(4, 3), X(4, 4)),
    case("", "rnn_relu_cell", X(2, 3), X(2, 4), X(4, 3), X(4, 4), X(4), X(4)),
]

# -- losses with an int reduction: 0 none, 1 mean, 2 sum --------------------------------------

_T = X(3, 4, grad=False)
CASES += [
    case("none", "kl_div", X(3, 4, low=-3.0, high=0.0), X(3, 4, low=0.05, high=1.0),
         reduction=0),
    case("log_target", "kl_div", X(3, 4, low=-3.0, high=0.0), X(3, 4, low=-3.0, high=0.0),
         reduction=2, log_target=True),
    case("mean", "binary_cross_entropy_with_logits", X(3, 4, low=-3.0, high=3.0),
         X(3, 4, low=0.0, high=1.0, grad=False), X(3, 4, low=0.2, high=2.0, grad=False),
         X(4, low=0.5, high=2.0, grad=False),
         fn=lambda x, y, w, pw: vt.binary_cross_entropy_with_logits(x, y, w, pw, 1)),
    case("sum", "cosine_embedding_loss", A34, A34, Arg((3,), 1, 2, kind="index"),
         fn=lambda a, b, t: vt.cosine_embedding_loss(a, b, t * 2 - 1, 0.1, 2)),
    case("none", "hinge_embedding_loss", A34, _T,
         fn=lambda x, t: vt.hinge_embedding_loss(x, t.sign(), 0.5, 0)),
    case("mean", "margin_ranking_loss", X(5), X(5), X(5, grad=False),
         fn=lambda a, b, t: vt.margin_ranking_loss(a, b, t.sign(), 0.1, 1)),
    case("sum", "triplet_margin_loss", A34, A34, A34,
         fn=lambda a, p, n: vt.triplet_margin_loss(a, p, n, 0.5, 1.5, 1e-6, True, 2)),
    case("mean", "poisson_nll_loss", A34, X(3, 4, low=0.0, high=3.0, grad=False),
         fn=lambda x, t: vt.poisson_nll_loss(x, t, True, True, 1e-8, 1)),
    case("sum", "ctc_loss", X(6, 2, 4, low=-2.0, high=2.0), Arg((2, 3), 1, 4, kind="index"),
         fn=lambda lp, t: vt.ctc_loss(lp.log_softmax(-1), t, [6, 5], [3, 2], 0, 2), tol=2.0),
]
