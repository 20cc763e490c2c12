// SPDX-License-Identifier: GPL-2.0
/*
 * Makes plain TCP listeners in a cgroup answer every SYN with the SMC
 * experimental option on the SYN-ACK, without speaking CLC afterwards: the
 * middlebox (or broken stack) behaviour an SMC client must survive.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define TCPHDR_SYN 0x02
#define TCPHDR_ACK 0x10
#define SMC_OPTION_LEN 6

SEC("sockops")
int smc_option_on_synack(struct bpf_sock_ops *skops)
{
	__u8 opt[SMC_OPTION_LEN] = { 254, SMC_OPTION_LEN, 0xe2, 0xd4, 0xc3, 0xd9 };
	__u32 synack = TCPHDR_SYN | TCPHDR_ACK;

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if ((skops->skb_tcp_flags & synack) == synack)
			bpf_reserve_hdr_opt(skops, SMC_OPTION_LEN, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		if ((skops->skb_tcp_flags & synack) == synack)
			bpf_store_hdr_opt(skops, opt, sizeof(opt), 0);
		break;
	}
	return 1;
}

char _license[] SEC("license") = "GPL";
