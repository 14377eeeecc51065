// fxverify runtime: the frames that carry an event to a dputime XDP or tc program
// (specs/lowering.md section 2). An event frame is Ethernet II (with at most one 802.1Q or
// 802.1ad tag), then IPv4 (any header length) or IPv6 (UDP as the next header), then UDP to
// FX_UDP_PORT, then the struct fx_event. The program writes its decision back into the frame and
// updates the UDP checksum; a deferred frame goes back to its sender, turned around.
struct fx_vlan {
	__be16 tci;
	__be16 proto;
};

// Where the parts of an event frame start, in bytes from the start of the frame (64-bit fields
// keep the verifier's bounds on them when they are spilled to the stack).
struct fx_frame {
	__u64 l3;
	__u64 udp;
	__u64 ev;
	__u64 ipv6;
};

#define FX_FRAME_OTHER 0 // not sent to the event port: not this runtime's business
#define FX_FRAME_EVENT 1 // a whole event at f->ev
#define FX_FRAME_BAD 2 // sent to the event port without a whole event (short, or a first fragment)
// Longest headers before the event: Ethernet 14, one tag 4, IPv4 with options 60, UDP 8; plus the event.
#define FX_FRAME_MAX 110

static __always_inline int fx_frame_parse(void *data, void *end, struct fx_frame *f)
{
	struct ethhdr *eth = data;
	struct udphdr *udp;
	__u64 off = sizeof(struct ethhdr);
	__u16 proto, more = 0;

	if ((void *)(eth + 1) > end)
		return FX_FRAME_OTHER;
	proto = eth->h_proto;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct fx_vlan *tag = data + off;

		if ((void *)(tag + 1) > end)
			return FX_FRAME_OTHER;
		proto = tag->proto;
		off += sizeof(struct fx_vlan);
	}
	f->l3 = off;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = data + off;

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5)
			return FX_FRAME_OTHER;
		if (ip->frag_off & bpf_htons(0x1fff)) // a later fragment has no UDP header
			return FX_FRAME_OTHER;
		more = ip->frag_off & bpf_htons(0x2000);
		off += (ip->ihl & 0xf) * 4;
		f->ipv6 = 0;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = data + off;

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return FX_FRAME_OTHER;
		off += sizeof(struct ipv6hdr);
		f->ipv6 = 1;
	} else {
		return FX_FRAME_OTHER;
	}
	udp = data + off;
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(FX_UDP_PORT))
		return FX_FRAME_OTHER;
	f->udp = off;
	f->ev = off + sizeof(struct udphdr);
	if (more || bpf_ntohs(udp->len) < sizeof(struct udphdr) + sizeof(struct fx_event) ||
	    data + f->ev + sizeof(struct fx_event) > end)
		return FX_FRAME_BAD;
	return FX_FRAME_EVENT;
}

// The UDP checksum after the event's bytes changed from *old to *ev: RFC 1624's incremental
// update HC' = ~(~HC + ~m + m') over the one's complement sum bpf_csum_diff computes. An IPv4
// checksum of 0 means none was sent (RFC 768) and stays 0; a computed 0 is sent as 0xffff.
static __always_inline __u16 fx_udp_check(__u16 check, struct fx_event *old, struct fx_event *ev, __u64 ipv6)
{
	__u64 s;

	if (!check && !ipv6)
		return 0;
	s = (__u32)bpf_csum_diff((__be32 *)old, sizeof(*old), (__be32 *)ev, sizeof(*ev), (__u16)~check);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	check = ~s;
	return check ? check : 0xffff;
}

// Send the frame back where it came from: swap the Ethernet, IP and UDP source and destination.
// Swapping leaves the IPv4 header checksum and the UDP checksum (over the pseudo-header) as they
// are, since one's complement sums do not depend on the order of their words.
static __always_inline void fx_turnaround(void *data, void *end, struct fx_frame *f)
{
	struct ethhdr *eth = data;
	struct udphdr *udp = data + (f->udp & 0xff);
	__u8 mac[ETH_ALEN];
	__u16 port;

	if ((void *)(eth + 1) > end || (void *)(udp + 1) > end)
		return;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	if (f->ipv6) {
		struct ipv6hdr *ip6 = data + (f->l3 & 0xff);
		struct in6_addr a;

		if ((void *)(ip6 + 1) > end)
			return;
		a = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a;
	} else {
		struct iphdr *ip = data + (f->l3 & 0xff);
		__be32 a;

		if ((void *)(ip + 1) > end)
			return;
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
	}
	port = udp->source;
	udp->source = udp->dest;
	udp->dest = port;
}
