// fxverify runtime: the op interpreter (specs/lowering.md section 3).
// A refusal packed into one scalar: decision in bits 0-7, reason in bits 8-15, detail above.
static __always_inline __u64 fx_refuse(__u32 decision, __u32 reason, __u32 detail)
{
	return ((__u64)detail << 32) | (reason << 8) | decision;
}

// One fx_ops row, in one mode: CHECK (start guards, no effects), START (start effects), END.
// A global function: the verifier checks it once for all argument values, so its cost does not
// grow with the number of ops or edges. Returns 0 to go on, or a packed refusal.
__attribute__((noinline)) __u64 fx_exec(__u32 idx, __u32 mode, __u32 eid, __u64 my_start)
{
	struct fx_op *op = bpf_map_lookup_elem(&fx_ops, &idx);
	struct fx_own *own = 0;
	struct fx_st *w;
	__u64 *vis;
	__u32 *n, dev = FX_DEVICE_ID;
	__u64 v = 0;

	if (!op)
		return fx_refuse(FX_DENY, FX_R_INTERNAL, idx);
	switch (op->kind) {
	case FX_OP_WAIT: // happens-before: every predecessor has finished
		if (mode != FX_MODE_CHECK)
			return 0;
		n = fx_counter(op->a);
		if (!n)
			return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
		if (*(volatile __u32 *)n)
			return fx_refuse(FX_DEFER, op->reason, op->a);
		return 0;
	case FX_OP_BOUNDS: { // FX-ALIAS-003: the footprint [c, d) lies inside region a
		struct fx_region *r;

		if (mode != FX_MODE_CHECK)
			return 0;
		r = bpf_map_lookup_elem(&fx_regions, &op->a);
		if (!r)
			return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
		if (op->c < r->base || op->d > r->end || op->c >= op->d)
			return fx_refuse(FX_DENY, op->reason, op->a);
		return 0;
	}
	case FX_OP_RUNNING: // a conflicting edge that happens-before does not order is in flight
	case FX_OP_STARTED: // a write the guard may not see has started
	case FX_OP_POSTED: // FX-ORD-003: a posted write is visible only after a later flush
	case FX_OP_ACCUM: // FX-XF-004: accumulated bytes must be read before they are overwritten
		if (mode != FX_MODE_CHECK)
			return 0;
		w = fx_edge_state(op->a);
		if (!w)
			return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
		if (op->kind == FX_OP_RUNNING && *(volatile __u32 *)&w->state == FX_RUNNING)
			return fx_refuse(FX_DEFER, op->reason, op->a);
		if (op->kind == FX_OP_STARTED && *(volatile __u32 *)&w->state != FX_IDLE)
			return fx_refuse(FX_DENY, op->reason, op->a);
		if (op->kind == FX_OP_POSTED && *(volatile __u32 *)&w->state == FX_DONE && !op->c) {
			vis = bpf_map_lookup_elem(&fx_links, &op->b);
			if (!vis)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->b);
			if (w->end_seq >= *(volatile __u64 *)vis)
				return fx_refuse(FX_DEFER, op->reason, op->a);
		}
		if (op->kind == FX_OP_ACCUM && *(volatile __u32 *)&w->state == FX_DONE) {
			__u32 f = (__u32)op->c;

			n = bpf_map_lookup_elem(&fx_flags, &f);
			if (!n)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, f);
			if (*(volatile __u32 *)n)
				return fx_refuse(FX_DEFER, op->reason, op->a);
		}
		return 0;
	case FX_OP_READBY: // this reader covers the accumulated bytes: clear the flag if it ran after
		if (mode == FX_MODE_END) {
			__u32 f = (__u32)op->c;

			w = fx_edge_state(op->a);
			n = bpf_map_lookup_elem(&fx_flags, &f);
			if (!w || !n)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, f);
			if (*(volatile __u32 *)&w->state == FX_DONE && my_start > w->end_seq)
				*(volatile __u32 *)n = 0;
		}
		return 0;
	case FX_OP_OWN: // FX-OWN-001/002/004: owner or lease, not in transit, not released
	case FX_OP_HANDOFF:
	case FX_OP_LEASE:
	case FX_OP_RELEASE:
	case FX_OP_REVOKE:
		own = bpf_map_lookup_elem(&fx_own, &op->a);
		if (!own)
			return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
		break;
	case FX_OP_DEC:
		if (mode == FX_MODE_END) {
			n = fx_counter(op->a);
			if (!n)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
			__sync_fetch_and_add(n, -1);
		}
		return 0;
	case FX_OP_MAPHOME: // FX-MAP-001: a local map is used only on its home device
		if (mode == FX_MODE_CHECK && dev != op->b)
			return fx_refuse(FX_DENY, op->reason, op->a);
		return 0;
	case FX_OP_CONST: // FX-MAP-005: a const map is never written (or aggregated) by an edge
		if (mode == FX_MODE_CHECK)
			return fx_refuse(FX_DENY, op->reason, op->a);
		return 0;
	case FX_OP_GUARD: // the guard's value decides: defer until it holds
		if (mode != FX_MODE_CHECK)
			return 0;
		if (fx_map_read(op->a, op->c, dev, 0, &v))
			return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
		if (v != op->d)
			return fx_refuse(FX_DEFER, op->reason, op->a);
		return 0;
	case FX_OP_AGG: // FX-MAP-004: aggregate only after every writer of the entry
		if (mode == FX_MODE_CHECK) {
			n = fx_counter(op->b);
			if (!n)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->b);
			if (*(volatile __u32 *)n)
				return fx_refuse(FX_DEFER, op->reason, op->a);
		} else if (mode == FX_MODE_START) {
			if (fx_map_read(op->a, op->c, dev, 1, &v))
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
			fx_emit(FX_OBS_MAP, eid, FX_PROCEED, 0, op->a, op->c, v);
		}
		return 0;
	case FX_OP_READ:
		if (mode == FX_MODE_START) {
			if (fx_map_read(op->a, op->c, dev, 0, &v))
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
			fx_emit(FX_OBS_MAP, eid, FX_PROCEED, 0, op->a, op->c, v);
		}
		return 0;
	case FX_OP_UPDATE:
	case FX_OP_WRITE:
		if (mode == FX_MODE_END) {
			if (fx_map_apply(op->a, op->c, dev, op->d, op->kind == FX_OP_UPDATE))
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
			fx_emit(FX_OBS_MAP, eid, FX_PROCEED, 0, op->a, op->c, op->d);
		}
		return 0;
	case FX_OP_FLUSH: // publish: writes that ended before this flush started are now visible
		if (mode == FX_MODE_END) {
			vis = bpf_map_lookup_elem(&fx_links, &op->a);
			if (!vis)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, op->a);
			for (int t = 0; t < 8; t++) {
				__u64 old = *(volatile __u64 *)vis;

				if (old >= my_start || __sync_val_compare_and_swap(vis, old, my_start) == old)
					break;
			}
			fx_emit(FX_OBS_FLUSH, eid, FX_PROCEED, 0, op->a, my_start, 0);
		}
		return 0;
	default:
		return fx_refuse(FX_DENY, FX_R_INTERNAL, op->kind);
	}
	// Ownership operations on region op->a (own is set).
	if (mode == FX_MODE_CHECK) {
		__u32 owner = *(volatile __u32 *)&own->owner, transit = *(volatile __u32 *)&own->transit;

		if (*(volatile __u32 *)&own->released && op->kind != FX_OP_RELEASE)
			return fx_refuse(FX_DENY, FX_R_FX_OWN_004, op->a);
		switch (op->kind) {
		case FX_OP_OWN:
			if (transit && transit != eid + 1)
				return fx_refuse(FX_DENY, FX_R_FX_OWN_002, op->a);
			if (!(op->b & FX_OWN_SKIP_OWNER) && owner != dev &&
			    ((op->b & FX_OWN_WRITES) || !(own->leases & (1ull << (dev & 63)))))
				return fx_refuse(FX_DENY, op->reason, op->a);
			return 0;
		case FX_OP_HANDOFF: // FX-OWN-003: only the owner hands off, once at a time
			if (op->d & FX_HANDOFF_SPLIT) // the edge hands this region to two owners
				return fx_refuse(FX_DENY, op->reason, op->a);
			if (op->d & FX_HANDOFF_ENCLOSED) { // moved with an enclosing region: not its own owner's call
				if (transit)
					return fx_refuse(FX_DENY, op->reason, op->a);
			} else if (dev != op->b || owner != op->b || transit)
				return fx_refuse(FX_DENY, op->reason, op->a);
			if (*(volatile __u32 *)&own->active) // FX-OWN-002: others still access it
				return fx_refuse(FX_DEFER, FX_R_FX_OWN_002, op->a);
			return 0;
		case FX_OP_LEASE:
			if (!(op->d & FX_LEASE_ENCLOSED) && owner != dev)
				return fx_refuse(FX_DENY, op->reason, op->a);
			return 0;
		case FX_OP_REVOKE: // the revoker's ownership is its OWN op's check
			return 0;
		default: // FX_OP_RELEASE: every other user of the region has finished (FX-OWN-004)
			if (op->d & FX_RELEASE_TWICE) // the edge releases the region twice
				return fx_refuse(FX_DENY, op->reason, op->a);
			n = fx_counter((__u32)op->c);
			if (!n)
				return fx_refuse(FX_DENY, FX_R_INTERNAL, (__u32)op->c);
			if (*(volatile __u32 *)n)
				return fx_refuse(FX_DEFER, op->reason, op->a);
			return 0;
		}
	}
	if (mode == FX_MODE_START) {
		if (op->kind == FX_OP_OWN) {
			__sync_fetch_and_add(&own->active, 1);
		} else if (op->kind == FX_OP_HANDOFF) {
			own->transit = eid + 1;
			own->leases = 0;
		} else if (op->kind == FX_OP_RELEASE) {
			own->released = 1;
			fx_emit(FX_OBS_RELEASE, eid, FX_PROCEED, 0, op->a, 0, 0);
		} else if (op->kind == FX_OP_REVOKE) { // the lessee's lease ends when the revoke starts
			__sync_fetch_and_and(&own->leases, ~(1ull << (op->b & 63)));
		}
		return 0;
	}
	if (op->kind == FX_OP_OWN) {
		__sync_fetch_and_add(&own->active, -1);
	} else if (op->kind == FX_OP_HANDOFF) {
		fx_emit(FX_OBS_HANDOFF, eid, FX_PROCEED, 0, op->a, own->owner, op->c);
		own->owner = (__u32)op->c;
		own->transit = 0;
	} else if (op->kind == FX_OP_LEASE && !(op->d & FX_LEASE_VOID)) { // void: its own edge hands the region off
		// An enclosed region is lent only if the grantor owns it (specs/lowering.md, LEASE: the
		// test is made at the edge's end, where the model asks at its start).
		if (!(op->d & FX_LEASE_ENCLOSED) || *(volatile __u32 *)&own->owner == dev)
			__sync_fetch_and_or(&own->leases, 1ull << (op->b & 63));
	}
	return 0;
}

