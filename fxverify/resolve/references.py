"""References: a region, a slice of one, a set of region instances, an edge instance or a link,
as the policy names them.

Each ``compile`` step checks the reference once per declaration and returns a closure that, per
instance environment, gives the ``ir.Footprint``, the instance names or the link name:
``footprint`` (``kv[3][0, +4 KiB]``, strided ``[OFF, elem E, stride S, count N]``), ``region_set``
(``pool[*]``, ``kvb[3][*]``, ``pool``), ``edge_set`` (the edges of an ``after`` clause) and
``link`` (a link by name or by its endpoints). Emits FX-NAM-001/FX-TYP-001 (through ``names``),
FX-TYP-002 (a malformed slice, a negative stride) and FX-TYP-004 (wrong number of indices, an
index outside its family's range).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.resolve.expressions import compile_expr, const_fn
from fxverify.resolve.names import known
from fxverify.resolve.state import Env, EvalError, Fn, RegionFamily, State, instance_name, plural

TupleFn = Callable[[Env], tuple[Any, ...]]


def index_items(groups: Sequence[ast.Group], dims: int) -> tuple[list[ast.Item], int]:
    """Collect up to ``dims`` index items from leading non-slice groups.

    Returns the items and the number of groups used. A lone ``[*]`` as the last index group stands
    for every remaining dimension, so ``kvb[*]`` names every instance of a 2-D family and
    ``kvb[3][*]`` every instance whose first index is 3.
    """
    items: list[ast.Item] = []
    gi = 0
    while len(items) < dims and gi < len(groups) and not groups[gi].is_slice:
        g = groups[gi]
        last = gi + 1 == len(groups) or groups[gi + 1].is_slice
        if last and len(g.items) == 1 and isinstance(g.items[0], ast.StarItem):
            items.extend([g.items[0]] * (dims - len(items)))
        else:
            items.extend(g.items)
        gi += 1
    return items, gi


def index_pattern(dims: int) -> str:
    """``[i]``, ``[i][j]``, ... for a help text."""
    return "".join(f"[{v}]" for v in "ijklmnopqrstuvwxyz"[:dims]) if dims <= 18 else "[i]" * dims


def tuple_fn(fns: Sequence[Fn]) -> Callable[[Env], tuple[int, ...]]:
    """Return ``env -> tuple(f(env) for f in fns)``, unrolled for the common 1 and 2 indices."""
    if len(fns) == 1:
        f0 = fns[0]
        return lambda env: (f0(env),)
    if len(fns) == 2:
        f0, f1 = fns
        return lambda env: (f0(env), f1(env))
    fs = tuple(fns)
    return lambda env: tuple(f(env) for f in fs)


def _dims_text(dims: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(f"{lo}..{hi}" for lo, hi in dims)


def _split(st: State, ref: ast.Ref, dims: int, family: str, what: str, *, stars: bool,
           slices: bool) -> tuple[list[ast.Item], ast.Group | None] | None:
    """Split a reference's groups into ``dims`` index items and an optional slice group.

    A bare family name stands for every instance when ``stars`` is allowed.
    """
    groups = list(ref.groups)
    items, gi = index_items(groups, dims)
    if dims and not items:
        if not stars:
            st.error(codes.TYP_004, f"`{family}` is a family; {what} needs one instance", ref.span,
                     f"`{family}` needs {dims} {plural(dims, 'index', 'indices')}",
                     help=f"name an instance, such as `{family}{'[0]' * dims}`")
            return None
        items = [ast.StarItem(ref.name.span)] * dims
    if len(items) != dims:
        where = groups[gi - 1].span if gi else ref.span
        st.error(codes.TYP_004, f"`{family}` takes {dims} {plural(dims, 'index', 'indices')}, found {len(items)}",
                 where, "wrong number of indices", help=f"write `{family}{index_pattern(dims)}`")
        return None
    for it in items:
        if isinstance(it, ast.StarItem) and not stars:
            st.error(codes.TYP_004, f"`[*]` in {what}", it.span, "names every instance",
                     help=f"{what} needs one instance; `[*]` is for sets of instances")
            return None
    rest = groups[gi:]
    if not rest:
        return items, None
    if dims == 0 and not rest[0].is_slice:
        st.error(codes.TYP_004, f"`{family}` is not a family", rest[0].span, "no indices declared",
                 help=f"a slice is written `{family}[OFF, +LEN]`")
        return None
    if not slices:
        st.error(codes.TYP_002, f"{what} names whole regions, not slices", rest[0].span, "not expected here",
                 help=f"write `{ref.name.name}` without the slice")
        return None
    if len(rest) > 1 or not rest[0].is_slice:
        bad = rest[0] if not rest[0].is_slice else rest[1]
        st.error(codes.TYP_002, "malformed slice", bad.span, "expected one slice group",
                 help="a slice is `[OFF, +LEN]` or `[OFF, elem E, stride S, count N]`")
        return None
    return items, rest[0]


def _index_fns(st: State, items: Sequence[ast.Item], scope: tuple[str, ...]) -> list[Fn | None] | None:
    """Compile index items; ``None`` entries are stars. ``None`` after a static error."""
    out: list[Fn | None] = []
    for it in items:
        if isinstance(it, ast.StarItem):
            out.append(None)
            continue
        assert isinstance(it, ast.IndexItem)
        fn = compile_expr(st, it.expr, scope)
        if fn is None:
            return None
        out.append(fn)
    return out


def _region_family(st: State, ident: ast.Ident) -> RegionFamily | None:
    if not known(st, ident, "region"):
        return None
    fam = st.region_fams.get(ident.name)
    return fam if fam is not None and fam.ok else None


def footprint(st: State, ref: ast.Ref, scope: tuple[str, ...]) -> Callable[[Env], ir.Footprint] | None:
    """Compile a footprint reference to a closure ``env -> Footprint`` (absolute addresses).
    Requires the regions to be built (``declarations.resolve_alias_sets``)."""
    fam = _region_family(st, ref.name)
    if fam is None:
        return None
    split = _split(st, ref, len(fam.dims), fam.name, "a footprint", stars=False, slices=True)
    if split is None:
        return None
    items, group = split
    idx_fns = _index_fns(st, items, scope)
    if idx_fns is None:
        return None
    shape = _slice(st, group, scope) if group is not None else ()
    if shape is None:
        return None
    instance = _instance_fn(fam, idx_fns, ref.span)
    regions, pos, span = st.regions, st.region_pos, ref.span
    if not shape:
        def whole(env: Env) -> ir.Footprint:
            r = regions[pos[instance(env)]]
            return ir.Footprint(r.name, r.space, r.base, r.size, r.size, 1, span)
        return whole
    off_fn, elem_fn, stride_fn, count_fn, spans = shape

    def sliced(env: Env) -> ir.Footprint:
        r = regions[pos[instance(env)]]
        off, elem = off_fn(env), elem_fn(env)
        stride = stride_fn(env) if stride_fn is not None else elem
        count = count_fn(env) if count_fn is not None else 1
        if elem <= 0:
            raise EvalError(codes.TYP_002, spans[0], f"slice length {elem} is not positive",
                            "lengths and element sizes must be at least 1 byte", "not positive")
        if stride < 0:
            raise EvalError(codes.TYP_002, spans[1], f"stride {stride} is negative", "strides are 0 or more bytes",
                            "negative")
        if count <= 0:
            raise EvalError(codes.TYP_002, spans[2], f"element count {count} is not positive",
                            "a strided slice has at least one element", "not positive")
        if count > 1 and stride < elem:
            # Overlapping elements would count their shared bytes twice wherever a footprint's
            # size is its room (``Footprint.nbytes``: FX-XF-001, FX-TYP-005).
            raise EvalError(codes.TYP_002, spans[1], f"the elements overlap: stride {stride} is less than the element size {elem}",
                            f"a strided slice's elements are disjoint: give a stride of at least {elem} bytes, or name "
                            "the bytes once as `[OFF, +LEN]`", "overlapping elements")
        return ir.Footprint(r.name, r.space, r.base + off, elem, stride, count, span)
    return sliced


def _slice(st: State, g: ast.Group, scope: tuple[str, ...]) -> tuple | None:
    """Compile ``[OFF, +LEN]`` or ``[OFF, elem E, stride S, count N]``."""
    form = "a slice is `[OFF, +LEN]` or `[OFF, elem E, stride S, count N]`"
    first, rest = g.items[0], g.items[1:]
    if not isinstance(first, ast.IndexItem):
        st.error(codes.TYP_002, "a slice starts with its offset", first.span, "offset expected", help=form)
        return None
    off_fn = compile_expr(st, first.expr, scope)
    if len(rest) == 1 and isinstance(rest[0], ast.LenItem):
        len_fn = compile_expr(st, rest[0].expr, scope)
        if off_fn is None or len_fn is None:
            return None
        return off_fn, len_fn, None, None, (rest[0].span, rest[0].span, rest[0].span)
    keys: dict[str, ast.KeyItem] = {}
    for it in rest:
        if not isinstance(it, ast.KeyItem) or it.key in keys:
            st.error(codes.TYP_002, "malformed slice", it.span, "not expected here", help=form)
            return None
        keys[it.key] = it
    missing = [k for k in ("elem", "stride", "count") if k not in keys]
    if missing:
        st.error(codes.TYP_002, "strided slice without " + ", ".join(f"`{k}`" for k in missing), g.span,
                 "incomplete slice", help=form)
        return None
    fns = [compile_expr(st, keys[k].expr, scope) for k in ("elem", "stride", "count")]
    if off_fn is None or any(f is None for f in fns):
        return None
    return off_fn, fns[0], fns[1], fns[2], (keys["elem"].span, keys["stride"].span, keys["count"].span)


def _instance_fn(fam: RegionFamily, idx_fns: list[Fn | None], span) -> Callable[[Env], str]:
    """Return ``env -> instance name`` for fully indexed references (FX-TYP-004 if absent)."""
    instances = fam.instances
    if not idx_fns:
        name = instances[()]
        return lambda env: name
    index = tuple_fn([f for f in idx_fns if f is not None])

    def instance(env: Env) -> str:
        idx = index(env)
        name = instances.get(idx)
        if name is None:
            raise EvalError(codes.TYP_004, span, f"`{instance_name(fam.name, idx)}` is out of range",
                            f"`{fam.name}` is declared over " + _dims_text(fam.dims), "out of range")
        return name
    return instance


def region_set(st: State, ref: ast.Ref, scope: tuple[str, ...], what: str) -> TupleFn | None:
    """Compile a region reference that may name several instances (``pool[*]``, ``pool``)."""
    fam = _region_family(st, ref.name)
    if fam is None:
        return None
    split = _split(st, ref, len(fam.dims), fam.name, what, stars=True, slices=False)
    if split is None:
        return None
    idx_fns = _index_fns(st, split[0], scope)
    if idx_fns is None:
        return None
    if all(f is None for f in idx_fns) and idx_fns:
        every = tuple(fam.instances.values())
        return lambda env: every
    if all(f is not None for f in idx_fns):
        one = _instance_fn(fam, idx_fns, ref.span)
        return lambda env: (one(env),)
    return partial_set(st, fam.name, fam.instances, idx_fns, ref.span)


def partial_set(st: State, family: str, instances: dict[tuple[int, ...], str], idx_fns: list[Fn | None],
                span) -> Callable[[Env], tuple[str, ...]]:
    """``kvb[3][*]``: every instance whose fixed indices match (FX-TYP-004 if none).

    The instances are grouped by their fixed indices once per family and fixed positions
    (``State.partial_groups``), on first use, when every instance is known: every reference that
    fixes the same positions (``w[3][*]``, ``w[l][*]`` in every iteration of a loop) shares the
    groups and their tuples, so a policy pays one pass over each family, not one per reference.
    """
    fixed = tuple(i for i, f in enumerate(idx_fns) if f is not None)
    key_of = tuple_fn([f for f in idx_fns if f is not None])
    cache_key = (id(instances), fixed)

    def matching(env: Env) -> tuple[str, ...]:
        hit = st.partial_groups.get(cache_key)
        if hit is None or hit[1] != len(instances):  # (a table that grew since is grouped again)
            lists: dict[tuple[int, ...], list[str]] = {}
            for idx, n in instances.items():
                lists.setdefault(tuple([idx[i] for i in fixed]), []).append(n)
            hit = st.partial_groups[cache_key] = (instances, len(instances), {k: tuple(v) for k, v in lists.items()})
        found = hit[2].get(key_of(env))
        if found is None:
            raise EvalError(codes.TYP_004, span, f"no instance of `{family}` matches",
                            "an index is out of the family's range", "matches no instance")
        return found
    return matching


def edge_set(st: State, ref: ast.Ref, scope: tuple[str, ...]) -> Callable[[Env], tuple[str, ...]] | None:
    """Compile an edge reference of an ``after`` clause to ``env -> instance names``. Requires
    every edge instance to be known (``flows.unroll``)."""
    if not known(st, ref.name, "edge"):
        return None
    fam = st.edge_fams[ref.name.name]
    items, gi = index_items(list(ref.groups), fam.dims)
    items += [it for g in ref.groups[gi:] for it in g.items]
    for g in ref.groups:
        if g.is_slice:
            st.error(codes.TYP_002, "`after` names edges, not slices", g.span, "not expected",
                     help=f"write `{fam.name}[i]`")
            return None
    if len(items) != fam.dims:
        if fam.dims and not items:
            st.error(codes.TYP_004, f"`{fam.name}` is an edge family", ref.span,
                     f"needs {fam.dims} {plural(fam.dims, 'index', 'indices')}",
                     help=f"write `{fam.name}{'[*]' * fam.dims}` for every instance or "
                          f"`{fam.name}{index_pattern(fam.dims)}` for one")
        else:
            st.error(codes.TYP_004, f"`{fam.name}` takes {fam.dims} {plural(fam.dims, 'index', 'indices')}, "
                     f"found {len(items)}", ref.span, "wrong number of indices",
                     help=f"write `{fam.name}{index_pattern(fam.dims)}` for one instance or `{fam.name}{'[*]' * fam.dims}` "
                          f"for every instance" if fam.dims else f"write `{fam.name}` without an index: it is a single edge")
        return None
    idx_fns = _index_fns(st, items, scope)
    if idx_fns is None:
        return None
    if not idx_fns:
        if () not in fam.instances:
            st.error(codes.TYP_004, f"edge `{fam.name}` has no instance", ref.span, "never declared",
                     help="its declaration sits in a branch that is never taken")
            return None
        return const_fn((fam.name,))
    if all(f is None for f in idx_fns):
        return lambda env: fam.all_names or ()
    if any(f is None for f in idx_fns):
        return partial_set(st, fam.name, fam.instances, idx_fns, ref.span)
    index = tuple_fn([f for f in idx_fns if f is not None])
    instances, span = fam.instances, ref.span

    def one(env: Env) -> tuple[str, ...]:
        idx = index(env)
        name = instances.get(idx)
        if name is None:
            first = next(iter(instances.values()), None)
            help_ = (f"`{fam.name}` has {len(instances)} instances, the first is `{first}`"
                     if first else f"`{fam.name}` has no instances")
            raise EvalError(codes.TYP_004, span, f"`{instance_name(fam.name, idx)}` is not an instance of `{fam.name}`",
                            help_, "no such edge instance")
        return (name,)
    return one


def link(st: State, lr: ast.LinkRef) -> str | None:
    """The link a reference names (``up0``, or ``gpu0 -- dpu0`` for the one link between them), or
    ``None`` after reporting FX-TYP-001, FX-NAM-001 or FX-NAM-006 (two devices joined by several
    links: which one is meant must not depend on declaration order)."""
    if lr.second is None:
        if lr.first.name in st.names["device"] and lr.first.name not in st.names["link"]:
            st.error(codes.TYP_001, f"`{lr.first.name}` is a device, not a link", lr.first.span, "expected a link",
                     help=f"flush a link by its endpoints: `{lr.first.name} -- DEV`")
            return None
        return lr.first.name if known(st, lr.first, "link") else None
    if not (known(st, lr.first, "device") & known(st, lr.second, "device")):
        return None
    pair = frozenset((lr.first.name, lr.second.name))
    name = st.link_by_pair.get(pair)
    if name is not None and len(st.links_of_pair[pair]) > 1:
        # Naming the first of several would make the verdict depend on declaration order.
        names = ", ".join(f"`{n}`" for n in st.links_of_pair[pair])
        st.error(codes.NAM_006, f"`{lr.first.name} -- {lr.second.name}` names {len(st.links_of_pair[pair])} links: {names}",
                 lr.span, "ambiguous link", help=f"name the link: `link NAME = {lr.first.name} -- {lr.second.name} : ...` "
                 "in `fabric`, then use `NAME` here")
        return None
    if name is None:
        if f"{lr.first.name}--{lr.second.name}" in st.names["link"] or \
                f"{lr.second.name}--{lr.first.name}" in st.names["link"]:
            return None  # INVARIANT: the link's own declaration error was reported
        if lr.first.name == lr.second.name:  # a link joins two devices (FX-TYP-002 otherwise)
            st.error(codes.NAM_001, f"no link joins `{lr.first.name}` to itself", lr.span, "not in the fabric",
                     help=f"name a link of `{lr.first.name}` by its two ends (`{lr.first.name} -- DEV`) or by its "
                          "name (`link NAME = ...` in `fabric`)")
            return None
        st.error(codes.NAM_001, f"no link between `{lr.first.name}` and `{lr.second.name}`", lr.span,
                 "not in the fabric",
                 help=f"declare `link {lr.first.name} -- {lr.second.name} : KIND ORDER` in `fabric`")
    return name
