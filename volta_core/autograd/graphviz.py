"""Draw the autograd graph of a tensor as Graphviz DOT (and render it when ``dot`` exists)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..tensor import Tensor


def _fmt_shape(shape) -> str:
    return str(tuple(int(s) for s in shape))


def to_dot(output: Tensor, params: dict[str, Tensor] | None = None) -> str:
    """Return the graph that produced ``output`` in Graphviz DOT.

    Op nodes show the op name and the output's shape, dtype and device; leaves show
    their shape and, when ``params`` maps names to tensors, their name.

    Args:
        output: the tensor whose history to draw (usually the loss).
        params: optional ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``).
    """
    names = {id(t): n for n, t in (params or {}).items()}
    lines = ["digraph autograd {", '  rankdir="BT";',
             '  node [fontname="Helvetica", fontsize=10, shape=box, style="rounded,filled"];']
    ids: dict[int, str] = {}

    def node_id(obj) -> str:
        key = id(obj)
        if key not in ids:
            ids[key] = f"n{len(ids)}"
        return ids[key]

    root = output.grad_fn if output.grad_fn is not None else output
    stack, seen = [root], {id(root)}
    while stack:
        node = stack.pop()
        if isinstance(node, Tensor):
            label = names.get(id(node), "leaf")
            label += f"\\n{_fmt_shape(node.shape)} {node.dtype.name} {node.device}"
            lines.append(f'  {node_id(node)} [label="{label}", fillcolor="#cfe8ff"];')
            continue
        shape, dtype = getattr(node, "out_meta", ((), "?"))
        dname = node.device.volta_dtype(dtype).name if dtype != "?" else "?"
        label = f"{node.name}\\n{_fmt_shape(shape)} {dname} {node.device}"
        lines.append(f'  {node_id(node)} [label="{label}", fillcolor="#eeeeee"];')
        for parent in node.parents:
            if parent is None:
                continue
            lines.append(f"  {node_id(parent)} -> {node_id(node)};")
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(dot: str, path: str | Path) -> Path:
    """Write ``dot`` to ``path``; also render ``path`` as SVG/PNG (by suffix) with Graphviz.

    Returns the rendered file when the ``dot`` program exists, else the ``.dot`` file.

    Args:
        dot: DOT source from :func:`to_dot`.
        path: where to write, e.g. ``graph.svg`` or ``graph.png``.
    """
    path = Path(path)
    src = path.with_suffix(".dot")
    src.write_text(dot)
    exe = shutil.which("dot")
    if exe is None or path.suffix not in (".svg", ".png", ".pdf"):
        return src
    subprocess.run([exe, f"-T{path.suffix[1:]}", str(src), "-o", str(path)], check=True,
                   capture_output=True, timeout=60)
    return path
