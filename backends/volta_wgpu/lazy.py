"""Lazy elementwise execution: record elementwise ops as a graph, run it as one fused kernel.

With lazy mode on, :func:`volta_wgpu.kernels.mapkernel.launch_map` (the kernel behind every
elementwise op, cast and broadcast) does not dispatch: it returns a *pending* array whose
:class:`Node` holds the op's WGSL expression, its operands (arrays, scalars or other
nodes), casts and result dtype. A pending array has contiguous strides and offset 0, as
the eager result would.

A pending array is materialized when its buffer is needed: any access to ``Array._st``
(every non-elementwise op, a view, a host read). Every pending array of an engine is
materialized before a readback, and before any other dispatch or copy that writes a
buffer a pending graph reads (``Engine._lazy_reads``: the leaves' buffers, and the
results of nodes materialized meanwhile), so a later in-place write cannot change what a
pending op reads; work that writes only fresh buffers (most kernels) leaves the graphs
pending, so they keep growing across matmuls and reductions. A reduction or softmax of a
pending array computes it inside its own kernel (:class:`Fused`) and leaves it pending.

Materializing generates one WGSL kernel for the graph under the array: leaves
(materialized arrays, read through their own broadcast strides and offsets) and scalars
(metadata words) feed one ``let`` per node, each the same expression, casts and helper
functions the eager kernel uses, so results are the same bit for bit (each node's value
passes to the next through an opaque identity, see :func:`_opaque`). The
pipeline is cached by the graph's signature (expressions, dtypes, rank, leaf and scalar
layout), so a repeated step compiles nothing; shapes, strides and scalars are metadata.

A fused kernel also stores the inner values whose arrays are still alive (activations
autograd saved for the backward, values the program holds) after its result, in the same
buffer: those nodes become *computed* (``storage`` and a nonzero ``offset``) and later
graphs read them there instead of computing the graph under them again. Such an array
gets a buffer of its own (a copy) only when something other than a fused kernel reads it.

A graph stops growing past :data:`MAX_OPS` ops or when its leaves would need more storage
buffers than the adapter binds: the operands are materialized first. Recording walks
nothing: a node's op count is an upper bound (:attr:`Node.count`), so a graph may be cut
a little early where nodes are shared.

In-place ops (``x += expr``, ``copy_into``) write the fused result straight into the
target view: first the pending arrays that read the target's buffer run, and a leaf on
that buffer is read through the output binding only when each thread reads the element
it writes (else the eager path, with its temporary, serves).
"""

from __future__ import annotations

import os
import re
import struct
import weakref
from typing import Any

from . import codegen as cg
from . import dtypes as D
from .dtypes import DType
from .engine import Engine, groups_for
from .layout import broadcast_shapes, broadcast_strides, collapse, prod

MAX_OPS = 256  # ops in one fused kernel
MAX_PENDING = 4096  # pending arrays of an engine before they are all materialized


def _eager_forced() -> bool:
    """``VOLTA_WGPU_EAGER=1``: every op runs on its own (the debugging switch)."""
    return os.environ.get("VOLTA_WGPU_EAGER", "") not in ("", "0")


def _env_default() -> bool:
    # on by default; VOLTA_WGPU_EAGER=1 (or VOLTA_WGPU_LAZY=0) starts with it off
    return not _eager_forced() and os.environ.get("VOLTA_WGPU_LAZY", "1") != "0"


_enabled = _env_default()


def set_lazy(enabled: bool) -> None:
    """Turn lazy elementwise fusion on or off for every wgpu device.

    Lazy mode is on by default; ``VOLTA_WGPU_EAGER=1`` in the environment starts with it
    off (every op then runs as its own kernel: the switch for debugging a fused kernel).
    Fused results equal eager ones bit for bit. Turning it off materializes nothing by
    itself: pending arrays still run when needed.
    """
    global _enabled
    _enabled = bool(enabled)


def is_lazy() -> bool:
    """Whether elementwise ops on wgpu arrays are recorded lazily."""
    return _enabled


class lazy_scope:  # noqa: N801 - used as a function: ``with lazy_scope():``
    """A context with lazy mode on inside, restored after (what ``vt.compile`` runs a call
    in). ``VOLTA_WGPU_EAGER=1`` in the environment keeps it off, for debugging."""

    def __enter__(self) -> None:
        global _enabled
        self.was = _enabled
        if not _eager_forced():
            _enabled = True

    def __exit__(self, *exc: Any) -> None:
        global _enabled
        _enabled = self.was


