"""Record a call's GPU work and replay it: ``vt.compile(fn, mode="reduce-overhead")``.

``mode="reduce-overhead"`` (what CUDA graphs serve in PyTorch) records the GPU work of a
call and, once two consecutive calls with the same guard recorded the same work, replays
it with no Python op code at all (on wgpu: ``volta_wgpu.replay``). The guard is the layout,
dtype and ``requires_grad`` of every tensor argument, of the parameters, buffers, gradients
and optimizer state the call reaches (its Module; for a function, the Modules, Optimizers,
schedulers, compiled functions and tensors its closure and globals name, see
:func:`_reached`), the optimizers' hyperparameters, the other arguments' values, the
numbers its closure and globals name, grad mode, autocast and ``training`` of every
module. As with CUDA graphs, everything else the Python code decided is frozen at
recording time: Python side effects do not run again, and a Python number read from
elsewhere (an attribute of an object) keeps its recorded value.

A whole training step replays (zero_grad, forward, loss, backward, ``opt.step()``): the
optimizers' integer state (step counts) advances on each replay by what the recorded call
added (and the Python floats an optimizer's ``_advance_host_state`` derives from it, NAdam's
momentum product), and the optimizers' kernels take their step-dependent numbers (bias
corrections, the learning rate) live (:class:`host_args`): each replay recomputes them from
the optimizer's state and writes them into the buffer the recorded kernels read, so a
scheduler that changes ``lr`` between calls needs no new recording (SGD and Adam/AdamW's
multi-tensor kernels; AMSGrad, NAdam, RAdam, Adamax and Adagrad per parameter). Where an
optimizer's learning rate went into the work as a constant (a kernel that does not take it
live), a new ``lr`` records again. Random draws replay too: the backend advances its
generator on each replay by what the recorded call drew.

Calls that cannot be replayed run lazily as in the default mode: those that read a value
back, return tensors that require grad, keep new tensors outside their outputs (tensor
attributes of the module, optimizer state on its first step), change a host value a replay
would not (a scheduler stepped inside the call, a float in optimizer state that the
optimizer does not recompute from the step count, an optimizer stepped twice), or step an
optimizer the guard does not reach; and, after a few tries, those whose work differs from
call to call (a Python number that changes every call baked into an op).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .compiler import _Lazy, _lazy


class _NoReplay(Exception):
    """A call the replayer does not record (it runs lazily)."""


_MAX_TRIES = 3  # recordings of one guard that fail before it runs lazily for good
_MAX_WATCHED = 4096  # tensors a guard checks on every call


class _Entry:
    """What the replayer knows of one guard: the last tape and whether it repeated."""

    __slots__ = ("tape", "stable", "fails", "template", "changes", "lrs", "live")

    def __init__(self) -> None:
        self.tape: Any = None
        self.stable = False
        self.fails = 0
        self.template: Any = None
        self.changes: list = []
        self.lrs: list = []  # the optimizer groups' learning rates when recorded
        self.live: set = set()  # the groups whose lr the tape recomputes on each replay


class _Call:
    """What the guard of one call found besides its key: the tensors it watches, the
    optimizer groups it reaches, the integer optimizer state (step counts) a replay
    advances, and the host values a recorded call must leave unchanged."""

    __slots__ = ("watched", "groups", "ints", "hosts", "advance")

    def __init__(self) -> None:
        self.watched: list = []
        self.groups: list = []  # param_groups dicts
        self.ints: list = []  # (state dict, key) of int values
        self.hosts: list = []  # (object, reader) pairs: see host_values
        # (state dict, optimizer, group, place of its "step" in ints): state whose Python
        # floats the optimizer's _advance_host_state recomputes step by step (NAdam's)
        self.advance: list = []

    def host_values(self) -> list:
        """The host values a replay would not update: group hyperparameters, non-integer
        optimizer state, schedulers' epoch counts."""
        return [read(x) for x, read in self.hosts]


def _group_values(g: dict) -> tuple:
    return tuple((k, v) for k, v in g.items() if k != "params")


def _state_values(st: dict) -> tuple:
    from .tensor import Tensor
    return tuple((k, v) for k, v in st.items()
                 if not isinstance(v, Tensor) and (type(v) is not int))


def _sched_values(s: Any) -> tuple:
    return (getattr(s, "last_epoch", None), getattr(s, "_step_count", None))


