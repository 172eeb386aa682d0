"""Extract the UCI handwritten digits from scikit-learn into ``digits.bin.gz``.

Run once, from the repository root, when the data file must be rebuilt::

    python -m volta_core.data.make_digits

It reads ``sklearn/datasets/data/digits.csv.gz`` (the 1797 8x8 images scikit-learn ships
inside its package; no network) and writes ``volta_core/data/digits.bin.gz``, which
Volta reads at run time without scikit-learn or NumPy. The output is reproducible
byte for byte (gzip ``mtime`` is 0).

File format (little-endian, gzip-compressed)::

    b"VDIGITS1"                      8-byte magic
    uint32 n, uint32 h, uint32 w     1797, 8, 8
    uint8  pixels[n * h * w]         grey levels 0..16, row-major, image after image
    uint8  labels[n]                 classes 0..9

The data is the test part of "Optical Recognition of Handwritten Digits" (Alpaydin and
Kaynak, UCI Machine Learning Repository, 1998, https://doi.org/10.24432/C50P49),
licensed CC BY 4.0.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import struct
import sys
from pathlib import Path

MAGIC = b"VDIGITS1"
HEADER = struct.Struct("<III")
OUT = Path(__file__).with_name("digits.bin.gz")


def read_sklearn_csv() -> tuple[list[list[int]], list[int]]:
    """Return (images as 64 ints each, labels) from scikit-learn's packaged CSV."""
    spec = importlib.util.find_spec("sklearn")  # locate the package without importing it
    if spec is None or spec.origin is None:
        raise ImportError("scikit-learn is needed to rebuild digits.bin.gz: "
                          "pip install scikit-learn")
    raw = (Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz").read_bytes()
    images, labels = [], []
    for row in csv.reader(io.StringIO(gzip.decompress(raw).decode("ascii"))):
        if not row:
            continue
        values = [int(float(v)) for v in row]
        if len(values) != 65 or not all(0 <= v <= 16 for v in values[:64]):
            raise ValueError(f"unexpected row in digits.csv.gz: {row[:5]}...")
        images.append(values[:64])
        labels.append(values[64])
    return images, labels


def encode(images: list[list[int]], labels: list[int]) -> bytes:
    """The gzip-compressed file content for ``images`` and ``labels``."""
    body = MAGIC + HEADER.pack(len(images), 8, 8)
    body += bytes(v for img in images for v in img) + bytes(labels)
    return gzip.compress(body, compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    images, labels = read_sklearn_csv()
    if len(images) != 1797 or sorted(set(labels)) != list(range(10)):
        raise ValueError(f"expected 1797 images of 10 classes, got {len(images)}")
    data = encode(images, labels)
    out = Path(argv[0]) if argv else OUT
    out.write_bytes(data)
    print(f"wrote {out} ({len(data)} bytes, {len(images)} images)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