class Node:
    """One recorded elementwise op.

    Attributes:
        expr, helpers, casts, dtype: as :func:`launch_map` takes them.
        inputs: per operand an :class:`~volta_wgpu.array.Array` (materialized), a Python
            scalar, or a :class:`Node`; None once materialized.
        shape: the result shape.
        op: the op's name, for error messages.
        count: at least the number of pending nodes in the graph under this node, itself
            included: the smaller of the sum over its inputs (a node reached twice counts
            twice) and the size of its :class:`_Group` (nodes materialized since still
            count), so that recording an op walks nothing.
        group: the group of nodes recorded together with it (see :class:`_Group`).
        bufs: the ``(buffer id, dtype)`` pairs its leaves bind.
        storage: the result once materialized.
    """

    __slots__ = ("expr", "helpers", "inputs", "casts", "dtype", "shape", "op", "engine",
                 "count", "group", "bufs", "storage", "barrier", "sig", "offset", "out")

    def __init__(self, expr: str, helpers: tuple, inputs: list, casts: tuple, dtype: DType,
                 shape: tuple, op: str, engine: Engine, count: int,
                 bufs: frozenset, group: _Group) -> None:
        self.expr = expr
        self.helpers = helpers
        self.inputs = inputs
        self.casts = casts
        self.dtype = dtype
        self.shape = shape
        self.op = op
        self.engine = engine
        self.count = count
        self.group = group
        self.bufs = bufs
        self.storage = None
        self.barrier = False  # consumers read it stored, not inline
        self.sig: Any = None  # its part of a graph signature, made when first needed
        self.offset = 0  # of its values in ``storage`` (nonzero: stored beside another's)
        self.out: Any = None  # weak reference to its pending array


class _Group:
    """The nodes recorded into connected graphs since their last cut (a union-find set):
    its size bounds the graph under any of them, and stays exact where a node is
    reached many times (``z = z * z + y``), which the sum over inputs is not."""

    __slots__ = ("up", "size")

    def __init__(self) -> None:
        self.up: _Group | None = None
        self.size = 0

    def root(self) -> _Group:
        g = self
        while g.up is not None:
            if g.up.up is not None:
                g.up = g.up.up  # path halving
            g = g.up
        return g

    @staticmethod
    def join(roots: list) -> _Group:
        """One group for a new node over ``roots`` (their roots), itself counted."""
        if not roots:
            g = _Group()
        else:
            g = max(roots, key=lambda r: r.size)
            for r in roots:
                if r is not g:
                    r.up = g
                    g.size += r.size
        g.size += 1
        return g


_Array: Any = None


def _array_type() -> Any:
    global _Array
    if _Array is None:  # array.py imports this module (through mapkernel)
        from .array import Array
        _Array = Array
    return _Array


def _max_bufs(eng: Engine) -> int:
    n = eng._lazy_max_bufs
    if n is None:
        n = int(eng.device.limits.get("max-storage-buffers-per-shader-stage", 8)) - 1
        eng._lazy_max_bufs = n = max(3, min(n, 15))
    return n


def _inputs(operands: list, casts: tuple) -> tuple[list, frozenset, frozenset, list]:
    """Graph inputs of the operands (nodes for pending arrays, leaves otherwise), the
    count of pending nodes under them (see :attr:`Node.count`), their leaves' buffers,
    and the operand shapes."""
    Array = _array_type()
    ins: list = []
    count = 0
    groups: list = []
    bufs: set = set()
    shapes = []
    for a, c in zip(operands, casts):
        if type(a) is Array or isinstance(a, Array):
            shapes.append(a.shape)
            node = a._node if a._s is None else None
            if node is not None and not node.barrier:
                if node.storage is None:
                    ins.append(node)
                    count += node.count
                    g = node.group.root()
                    if g not in groups:
                        groups.append(g)
                    bufs |= node.bufs
                    continue
                if node.offset:  # computed beside another result: read it there
                    bufs.add((id(node.storage.buffer), a.dtype))
                    ins.append(node)
                    continue
            st = a._st
            bufs.add((id(st.buffer), a.dtype))
            ins.append(a)
        elif c.itemsize == 8:  # 64-bit scalars do not fit a metadata word (as eager)
            from .namespace.creation import asarray
            a = asarray(a, dtype=c)
            bufs.add((id(a._st.buffer), a.dtype))
            shapes.append(a.shape)
            ins.append(a)
        else:
            ins.append(a)
    if groups:
        count = min(count, sum(g.size for g in groups))
    return ins, count, frozenset(bufs), shapes, groups