def _scalar(v: Any) -> bool:
    """Whether ``v`` may be part of a guard key (compared by value)."""
    if isinstance(v, tuple):
        return all(map(_scalar, v))
    return v is None or isinstance(v, (bool, int, float, str))


class Replayer:
    """``mode="reduce-overhead"``: record the GPU work of calls and replay it (see the
    module docstring)."""

    def __init__(self, fn: Callable, module: Any) -> None:
        self.fn = fn
        self.module = module
        self.entries: dict[Any, _Entry] = {}

    def __call__(self, *args: Any, **kw: Any) -> Any:
        b = _wgpu_backend()
        if b is None:
            return self.fn(*args, **kw)
        call = _Call()
        try:
            key = self._guard(b, args, kw, call)
        except _NoReplay:
            with _lazy():
                return self.fn(*args, **kw)
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= 64:  # guards that keep changing: start over
                self.entries.clear()
            entry = self.entries[key] = _Entry()
        if entry.stable:
            out = self._replay(entry, call)
            if out is not _STALE:
                return out
            entry.stable, entry.tape = False, None
        if entry.fails >= _MAX_TRIES:
            with _lazy():
                return self.fn(*args, **kw)
        return self._record(b, entry, args, kw, call)

    def _guard(self, b: Any, args: tuple, kw: dict, call: _Call) -> tuple:
        from .amp import get_autocast_dtype, is_autocast_enabled
        from .autograd.grad_mode import is_grad_enabled
        from .tensor import Tensor
        watched = call.watched

        def walk(x: Any) -> Any:
            if isinstance(x, Tensor):
                return watch(x)
            if isinstance(x, (tuple, list)):
                return (type(x).__name__, *map(walk, x))
            if isinstance(x, dict):
                return ("dict", *((k, walk(v)) for k, v in x.items()))
            if x is None or isinstance(x, (bool, int, float, str)):
                return (type(x).__name__, x)
            raise _NoReplay

        pos: dict[int, int] = {}  # id(tensor) -> its place in watched

        def watch(t: Any) -> tuple:
            if t._owner is not None or t._hooks or t._post_hooks:
                raise _NoReplay
            d = b.trace_describe(t._data)
            if d is None:
                raise _NoReplay
            pos[id(t)] = len(watched)
            watched.append(t)
            g = t._grad
            if g is not None:  # a gradient may be a view of a temporary (an expand)
                if g._hooks or g._post_hooks or b.trace_describe(_arr(g)) is None:
                    raise _NoReplay
                watched.append(g)
            return ("T", d, t.requires_grad, None if g is None else
                    b.trace_describe(_arr(g)))

        try:
            key: list = [walk(args), walk(kw), is_grad_enabled()]
            aut = is_autocast_enabled("wgpu")
            key.append(get_autocast_dtype("wgpu") if aut else None)
            m = self.module
            if m is not None:
                key.append(tuple(mod.training for mod in m.modules()))
                key.extend(watch(t) for t in (*m.parameters(), *m.buffers()))
            else:  # the modules, optimizers and tensors a function reaches by name
                for kind, x in _reached(self.fn, seen={id(t) for t in watched}):
                    if kind == "T":
                        key.append(watch(x))
                    elif kind == "group":
                        # the lr is checked apart (_replay): a replay recomputes it where the
                        # optimizer's kernel takes it as a host argument
                        items = tuple((k, v) for k, v in _group_values(x) if k != "lr")
                        if not (_scalar(items) and _scalar(x.get("lr"))):
                            raise _NoReplay  # a tensor lr: not a value a key can hold
                        call.groups.append(x)
                        call.hosts.append((x, _group_values))
                        # where its parameters are watched: a reordered group would pair
                        # the state of one with another
                        key.append(("group", items, tuple(pos.get(id(p)) for p in x["params"])))
                    elif kind == "state":
                        x, opt, group = x
                        ints = tuple(k for k, v in x.items() if type(v) is int)
                        if "step" in ints and hasattr(opt, "_advance_host_state"):
                            # its floats advance with the step count (checked in _record)
                            call.advance.append((x, opt, group,
                                                 len(call.ints) + ints.index("step")))
                        else:
                            call.hosts.append((x, _state_values))
                        call.ints.extend((x, k) for k in ints)
                        key.append(("state", tuple(x), ints))  # names: tensors by position
                    elif kind == "sched":
                        call.hosts.append((x, _sched_values))
                    else:
                        key.append((kind, x))
            if len(watched) > _MAX_WATCHED or len({id(t) for t in watched}) != len(watched):
                # a dataset of tensors in a global list; one tensor in two places (its buffer
                # would be two inputs)
                raise _NoReplay
        finally:  # the nested functions refer to themselves: break the cycle, which
            walk = watch = None  # would keep last call's tensors (gradients) alive
        return tuple(key)

    def _record(self, b: Any, entry: _Entry, args: tuple, kw: dict, call: _Call) -> Any:
        from .tensor import Tensor
        watched = call.watched
        before = [(t._data, t._grad, t._version[0]) for t in watched]
        ints0 = [st[k] for st, k in call.ints]
        hosts0 = call.host_values()
        advance0 = [dict(a[0]) for a in call.advance]
        rec = b.trace_begin([_arr(t) for t in watched])
        if isinstance(rec, str):  # e.g. inside another compiled call's recording
            entry.fails += 1
            with _lazy():
                return self.fn(*args, **kw)
        _args.groups = {}
        try:
            with _lazy():
                result = self.fn(*args, **kw)
        except BaseException:
            b.trace_end(rec, [])
            raise
        finally:
            groups, _args.groups = _args.groups, None
        outs: list = []
        index = {id(t): i for i, t in enumerate(watched)}
        ok = call.host_values() == hosts0  # a scheduler stepped inside the call, ...
        ok = ok and all(_advanced(a, st0) for a, st0 in zip(call.advance, advance0))
        # an optimizer stepped that the guard does not reach: its lr and step counts
        # would be frozen
        ok = ok and groups.keys() <= {id(g) for g in call.groups}

        def out(t: Any) -> tuple:
            nonlocal ok
            if id(t) in index:
                return ("w", index[id(t)])
            if t.requires_grad or t.grad_fn is not None:
                ok = False  # an autograd graph cannot be replayed
            if t._owner is not None and id(t._owner) in index:
                ok = False  # a view of an input: replayed, it would not share its base
            # a view of a temporary base comes back as a plain tensor over the same layout
            outs.append(t.array)
            return ("o", len(outs) - 1, t.device)

        def template(x: Any) -> Any:
            nonlocal ok
            if isinstance(x, Tensor):
                return out(x)
            if isinstance(x, (tuple, list)):
                return (type(x), [template(v) for v in x])
            if not (x is None or isinstance(x, (bool, int, float, str))):
                ok = False
            return ("c", x)

        tmpl = template(result)
        template = None  # noqa: F841 - a recursive closure: break its reference cycle
        changes = []
        for i, (t, (d0, g0, v0)) in enumerate(zip(watched, before)):
            if t._data is not d0:
                if t._owner is not None:
                    ok = False  # a view's new values live in its base
                outs.append(t._data)
                changes.append((i, "data", len(outs) - 1))
            if t._grad is not g0:
                changes.append((i, "grad", None if t._grad is None else out(t._grad)))
            if t._version[0] != v0:
                changes.append((i, "version", t._version[0] - v0))
        for i, ((st, k), v0) in enumerate(zip(call.ints, ints0)):
            v = st.get(k)
            if type(v) is not int:
                ok = False
            elif v != v0:  # a step count: each replay advances it as the call did
                changes.append((i, "int", v - v0))
        if ok:
            # the call returns what a replay would: an output that is a view of a
            # temporary (``loss.detach()``) as a plain tensor, so that the temporary and
            # the autograd graph it holds die now instead of outliving the call
            result = _build(tmpl, outs, watched)
        tape = b.trace_end(rec, outs)
        if not ok or isinstance(tape, str):
            entry.fails += 1
            entry.tape, entry.stable = None, False
            return result
        lrs = [g["lr"] for g in call.groups]
        live = {i for i, g in enumerate(call.groups) if groups.get(id(g), False)}
        entry.stable = tape.same_as(entry.tape) and changes == entry.changes and \
            _same_template(tmpl, entry.template) and len(lrs) == len(entry.lrs) and all(
                a == b or (i in live and i in entry.live)
                for i, (a, b) in enumerate(zip(lrs, entry.lrs)))
        if entry.tape is not None and not entry.stable:
            entry.fails += 1  # the work changes from call to call (a step count in Adam)
        entry.tape, entry.template, entry.changes = tape, tmpl, changes
        entry.lrs, entry.live = lrs, live
        return result

    def _replay(self, entry: _Entry, call: _Call) -> Any:
        watched = call.watched
        for i, g in enumerate(call.groups):
            if g["lr"] != entry.lrs[i] and i not in entry.live:
                return _STALE  # a new lr the recorded work holds as a constant
        stepped = _args.groups
        if stepped is not None:  # replayed inside another call's recording: tell it
            for i, g in enumerate(call.groups):
                stepped[id(g)] = stepped.get(id(g), True) and i in entry.live
        # the step counts advance first: the tape's live uploads (host_args) recompute
        # the kernel arguments from the state as the step leaves it
        ints = [(call.ints[i], v) for i, what, v in entry.changes if what == "int"]
        for (st, k), v in ints:
            st[k] += v
        # then the floats that follow them (NAdam's momentum product), step by step
        steps = {i: v for i, what, v in entry.changes if what == "int"}
        saved = [dict(st) for st, *_x in call.advance]
        for st, opt, group, i in call.advance:
            for s in range(st["step"] - steps.get(i, 0) + 1, st["step"] + 1):
                opt._advance_host_state(st, group, s)
        arrays = entry.tape.replay([_arr(t) for t in watched])
        if arrays is None:
            for (st, k), v in ints:
                st[k] -= v
            for (st, *_x), old in zip(call.advance, saved):
                st.update(old)
            return _STALE
        for i, what, v in entry.changes:
            if what == "int":
                continue
            t = watched[i]
            if what == "data":
                t._data = arrays[v]
                t._gen += 1
            elif what == "grad":
                t._grad = None if v is None else _build(v, arrays, watched)
            else:
                t._version[0] += v
        return _build(entry.template, arrays, watched)


