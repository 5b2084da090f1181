"""The random programs of the structural fuzzer (see ``structural_programs``).

``generate(seed)`` writes one program, deterministic in ``seed``.  It keeps a small
model of the tensors it made (shape, whether they require grad, whose view they are)
so most programs are valid, and reuses old tensors as often as fresh ones, which is
what makes fan-out, fan-in and ops created between two uses of a tensor.  It does not
predict errors: an in-place write into a tensor some op saved, backward through a
freed graph, a gradient that comes back ``None`` are all left in, since PyTorch and
vizgrad must then raise at the same instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.core.structural_programs import Instr

# Small shapes: a bug in how gradients meet shows on three numbers as well as on three
# million, and small tensors keep each program at a few milliseconds.
SHAPES = [(), (3,), (4,), (2, 3), (3, 2), (1, 3), (2, 1, 3), (2, 2)]
MAX_NUMEL = 24


@dataclass
class Val:
    """What the generator knows about one name."""

    shape: tuple[int, ...]
    rg: bool  # requires grad
    leaf: bool = False  # a leaf that requires grad (in-place on it is an error)
    base: str | None = None  # for a view: the tensor it looks into
    deps: frozenset = frozenset()  # names of the grad-requiring tensors it came from
    uses: int = 0
    split: bool = False  # an output of split, or a tensor split was called on
    stale: bool = False  # a view whose base was written after it was made
    higher: bool = False  # computed from a gradient (second order)
    expanded: bool = False  # an expand(), or a view of one


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    try:
        shape = tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None
    return shape if prod(shape) <= MAX_NUMEL else None


def prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


class Generator:
    """Writes one program; ``program`` holds it when ``build`` returns."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.vals: dict[str, Val] = {}
        self.program: list[Instr] = []
        self.count = 0
        self.handles: list[str] = []
        self.focus: list[str] = []  # second-order gradients, used next on purpose

    # ---------------------------------------------------------------- helpers
    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, src: str, defines=(), uses=(), root=False) -> None:
        for used in uses:
            if used in self.vals:
                self.vals[used].uses += 1
        self.program.append(Instr(src, tuple(defines), tuple(dict.fromkeys(uses)), root))

    def data(self, shape) -> str:
        return repr(np.round(self.rng.uniform(-1.5, 1.5, shape), 2).tolist())

    def pick(self, names: list[str]) -> str | None:
        """Half the time one of the newest, else any: old tensors get used again."""
        if not names:
            return None
        focus = [n for n in self.focus if n in names]
        if focus and self.rng.random() < 0.7:
            chosen = focus[int(self.rng.integers(len(focus)))]
            self.focus.remove(chosen)  # once is enough to build on it
            return chosen
        if self.rng.random() < 0.5:
            names = names[-3:]
        return names[int(self.rng.integers(len(names)))]

    def tensors(self, rg: bool | None = None, nonleaf: bool = False) -> list[str]:
        return [n for n, v in self.vals.items()
                if (rg is None or v.rg == rg) and not (nonleaf and v.leaf)]

    def leaf(self, shape, rg: bool = True) -> str:
        name = self.name("x" if rg else "c")
        flag = ", requires_grad=True" if rg else ""
        self.emit(f"{name} = lib.tensor({self.data(shape)}, dtype=lib.float64{flag})", [name])
        deps = frozenset([name]) if rg else frozenset()
        self.vals[name] = Val(tuple(shape), rg, leaf=rg, deps=deps)
        return name

    def operand(self) -> str:
        # Mostly a tensor that requires grad: constants are there to be written into.
        pool = self.tensors(rg=True) if self.rng.random() < 0.85 else self.tensors()
        return self.pick(pool) or self.leaf(SHAPES[int(self.rng.integers(len(SHAPES)))])

    def result(self, src: str, shape, args: list[str], base: str | None = None) -> str:
        vals = [self.vals[a] for a in args]
        # "d" for a value made from a gradient: the snapshot does not compare whether it
        # requires grad (see _snap).
        out = self.name("d" if any(v.higher for v in vals) else "v")
        self.emit(src.format(out=out), [out], args)
        deps = frozenset().union(*(v.deps | ({a} if v.rg else set()) for a, v in zip(args, vals)))
        self.vals[out] = Val(tuple(shape), any(v.rg for v in vals), base=base, deps=deps,
                             higher=any(v.higher for v in vals),
                             expanded=base is not None and vals[0].expanded)
        return out

    def partner(self, shape: tuple, exact: bool) -> str:
        """A tensor that broadcasts with ``shape`` (to exactly ``shape`` if ``exact``)."""
        fits = [n for n, v in self.vals.items()
                if (b := _broadcast(shape, v.shape)) is not None and (not exact or b == shape)]
        if fits and self.rng.random() < 0.8:
            return self.pick(fits)  # type: ignore[return-value]
        smaller = list(shape[int(self.rng.integers(len(shape) + 1)):])
        smaller = [1 if self.rng.random() < 0.3 else d for d in smaller]
        return self.leaf(tuple(smaller), rg=self.rng.random() < 0.7)

    # ---------------------------------------------------------------- forward ops
    def unary(self) -> None:
        a = self.operand()
        # No exp(): exp of exp reaches 1e35 and beyond, where one rounding of the input
        # is more than the tolerance of the output.
        op = ["{a}.tanh()", "{a}.sin()", "{a}.sigmoid()", "{a}.cos()", "{a} * 1.5", "-{a}",
              "{a}.clone()", "{a}.pow(3)", "{a}.square()", "{a}.relu()"][
                  int(self.rng.integers(10))]
        self.result("{out} = " + op.replace("{a}", a), self.vals[a].shape, [a])

    def binary(self, op: str | None = None) -> str:
        a = self.operand()
        b = self.partner(self.vals[a].shape, exact=False)
        shape = _broadcast(self.vals[a].shape, self.vals[b].shape)
        op = op or "+-*"[int(self.rng.integers(3))]
        return self.result(f"{{out}} = {a} {op} {b}", shape, [a, b])

    def fork(self) -> None:
        """A residual: ``z = f(a)``, then ``s = a + b`` used twice.  s's gradient is a sum
        the engine made, which AddBackward0 hands to a and b as one tensor, and z's node
        (older than s's) adds into a's gradient after that: the shape of the bug fixed in
        c90c3ba, and of real models (a skip connection beside a gate)."""
        a = self.operand()
        self.focus = [a]
        self.unary()
        self.focus = [a]
        s = self.binary("+")
        self.focus = [s, s]

    def reduce(self) -> None:
        a = self.operand()
        shape = self.vals[a].shape
        if not shape or self.rng.random() < 0.3:
            self.result(f"{{out}} = {a}.sum()", (), [a])
            return
        d = int(self.rng.integers(len(shape)))
        if self.rng.random() < 0.5:
            self.result(f"{{out}} = {a}.sum({d})", shape[:d] + shape[d + 1:], [a])
        else:
            kept = shape[:d] + (1,) + shape[d + 1:]
            self.result(f"{{out}} = {a}.mean({d}, keepdim=True)", kept, [a])

    def join(self) -> None:
        a = self.operand()
        shape = self.vals[a].shape
        b = self.pick([n for n, v in self.vals.items() if v.shape == shape]) or a
        if shape and self.rng.random() < 0.6:
            d = int(self.rng.integers(len(shape)))
            out = shape[:d] + (shape[d] * 2,) + shape[d + 1:]
            if prod(out) <= MAX_NUMEL:
                self.result(f"{{out}} = lib.cat([{a}, {b}], {d})", out, [a, b])
                return
        if prod(shape) * 2 <= MAX_NUMEL and len(shape) < 3:
            self.result(f"{{out}} = lib.stack([{a}, {b}])", (2,) + shape, [a, b])

    def view(self) -> None:
        a = self.operand()
        v = self.vals[a]
        shape, base = v.shape, v.base or a
        kind = int(self.rng.integers(8))
        big = [d for d, n in enumerate(shape) if n >= 2]
        if kind == 0 and big:  # a slice, sometimes with a step
            d = big[int(self.rng.integers(len(big)))]
            i = int(self.rng.integers(shape[d] - 1))
            j = int(self.rng.integers(i + 1, shape[d] + 1))
            step = 2 if j - i >= 3 and self.rng.random() < 0.3 else 1
            n = len(range(i, j, step))
            index = ", ".join([":"] * d + [f"{i}:{j}" + (":2" if step == 2 else "")])
            self.result(f"{{out}} = {a}[{index}]", shape[:d] + (n,) + shape[d + 1:], [a], base)
        elif kind == 1 and shape:  # select
            d = int(self.rng.integers(len(shape)))
            i = int(self.rng.integers(shape[d]))
            src = f"{a}[{i}]" if d == 0 else f"{a}.select({d}, {i})"
            self.result(f"{{out}} = {src}", shape[:d] + shape[d + 1:], [a], base)
        elif kind == 2 and len(shape) >= 2:  # transpose
            d0, d1 = self.rng.choice(len(shape), 2, replace=False).tolist()
            t = list(shape)
            t[d0], t[d1] = t[d1], t[d0]
            self.result(f"{{out}} = {a}.transpose({d0}, {d1})", tuple(t), [a], base)
        elif kind in (3, 4) and (v.leaf or a.startswith("c")):  # another factorisation
            # Only of a leaf or a constant (contiguous in both libraries): which results
            # are contiguous may differ, and with it whether view() refuses and whether
            # reshape() returns a view or a copy (PyTorch: not to be relied on).
            new = _factor(prod(shape), self.rng)
            method = "view" if kind == 4 else "reshape"
            self.result(f"{{out}} = {a}.{method}({tuple(new)!r})", new, [a], base)
        elif kind == 5 and prod(shape) * 2 <= MAX_NUMEL and len(shape) < 3:  # expand
            ones = [d for d, n in enumerate(shape) if n == 1]
            if ones:
                new = tuple(2 if d == ones[0] else n for d, n in enumerate(shape))
            else:
                new = (2,) + shape
            out = self.result(f"{{out}} = {a}.expand({new!r})", new, [a], base)
            self.vals[out].expanded = True
        elif kind == 6 and len(shape) < 3:  # unsqueeze
            d = int(self.rng.integers(len(shape) + 1))
            self.result(f"{{out}} = {a}.unsqueeze({d})", shape[:d] + (1,) + shape[d:], [a], base)
        elif kind == 7 and big:  # split: one node, several outputs (views)
            d = big[int(self.rng.integers(len(big)))]
            size = int(self.rng.integers(1, shape[d]))
            sizes = [min(size, shape[d] - s) for s in range(0, shape[d], size)]
            outs = [self.name("d" if v.higher else "v") for _ in sizes]
            self.emit(f"{', '.join(outs)}, = {a}.split({size}, {d})", outs, [a])
            for out, n in zip(outs, sizes):
                self.vals[out] = Val(shape[:d] + (n,) + shape[d + 1:], v.rg, base=base,
                                     deps=v.deps | ({a} if v.rg else set()), split=True)
            v.split = self.vals[base].split = True
        # No detach() (yet): ``v * v.detach()``, whose create_graph gradient required grad
        # in vizgrad, is held in test_structural_fuzz.py's FIXED.

    def inplace(self) -> None:
        # Into a non-leaf or a view of one, an expanded one included, from any source (the
        # target itself too: PyTorch saves it, so a backward through it is refused); rarely
        # into a leaf, or into split's outputs or
        # their base (both must refuse, at once or when the outputs are next used).  Not
        # into a result of autograd.grad: which of a backward's results are views (made
        # under no_grad, so PyTorch refuses writes into them) is each library's own.
        split_ok = self.rng.random() < 0.1  # rarely: the program ends at the refusal
        pool = [n for n in self.tensors(nonleaf=self.rng.random() < 0.95)
                if (split_ok or not self.vals[n].split
                    and not self.vals[self.vals[n].base or n].split)
                and not n.startswith("g")
                and not (self.vals[n].base or "").startswith("g")]
        a = self.pick(pool)
        if a is None:
            return
        target = self.vals[a]
        root = target.base or a
        b = self.partner(target.shape, exact=True)
        if b != a and (b == root or self.vals[b].base == root):
            # Another view of the same memory: PyTorch refuses what it can tell overlaps
            # in part; the rest it writes element by element, reading what it wrote
            # (undefined, as its docs say), where vizgrad computes out of place.
            return
        if b == a and target.expanded:
            # e.copy_(e) writes nothing, then PyTorch's backward through the write refuses
            # the expanded view (its CopySlices writes the gradient through it); vizgrad's
            # does not (e.mul_(e) is refused by both at once, which ends the program)
            return
        op = int(self.rng.integers(4))
        src = [f"{a}.add_({b})", f"{a}.mul_({b})", f"{a}.mul_(0.5)", f"{a}.copy_({b})"][op]
        self.emit(src, (), [a, b])
        for name, val in self.vals.items():
            if val.base == root and name != a:
                val.stale = True
            val.deps = val.deps - {a, root}  # they came from the value before the write
        other = self.vals[b]
        if op == 3:
            if target.base is None:  # the whole value replaced: its history is b's
                target.rg = target.rg or other.rg
                target.deps = other.deps | ({b} if other.rg else set())
                return
        if op != 2 and other.rg:
            for name in {a, target.base} - {None}:
                val = self.vals[name]  # type: ignore[index]
                val.rg, val.deps = True, val.deps | other.deps | {b}

    # ---------------------------------------------------------------- hooks
    def hook(self) -> None:
        kind = int(self.rng.integers(7))
        if kind <= 1 or not self.tensors(rg=True, nonleaf=True):
            a = self.pick(self.tensors(rg=True))
            if a is None:
                return
            # PyTorch 2.13 crashes (SIGSEGV) in Tensor.register_hook on a view whose base
            # was written in place, unless the view's grad_fn was read first.
            read = f"{a}.grad_fn  # read first: PyTorch crashes otherwise\n" \
                if self.vals[a].base else ""
            # PyTorch calls a tensor hook with None on an output of split that got no
            # gradient (vizgrad does not call it): the hooks let None pass.
            if kind == 1:
                self.emit(f"{read}{a}.register_hook(lambda g: None if g is None else g * 0.5)",
                          (), [a])
                return
            h, r = self.name("h"), self.name("r")
            self.emit(f"{read}{h} = []\n{r} = {a}.register_hook(lambda g: None if g is None "
                      f"else {h}.append(_rec((g,))))", [h, r], [a])
            self.handles.append(r)
            return
        # Not on a value made from a gradient: the nodes of a backward formula's graph are
        # each library's own way of writing the derivative (2 * x * g or (g * 2) * x).
        a = self.pick([n for n in self.tensors(rg=True, nonleaf=True)
                       if not self.vals[n].leaf and not self.vals[n].higher])
        if a is None:
            return
        if kind == 2:
            self.emit(f"{a}.grad_fn.register_prehook(lambda go: tuple("
                      "None if g is None else g * 2.0 for g in go))", (), [a])
        elif kind == 3:
            self.emit(f"{a}.grad_fn.register_hook(lambda gi, go: tuple("
                      "None if g is None else g * 3.0 for g in gi))", (), [a])
        elif kind in (4, 5):
            h = self.name("h")
            self.emit(f"{h} = []\n{a}.grad_fn.register_prehook(lambda go: {h}.append("
                      f"_rec(go)))", [h], [a])
        else:
            h = self.name("h")
            self.emit(f"{h} = []\n{a}.grad_fn.register_hook(lambda gi, go: {h}.append("
                      f"_rec(tuple(gi) + tuple(go))))", [h], [a])

    def retain(self) -> None:
        a = self.pick(self.tensors(rg=True))
        if a is not None:
            self.emit(f"{a}.retain_grad()", (), [a])

    def remove(self) -> None:
        if self.handles:
            r = self.handles.pop(int(self.rng.integers(len(self.handles))))
            self.emit(f"{r}.remove()", (), [r])

    # ---------------------------------------------------------------- roots
    def roots(self, count: int) -> list[str]:
        rg = self.tensors(rg=True)
        sinks = [n for n in rg if self.vals[n].uses == 0]
        chosen: list[str] = []
        for _ in range(count):
            pool = [n for n in (sinks if sinks and self.rng.random() < 0.7 else rg)
                    if n not in chosen]
            if pool:
                chosen.append(self.pick(pool))  # type: ignore[arg-type]
        return chosen

    def gradient(self, root: str) -> str:
        return f"lib.tensor({self.data(self.vals[root].shape)}, dtype=lib.float64)"

    def root(self, last: bool) -> None:
        # Mostly only the last root frees the graph (a later backward through a freed
        # node raises in both libraries, which ends the program).
        retain = "False" if last or self.rng.random() < 0.1 else "True"
        kind = int(self.rng.integers(5))
        outs = self.roots(2 if kind == 1 else 1)
        if not outs:
            return
        if kind == 0 or kind == 3:
            (a,) = outs[:1]
            grad = "" if self.vals[a].shape == () and self.rng.random() < 0.5 else self.gradient(a)
            extra = ""
            if kind == 3:  # backward(inputs=...): only these get .grad
                inputs = self.inputs(outs)
                extra = f", inputs=[{', '.join(inputs)}]"
                outs = outs + inputs
            args = ", ".join(x for x in (grad, f"retain_graph={retain}") if x)
            self.emit(f"{a}.backward({args}{extra})", (), outs, root=True)
        elif kind == 1:
            grads = ", ".join(self.gradient(a) for a in outs)
            self.emit(f"lib.autograd.backward([{', '.join(outs)}], [{grads}], "
                      f"retain_graph={retain})", (), outs, root=True)
        else:
            inputs = self.inputs(outs)
            create = self.rng.random() < 0.6
            results = [self.name("g") for _ in inputs]
            grads = ", ".join(self.gradient(a) for a in outs)
            self.emit(f"{', '.join(results)}, = lib.autograd.grad([{', '.join(outs)}], "
                      f"[{', '.join(inputs)}], [{grads}], retain_graph={retain}, "
                      f"create_graph={create}, allow_unused=True)", results, outs + inputs,
                      root=True)
            # An input the outputs may not reach gets None: such a result is compared,
            # not computed with (the program would end at the TypeError).  Which inputs a
            # gradient's graph reaches is not tracked.
            reached = frozenset().union(*(self.vals[o].deps for o in outs))
            if any(self.vals[o].higher for o in outs):
                reached = frozenset()
            for g, x in zip(results, inputs):
                if x in reached:
                    self.vals[g] = Val(self.vals[x].shape, create, deps=reached, higher=True)
            if create:  # second order: a function of the gradients, differentiated later
                self.focus = [g for g in results if g in self.vals]

    def inputs(self, outs: list[str]) -> list[str]:
        deps = sorted(n for n in frozenset().union(*(self.vals[o].deps for o in outs))
                      if n in self.vals)
        pool = deps if deps and self.rng.random() < 0.9 else self.tensors(rg=True)
        if not pool:
            return [self.leaf(self.vals[outs[0]].shape)]
        count = int(self.rng.integers(1, 4))
        return list(dict.fromkeys(self.pick(pool) for _ in range(count)))  # type: ignore[misc]

    # ---------------------------------------------------------------- a program
    def build(self, size: int) -> list[Instr]:
        steps = [self.unary, self.binary, self.fork, self.reduce, self.join, self.view,
                 self.inplace, self.hook, self.retain, self.remove, lambda: self.root(last=False),
                 lambda: self.leaf(SHAPES[int(self.rng.integers(len(SHAPES)))])]
        weights = np.array([12, 18, 6, 5, 3, 16, 9, 12, 4, 2, 5, 4], dtype=float)
        for _ in range(2):
            self.leaf(SHAPES[int(self.rng.integers(len(SHAPES)))])
        while len(self.program) < size:
            steps[int(self.rng.choice(len(steps), p=weights / weights.sum()))]()
        self.root(last=True)
        return self.program


def _factor(numel: int, rng: np.random.Generator) -> tuple[int, ...]:
    """A random shape of 1 to 3 dimensions holding ``numel`` elements."""
    dims = []
    rest = numel
    for _ in range(int(rng.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = divisors[int(rng.integers(len(divisors)))]
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return tuple(dims)


def generate(seed: int, size: int | None = None) -> list[Instr]:
    """The program of ``seed``: about ``size`` instructions (6 to 24 when not given)."""
    gen = Generator(seed)
    if size is None:
        size = int(gen.rng.integers(6, 25))
    return gen.build(size)
