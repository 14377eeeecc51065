// fxverify runtime: GPU hooks on bpftime (specs/lowering.md section 2, "Attach contracts").
// A CUDA call or kernel launch does not say which edge it moves. fx_bind binds a hook's calls that
// carry one handle (the argument that names the movement; 0 for a CUDA kernel's launches) to a
// slice of fx_seq: the edges those calls start, in order (struct fx_bind_key, struct fx_bind). The
// loader fills both.
// The edge the next call of `hook` with `handle` starts (end == 0), or the edge the next kernel
// exit ends (end == 1): an edge id, -1 when the handle is not bound (the call is not one of the
// policy's movements) or -2 when its edges are used up.
static __always_inline long fx_next_edge(__u32 hook, __u64 handle, int end)
{
	struct fx_bind_key k = {FX_DEVICE_ID, hook, handle};
	struct fx_bind *b = bpf_map_lookup_elem(&fx_bind, &k);
	__u32 i, idx, *e;

	if (!b)
		return -1;
	i = __sync_fetch_and_add(end ? &b->ended : &b->next, 1);
	if (i >= b->count)
		return -2;
	idx = b->first + i;
	e = bpf_map_lookup_elem(&fx_seq, &idx);
	return e ? (long)*e : -2;
}
