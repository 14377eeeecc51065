// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fxverify's loader: opens and loads the lowered objects through their libbpf skeletons, shares
// the runtime tables between them (pinned by name under a bpffs folder on the kernel and dputime
// targets; reused within this one process on bpftime, which implements no BPF_OBJ_PIN), fills the
// tables from maps.init.json, binds CUDA call handles to edges, pins the programs and attaches them
// where the target attaches (specs/lowering.md section 5, "Loading the objects").
// The generated loader.c includes every <object>.skel.h, then this file, then its tables.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define FX_BPF_FS_MAGIC 0xcafe4a11 // bpffs (include/uapi/linux/magic.h BPF_FS_MAGIC)

enum fx_attach { FX_NONE, FX_XDP, FX_TC, FX_UPROBE, FX_KPROBE };
enum fx_lib { FX_LIB_NONE, FX_LIB_CUDA, FX_LIB_HOOKS };

struct fx_object {
	const char *stem; // <stem>.bpf.o, embedded in <stem>.skel.h
	const char *device;
	void *(*open)(const struct bpf_object_open_opts *opts);
	struct bpf_object *(*obj)(void *skel);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
};

struct fx_program {
	int object; // index in the object table
	const char *name;
	const char *device;
	unsigned device_id;
	const char *hook; // "" for a device-level program
	int hook_id;
	enum fx_attach attach;
	const char *symbol; // probed function or CUDA kernel
	enum fx_lib lib;
	int retprobe;
	int egress; // tc: clsact egress (else ingress)
};

struct fx_policy {
	const char *name;
	const char *target;
	int pinned; // shared maps carry LIBBPF_PIN_BY_NAME
	const char *pin_root; // default folder of the pins
	const struct fx_object *objects;
	int n_objects;
	const struct fx_program *programs;
	int n_programs;
	const char *const *private_maps; // per-object maps, never shared (NULL-terminated)
};

// ---- maps.init.json: a reader for the document fxverify writes (objects, arrays, integers) ------

static const char *fx_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

// The end of the JSON value at p, or NULL when it is not well formed.
static const char *fx_skip(const char *p)
{
	p = fx_ws(p);
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : NULL;
	}
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = fx_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = fx_skip(p); // the key
				if (!p || *(p = fx_ws(p)) != ':')
					return NULL;
				p++;
			}
			p = fx_skip(p);
			if (!p)
				return NULL;
			p = fx_ws(p);
			if (*p == close)
				return p + 1;
			if (*p != ',')
				return NULL;
			p++;
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		for (p++; (*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'; p++)
			;
		return p;
	}
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return NULL;
}

// The value of member `key` of the object at p, or NULL.
static const char *fx_member(const char *p, const char *key)
{
	size_t n = strlen(key);

	p = fx_ws(p);
	if (!p || *p != '{')
		return NULL;
	p = fx_ws(p + 1);
	while (*p == '"') {
		const char *k = p + 1, *v = fx_skip(p);

		if (!v || *(v = fx_ws(v)) != ':')
			return NULL;
		v = fx_ws(v + 1);
		if ((size_t)(fx_skip(p) - k - 1) == n && !strncmp(k, key, n))
			return v;
		p = fx_skip(v);
		if (!p)
			return NULL;
		p = fx_ws(p);
		if (*p != ',')
			return NULL;
		p = fx_ws(p + 1);
	}
	return NULL;
}

// Read the unsigned integers of the (nested) array at p into out[0..max), in document order.
// Returns how many, or -1 when p is not an array of arrays of integers or holds more than max.
static long fx_ints(const char *p, uint64_t *out, long max)
{
	const char *end = p ? fx_skip(p) : NULL;
	long n = 0;

	if (!end || *fx_ws(p) != '[')
		return -1;
	for (; p < end; p++) {
		if (*p >= '0' && *p <= '9') {
			char *stop;

			if (n >= max)
				return -1;
			errno = 0;
			out[n++] = strtoull(p, &stop, 10);
			if (errno)
				return -1;
			p = stop - 1;
		} else if (*p != '[' && *p != ']' && *p != ',' && *p != ' ' && *p != '\n') {
			return -1;
		}
	}
	return n;
}