def _exact(ins: list) -> tuple[frozenset, frozenset]:
    """The ids of the pending nodes under ``ins`` and the buffers their leaves bind, now
    (the sets recorded with the nodes may hold nodes materialized since)."""
    Array = _array_type()
    seen: set = set()
    ops: set = set()
    bufs: set = set()
    stack = list(ins)
    while stack:
        x = stack.pop()
        if isinstance(x, Node):
            if id(x) in seen:
                continue
            seen.add(id(x))
            if x.storage is not None:
                bufs.add((id(x.storage.buffer), x.dtype))
            else:
                ops.add(id(x))
                stack.extend(x.inputs)
        elif isinstance(x, Array):
            bufs.add((id(x._st.buffer), x.dtype))
    return frozenset(ops), frozenset(bufs)


def _broadcast(shapes: list, op: str) -> tuple:
    """The broadcast shape of ``shapes`` (most often all the same)."""
    s0 = shapes[0]
    for s in shapes:
        if s != s0:
            return broadcast_shapes(*shapes, op=op)
    return s0


def _dtype(x: Any) -> Any:
    return x.dtype if isinstance(x, Node) or hasattr(x, "dtype") else None


def _new_node(expr: str, operands: list, casts: tuple, out_dtype: DType, helpers: tuple,
              op: str) -> Node | None:
    """The node of ``launch_map(expr, operands, ...)``; None to run it eagerly."""
    Array = _array_type()
    eng = None
    for a in operands:
        if type(a) is Array or isinstance(a, Array):
            eng = a.engine
            break
    if eng is None:
        return None
    casts = tuple(casts)
    # float64 runs eagerly: NVIDIA's compiler folded float64 NaN tests inside fused
    # kernels (isnan gave False), and float64 is there for accuracy, not speed
    f64 = D.float64
    if out_dtype is f64:
        return None
    i64 = False
    for c in casts:
        if c is f64:
            return None
        if c.wgsl == "i64":
            i64 = True
    ins, count, bufs, shapes, groups = _inputs(list(operands), casts)
    shape = shapes[0] if len(shapes) == 1 else _broadcast(shapes, op)
    if prod(shape) == 0:
        return None
    max_bufs = eng._lazy_max_bufs or _max_bufs(eng)
    if count < MAX_OPS and len(bufs) > max_bufs:
        # the sets may hold buffers of nodes materialized since: count what a kernel
        # would bind (a walk of the graph, only near the limit)
        bufs = _exact(ins)[1]
    # the count is an upper bound (a graph may be cut early, which costs a kernel;
    # counting exactly would cost a walk of the graph per op)
    if count >= MAX_OPS or len(bufs) > max_bufs:
        # start a new graph: the pending operands become leaves
        for x in ins:
            if isinstance(x, Node):
                materialize(x)
        ins, count, bufs, shapes, groups = _inputs(list(operands), casts)
    node = Node(expr, tuple(helpers), ins, casts, out_dtype, shape, op, eng, count + 1, bufs,
                _Group.join(groups))
    # a value cast inline from a 32-bit type to a native i64 and then used by more i64
    # arithmetic is miscompiled by some drivers (lavapipe): store it first, as eager does
    if i64:
        node.barrier = any(c.wgsl == "i64" and _dtype(x) is not c for x, c in zip(ins, casts))
    return node


