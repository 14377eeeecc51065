// fxverify runtime: CUDA runtime calls probed on bpftime's host side. A synchronous call (cudaMalloc,
// cudaFree, cudaMemAdvise) starts its edge at its entry and ends it at its return, on the same
// thread (fx_inflight). An asynchronous call (cudaLaunchKernel, cudaMemcpyAsync,
// cudaMemPrefetchAsync) starts its edge at its entry and parks it on its stream (fx_pending) until
// cudaStreamSynchronize on that stream, or cudaDeviceSynchronize, returns cudaSuccess: only then
// has the work finished. A failed call leaves its edge running, so the edges after it wait.
#define FX_PEND_BUSY 0xffffffffu

// The stream of cudaLaunchKernel: it follows two dim3 arguments (12 bytes, two registers each),
// so it is the second stack argument on x86-64 and the eighth register argument on arm64.
static __always_inline __u64 fx_launch_stream(struct pt_regs *ctx)
{
	__u64 s = 0;

#if defined(__TARGET_ARCH_x86)
	bpf_probe_read_user(&s, sizeof(s), (void *)(PT_REGS_SP(ctx) + 16));
#elif defined(__TARGET_ARCH_arm64)
	s = __PT_REGS_CAST(ctx)->regs[7];
#endif
	return s;
}

// Entry of a CUDA call that realises `hook`: start the edge bound to the call's handle. A call
// whose handle is not bound is not one of the policy's movements; a bound call past its edges, or
// one that finds no free slot to wait on its stream, is refused (untracked).
static __always_inline int fx_cuda_call(__u32 hook, __u64 handle, __u64 stream, int asynchronous)
{
	struct fx_event ev = {};
	struct fx_pend *p = 0;
	long e = fx_next_edge(hook, handle, 0);
	__u32 i;

	if (e == -1)
		return 0;
	if (e < 0) {
		fx_emit(FX_OBS_REFUSED, ~0u, FX_DENY, FX_R_UNTRACKED, hook, handle, 0);
		return 0;
	}
	if (asynchronous) {
		for (i = 0; i < FX_PENDING; i++) {
			__u32 k = i;

			p = bpf_map_lookup_elem(&fx_pending, &k);
			if (p && __sync_val_compare_and_swap(&p->edge, 0, FX_PEND_BUSY) == 0)
				break;
			p = 0;
		}
		if (!p) {
			fx_emit(FX_OBS_REFUSED, e, FX_DENY, FX_R_UNTRACKED, hook, handle, stream);
			return 0;
		}
	}
	ev.edge = e;
	fx_run_copy(&ev, hook);
	if (ev.decision != FX_PROCEED) {
		if (p)
			*(volatile __u32 *)&p->edge = 0;
		return 0;
	}
	if (p) {
		p->hook = hook;
		p->stream = stream;
		*(volatile __u32 *)&p->edge = ev.edge + 1; // published last: a synchronisation ends it from now on
	} else {
		__u64 t = bpf_get_current_pid_tgid();
		__u32 v = ev.edge;

		bpf_map_update_elem(&fx_inflight, &t, &v, BPF_ANY);
	}
	return 0;
}

// Return of a synchronous CUDA call: end the edge its entry started on this thread when the call
// returned cudaSuccess (0).
static __always_inline int fx_cuda_return(__u32 hook, long rc)
{
	__u64 t = bpf_get_current_pid_tgid();
	__u32 *e = bpf_map_lookup_elem(&fx_inflight, &t);
	struct fx_event ev = {};

	if (!e)
		return 0;
	ev.edge = *e;
	ev.phase = 1;
	bpf_map_delete_elem(&fx_inflight, &t);
	if ((int)rc) {
		fx_emit(FX_OBS_REFUSED, ev.edge, FX_DEFER, FX_R_UNTRACKED, hook, rc, 1);
		return 0;
	}
	fx_run_copy(&ev, hook);
	return 0;
}

// Return of a synchronisation that returned cudaSuccess: end every call parked on `stream`, or
// on every stream (all != 0). Each slot is taken back with a compare-and-swap, so two
// synchronisations never end one call twice.
static __always_inline int fx_cuda_sync(__u64 stream, int all, long rc)
{
	__u32 i;

	if ((int)rc)
		return 0;
	for (i = 0; i < FX_PENDING; i++) {
		struct fx_event ev = {};
		struct fx_pend *p;
		__u32 k = i, e;

		p = bpf_map_lookup_elem(&fx_pending, &k);
		if (!p)
			continue;
		e = *(volatile __u32 *)&p->edge;
		if (e == 0 || e == FX_PEND_BUSY || (!all && p->stream != stream))
			continue;
		ev.edge = e - 1;
		ev.phase = 1;
		k = p->hook;
		if (__sync_val_compare_and_swap(&p->edge, e, 0) != e)
			continue;
		fx_run_copy(&ev, k);
	}
	return 0;
}