static char *fx_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc(size + 1))) {
		if (fread(buf, 1, size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		} else {
			buf[size] = 0;
		}
	}
	fclose(f);
	return buf;
}

// ---- filling the tables ----------------------------------------------------------------------

// A table of maps.init.json: its rows are packed as the value struct whose field sizes (bytes)
// are given, in the order of the document's "fields" (checked against `fields`).
struct fx_table {
	const char *name;
	const char *fields; // comma-separated field names, as maps.init.json lists them
	int sizes[8];
	int n;
};

// fx_edges comes last: until its rows are written every event is denied (no-descriptor), so a fill
// that stops half way never lets an edge run on guards whose tables are still empty.
static const struct fx_table fx_tables[] = {
	{"fx_ops", "kind,a,b,reason,c,d", {4, 4, 4, 4, 8, 8}, 6},
	{"fx_regions", "base,end", {8, 8}, 2},
	{"fx_own", "owner,transit,leases,released,active", {4, 4, 8, 4, 4}, 5},
	{"fx_countdown", NULL, {4}, 1},
	{"fx_flags", NULL, {4}, 1},
	{"fx_seq", NULL, {4}, 1},
	{"fx_edges", "device,hook,op_first,op_count", {4, 4, 4, 4}, 4},
};

static int fx_fields_match(const char *doc_fields, const char *want)
{
	const char *p = fx_ws(doc_fields), *end = doc_fields ? fx_skip(doc_fields) : NULL;
	char got[256] = "";
	size_t n = 0;

	if (!end || *p != '[')
		return 0;
	for (p++; p < end && n < sizeof(got) - 1; p++)
		if (*p != '"' && *p != ' ' && *p != ']' && *p != '\n')
			got[n++] = *p;
	got[n] = 0;
	return !strcmp(got, want);
}

// Write rows 0..count-1 of a packed table into map fd (keys are the row indices).
static int fx_write_rows(int fd, const char *name, const uint64_t *vals, long count, const struct fx_table *t)
{
	size_t vsize = 0;
	unsigned char *buf;
	long r;
	int f;

	for (f = 0; f < t->n; f++)
		vsize += t->sizes[f];
	buf = calloc(1, vsize ? vsize : 1);
	if (!buf)
		return -ENOMEM;
	for (r = 0; r < count; r++) {
		size_t off = 0;
		__u32 key = r;

		for (f = 0; f < t->n; f++) {
			uint64_t v = vals[r * t->n + f];

			if (t->sizes[f] == 4) {
				uint32_t w = (uint32_t)v;

				memcpy(buf + off, &w, 4);
			} else {
				memcpy(buf + off, &v, 8);
			}
			off += t->sizes[f];
		}
		if (bpf_map_update_elem(fd, &key, buf, BPF_ANY)) {
			int err = -errno;

			fprintf(stderr, "fxverify loader: cannot write row %ld of %s: %s\n", r, name, strerror(errno));
			free(buf);
			return err;
		}
	}
	free(buf);
	return 0;
}

static long fx_seq_used; // entries of fx_seq filled so far (bindings append after them)