def record(expr: str, operands: list, casts: tuple, out_dtype: DType, helpers: tuple,
           op: str) -> Any:
    """A pending array for ``launch_map(expr, operands, ...)``; None to run it eagerly."""
    node = _new_node(expr, operands, casts, out_dtype, helpers, op)
    if node is None:
        return None
    eng = node.engine
    shape = node.shape
    strides = _STRIDES.get(shape)
    if strides is None:
        if len(_STRIDES) > 4096:
            _STRIDES.clear()
        strides = _STRIDES[shape] = _contig(shape)
    arr = _array_type()(None, shape, out_dtype, strides)
    arr._node = node
    node.out = ref = weakref.ref(arr)
    with eng._lock:  # run_pending swaps the list under the lock
        eng._lazy_reads.update(b for b, _dt in node.bufs)
        pend = eng._lazy_pending
        pend.append(ref)
        if len(pend) > MAX_PENDING:
            run_pending(eng)
    return arr


_STRIDES: dict[tuple, tuple] = {}  # contiguous strides by shape, for pending arrays


def run_pending(eng: Engine, reads: Any = None, skip: Any = None) -> None:
    """Materialize the live pending arrays of ``eng``, oldest first: all of them, or with
    ``reads`` (a buffer) those that read it, except ``skip``."""
    with eng._lock:
        if eng._lazy_busy:
            return
        pend = eng._lazy_pending
        keep = []
        eng._lazy_pending = keep if reads is not None else []
        for ref in pend:
            a = ref()
            if a is None or a._s is not None or a._node.offset:
                continue  # gone, materialized, or computed beside another result
            if a is skip or (reads is not None and not _reads(a._node, reads)):
                keep.append(ref)
                continue
            a._s = materialize(a._node)
            a._node = None
        if not eng._lazy_pending:
            eng._lazy_reads.clear()


def _reads(node: Node, buf: Any) -> bool:
    """Whether computing ``node`` reads ``buf`` (walked now: an inner node may have been
    materialized since it was recorded)."""
    Array = _array_type()
    stack = [node]
    seen = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.storage is not None:
            if x.storage.buffer is buf:
                return True
            continue
        for i in x.inputs:
            if isinstance(i, Node):
                stack.append(i)
            elif isinstance(i, Array) and i._st.buffer is buf:
                return True
    return False


# -- code generation ------------------------------------------------------------------------

_FN = re.compile(r"^(?=fn |const |alias |var<private>)", re.M)


def _helper_chunks(names: tuple, t: DType) -> list[str]:
    from .kernels.wgsl_lib import helper
    out = []
    for h in names:
        out.extend(c.strip() for c in _FN.split(helper(h, t)) if c.strip())
    return out


class _Graph:
    """The unmaterialized nodes under a root, in dependency order, and their leaves."""

    def __init__(self, root: Node) -> None:
        self.nodes: list[Node] = []
        self.index: dict[int, int] = {}
        self.leaves: list[tuple] = []  # (storage, dtype, shape, strides, offset)
        self.leaf_at: dict[tuple, int] = {}
        self.bufs: list[tuple] = []  # (buffer, dtype) per binding
        self.buf_at: dict[tuple, int] = {}
        self.scalars: list[tuple] = []  # (value, dtype)
        self.refs: list[list[tuple]] = []  # per node: ("n"|"l"|"s", index) per input
        self.self_read: Any = None  # a buffer the kernel writes and reads (in place)
        self._visit(root)

    def read_through(self, out: Any) -> bool:
        """Let leaves that read ``out``'s buffer read it through the output binding (a
        buffer cannot be bound writable and read-only at once). True when each such leaf
        reads exactly the element a thread writes; False (run eagerly) otherwise."""
        buf = out._st.buffer
        shape = out.shape
        mine = [i for i, (st, *_r) in enumerate(self.leaves) if st.buffer is buf]
        if not mine:
            return True
        for i in mine:
            _st, dt, sh, strides, off = self.leaves[i]
            bs = broadcast_strides(sh, strides, shape)
            if dt is not out.dtype or off != out.offset or any(
                    n != 1 and a != b for n, a, b in zip(shape, bs, out.strides)):
                return False  # another element of the target: threads would race
        self.self_read = buf
        self.bufs = [(b, dt) for b, dt in self.bufs if b is not buf]
        self.buf_at = {(id(b), dt.name): i for i, (b, dt) in enumerate(self.bufs)}
        return True

    def binding(self, st: Any, dt: DType) -> str:
        """The WGSL array a leaf reads."""
        if st.buffer is self.self_read:
            return "out"
        return f"in{self.buf_at[(id(st.buffer), dt.name)]}"

    def _leaf(self, st: Any, dtype: DType, shape: tuple, strides: tuple, off: int) -> int:
        key = (id(st.buffer), dtype.name, shape, strides, off)
        i = self.leaf_at.get(key)
        if i is None:
            bk = (id(st.buffer), dtype.name)
            if bk not in self.buf_at:
                self.buf_at[bk] = len(self.bufs)
                self.bufs.append((st.buffer, dtype))
            i = self.leaf_at[key] = len(self.leaves)
            self.leaves.append((st, dtype, shape, strides, off))
        return i

    def _visit(self, root: Node) -> None:
        Array = _array_type()
        index, nodes, scalars, leaf = self.index, self.nodes, self.scalars, self._leaf
        stack = [(root, False)]
        pop, push = stack.pop, stack.append
        while stack:
            node, done = pop()
            if id(node) in index:
                continue
            if not done:
                push((node, True))
                for x in node.inputs:
                    if type(x) is Node and x.storage is None and id(x) not in index:
                        push((x, False))
                continue
            refs = []
            for x, c in zip(node.inputs, node.casts):
                if type(x) is Node:
                    if x.storage is None:
                        refs.append(("n", index[id(x)]))
                    else:
                        refs.append(("l", leaf(x.storage, x.dtype, x.shape,
                                               _contig(x.shape), x.offset)))
                elif isinstance(x, Array):
                    refs.append(("l", leaf(x._st, x.dtype, x.shape, x.strides, x.offset)))
                else:
                    refs.append(("s", len(scalars)))
                    scalars.append((x, c))
            index[id(node)] = len(nodes)
            nodes.append(node)
            self.refs.append(refs)