_STALE = object()


def _advanced(adv: tuple, before: dict) -> bool:
    """Whether the Python numbers of an optimizer's state are what its
    ``_advance_host_state`` makes of ``before`` (a copy from before the call) over the
    steps the call took: then a replay can recompute them."""
    st, opt, group, _ = adv
    sim = dict(before)
    s0, s1 = before.get("step"), st.get("step")
    if type(s0) is not int or type(s1) is not int or s1 < s0:
        return False
    for s in range(s0 + 1, s1 + 1):
        opt._advance_host_state(sim, group, s)
    sim["step"] = s1
    return _state_values(sim) == _state_values(st)


def _build(x: Any, arrays: list, watched: list) -> Any:
    """The value a template describes, from a replay's output arrays (a module-level
    function: a recursive closure would keep the arrays in a reference cycle)."""
    from .tensor import Tensor
    tag = x[0]
    if tag == "o":
        return Tensor._make(arrays[x[1]], x[2])
    if tag == "w":
        return watched[x[1]]
    if tag == "c":
        return x[1]
    items = [_build(v, arrays, watched) for v in x[1]]
    return tag._make(items) if hasattr(tag, "_make") else tag(items)  # a named tuple


def _arr(t: Any) -> Any:
    """The tensor's array (a stale view's re-derived first)."""
    return t._data if t._owner is None else t.array