// Fill the runtime tables of maps.init.json into the maps of `obj` (which holds or reuses them).
static int fx_fill(struct bpf_object *obj, const char *init_path)
{
	char *doc = fx_read_file(init_path);
	size_t i;
	int err = 0;

	if (!doc) {
		fprintf(stderr, "fxverify loader: cannot read %s: %s\n", init_path, strerror(errno));
		return -errno;
	}
	for (i = 0; i < sizeof(fx_tables) / sizeof(fx_tables[0]) && !err; i++) {
		const struct fx_table *t = &fx_tables[i];
		const char *tab = fx_member(doc, t->name), *data;
		struct bpf_map *map = bpf_object__find_map_by_name(obj, t->name);
		uint64_t *vals;
		long n, max;

		if (!tab || !map)
			continue; // a table this target does not have
		if (t->fields && !fx_fields_match(fx_member(tab, "fields"), t->fields)) {
			fprintf(stderr, "fxverify loader: %s in %s does not have the fields %s: lowered by another version?\n",
				t->name, init_path, t->fields);
			err = -EINVAL;
			break;
		}
		data = fx_member(tab, t->fields ? "rows" : "values");
		max = (long)bpf_map__max_entries(map) * t->n;
		vals = calloc(max ? max : 1, sizeof(*vals));
		if (!vals) {
			err = -ENOMEM;
			break;
		}
		n = fx_ints(data, vals, max);
		if (n < 0 || n % t->n) {
			fprintf(stderr, "fxverify loader: %s in %s is not %d integers per row within %u rows\n", t->name,
				init_path, t->n, bpf_map__max_entries(map));
			err = -EINVAL;
		} else {
			err = fx_write_rows(bpf_map__fd(map), t->name, vals, n / t->n, t);
			if (!strcmp(t->name, "fx_seq"))
				fx_seq_used = n;
		}
		free(vals);
	}
	if (!err) { // bindings of CUDA kernels: rows [device, hook, handle, first, count]
		const char *tab = fx_member(doc, "fx_bind");
		struct bpf_map *map = bpf_object__find_map_by_name(obj, "fx_bind");
		uint64_t vals[5 * 256];
		long n = tab && map ? fx_ints(fx_member(tab, "rows"), vals, 5 * 256) : 0;

		for (long r = 0; r + 4 < n && !err; r += 5) {
			struct { __u32 device, hook; __u64 handle; } key = {vals[r], vals[r + 1], vals[r + 2]};
			__u32 value[4] = {vals[r + 3], vals[r + 4], 0, 0};

			if (bpf_map_update_elem(bpf_map__fd(map), &key, value, BPF_ANY))
				err = -errno;
		}
		if (n < 0)
			err = -EINVAL;
	}
	free(doc);
	return err;
}

// --bind DEVICE.HOOK=HANDLE:EDGE[,EDGE...]: the hook's calls whose handle argument is HANDLE start
// these edges (ids), in this order.
static int fx_bind(const struct fx_policy *pol, struct bpf_object *obj, const char *spec)
{
	struct bpf_map *bind = bpf_object__find_map_by_name(obj, "fx_bind");
	struct bpf_map *seq = bpf_object__find_map_by_name(obj, "fx_seq");
	const char *eq = strchr(spec, '='), *colon = eq ? strchr(eq, ':') : NULL, *p;
	struct { __u32 device, hook; __u64 handle; } key;
	__u32 value[4] = {0};
	int i, found = 0;
	char *stop;

	if (!bind || !seq || !eq || !colon) {
		fprintf(stderr, "fxverify loader: --bind %s: expected DEVICE.HOOK=HANDLE:EDGE[,EDGE...] on a CUDA hook\n", spec);
		return -EINVAL;
	}
	for (i = 0; i < pol->n_programs && !found; i++) {
		const struct fx_program *pr = &pol->programs[i];
		size_t dl = strlen(pr->device);

		if (pr->attach == FX_UPROBE && pr->lib == FX_LIB_CUDA && pr->hook_id >= 0 && !strncmp(spec, pr->device, dl) &&
		    spec[dl] == '.' && (size_t)(eq - spec - dl - 1) == strlen(pr->hook) && !strncmp(spec + dl + 1, pr->hook, eq - spec - dl - 1)) {
			key.device = pr->device_id;
			key.hook = pr->hook_id;
			found = 1;
		}
	}
	if (!found) {
		fprintf(stderr, "fxverify loader: --bind %s: no CUDA call hook of that name\n", spec);
		return -EINVAL;
	}
	errno = 0;
	key.handle = strtoull(eq + 1, &stop, 0);
	if (errno || stop != colon) {
		fprintf(stderr, "fxverify loader: --bind %s: bad handle\n", spec);
		return -EINVAL;
	}
	value[0] = fx_seq_used;
	for (p = colon + 1; *p;) {
		__u32 k = fx_seq_used, e = strtoul(p, &stop, 0);

		if (stop == p || (*stop && *stop != ',') || k >= bpf_map__max_entries(seq) ||
		    bpf_map_update_elem(bpf_map__fd(seq), &k, &e, BPF_ANY)) {
			fprintf(stderr, "fxverify loader: --bind %s: bad edge list, or more bound edges than edges\n", spec);
			return -EINVAL;
		}
		fx_seq_used++;
		value[1]++;
		p = *stop ? stop + 1 : stop;
	}
	if (bpf_map_update_elem(bpf_map__fd(bind), &key, value, BPF_ANY)) {
		fprintf(stderr, "fxverify loader: --bind %s: %s\n", spec, strerror(errno));
		return -errno;
	}
	return 0;
}