def _contig(shape: tuple) -> tuple:
    from .layout import contiguous_strides
    return contiguous_strides(shape)


def _program(g: _Graph, rank: int, base: int, out: bool) -> tuple[list[str], int, str, set]:
    """WGSL lines computing the graph's root as ``t{last}`` at the linear index ``gi``.

    Metadata from word ``base``: the (collapsed) shape, the strides of the output (with
    ``out``) and of each leaf, the offsets in the same order, the scalars, and one zero
    word per operand position (``oz0``, ``oz1``, ...; see :func:`_opaque`).
    Returns the lines, the word after the block, the helper functions and the types.
    """
    nl = len(g.leaves)
    no = 1 if out else 0
    at_off = base + rank + rank * (no + nl)
    ops = [("oo", at_off, base + rank)] if out else []
    for j in range(nl):
        ops.append((f"o{j}", at_off + no + j, base + rank * (1 + no + j)))
    at_sc = at_off + no + nl
    at_z = at_sc + len(g.scalars)  # always-zero words the compiler cannot see through
    arity = max(len(r) for r in g.refs)
    body = [cg.strided_offsets(rank, base, ops)]
    body += [f"  let oz{i} = {cg.word(at_z + i)};" for i in range(arity)]
    for j, (st, dt, *_r) in enumerate(g.leaves):
        body.append(f"  let l{j} = {cg.load(dt, f'{g.binding(st, dt)}[u32(o{j})]')};")
    chunks: list[str] = []
    types = {dt for _, dt in g.bufs} | {g.nodes[-1].dtype}
    for k, (node, refs) in enumerate(zip(g.nodes, g.refs)):
        vals = []
        for i, ((kind, idx), c) in enumerate(zip(refs, node.casts)):
            if kind == "s":
                t = g.scalars[idx][1]
                v = cg.scalar_expr(at_sc + idx, t)
            else:  # a value eager kernels would load from memory, operand by operand
                v, t = (f"t{idx}", g.nodes[idx].dtype) if kind == "n" else \
                    (f"l{idx}", g.leaves[idx][1])
                v = _opaque(v, t, f"oz{i}")
            body.append(f"  let v{k}_{i} = {cg.cast(v, t, c)};")
            vals.append(f"v{k}_{i}")
            types |= {t, c}
        T = node.casts[0].wgsl if node.casts else node.dtype.wgsl
        e = node.expr.format(*vals, T=T, R=node.dtype.wgsl)
        body.append(f"  let t{k}: {node.dtype.wgsl} = {e};")
        chunks += _helper_chunks(node.helpers, node.casts[0] if node.casts else node.dtype)
    hsrc = list(dict.fromkeys(chunks))  # each helper once, in order
    from .kernels.f64_math import F64_SRC
    if "_f64p(" in ("\n".join(body) + "\n".join(hsrc)):
        hsrc.insert(0, F64_SRC)
    return body, at_z + arity, hsrc, types


