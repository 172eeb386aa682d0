"""Every public op, layer, loss and optimizer of volta_core has a conformance case."""

from __future__ import annotations

from volta_conformance.cases import all_cases
from volta_conformance.coverage import NON_OPS, public_ops, uncovered


def test_every_public_op_layer_and_optimizer_has_a_case():
    missing = uncovered()
    problems = [f"{kind}: {', '.join(names)}" for kind, names in missing.items() if names]
    assert not problems, (
        "public objects without a conformance case (add one to "
        "conformance/volta_conformance/cases/, or list a non-op in coverage.NON_OPS):\n"
        + "\n".join(problems))


def test_creation_functions_are_allow_listed_not_ops():
    ops = public_ops()
    for name in ("zeros", "arange", "tensor", "manual_seed"):
        assert name in NON_OPS and name not in ops
    assert "add" in ops and "matmul" in ops


def test_case_names_are_unique_and_well_formed():
    names = [c.name for c in all_cases()]
    assert len(names) == len(set(names))
    for case in all_cases():
        assert "/" in case.name and " " not in case.name, case.name
        assert case.dtypes, case.name


def test_default_run_includes_large_inputs_and_layouts():
    from volta_conformance.harness import select

    pairs = select(all_cases())
    large = {c.name for c, _ in pairs if c.large}
    assert len(large) >= 4
    for c in large:
        shapes = [a.shape for a in getattr(next(x for x in all_cases() if x.name == c),
                                           "args", ()) if hasattr(a, "shape")]
        assert any(_numel(s) > 2 ** 20 for s in shapes), c
    names = {c.name for c, _ in pairs}
    for layout in ("add/broadcast", "add/0d", "add/empty", "add/size1", "add/permuted",
                   "add/sliced", "neg/expanded"):
        assert layout in names


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n
