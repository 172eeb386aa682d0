"""Per-op cost layer by layer: where the microseconds of ``op_overhead.py``'s chain go.

For each op of the chain (``y * 1.001``, ``y + x``, ``tanh(y)``, ``y - 0.5`` on a 16-element
tensor that requires grad), the host time of:

- ``kernel``: the backend array op alone (``a * 1.001`` on the arrays, ...);
- ``apply``: ``Function.apply``: argument scan, device check, grad-mode check, recording
  (node, parents, saved values) and the kernel;
- ``method``: the Tensor operator or function a user calls (dtype checks and promotion on
  top of ``apply``);
- ``backward``: the node's ``backward`` in a plain backward (no ``create_graph``);

then the whole chain's forward and backward per op, next to PyTorch's when installed
(``backward`` there includes the engine: ordering, handing gradients on, accumulation).
Per call: the fastest of several timing loops; per op of the chain: the median of runs.
On a GPU it is the host time of queued work (no sync per op).

Usage: python benchmarks/op_layers.py [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit


def _ns(fn, number: int = 5000, repeat: int = 9) -> float:
    """Nanoseconds per call of ``fn``: the fastest of ``repeat`` loops of ``number`` calls
    (the least disturbed by other work on a shared machine)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def _chain_us(lib, make_leaf, sync, n_ops: int = 100, repeat: int = 100) -> tuple:
    """Median microseconds per op of the chain's forward and of its backward."""
    from op_overhead import chain

    fwd, bwd = [], []
    for _ in range(repeat):
        x = make_leaf()
        sync()
        t0 = time.perf_counter()
        y = chain(lib, x, n_ops)
        sync()
        t1 = time.perf_counter()
        y.backward()
        sync()
        t2 = time.perf_counter()
        fwd.append((t1 - t0) / n_ops * 1e6)
        bwd.append((t2 - t1) / n_ops * 1e6)
    return statistics.median(fwd), statistics.median(bwd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import volta_core as vt
    from volta_core.ops import elementwise as E

    vt.set_num_threads(args.threads)
    dev = vt.device(args.device)
    xp = dev.xp
    x = vt.randn(16, device=args.device, requires_grad=True)
    y = x * 1.0
    xa, ya = x.detach().array, y.detach().array
    ops = {  # name: (kernel, apply, method)
        "mul": (lambda: ya * 1.001, lambda: E.Mul.apply(y, 1.001), lambda: y * 1.001),
        "add": (lambda: ya + xa, lambda: E.Add.apply(y, x), lambda: y + x),
        "tanh": (lambda: xp.tanh(ya), lambda: E.Tanh.apply(y), lambda: vt.tanh(y)),
        "sub": (lambda: ya - 0.5, lambda: E.Sub.apply(y, 0.5), lambda: y - 0.5),
    }
    g = vt.ones(16, device=args.device)
    print(f"volta on {args.device}, {args.threads} threads: ns per call")
    print(f"{'op':6s}{'kernel':>9s}{'apply':>9s}{'method':>9s}{'backward':>10s}")
    for name, (kernel, apply, method) in ops.items():
        node = method().grad_fn
        with vt.no_grad():
            bwd = _ns(lambda node=node: node.backward(g))
        row = [_ns(kernel), _ns(apply), _ns(method), bwd]
        print(f"{name:6s}" + "".join(f"{v:9.0f}" for v in row[:3]) + f"{row[3]:10.0f}")
    dev.synchronize()
    fwd, bwd = _chain_us(vt, lambda: vt.randn(16, device=args.device, requires_grad=True),
                         dev.synchronize)
    print(f"chain, us per op: volta forward {fwd:.2f}, backward {bwd:.2f}", end="")
    try:
        import torch
    except ImportError:
        print()
        return
    from train_step_models import peer_device

    torch.set_num_threads(args.threads)
    tdev = peer_device(args.device)
    tsync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
    tf, tb = _chain_us(torch, lambda: torch.randn(16, device=tdev, requires_grad=True), tsync)
    print(f"; torch ({tdev}) forward {tf:.2f}, backward {tb:.2f}")


if __name__ == "__main__":
    main()
