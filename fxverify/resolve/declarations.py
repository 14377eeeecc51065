"""Fabric and memory declarations: the policy line, devices, links, address spaces, regions (with
their families expanded), alias sets and maps.

Each ``resolve_*`` function takes the declarations that ``names.declare`` kept and adds the IR
objects they resolve to. Emits FX-NAM-001/002 and FX-TYP-001 (through ``names``), FX-TYP-002 (an
impossible value: a size of 0, a region outside its space, a link to itself...), FX-TYP-003 (an
unknown word), FX-LIM-001 (too many region instances) and FX-SYN-001 (a `policy` line in an
included file).
"""

from __future__ import annotations

import itertools

from fxverify import ast, ir
from fxverify.diagnostics import codes
from fxverify.diagnostics.model import Label
from fxverify.resolve.expressions import compile_expr, const, const_range
from fxverify.resolve.names import known
from fxverify.resolve.references import region_set
from fxverify.resolve.state import EvalError, Fn, RegionFamily, State, instance_name, plural
from fxverify.resolve.vocabulary import DTYPE_WORDS, OPERATOR_WORDS, word
from fxverify.source import Span
from fxverify.vocab import (
    CHECKSUMS, DTYPES, LINK_KINDS, MAP_SCALAR_BITS, MAP_TYPES, SOLVER_PARAM_MAX, U64_END, ClassKind, DeviceKind, LinkOrder,
)


def policy_decl(st: State) -> ast.PolicyDecl | None:
    """The root file's ``policy "name"`` line (FX-NAM-001 when there is none)."""
    found: ast.PolicyDecl | None = None
    for decl, is_root in st.items:
        if not isinstance(decl, ast.PolicyDecl):
            continue
        if not is_root:
            st.error(codes.SYN_001, "unexpected `policy` in an included file", decl.span,
                     "only the root file names the policy", help="remove this line; the including policy names itself")
        elif found is not None:
            st.error(codes.NAM_002, "duplicate `policy` declaration", decl.span, "declared again here",
                     related=(Label(found.span, "first declared here"),), help="a policy file names its policy once")
        else:
            found = decl
            if decl.rlimit is not None and decl.rlimit <= 0:
                st.error(codes.TYP_002, f"solver budget `rlimit {decl.rlimit}` must be positive", decl.span,
                         "not positive", help="write a positive resource limit, for example `rlimit 1_000_000`")
            elif decl.rlimit is not None and decl.rlimit > SOLVER_PARAM_MAX:
                # the value is not in the message: a hexadecimal one can have more digits than
                # Python writes in decimal (the underline shows it as written)
                st.error(codes.TYP_002, "solver budget `rlimit` is more than the solver can take",
                         decl.span, f"more than {SOLVER_PARAM_MAX:_}",
                         help=f"the solver reads `rlimit` as a 32-bit number: write at most `rlimit {SOLVER_PARAM_MAX:_}`")
    if found is None:
        span = Span(st.path, 0, 0)
        st.error(codes.NAM_001, f"`{st.path}` declares no policy", span, "no `policy` line",
                 help='start the file with `policy "name"`')
    return found


def resolve_devices(st: State) -> None:
    """Devices with their hooks (FX-NAM-002 for a hook listed twice)."""
    kinds = [k.value for k in DeviceKind]
    for d in st.device_decls:
        seen: dict[str, Span] = {}
        for h in d.hooks:
            if h.name in seen:
                st.error(codes.NAM_002, f"duplicate hook `{h.name}` on `{d.name.name}`", h.span, "listed again here",
                         related=(Label(seen[h.name], "first listed here"),), help="list each hook once")
            seen.setdefault(h.name, h.span)
        if not word(st, d.kind, "device kind", kinds):
            continue
        st.device_index[d.name.name] = len(st.devices)
        st.devices.append(ir.Device(d.name.name, DeviceKind(d.kind.name), tuple(seen), d.span))


def resolve_links(st: State) -> None:
    """Links between two declared devices, with their kind and order."""
    orders = [o.value for o in LinkOrder]
    for ln, name in st.link_decls:
        ok = known(st, ln.a, "device") & known(st, ln.b, "device")
        if ok and ln.a.name == ln.b.name:
            st.error(codes.TYP_002, f"link `{name}` connects `{ln.a.name}` to itself", ln.span,
                     "a link joins two devices", help="name two different devices")
            ok = False
        ok &= word(st, ln.kind, "link kind", LINK_KINDS)
        ok &= word(st, ln.order, "link order", orders)
        if not ok:
            continue
        st.links.append(ir.Link(name, ln.a.name, ln.b.name, ln.kind.name, LinkOrder(ln.order.name), ln.span))
        st.link_by_pair.setdefault(frozenset((ln.a.name, ln.b.name)), name)
        st.links_of_pair.setdefault(frozenset((ln.a.name, ln.b.name)), []).append(name)