def _source(g: _Graph, rank: int, out: DType, kept: tuple = ()) -> tuple[str, int]:
    body, words, lib, types = _program(g, rank, 1, True)
    body.insert(0, f"  if (gi >= {cg.word(0)}) {{ return; }}")
    body.append(f"  out[u32(oo)] = {cg.store(out, f't{len(g.nodes) - 1}')};")
    for k, j in enumerate(kept, 1):  # after the result, one block of n elements each
        body.append(f"  out[u32(oo) + {k}u * {cg.word(0)}] = {cg.store(out, f't{j}')};")
    src = (cg.header(types | {out}, words, [("out", out)],
                     [(f"in{b}", dt) for b, (_, dt) in enumerate(g.bufs)])
           + "\n".join(lib) + "\n" + cg.main_1d("\n".join(body)))
    return src, words


def _meta(g: _Graph, shape: tuple, out: tuple | None) -> tuple[int, list[int]]:
    """The rank and the metadata words of :func:`_program` (after ``n``) over ``shape``;
    ``out`` is the output's ``(strides, offset)`` or None."""
    strides = [broadcast_strides(sh, st, shape) for _s, _d, sh, st, _o in g.leaves]
    if out is not None:
        strides.insert(0, out[0])
    cshape, cstrides = collapse(shape, strides)
    head = [*cshape]
    for st in cstrides:
        head.extend(st)
    if out is not None:
        head.append(out[1])
    head.extend(off for _s, _d, _sh, _st, off in g.leaves)
    from .kernels.mapkernel import scalar_word
    head.extend(scalar_word(v, t) for v, t in g.scalars)
    head.extend(0 for _ in range(max(len(r) for r in g.refs)))  # oz0, oz1, ...
    return len(cshape), head


class Fused:
    """A pending array as a WGSL function ``fn NAME(gi: u32) -> T``, its element ``gi``
    (row-major), for a kernel that reads it (a reduction) in place of a buffer.

    Attributes:
        reads: ``(binding name, dtype)`` of the buffers it reads, to declare after the
            kernel's own; ``buffers`` the buffers to bind there.
        words: metadata words to append after the kernel's own (at word ``base``).
        key: the graph's signature, for the kernel's cache key.
        types: the dtypes it uses (for the ``enable`` lines).
    """

    def __init__(self, arr: Any, name: str, base: int) -> None:
        node = arr._node
        self.graph = g = _Graph(node)
        self.rank, self.words = _meta(g, arr.shape, None)
        self.key = _signature(g, self.rank)
        self.name, self.base = name, base
        self.reads = [(f"in{b}", dt) for b, (_, dt) in enumerate(g.bufs)]
        self.buffers = [b for b, _ in g.bufs]
        # the leaves' storages, alive until the kernel is recorded: running the pending
        # graphs first (a dispatch may) drops the graphs' own references
        self.storages = [st for st, *_r in g.leaves]
        self._built: tuple | None = None

    def _build(self) -> tuple:
        """(function, helpers, types), generated when the kernel is first compiled."""
        if self._built is None:
            g = self.graph
            body, _end, lib, types = _program(g, self.rank, self.base, False)
            last = g.nodes[-1]
            # opaque as a stored result would be: no FMA with the reduction's own sum
            body.append(f"  return {_opaque(f't{len(g.nodes) - 1}', last.dtype, 'oz0')};")
            fn = (f"fn {self.name}(gi: u32) -> {last.dtype.wgsl} {{\n" + "\n".join(body)
                  + "\n}\n")
            self._built = (fn, lib, types)
        return self._built

    @property
    def types(self) -> set:
        return self._build()[2]

    def source(self, host: str) -> str:
        """The function and the helpers that the kernel source ``host`` lacks."""
        fn, helpers, _t = self._build()
        return "\n".join(h for h in helpers if h not in host) + "\n" + fn


def fuse(x: Any, name: str, base: int) -> Fused | None:
    """``x`` (pending) as :class:`Fused`; None when its leaves need too many bindings."""
    f = Fused(x, name, base)
    return f if len(f.buffers) <= _max_bufs(x.engine) else None


