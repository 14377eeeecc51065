// fxverify runtime: programs inside a named CUDA kernel (bpftime's kprobe/kretprobe on the kernel).
// Every thread of the grid runs them; the first thread of the grid starts the launch's edge at its
// entry, and the thread whose exit completes the grid ends it. The launches of one kernel must not
// overlap (one stream, or synchronised), since fx_exits counts the exits of one launch at a time.
// GPU helpers: bpftime's trampoline ids (bpftime_support.json "helpers" "gpu").
static const __u64 (*bpf_get_block_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)503;
static const __u64 (*bpf_get_block_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)504;
static const __u64 (*bpf_get_thread_idx)(__u64 *x, __u64 *y, __u64 *z) = (void *)505;
static const __u64 (*bpf_gpu_membar)(void) = (void *)506;
static const __u64 (*bpf_get_grid_dim)(__u64 *x, __u64 *y, __u64 *z) = (void *)508;

// True in the grid's first thread (block 0, thread 0).
static __always_inline int fx_first_thread(void)
{
	__u64 bx = 0, by = 0, bz = 0, tx = 0, ty = 0, tz = 0;

	bpf_get_block_idx(&bx, &by, &bz);
	bpf_get_thread_idx(&tx, &ty, &tz);
	return !(bx | by | bz | tx | ty | tz);
}

// True in the thread whose exit completes the launch: the exits counted in fx_exits[hook] reach
// the grid's thread count. That thread resets the count for the next launch.
static __always_inline int fx_last_thread(__u32 hook)
{
	__u64 gx = 0, gy = 0, gz = 0, bx = 0, by = 0, bz = 0, *n;
	__u32 k = hook;

	bpf_get_grid_dim(&gx, &gy, &gz);
	bpf_get_block_dim(&bx, &by, &bz);
	n = bpf_map_lookup_elem(&fx_exits, &k);
	if (!n)
		return 0;
	bpf_gpu_membar(); // this thread's writes are visible before it counts itself out
	if (__sync_fetch_and_add(n, 1) + 1 < gx * gy * gz * bx * by * bz)
		return 0;
	*(volatile __u64 *)n = 0;
	return 1;
}

// Start (end == 0) or end (end == 1) the edge of the kernel's current launch through `hook`.
static __always_inline int fx_cuda_kernel(__u32 hook, int end)
{
	struct fx_event ev = {};
	long e = fx_next_edge(hook, 0, end);

	if (e < 0) {
		fx_emit(FX_OBS_REFUSED, ~0u, FX_DENY, FX_R_UNTRACKED, hook, 0, end);
		return 0;
	}
	ev.edge = e;
	ev.phase = end;
	fx_run_copy(&ev, hook);
	return 0;
}
