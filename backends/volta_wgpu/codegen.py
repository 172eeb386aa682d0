"""Small helpers that generate WGSL: declarations, metadata access, loads/stores, casts.

Every kernel binds its metadata at ``@binding(0)`` as ``m: array<vec4<u32>, N>``; word
``k`` is ``m[k / 4][k % 4]``. Storage buffers follow: writable ones first.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import dtypes as D
from .dtypes import DType
from .engine import WG


def word(k: int) -> str:
    """WGSL expression of metadata word ``k`` as ``u32``."""
    return f"m[{k >> 2}][{k & 3}]"


def iword(k: int) -> str:
    """WGSL expression of metadata word ``k`` as ``i32``."""
    return f"bitcast<i32>(m[{k >> 2}][{k & 3}])"


def scalar_expr(k: int, t: DType) -> str:
    """WGSL value of a 32-bit scalar of dtype ``t`` held in metadata word ``k``."""
    w = word(k)
    if t is D.float32:
        return f"bitcast<f32>({w})"
    if t is D.float16:
        return f"f16(bitcast<f32>({w}))"
    if t.wgsl == "i32":  # int32
        return f"bitcast<i32>({w})"
    if t is D.bool:
        return f"({w} != 0u)"
    return w


def header(types: Iterable[DType], words: int, writes: list[tuple[str, DType]],
           reads: list[tuple[str, DType]], vec: int = 1) -> str:
    """The ``enable`` line, metadata uniform and storage declarations.

    With ``vec > 1`` the storage arrays hold ``vec{vec}<storage type>`` elements.
    """
    types = list(types)
    lines = []
    if any(t is D.float16 for t in types) or any(t is D.float16 for _, t in writes + reads):
        lines.append("enable f16;")
    if any(t.emu for t in types) or any(t.emu for _, t in writes + reads):
        from .kernels import int64_emu
        lines.append(int64_emu.SRC)  # emulated int64: its arithmetic and conversions
        if any(t is D.float64 for t in types) or any(t is D.float64 for _, t in writes + reads):
            lines.append(int64_emu.F64_SRC)
    n = max(1, -(-words // 4))
    lines.append(f"@group(0) @binding(0) var<uniform> m: array<vec4<u32>, {n}>;")
    b = 1
    for name, t in writes:
        el = t.storage if vec == 1 else f"vec{vec}<{t.storage}>"
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> {name}: array<{el}>;")
        b += 1
    for name, t in reads:
        el = t.storage if vec == 1 else f"vec{vec}<{t.storage}>"
        lines.append(f"@group(0) @binding({b}) var<storage, read> {name}: array<{el}>;")
        b += 1
    return "\n".join(lines) + "\n"


def main_1d(body: str, wg: int = WG) -> str:
    """A ``main`` over a 1-D index ``gi`` (split across x/y workgroups)."""
    return (f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>,\n"
            "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            f"  let gi = gid.x + gid.y * nwg.x * {wg}u;\n{body}\n}}\n")


def load(t: DType, expr: str) -> str:
    """Convert a storage element to its arithmetic value (bool from u32)."""
    return f"({expr} != 0u)" if t is D.bool else expr


def store(t: DType, expr: str) -> str:
    """Convert an arithmetic value to its storage element."""
    return f"select(0u, 1u, {expr})" if t is D.bool else expr


def cast(expr: str, src: DType, dst: DType) -> str:
    """Convert an arithmetic value of ``src`` to ``dst``."""
    if src is dst:
        return expr
    if src.emu or dst.emu:
        return _cast_emu(expr, src, dst)
    if dst is D.bool:  # NaN is true; "x != 0" is an ordered compare on some drivers
        if src is D.float32 or src is D.float16:  # from the bits: no driver can fold it
            return f"(({_f32(expr, src)} & 0x7fffffffu) != 0u)"
        return f"(!({expr} == {src.wgsl}(0)))"
    if src is D.uint32 and dst.wgsl == "i64":  # zero-extend (i64(u32) sign-extends)
        return f"i64(u64({expr}))"
    if src is D.bool:
        return f"select({dst.wgsl}(0), {dst.wgsl}(1), {expr})"
    if src.kind == "f" and dst.wgsl in _INT_RANGE:
        return _float_to_int(expr, src, dst)
    return f"{dst.wgsl}({expr})"


# the range of each integer type: (lowest, highest, highest + 1 as a float literal)
_INT_RANGE = {"i32": ("(i32(-2147483647) - 1)", "i32(2147483647)", 2.0 ** 31),
              "u32": ("0u", "4294967295u", 2.0 ** 32),
              "i64": ("(i64(-9223372036854775807) - i64(1))", "i64(9223372036854775807)",
                      2.0 ** 63)}


def _float_to_int(expr: str, src: DType, dst: DType) -> str:
    """Float -> integer as a GPU converts (PyTorch CUDA): truncated toward zero, out of
    range saturated to the type's lowest or highest value, NaN the lowest (0 unsigned).
    The clamp comes first: the GLSL that naga emits for OpenGL adapters does not saturate,
    and the last float below ``2**n`` would otherwise land short of the highest value
    (float32 +inf became 2147483520); float16 converts through float32."""
    import numpy as np

    lowest, highest, top = _INT_RANGE[dst.wgsl]
    f = "f64" if src is D.float64 else "f32"
    x = expr if src is D.float64 or src is D.float32 else f"f32({expr})"
    below = float(np.nextafter(np.float64(top), 0) if f == "f64"
                  else np.nextafter(np.float32(top), np.float32(0)))
    low = 0.0 if dst.wgsl == "u32" else -top
    nan = (f"(!(({x}) == ({x})))" if f == "f64"
           else f"({_f32(x, D.float32)} & 0x7fffffffu) > 0x7f800000u")
    conv = f"{dst.wgsl}(clamp({x}, {f}({low!r}), {f}({below!r})))"
    return f"select(select({conv}, {highest}, ({x}) >= {f}({top!r})), {lowest}, {nan})"


def _f32(expr: str, src: DType) -> str:
    """The ``u32`` bits of ``expr`` as float32 (float16 widens exactly)."""
    return f"bitcast<u32>({expr if src is D.float32 else f'f32({expr})'})"


def _cast_emu(expr: str, src: DType, dst: DType) -> str:
    """Conversions to and from an emulated int64 (a ``vec2<u32>`` pair)."""
    if dst.emu:
        if src is D.bool:
            return f"vec2<u32>(select(0u, 1u, {expr}), 0u)"
        if src is D.uint32:
            return f"vec2<u32>({expr}, 0u)"
        if src.kind == "i":
            return f"i64e_from_i32({expr})"
        if src is D.float64:
            return f"i64e_from_f64({expr})"
        return f"i64e_from_f32(f32({expr}))"
    if dst is D.bool:
        return f"(({expr}).x != 0u || ({expr}).y != 0u)"
    if dst is D.uint32:  # wraps, as NumPy's astype does
        return f"({expr}).x"
    if dst.kind == "i":
        return f"bitcast<i32>(({expr}).x)"
    if dst is D.float64:
        return f"i64e_to_f64({expr})"
    return f"{dst.wgsl}(i64e_to_f32({expr}))"


def index(t: DType, expr: str) -> str:
    """WGSL ``i32`` of an index element of dtype ``t`` (an emulated int64 outside the i32
    range becomes i32's minimum, which every bounds check refuses)."""
    return f"i64e_index({expr})" if t.emu else f"i32({expr})"


def const(t: DType, value: float) -> str:
    """A WGSL constant of type ``t``."""
    if t.emu:
        from .kernels.int64_emu import const as emu_const
        return emu_const(int(value))
    if t is D.bool:
        return "true" if value else "false"
    if t.kind == "f":
        if value != value:
            return f"{t.wgsl}(bitcast<f32>(0x7fc00000u))"
        if value in (float("inf"), float("-inf")):
            s = "0x7f800000u" if value > 0 else "0xff800000u"
            return f"{t.wgsl}(bitcast<f32>({s}))"
        return f"{t.wgsl}({float(value)!r})"
    return f"{t.wgsl}({int(value)})"


def strided_offsets(rank: int, shape_at: int, operands: list[tuple],
                    index: str = "gi") -> str:
    """WGSL that decomposes ``index`` over a shape and accumulates strided offsets.

    Args:
        rank: number of dims.
        shape_at: metadata word of ``shape[0]``.
        operands: ``(var, meta_word)`` per operand: the variable to define (``i32``)
            and the word of its offset, followed by its ``rank`` strides; or
            ``(var, offset_word, strides_word)`` when the strides are elsewhere.
        index: the linear index variable.
    """
    lines = [f"  var rem = {index};"] if rank else []
    ops = [(o[0], o[1], o[2] if len(o) > 2 else o[1] + 1) for o in operands]
    for var, at, _ in ops:
        lines.append(f"  var {var} = {iword(at)};")
    for d in range(rank - 1, -1, -1):
        if d > 0:
            lines.append(f"  let c{d} = i32(rem % {word(shape_at + d)}); "
                         f"rem = rem / {word(shape_at + d)};")
        else:
            lines.append("  let c0 = i32(rem);")
        for var, _, st in ops:
            lines.append(f"  {var} += c{d} * {iword(st + d)};")
    return "\n".join(lines)
