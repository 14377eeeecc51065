// Publish one observation: to the device's event stream (FX_OUTPUT: the ring buffer, or bpftime's
// GPU ring buffer inside a CUDA kernel) and to the trail of the latest FX_TRAIL records, a map
// whose value is struct fx_obs, so bpftool prints them decoded through BTF. fx_stats[1] counts
// the records written (the trail slot), fx_stats[0] the records the event stream dropped. A global
// function: the verifier checks it once, not at every place an observation is made.
__attribute__((noinline)) int fx_publish(struct fx_obs *obs)
{
	__u32 k = 1;
	__u64 *n;

	if (!obs)
		return 0;
	n = bpf_map_lookup_elem(&fx_stats, &k);
	if (n) {
		__u32 slot = __sync_fetch_and_add(n, 1) & (FX_TRAIL - 1);

		bpf_map_update_elem(&fx_trail, &slot, obs, BPF_ANY);
	}
	if (FX_OUTPUT(obs, sizeof(*obs))) {
		k = 0;
		n = bpf_map_lookup_elem(&fx_stats, &k);
		if (n)
			__sync_fetch_and_add(n, 1);
	}
	return 0;
}

static __always_inline void fx_emit(__u32 kind, __u32 edge, __u32 decision, __u32 reason, __u32 a, __u64 c, __u64 d)
{
	struct fx_obs obs = {kind, edge, FX_DEVICE_ID, decision, reason, a, c, d};

	fx_publish(&obs);
}

static __always_inline __u32 *fx_counter(__u32 idx)
{
	return bpf_map_lookup_elem(&fx_countdown, &idx);
}

static __always_inline struct fx_st *fx_edge_state(__u32 eid)
{
	return bpf_map_lookup_elem(&fx_state, &eid);
}

// The next event number (1, 2, ...): a total order of starts and ends across every hook.
static __always_inline __u64 fx_tick(void)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&fx_clock, &k);

	return c ? __sync_fetch_and_add(c, 1) + 1 : 0;
}