def _reached(fn: Any, seen: set) -> list:
    """The tensors a function reaches through its closure and the globals it names, one
    level into Modules (parameters, buffers, ``training`` of each submodule), Optimizers
    (parameters, groups and state), schedulers (and their optimizer) and lists, tuples
    and dict values, and the numbers, strings and None it names; as ``("T", tensor)``,
    ``("group", param_group)``, ``("state", (state dict, optimizer, group))``,
    ``("sched", scheduler)`` or a guard item."""
    from .nn.module import Module
    from .optim.optimizer import Optimizer
    from .optim.scheduler import LRScheduler
    from .tensor import Tensor
    found: list = []

    def add(x: Any, depth: int, named: bool = False) -> None:
        if named and _scalar(x):
            # a number the code names (a closure variable, a global): a new value is a
            # new guard (an index into a list of batches; a counter the call advances)
            found.append(("value", x))
        elif isinstance(x, Tensor):
            if id(x) not in seen:
                seen.add(id(x))
                found.append(("T", x))
        elif isinstance(x, Module):
            modules = list(x.modules())  # every one's mode: a submodule may be in eval
            found.append(("training", tuple(mod.training for mod in modules)))
            for mod in modules:
                for t in (*mod._parameters.values(), *mod._buffers.values()):
                    if t is not None:
                        add(t, depth)
        elif isinstance(x, Optimizer):
            if id(x) in seen:
                return
            seen.add(id(x))
            for g in x.param_groups:
                for t in g["params"]:
                    add(t, depth)
                found.append(("group", g))
            for g in x.param_groups:  # in parameter order: a loaded state dict may have
                for p in g["params"]:  # filled x.state in another order
                    st = x.state.get(p)
                    if st:
                        for v in st.values():
                            add(v, depth)
                        found.append(("state", (st, x, g)))
        elif isinstance(x, LRScheduler):
            found.append(("sched", x))
            add(x.optimizer, depth)
        elif depth < 2 and isinstance(x, (list, tuple)):
            for v in x:
                add(v, depth + 1)
        elif depth < 2 and isinstance(x, dict):
            for v in x.values():
                add(v, depth + 1)
        elif isinstance(x, Replayer):  # another compiled function: what it reaches
            add(x.fn, depth)
        elif depth < 2 and callable(x) and hasattr(x, "__code__"):
            for v in _names(x):
                add(v, depth + 1, True)

    for v in _names(fn):
        add(v, 0, True)
    add = None  # noqa: F841 - a recursive closure: break its reference cycle
    return found