// ---- the command ---------------------------------------------------------------------------

static volatile sig_atomic_t fx_stop;

static void fx_on_signal(int sig)
{
	(void)sig;
	fx_stop = 1;
}

static void fx_usage(const struct fx_policy *pol, const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--init maps.init.json] [--pin-root DIR] [--device NAME]... [--no-init] [--attach]\n"
		"          [--ifname DEVICE=IFNAME]... [--cuda-lib PATH] [--hook-lib PATH]\n"
		"          [--bind DEVICE.HOOK=HANDLE:EDGE[,EDGE...]]... | --unpin [--pin-root DIR]\n"
		"Loads the fxverify lowering of policy `%s` (target %s). Default pin folder: %s.\n",
		argv0, pol->name, pol->target, pol->pin_root);
}

static int fx_mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == 0) {
			char c = buf[i];

			buf[i] = 0;
			if (mkdir(buf, 0700) && errno != EEXIST)
				return -errno;
			buf[i] = c;
		}
	}
	return 0;
}

static int fx_main(const struct fx_policy *pol, int argc, char **argv)
{
	const char *init = "maps.init.json", *root = pol->pin_root, *cuda_lib = "libcudart.so", *hook_lib = "libfxhooks.so";
	const char *devices[64], *ifnames[64], *binds[256];
	int n_devices = 0, n_ifnames = 0, n_binds = 0, attach = 0, no_init = 0, unpin = 0, err = 0, i, j;
	int pin = pol->pinned; // bpftime: pin only when asked (--pin-root), e.g. to inspect a trial run in Linux
	void *skels[64] = {0};
	struct bpf_link *links[256] = {0};
	struct bpf_tc_hook tc_hooks[64];
	struct bpf_tc_opts tc_opts[64];
	int n_links = 0, n_tc = 0, fresh = 1, first = -1;
	char path[PATH_MAX];

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--attach")) {
			attach = 1;
		} else if (!strcmp(a, "--no-init")) {
			no_init = 1;
		} else if (!strcmp(a, "--unpin")) {
			unpin = 1;
		} else if (v && !strcmp(a, "--init")) {
			init = argv[++i];
		} else if (v && !strcmp(a, "--pin-root")) {
			root = argv[++i];
			pin = 1;
		} else if (v && !strcmp(a, "--cuda-lib")) {
			cuda_lib = argv[++i];
		} else if (v && !strcmp(a, "--hook-lib")) {
			hook_lib = argv[++i];
		} else if (v && !strcmp(a, "--device") && n_devices < 64) {
			devices[n_devices++] = argv[++i];
		} else if (v && !strcmp(a, "--ifname") && n_ifnames < 64) {
			ifnames[n_ifnames++] = argv[++i];
		} else if (v && !strcmp(a, "--bind") && n_binds < 256) {
			binds[n_binds++] = argv[++i];
		} else {
			fx_usage(pol, argv[0]);
			return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
		}
	}
	if (pin) {
		struct statfs fs;

		if (fx_mkdirs(root) || statfs(root, &fs) || (unsigned long)fs.f_type != FX_BPF_FS_MAGIC) {
			fprintf(stderr, "fxverify loader: %s is not a folder of a bpf filesystem "
				"(mount one: mount -t bpf bpf /sys/fs/bpf)\n", root);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/fx_edges", root);
		fresh = access(path, F_OK) != 0;
	}
	signal(SIGINT, fx_on_signal);
	signal(SIGTERM, fx_on_signal);
	for (i = 0; i < pol->n_objects && !err; i++) {
		LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = pol->pinned ? root : NULL);
		const struct fx_object *o = &pol->objects[i];
		struct bpf_object *obj;
		struct bpf_map *m;
		int want = !n_devices;

		for (j = 0; j < n_devices; j++)
			want |= !strcmp(devices[j], o->device);
		if (!want)
			continue;
		skels[i] = o->open(&opts);
		if (!skels[i]) {
			err = -errno;
			fprintf(stderr, "fxverify loader: cannot open %s: %s\n", o->stem, strerror(errno));
			break;
		}
		obj = o->obj(skels[i]);
		if (unpin) {
			bpf_object__for_each_map(m, obj) {
				snprintf(path, sizeof(path), "%s/%s", root, bpf_map__name(m));
				if (!unlink(path))
					printf("unpinned %s\n", path);
			}
			continue;
		}
		if (!pol->pinned && first >= 0) { // bpftime: share the maps of the first object by fd
			bpf_object__for_each_map(m, obj) {
				const char *const *p;
				struct bpf_map *shared = bpf_object__find_map_by_name(pol->objects[first].obj(skels[first]),
										   bpf_map__name(m));
				int private_map = 0;

				for (p = pol->private_maps; *p; p++)
					private_map |= !strcmp(*p, bpf_map__name(m));
				if (shared && !private_map && bpf_map__reuse_fd(m, bpf_map__fd(shared))) {
					err = -errno;
					fprintf(stderr, "fxverify loader: cannot share map %s: %s\n", bpf_map__name(m), strerror(errno));
				}
			}
		}
		if (!err && (err = o->load(skels[i])))
			fprintf(stderr, "fxverify loader: cannot load %s: %s (fxverify lower --kernel-verify shows the verifier log)\n",
				o->stem, strerror(-err));
		if (!err && first < 0)
			first = i;
		if (!err)
			printf("loaded %s\n", o->stem);
	}
	if (unpin) {
		for (i = 0; i < pol->n_programs; i++) {
			snprintf(path, sizeof(path), "%s/progs/%s", root, pol->programs[i].name);
			if (!unlink(path))
				printf("unpinned %s\n", path);
		}
		snprintf(path, sizeof(path), "%s/progs", root);
		rmdir(path);
		rmdir(root);
		goto out;
	}
	if (!err && first >= 0 && (fresh || !pol->pinned) && !no_init) {
		err = fx_fill(pol->objects[first].obj(skels[first]), init);
		if (!err)
			printf("tables filled from %s%s%s\n", init, pin ? " and pinned under " : "", pin ? root : "");
	} else if (!err && first >= 0 && !fresh) {
		printf("tables reused from %s (already filled)\n", root);
	}
	for (i = 0; i < n_binds && !err && first >= 0; i++)
		err = fx_bind(pol, pol->objects[first].obj(skels[first]), binds[i]);
	if (!err && pin && !pol->pinned && first >= 0) { // maps without LIBBPF_PIN_BY_NAME: pin the shared ones now
		struct bpf_map *m;

		bpf_object__for_each_map(m, pol->objects[first].obj(skels[first])) {
			const char *const *p;
			int private_map = 0;

			for (p = pol->private_maps; *p; p++)
				private_map |= !strcmp(*p, bpf_map__name(m));
			snprintf(path, sizeof(path), "%s/%s", root, bpf_map__name(m));
			if (!private_map && (err = bpf_map__pin(m, path))) {
				fprintf(stderr, "fxverify loader: cannot pin %s: %s\n", path, strerror(-err));
				break;
			}
		}
	}
	for (i = 0; i < pol->n_programs && !err; i++) {
		const struct fx_program *pr = &pol->programs[i];
		struct bpf_program *prog;

		if (!skels[pr->object])
			continue;
		prog = bpf_object__find_program_by_name(pol->objects[pr->object].obj(skels[pr->object]), pr->name);
		if (!prog) {
			err = -ENOENT;
			break;
		}
		if (pin) {
			snprintf(path, sizeof(path), "%s/progs", root);
			mkdir(path, 0700);
			snprintf(path, sizeof(path), "%s/progs/%s", root, pr->name);
			unlink(path);
			if ((err = bpf_program__pin(prog, path)))
				fprintf(stderr, "fxverify loader: cannot pin %s: %s\n", path, strerror(-err));
		}
		if (err || !attach || pr->attach == FX_NONE)
			continue;
		if (pr->attach == FX_UPROBE) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = pr->symbol, .retprobe = pr->retprobe);

			links[n_links] = bpf_program__attach_uprobe_opts(prog, -1, pr->lib == FX_LIB_CUDA ? cuda_lib : hook_lib, 0, &uo);
		} else if (pr->attach == FX_KPROBE) {
			links[n_links] = bpf_program__attach(prog); // kprobe/NAME: bpftime attaches it to the CUDA kernel NAME
		} else {
			unsigned ifindex = 0;

			for (j = 0; j < n_ifnames; j++) {
				size_t dl = strlen(pr->device);

				if (!strncmp(ifnames[j], pr->device, dl) && ifnames[j][dl] == '=')
					ifindex = if_nametoindex(ifnames[j] + dl + 1);
			}
			if (!ifindex) {
				fprintf(stderr, "fxverify loader: %s needs --ifname %s=IFNAME (an existing interface)\n", pr->name, pr->device);
				err = -EINVAL;
				break;
			}
			if (pr->attach == FX_XDP) {
				links[n_links] = bpf_program__attach_xdp(prog, ifindex);
			} else {
				LIBBPF_OPTS(bpf_tc_hook, th, .ifindex = ifindex,
					    .attach_point = pr->egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
				LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = bpf_program__fd(prog));

				err = bpf_tc_hook_create(&th);
				if (err == -EEXIST)
					err = 0;
				if (!err)
					err = bpf_tc_attach(&th, &to);
				if (err)
					fprintf(stderr, "fxverify loader: cannot attach %s to tc: %s\n", pr->name, strerror(-err));
				else if (n_tc < 64) {
					tc_hooks[n_tc] = th;
					tc_opts[n_tc++] = to;
				}
				continue;
			}
		}
		if (!links[n_links]) {
			err = -errno;
			fprintf(stderr, "fxverify loader: cannot attach %s: %s\n", pr->name, strerror(errno));
		} else if (n_links < 255) {
			n_links++;
		}
	}
	if (!err && attach) {
		printf("attached; stop with SIGINT or SIGTERM\n");
		fflush(stdout);
		while (!fx_stop)
			pause();
	}
out:
	for (i = 0; i < n_links; i++)
		bpf_link__destroy(links[i]);
	for (i = 0; i < n_tc; i++) {
		tc_opts[i].prog_fd = tc_opts[i].prog_id = 0;
		tc_opts[i].flags = 0;
		bpf_tc_detach(&tc_hooks[i], &tc_opts[i]);
	}
	for (i = 0; i < pol->n_objects; i++)
		if (skels[i])
			pol->objects[i].destroy(skels[i]);
	return err ? 1 : 0;
}
