static __always_inline void fx_emit(__u32 kind, __u32 edge, __u32 decision, __u32 reason, __u32 a, __u64 c, __u64 d)
{
	struct fx_obs obs = {kind, edge, FX_DEVICE_ID, decision, reason, a, c, d};

	if (bpf_ringbuf_output(&fx_events, &obs, sizeof(obs), 0)) {
		__u32 k = 0;
		__u64 *drops = bpf_map_lookup_elem(&fx_stats, &k);

		if (drops)
			__sync_fetch_and_add(drops, 1);
	}
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
