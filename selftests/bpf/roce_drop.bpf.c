// SPDX-License-Identifier: GPL-2.0
/*
 * Drops the RoCEv2 packets (UDP to port 4791) that arrive at an interface,
 * as a firewall that lets TCP through but not RoCE would: the CLC
 * handshake works, the first link of a link group cannot be confirmed,
 * and both sides must fall back to TCP with the applications' data intact.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCE_V2_PORT 4791

SEC("xdp")
int roce_drop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	return udp->dest == bpf_htons(ROCE_V2_PORT) ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
