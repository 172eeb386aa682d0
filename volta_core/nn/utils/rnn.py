"""Variable-length sequences for the recurrent layers: ``PackedSequence`` and its helpers.

A packed sequence stores a batch of sequences of different lengths time step by time
step, without padding: ``data`` holds, for each step ``t``, the rows of the
``batch_sizes[t]`` sequences still running (sorted by decreasing length). ``nn.RNN``,
``nn.LSTM`` and ``nn.GRU`` take one and step only those rows, so padding never reaches
the recurrence and ``h_n`` is each sequence's state at its own last step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ...creation import tensor
from ...errors import ShapeError
from ...ops.indexing import index_select
from ...ops.joining import cat, stack
from ...ops.movement import narrow, pad
from ...tensor import Tensor


class SequenceLengthError(ShapeError, RuntimeError):
    """Bad ``lengths`` for packing (a RuntimeError as in PyTorch, and a ShapeError)."""


def _index(values: list[int], like: Tensor) -> Tensor:
    return tensor(values, dtype="int64", device=like.device)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    perm = [int(i) for i in permutation.tolist()]
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return _index(inv, permutation)


class PackedSequence(NamedTuple):
    """A batch of variable-length sequences packed time step by time step.

    Attributes:
        data: ``(sum(lengths), *)`` the rows of every running sequence, step by step.
        batch_sizes: int64 CPU tensor, how many sequences run at each step.
        sorted_indices: how the batch was sorted by decreasing length (None if it was).
        unsorted_indices: the inverse of ``sorted_indices``.

    Build one with :func:`pack_padded_sequence` or :func:`pack_sequence`, never directly.
    """

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Move or cast ``data`` (and the index tensors to its device); batch_sizes stays."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if t is None else t.to(data.device)
               for t in (self.sorted_indices, self.unsorted_indices)]
        return PackedSequence(data, self.batch_sizes, *idx)

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to("float64")

    def float(self) -> PackedSequence:
        return self.to("float32")

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return False


def _lengths(op: str, lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise ShapeError(f"{op}: lengths must be a 1-D tensor, got shape {lengths.shape}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int],
                         batch_first: bool = False, enforce_sorted: bool = True
                         ) -> PackedSequence:
    """Pack a padded batch of sequences of lengths ``lengths``.

    Args:
        input: ``(T, B, *)``, or ``(B, T, *)`` with ``batch_first``.
        lengths: each sequence's length (a list or a 1-D int tensor).
        batch_first: the batch is the first dim of ``input``.
        enforce_sorted: require ``lengths`` in decreasing order; with False the batch is
            sorted here and ``sorted_indices`` records how.
    """
    op = "pack_padded_sequence"
    lens = _lengths(op, lengths)
    if input.ndim < 2:
        raise ShapeError(f"{op}: input must have at least 2 dims (T, B, *), got {input.shape}")
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    if len(lens) != batch:
        raise SequenceLengthError(f"{op}: expected {batch} lengths (the batch size of input "
                         f"{input.shape}), got {len(lens)}")
    if any(n <= 0 for n in lens):
        raise SequenceLengthError(f"{op}: Length of all samples has to be greater than 0, "
                                  f"but found an element in 'lengths' that is <= 0 ({lens})")
    if max(lens) > steps:
        raise SequenceLengthError(f"{op}: a length {max(lens)} exceeds the {steps} steps of input "
                         f"{input.shape}")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise SequenceLengthError(
                f"{op}: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement.")
    else:
        order = sorted(range(batch), key=lambda b: -lens[b])
        sorted_indices = _index(order, x)
        x = index_select(x, 1, sorted_indices)
        lens = [lens[b] for b in order]
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    rows = [t * batch + b for t, bs in enumerate(sizes) for b in range(bs)]
    flat = x.reshape(steps * batch, *x.shape[2:])
    data = index_select(flat, 0, _index(rows, x))
    return PackedSequence(data, tensor(sizes, dtype="int64", device="cpu"), sorted_indices,
                          invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Undo :func:`pack_padded_sequence`: returns ``(padded, lengths)``.

    Args:
        sequence: the packed batch.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: the value of the padded elements.
        total_length: pad to this many steps (at least the longest length).
    """
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    data = sequence.data
    batch, steps = sizes[0], len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {steps}")
        steps = total_length
    n = data.shape[0]
    filler = data.new_full((1, *data.shape[1:]), padding_value)
    rows, offset = [], 0
    for t in range(steps):
        bs = sizes[t] if t < len(sizes) else 0
        rows += [offset + b if b < bs else n for b in range(batch)]
        offset += bs
    padded = index_select(cat([data, filler], 0), 0, _index(rows, data))
    padded = padded.reshape(steps, batch, *data.shape[1:])
    lengths = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = [lengths[int(i)] for i in sequence.unsorted_indices.tolist()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths, dtype="int64", device="cpu")


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack tensors of shapes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), padding each to the longest ``L_i`` with ``padding_value``.

    Args:
        sequences: the tensors (their trailing dims must agree).
        batch_first: put the batch first.
        padding_value: the value of the padded elements.
        padding_side: ``"right"`` or ``"left"``.
    """
    op = "pad_sequence"
    if padding_side not in ("right", "left"):
        raise ValueError(f"{op}: padding_side must be 'left' or 'right', got {padding_side!r}")
    seqs = list(sequences)
    if not seqs:
        raise ValueError(f"{op}: received an empty list of sequences")
    trail = tuple(seqs[0].shape[1:])
    for i, s in enumerate(seqs):
        if s.ndim < 1 or tuple(s.shape[1:]) != trail:
            raise ShapeError(f"{op}: sequence {i} has shape {s.shape}; every sequence must "
                             f"be (L, *{trail}) like the first")
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = longest - s.shape[0]
        amounts = [0, 0] * len(trail) + ([extra, 0] if padding_side == "left" else [0, extra])
        padded.append(pad(s, amounts, value=padding_value) if extra else s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int],
                   batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch into its sequences (the inverse of :func:`pad_sequence`)."""
    lens = _lengths("unpad_sequence", lengths)
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [narrow(x[b], 0, 0, n) for b, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors of shapes ``(L_i, *)`` (decreasing ``L_i`` unless
    ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """Unpack into the list of sequences it was packed from (the inverse of
    :func:`pack_sequence`)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence", "invert_permutation",
           "SequenceLengthError"]