def dispatch(f: Fused, key: Any, make: Any, words: list, out: Any, groups: tuple) -> bool:
    """Record a kernel that reads the pending array of ``f`` through its function and
    writes the fresh array ``out``: metadata ``words`` then ``f.words``; bindings ``out``
    then ``f.buffers``. ``make()`` returns the source as :meth:`Engine.kernel` wants. False
    (nothing recorded: the caller runs it unfused) when the kernel does not compile."""
    eng = out.engine

    def build() -> tuple:
        src, _w, nw, _nr = make()
        return src, len(words) + len(f.words), nw, len(f.buffers)
    try:
        kern = eng.kernel(key, build)
    except Exception:  # a driver that rejects the fused source: unfused still works
        return False
    w = [*words, *f.words]
    meta = struct.pack(f"<{len(w)}I", *[v & 0xFFFFFFFF for v in w])
    eng.dispatch(kern, meta, [out._st.buffer, *f.buffers], groups)
    return True


def fusable(x: Any) -> bool:
    """Whether ``x`` is pending, so a kernel reading it may compute it in place."""
    node = x._node if x._s is None else None
    return node is not None and node.storage is None and node.inputs is not None


def _opaque(v: str, t: DType, oz: str) -> str:
    """``v`` unchanged, through an identity the compiler cannot see through (``oz`` is a
    metadata word that is always 0).

    Eager kernels load every operand from memory, so the compiler knows nothing about
    it; a fused kernel must hide each op's operands the same way, or results differ: a
    driver contracts one op's ``a * b`` and the next op's ``+ c`` into an FMA (NVIDIA),
    folds ``select(x, m, x < m)`` (a ``less`` feeding a ``where``) into a ``max`` that
    drops NaN (OpenGL llvmpipe), or ``x - x`` into 0 for a NaN ``x`` (lavapipe). Each
    operand position has its own zero word, so two operands holding one value stay two
    values to the compiler.
    """
    if t is D.bool:
        return f"({v} != ({oz} != 0u))"
    if t is D.float32:
        return f"bitcast<f32>(bitcast<u32>({v}) ^ {oz})"
    if t.kind == "f":  # float16/64 (no bitcast to u32): times an opaque 1, which is exact
        return f"({v} * {t.wgsl}(1u - {oz}))"
    return v  # integers: every fold is exact


def _node_sig(n: Node) -> tuple:
    # dtype names, not DTypes: hashing the key then calls no Python __hash__
    s = n.sig = (n.expr, n.helpers, tuple(c.name for c in n.casts), n.dtype.name)
    return s


def _signature(g: _Graph, rank: int) -> tuple:
    prog = tuple((n.sig or _node_sig(n), *r) for n, r in zip(g.nodes, g.refs))
    leaves = tuple((dt.name, g.binding(st, dt)) for st, dt, *_r in g.leaves)
    return ("lazy", rank, prog, leaves, tuple(dt.name for _, dt in g.bufs),
            tuple(t.name for _, t in g.scalars))


def _error(exc: Exception, g: _Graph, node: Node) -> Exception:
    """``exc`` again (a Volta error keeps its class), naming the recorded ops."""
    from ._errors import DeviceError, OutOfMemoryError
    ops = ", ".join(x.op for x in g.nodes)
    msg = (f"wgpu: the fused kernel of the lazily recorded ops [{ops}] (the result of "
           f"{node.op}: shape {node.shape}, {node.dtype.name}) failed: {exc}. Set "
           f"VOLTA_WGPU_EAGER=1 (or volta_wgpu.set_lazy(False)) to run each op on its own")
    return OutOfMemoryError(msg) if isinstance(exc, OutOfMemoryError) else DeviceError(msg)