def resolve_spaces(st: State) -> None:
    """Address spaces: a positive size, inside 64-bit addresses, and no two spaces of one device
    sharing an address (FX-TYP-002): a device's address map holds each byte once, so two spaces
    over the same addresses of one device would be the same bytes under two names, which the
    checkers (one footprint per space) would take for different memory and never see conflict."""
    taken: dict[str, list[tuple[int, int, str, Span]]] = {}  # device -> spaces declared on it
    for s in st.space_decls:
        ok = known(st, s.device, "device")
        base = const(st, s.base) if s.base is not None else 0
        size = const(st, s.size)
        if base is None or size is None or not ok:
            continue
        if size <= 0:
            st.error(codes.TYP_002, f"space `{s.name.name}` has size {size}", s.size.span, "must be positive",
                     help="give the space a positive size, such as `80 GiB`")
            continue
        if base < 0 or base + size > U64_END:
            st.error(codes.TYP_002, f"space `{s.name.name}` does not fit in 64-bit addresses", s.span,
                     f"covers [{base:#x}, {base + size:#x})", help="addresses run from 0 to 2^64 - 1")
            continue
        if s.checksum is not None and not word(st, s.checksum, "checksum algorithm", CHECKSUMS):
            continue
        other = next((o for o in taken.get(s.device.name, ()) if o[0] < base + size and base < o[1]), None)
        if other is not None:
            lo, hi, oname, ospan = other
            st.error(codes.TYP_002, f"space `{s.name.name}` overlaps space `{oname}` on `{s.device.name}`", s.span,
                     f"covers [{base:#x}, {base + size:#x}), `{oname}` covers [{lo:#x}, {hi:#x})",
                     related=(Label(ospan, f"`{oname}` declared here"),),
                     help=f"the spaces of one device must not share addresses: give `{s.name.name}` a `base` at or past "
                          f"{hi:#x}, or declare one space and put both regions in it at different offsets")
        taken.setdefault(s.device.name, []).append((base, base + size, s.name.name, s.span))
        st.spaces[s.name.name] = ir.Space(s.name.name, s.device.name, base, size, s.persistent, s.span, s.init,
                                          s.checksum.name if s.checksum is not None else None,
                                          s.noncoherent)


def resolve_regions(st: State) -> None:
    """Regions and region families, expanded into instances (``Limits.max_regions``)."""
    total = 0
    for r in st.region_decls:
        fam = RegionFamily(r.name.name, ())
        st.region_fams[r.name.name] = fam
        ok = known(st, r.space, "space") & known(st, r.owner, "device")
        if r.dtype is not None:
            ok &= word(st, r.dtype, "dtype", DTYPE_WORDS)
        dims: list[tuple[int, int]] = []
        vars_: list[str] = []
        for p in r.params:
            if p.var.name in vars_:
                st.error(codes.NAM_002, f"duplicate index variable `{p.var.name}`", p.var.span, "declared again here",
                         help="give each dimension its own variable")
                ok = False
            vars_.append(p.var.name)
            rng = const_range(st, p.lo, p.hi, p.span)
            if rng is None:
                ok = False
                continue
            dims.append(rng)
        fam.dims = tuple(dims)
        count = 1
        for lo, hi in dims:
            count *= hi - lo
        total += count
        if ok and total > st.limits.max_regions:
            st.error(codes.LIM_001, f"region instances exceed the limit of {st.limits.max_regions}", r.name.span,
                     f"`{r.name.name}` has {count} instances",
                     help="use fewer, larger regions; the limit bounds the work of one check")
            ok = False
        at_fn = compile_expr(st, r.at, tuple(vars_))
        size_fn = compile_expr(st, r.size, tuple(vars_))
        space = st.spaces.get(r.space.name)
        if not ok or at_fn is None or size_fn is None or space is None:
            fam.ok = False
            continue
        _expand_region(st, r, fam, tuple(vars_), at_fn, size_fn, space)