def _names(fn: Any) -> list:
    """The objects in ``fn``'s closure, its default arguments (``lambda step=step: ...``
    binds a step that way) and the globals its code names."""
    out = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
           if _filled(c)]
    out += list(getattr(fn, "__defaults__", None) or ())
    out += list((getattr(fn, "__kwdefaults__", None) or {}).values())
    code, glob = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is not None and glob is not None:
        out += [glob[n] for n in code.co_names if n in glob]
    return out


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _same_template(a: Any, b: Any) -> bool:
    # templates hold devices and types: compare by value
    return a == b


def _wgpu_backend() -> Any:
    """The wgpu backend when it is installed and can record calls, else None."""
    b = _Lazy.backend
    if b is False:
        with _Lazy():
            pass
        b = _Lazy.backend
    return b if b is not None and hasattr(b, "trace_begin") else None


class _Args(threading.local):
    """Per thread: the host arguments of the kernel call in progress (:func:`host_args`),
    and while a call is recorded, per optimizer group whether every step of it took its
    host arguments live (``id(group) -> bool``)."""

    current: Any = None  # [recompute, group, taken]
    groups: dict | None = None


_args = _Args()


class host_args:  # noqa: N801 - used as a function: ``with host_args(...):``
    """Declare the Python numbers a kernel call takes that change from call to call.

    An optimizer wraps its multi-tensor kernel call in this context: ``recompute()``
    returns the keyword arguments the kernel took, computed from the optimizer's state as
    the step leaves it (the advanced step count, the group's ``lr``; None when it cannot
    tell). A backend that records the call for ``vt.compile(mode="reduce-overhead")``
    takes it with :func:`live_host_args`; each replay first advances the step counts as
    the recorded call did, then writes the values ``recompute()`` gives into the device
    buffer the kernel reads them from, so the recorded work stays valid as the step count
    and a scheduler's learning rate change. A recording is replayed only if, once the call
    returned, ``recompute()`` gave what the kernel took (an optimizer stepped twice in
    one call is not). ``group`` is the optimizer's parameter group: once its kernel took
    the arguments live, a new ``lr`` needs no new recording.
    """

    __slots__ = ("item", "outer")

    def __init__(self, recompute: Callable[[], dict | None], group: dict | None = None) -> None:
        self.item = [recompute, group, False]

    def __enter__(self) -> host_args:
        self.outer, _args.current = _args.current, self.item
        return self

    def __exit__(self, *exc: Any) -> None:
        _args.current = self.outer
        _, group, taken = self.item
        if not taken and group is not None:
            fixed_host_args(group)

    @property
    def taken(self) -> bool:
        """Whether the kernel called inside took the arguments live."""
        return self.item[2]


def live_host_args() -> Callable[[], dict | None] | None:
    """For a backend's kernel: the ``recompute`` of the enclosing :class:`host_args`
    (None outside one); calling this tells the optimizer the kernel takes them live, so
    call it only once the kernel is sure to serve the call."""
    cur = _args.current
    if cur is None:
        return None
    cur[2] = True
    groups = _args.groups
    if groups is not None and cur[1] is not None:
        groups.setdefault(id(cur[1]), True)
    return cur[0]


def fixed_host_args(group: dict) -> None:
    """Note that ``group``'s hyperparameters went into the work as constants (a step that
    did not take them live): while a call is recorded, a new ``lr`` then records again."""
    groups = _args.groups
    if groups is not None:
        groups[id(group)] = False


__all__ = ["Replayer", "host_args", "live_host_args", "fixed_host_args"]
