// SPDX-License-Identifier: GPL-2.0
/*
 * Makes plain TCP clients in a cgroup send the SMC experimental option on
 * their SYNs, as an SMC client does, without speaking CLC afterwards unless
 * the test program chooses to: the hostile or confused client an SMC
 * listener must survive.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define TCPHDR_SYN 0x02
#define TCPHDR_ACK 0x10
#define SMC_OPTION_LEN 6

SEC("sockops")
int smc_option_on_syn(struct bpf_sock_ops *skops)
{
	__u8 opt[SMC_OPTION_LEN] = { 254, SMC_OPTION_LEN, 0xe2, 0xd4, 0xc3, 0xd9 };
	__u32 flags = skops->skb_tcp_flags & (TCPHDR_SYN | TCPHDR_ACK);

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (flags == TCPHDR_SYN)
			bpf_reserve_hdr_opt(skops, SMC_OPTION_LEN, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if (flags == TCPHDR_SYN)
			bpf_store_hdr_opt(skops, opt, sizeof(opt), 0);
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";