def _expand_region(st: State, r: ast.RegionDecl, fam: RegionFamily, vars_: tuple[str, ...],
                   at_fn: Fn, size_fn: Fn, space: ir.Space) -> None:
    family = r.name.name
    dtype = r.dtype.name if r.dtype is not None else None
    # A region of a dtype holds whole elements: a bf16 region of an odd number of bytes is a typo
    # or a size computed in elements, not bytes. Bits, since an int4 element is half a byte.
    bits = DTYPES[dtype].bits if dtype in DTYPES else 8
    for idx in itertools.product(*(range(lo, hi) for lo, hi in fam.dims)):
        env = dict(zip(vars_, idx))
        name = instance_name(family, idx)
        try:
            base, size = at_fn(env), size_fn(env)
        except EvalError as err:
            st.eval_error(err)
            fam.ok = False
            return
        if size <= 0:
            st.error(codes.TYP_002, f"region `{name}` has size {size}", r.size.span, "must be positive",
                     help="give the region a positive size")
            fam.ok = False
            return
        if size * 8 % bits:
            st.error(codes.TYP_002, f"region `{name}` of dtype `{dtype}` has {size} {plural(size, 'byte', 'bytes')}, not a whole number of "
                     f"{bits}-bit elements", r.size.span,
                     f"{size * 8 // bits:,} {plural(size * 8 // bits, 'element', 'elements')} and {size * 8 % bits} bits",
                     help=f"give the size in bytes, a multiple of {bits // 8 if bits % 8 == 0 else bits / 8:g} "
                          "(a unit such as `KiB` or `MiB` counts bytes)")
            fam.ok = False
            return
        if base < space.base or base + size > space.end:
            st.error(codes.TYP_002, f"region `{name}` lies outside space `{space.name}`", r.span,
                     f"covers [{base:#x}, {base + size:#x})",
                     notes=(f"`{space.name}` covers [{space.base:#x}, {space.end:#x})",),
                     help="`at` is an absolute address in the space; check the base and size")
            fam.ok = False
            return
        fam.instances[idx] = name
        st.region_pos[name] = len(st.region_args)
        st.region_args.append((name, family, space.name, base, size, r.owner.name, dtype, r.span, r.init, r.pooled))


def resolve_alias_sets(st: State) -> None:
    """Alias sets (a region belongs to at most one), then the ``ir.Region`` objects."""
    member_of: dict[str, tuple[str, Span]] = {}
    for a in st.alias_decls:
        names: list[str] = []
        for ref in a.members:
            fn = region_set(st, ref, (), "an alias set")
            if fn is None:
                continue
            try:
                found = fn({})
            except EvalError as err:
                st.eval_error(err)
                continue
            for name in found:
                prev = member_of.get(name)
                if prev is not None:
                    st.error(codes.NAM_002, f"region `{name}` is already in alias set `{prev[0]}`", ref.span,
                             "listed again here", related=(Label(prev[1], "first listed here"),),
                             help="a region belongs to at most one alias set")
                    continue
                member_of[name] = (a.name.name, ref.span)
                names.append(name)
        st.alias_sets.append(ir.AliasSet(a.name.name, tuple(names), a.span))
    # INVARIANT: Region objects are built only now, once their alias set is known.
    alias_of = {name: set_name for name, (set_name, _) in member_of.items()}
    st.regions = [
        ir.Region(name, family, space, base, size, owner, alias_of.get(name), dtype, span, init, pooled)
        for name, family, space, base, size, owner, dtype, span, init, pooled in st.region_args
    ]


def resolve_maps(st: State) -> None:
    """Maps: type, key and value scalars, entries, consistency class and merge operator. A
    ``const`` map is a ``hash`` or ``array`` without ``merge`` (FX-TYP-002): no edge writes it."""
    classes = [c.value for c in ClassKind]
    scalars = tuple(MAP_SCALAR_BITS)
    for m in st.map_decls:
        ok = word(st, m.map_type, "map type", MAP_TYPES)
        ok &= word(st, m.key_type, "key type", scalars)
        ok &= word(st, m.value_type, "value type", scalars)
        ok &= word(st, m.cls, "consistency class", classes)
        if m.merge is not None:
            ok &= word(st, m.merge, "merge operator", OPERATOR_WORDS)
        entries = const(st, m.max_entries)
        if entries is not None and entries <= 0:
            st.error(codes.TYP_002, f"map `{m.name.name}` has {entries} entries", m.max_entries.span,
                     "must be positive", help="give the map at least one entry")
            ok = False
        device = None
        if ok and m.cls.name == "local":
            if m.cls_arg is None:
                st.error(codes.TYP_002, "class `local` needs a device", m.cls.span, "which device?",
                         help="write `class local(gpu0)`")
                ok = False
            else:
                ok &= known(st, m.cls_arg, "device")
                device = m.cls_arg.name
        elif ok and m.cls_arg is not None:
            st.error(codes.TYP_002, f"class `{m.cls.name}` takes no device", m.cls_arg.span, "not expected",
                     help="only `local(DEV)` names a device")
            ok = False
        if ok and m.cls.name == ClassKind.CONST.value and (m.map_type.name == "ringbuf" or m.merge is not None):
            what = m.merge if m.merge is not None and m.map_type.name != "ringbuf" else m.map_type
            st.error(codes.TYP_002, f"a `const` map cannot be {'a ring buffer' if what is m.map_type else 'merged'}",
                     what.span, "a `const` map is never written",
                     help="a `const` map is a `hash` or `array` table set before the flow, without `merge`")
            ok = False
        if not ok or entries is None:
            continue
        cls = ir.ConsistencyClass(ClassKind(m.cls.name), device)
        st.maps[m.name.name] = ir.MapDecl(m.name.name, m.map_type.name, m.key_type.name, m.value_type.name, entries, cls,
                                          m.merge.name if m.merge else None, m.span)