def materialize(node: Node) -> Any:
    """Run the fused kernel computing ``node`` (once) and return its storage."""
    if node.storage is not None and not node.offset:
        return node.storage
    eng = node.engine
    with eng._lock:
        if node.storage is not None:
            if node.offset:  # computed beside another result: a buffer of its own now
                n = prod(node.shape) * node.dtype.itemsize
                st = eng.alloc(n)
                eng.copy(node.storage, node.offset * node.dtype.itemsize, st, 0, n)
                node.storage, node.offset = st, 0
            return node.storage
        eng._lazy_busy += 1
        try:
            g = _Graph(node)
            if len(g.bufs) > _max_bufs(eng):
                # inner values stored since recording add bindings: run the inputs first
                for x in node.inputs:
                    if type(x) is Node:
                        materialize(x)
                g = _Graph(node)
            out = _launch(g, node, None)
            node.storage = out
            if eng._lazy_pending:  # pending graphs holding this node now read its result
                eng._lazy_reads.add(id(out.buffer))
            node.inputs = None  # the leaves may go: later graphs read the result
            return out
        finally:
            eng._lazy_busy -= 1


def run_into(expr: str, operands: list, casts: tuple, out_dtype: DType, helpers: tuple,
             op: str, out: Any) -> bool:
    """Compute ``launch_map(expr, operands, ..., out=out)`` with its pending operands in
    one kernel that writes ``out`` (any view); False when the eager path must serve (no
    pending operand, another dtype, or ``out``'s buffer is also read)."""
    Array = _array_type()
    if out_dtype is not out.dtype or out.size == 0 or not any(
            isinstance(a, Array) and a._s is None for a in operands):
        return False
    node = _new_node(expr, operands, casts, out_dtype, helpers, op)
    if node is None or broadcast_shapes(node.shape, out.shape, op=op) != out.shape:
        return False
    return _write(node, out, None)


def write_into(out: Any, arr: Any) -> bool:
    """Compute the pending ``arr`` (same shape and dtype) straight into ``out``, for an
    in-place op whose temporary result ``arr`` is dropped right after; False when the
    eager path must serve."""
    node = arr._node
    if (node is None or node.storage is not None or arr.dtype is not out.dtype
            or arr.shape != out.shape or out.size == 0 or node.engine is not out.engine):
        return False
    return _write(node, out, arr)


def _write(node: Node, out: Any, skip: Any) -> bool:
    eng = node.engine
    # the pending arrays that read ``out`` run before it is written (the others cannot
    # see the write); ``skip`` is the in-place op's own temporary
    run_pending(eng, reads=out._st.buffer, skip=skip)
    with eng._lock:
        g = _Graph(node)
        if not g.read_through(out) or len(g.bufs) > _max_bufs(eng):
            return False
        eng._lazy_busy += 1
        try:
            _launch(g, node, out)
        finally:
            eng._lazy_busy -= 1
    return True


def _launch(g: _Graph, node: Node, out: Any) -> Any:
    """Record the fused kernel of ``g``; into a new buffer (returned) or the view ``out``."""
    eng = node.engine
    if out is None:
        shape, out_strides, out_off = node.shape, _contig(node.shape), 0
    else:
        shape, out_strides, out_off = out.shape, out.strides, out.offset
    n = prod(shape)
    kept = _kept(g, node, n) if out is None else ()
    rank, words = _meta(g, shape, (out_strides, out_off))
    key = (_signature(g, rank), kept)
    meta = struct.pack(f"<{len(words) + 1}I", *[w & 0xFFFFFFFF for w in [n, *words]])
    try:
        kern = eng.kernel(key, lambda: (*_source(g, rank, node.dtype, kept), 1, len(g.bufs)))
        res = (eng.alloc(max(n, 1) * node.dtype.itemsize * (1 + len(kept))) if out is None
               else out._st)
    except Exception as exc:
        raise _error(exc, g, node) from exc
    eng.dispatch(kern, meta, [res.buffer] + [b for b, _ in g.bufs], groups_for(n))
    for k, j in enumerate(kept, 1):
        x = g.nodes[j]
        x.storage, x.offset, x.inputs = res, k * n, None
    return res


def _kept(g: _Graph, root: Node, n: int) -> tuple:
    """The inner nodes of ``g`` whose arrays are still alive (an activation autograd saved,
    a value the program holds): the kernel stores them too, after the result, so a later
    graph reads them instead of computing them again. Only those of the result's shape
    and dtype (one output binding, one thread per element) and whole 4-byte words."""
    dt, shape = root.dtype, root.shape
    if dt.emu or (n * dt.itemsize) % 4:
        return ()
    return tuple(j for j, x in enumerate(g.nodes[:-1]) if x.dtype is dt and x.shape == shape
                 and x.out is not None and x.out() is not None)