static long fx_step(__u64 i, void *data)
{
	struct fx_ctx *x = data;
	__u64 r = fx_exec(x->op_first + (__u32)i, x->mode, x->eid, x->my_start);

	if (!r)
		return 0;
	x->decision = r & 0xff;
	x->reason = (r >> 8) & 0xff;
	x->detail = r >> 32;
	x->op = (__u32)i;
	return 1;
}

static __always_inline void fx_set(struct fx_ctx *x, __u32 decision, __u32 reason, __u32 detail)
{
	x->decision = decision;
	x->reason = reason;
	x->detail = detail;
}

// The program body of every hook: look up the descriptor, run the guards, record the effects,
// emit observation events and return proceed, defer or deny.
static __always_inline int fx_run(struct fx_event *ev, __u32 hook)
{
	struct fx_ctx x = {};
	struct fx_edge *d;
	struct fx_st *st;
	__u64 now = fx_tick();

	x.eid = ev->edge;
	d = bpf_map_lookup_elem(&fx_edges, &x.eid);
	st = fx_edge_state(x.eid);
	if (!d || !st) {
		fx_set(&x, FX_DENY, FX_R_INTERNAL, x.eid);
	} else if (d->op_count == 0 || d->op_count > FX_MAX_OPS) {
		// Fail closed: every planned edge has its WAIT op and no slice is longer than FX_MAX_OPS,
		// so this row was never filled (or holds another policy's tables): nothing proceeds on it.
		fx_set(&x, FX_DENY, FX_R_NO_DESCRIPTOR, x.eid);
	} else if (d->device != FX_DEVICE_ID || d->hook != hook) {
		fx_set(&x, FX_DENY, FX_R_FX_HOOK_002, d->hook);
	} else if (ev->phase == 0) {
		x.op_first = d->op_first;
		if (st->state != FX_IDLE) {
			fx_set(&x, FX_DENY, FX_R_INTERNAL, st->state);
		} else {
			x.mode = FX_MODE_CHECK;
			FX_LOOP(d->op_count, fx_step, &x);
			if (x.decision == FX_PROCEED) {
				st->start_seq = now;
				st->state = FX_RUNNING;
				x.mode = FX_MODE_START;
				FX_LOOP(d->op_count, fx_step, &x);
				fx_emit(FX_OBS_START, x.eid, FX_PROCEED, 0, d->hook, d->op_first, d->op_count);
			}
		}
	} else {
		x.op_first = d->op_first;
		if (st->state != FX_RUNNING) {
			fx_set(&x, FX_DENY, FX_R_INTERNAL, st->state);
		} else {
			st->end_seq = now;
			st->state = FX_DONE;
			x.my_start = st->start_seq;
			x.mode = FX_MODE_END;
			FX_LOOP(d->op_count, fx_step, &x);
			fx_emit(FX_OBS_END, x.eid, x.decision, x.reason, d->hook, 0, 0);
		}
	}
	if (x.decision != FX_PROCEED)
		fx_emit(FX_OBS_REFUSED, x.eid, x.decision, x.reason, x.detail, x.op, ev->phase);
	ev->decision = x.decision;
	ev->reason = x.reason;
	ev->detail = x.detail;
	ev->op = x.op;
	return x.decision;
}

// fx_run on an event the entry function copied to its stack (a frame's, a CUDA call's): a global
// function, so the verifier checks the interpreter once instead of once for every path that
// leads to it (header layouts, pending slots).
__attribute__((noinline)) int fx_run_copy(struct fx_event *ev, __u32 hook)
{
	if (!ev)
		return FX_DENY;
	return fx_run(ev, hook);
}
