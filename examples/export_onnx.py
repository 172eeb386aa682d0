"""Export the main job's CNN to ONNX and serve it with ONNX Runtime.

Trains the README's digits CNN (``train_digits.make_model``) for a few epochs, or loads a
checkpoint written by ``train_digits.py`` (``--checkpoint``), exports it with
``vt.onnx.export`` (a dynamic batch axis), then classifies the test set with ONNX
Runtime in batches of several sizes and checks that its logits and accuracy match Volta's.

Usage: python examples/export_onnx.py [--device cpu|cuda|wgpu|auto] [--smoke]
       [--checkpoint runs/digits/checkpoint.safetensors]
"""

from __future__ import annotations

import time

import _common
import numpy as np
import onnxruntime as ort
import train_digits

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader
from volta_core.data.datasets import load_digits


def train(model: nn.Module, device: vt.Device, epochs: int) -> None:
    train_set, _ = load_digits()
    loader = DataLoader(train_set, batch_size=32, shuffle=True, device=device)
    opt = optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        for images, labels in loader:
            opt.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()
            opt.step()
        print(f"epoch {epoch + 1}: last batch loss {loss.item():.4f}")
    model.eval()


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/export_onnx")
    parser.add_argument("--checkpoint", default=None,
                        help="a checkpoint of train_digits.py to export instead of training")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args(argv)
    device, out = _common.setup(args)

    model = train_digits.make_model().to(device)
    if args.checkpoint:
        model.load_state_dict(vt.load(args.checkpoint, map_location=device)["model"])
        print(f"loaded {args.checkpoint}")
    else:
        train(model, device, 1 if args.smoke else args.epochs)
    model.eval()

    # export: one example batch; the batch axis stays dynamic
    path = out / "digits_cnn.onnx"
    example = vt.zeros(1, 1, 8, 8, device=device)
    vt.onnx.export(model, example, path, input_names=["image"], output_names=["logits"],
                   dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    print(f"onnx model: {path} ({path.stat().st_size / 1024:.1f} KiB)")

    # serve: ONNX Runtime on the test set, in batches of different sizes
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    _, test_set = load_digits()
    images = np.stack([np.asarray(test_set[i][0].numpy()) for i in range(len(test_set))])
    labels = np.array([int(test_set[i][1]) for i in range(len(test_set))])
    start, served, i = time.perf_counter(), [], 0
    for size in [1, 7, 64, 500] * 100:
        if i >= len(images):
            break
        served.append(session.run(["logits"], {"image": images[i:i + size]})[0])
        i += size
    ort_logits = np.concatenate(served)
    seconds = time.perf_counter() - start
    with vt.no_grad():
        vt_logits = model(vt.tensor(images, device=device)).cpu().numpy()

    diff = float(np.abs(ort_logits - vt_logits).max())
    ort_acc = float((ort_logits.argmax(1) == labels).mean())
    vt_acc = float((vt_logits.argmax(1) == labels).mean())
    print(f"ONNX Runtime: {len(images)} images in {seconds * 1000:.1f} ms, accuracy "
          f"{ort_acc:.2%} (Volta {vt_acc:.2%}), max logit difference {diff:.2e}")
    target = 0.7 if args.smoke else 0.95
    _common.check(diff <= 1e-4 * max(1.0, float(np.abs(vt_logits).max()))
                  and ort_acc == vt_acc and ort_acc >= target,
                  f"ONNX Runtime serves the exported CNN with Volta's logits (within 1e-4) "
                  f"and accuracy (>= {target:.0%})")


if __name__ == "__main__":
    main()
