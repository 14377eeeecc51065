// The event a hook passes: which edge, and whether it starts (0) or ends (1). The program writes
// its decision, the reason (FX_R_*) and a detail (the op's first operand) back into it.
struct fx_event {
	__u32 edge;
	__u32 phase;
	__u32 decision;
	__u32 reason;
	__u32 detail;
	__u32 op;
};

struct fx_edge {
	__u32 device;
	__u32 hook;
	__u32 op_first;
	__u32 op_count;
};

struct fx_op {
	__u32 kind;
	__u32 a;
	__u32 b;
	__u32 reason;
	__u64 c;
	__u64 d;
};

struct fx_region {
	__u64 base;
	__u64 end;
};

struct fx_own {
	__u32 owner;
	__u32 transit;
	__u64 leases;
	__u32 released;
	__u32 active;
};

struct fx_st {
	__u32 state;
	__u32 pad;
	__u64 start_seq;
	__u64 end_seq;
};

struct fx_obs {
	__u32 kind;
	__u32 edge;
	__u32 device;
	__u32 decision;
	__u32 reason;
	__u32 a;
	__u64 c;
	__u64 d;
};

struct fx_ctx {
	__u32 eid;
	__u32 mode;
	__u32 decision;
	__u32 reason;
	__u32 detail;
	__u32 op_first;
	__u32 op;
	__u64 my_start;
};

// bpftime GPU hooks (fx_cuda.c): a hook's calls with one handle are bound to a slice of fx_seq.
struct fx_bind_key {
	__u32 device;
	__u32 hook;
	__u64 handle;
};

struct fx_bind {
	__u32 first;
	__u32 count;
	__u32 next; // calls (kernel entries) that took an edge
	__u32 ended; // kernel exits that ended one (CUDA kernels only)
};

// bpftime: an asynchronous CUDA call waiting for a synchronisation (fx_cuda_host.c).
struct fx_pend {
	__u32 edge; // edge id + 1; 0 for a free slot, FX_PEND_BUSY while a start is being decided
	__u32 hook;
	__u64 stream;
};
