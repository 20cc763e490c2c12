// SPDX-License-Identifier: GPL-2.0
/*
 * Puts the SMC experimental TCP option where plain TCP sockets in a cgroup
 * would not: on the SYN-ACKs of listeners (a middlebox or broken stack that
 * echoes the option without speaking CLC, which an SMC client must survive)
 * or on the SYNs of clients (a client that claims SMC and then sends no,
 * late or broken CLC, which an SMC listener must survive).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define TCPHDR_SYN 0x02
#define TCPHDR_ACK 0x10
#define SMC_OPTION_LEN 6

/*
 * Enables the header option callbacks at `enable_op` and writes the option
 * on segments whose SYN/ACK flags are exactly `flags`.
 */
static __always_inline int smc_option(struct bpf_sock_ops *skops, __u32 enable_op, __u32 flags)
{
	__u8 opt[SMC_OPTION_LEN] = { 254, SMC_OPTION_LEN, 0xe2, 0xd4, 0xc3, 0xd9 };
	int match = (skops->skb_tcp_flags & (TCPHDR_SYN | TCPHDR_ACK)) == flags;

	if (skops->op == enable_op)
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
	else if (skops->op == BPF_SOCK_OPS_HDR_OPT_LEN_CB && match)
		bpf_reserve_hdr_opt(skops, SMC_OPTION_LEN, 0);
	else if (skops->op == BPF_SOCK_OPS_WRITE_HDR_OPT_CB && match)
		bpf_store_hdr_opt(skops, opt, sizeof(opt), 0);
	return 1;
}

SEC("sockops")
int smc_option_on_synack(struct bpf_sock_ops *skops)
{
	return smc_option(skops, BPF_SOCK_OPS_TCP_LISTEN_CB, TCPHDR_SYN | TCPHDR_ACK);
}

SEC("sockops")
int smc_option_on_syn(struct bpf_sock_ops *skops)
{
	return smc_option(skops, BPF_SOCK_OPS_TCP_CONNECT_CB, TCPHDR_SYN);
}

char _license[] SEC("license") = "GPL";
