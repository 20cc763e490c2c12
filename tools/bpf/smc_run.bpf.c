// SPDX-License-Identifier: GPL-2.0
/*
 * smc_run --bpf: TCP sockets of the tasks in one cgroup (and below it)
 * become SMC sockets, whatever the program is built with (static binaries,
 * Go, programs that make system calls themselves).
 *
 * The kernel asks update_socket_protocol(family, type, protocol) for the
 * protocol of every socket(2) before it creates the socket (net/socket.c;
 * MPTCP lets BPF modify its return value, CONFIG_MPTCP=y). For a stream
 * socket of AF_INET or AF_INET6 with protocol 0 or IPPROTO_TCP, made by a
 * task in the cgroup of smc_run_cgroup[0], this program answers
 * IPPROTO_SMC: the kernel then creates an SMC socket of the same family,
 * which falls back to TCP by itself where the peer has no SMC. The type,
 * with its SOCK_NONBLOCK and SOCK_CLOEXEC flags, is left as it is.
 *
 * fmod_ret: a program that returns non-zero ends the chain (other programs
 * on the hook and the function itself are skipped), so a call that is not
 * ours is answered with 0: the next program, or the function, decides.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define AF_INET 2
#define AF_INET6 10
#define SOCK_STREAM 1
#define SOCK_TYPE_MASK 0xf
#define IPPROTO_TCP 6
#define IPPROTO_SMC 256

/* The target cgroup: entry 0 holds its directory's descriptor (loader). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} smc_run_cgroup SEC(".maps");

/* Sockets made IPPROTO_SMC so far (read by the loader for -v). */
__u64 smc_run_sockets;

SEC("fmod_ret/update_socket_protocol")
int BPF_PROG(smc_run_protocol, int family, int type, int protocol)
{
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if ((type & SOCK_TYPE_MASK) != SOCK_STREAM)
		return 0;
	if (protocol != 0 && protocol != IPPROTO_TCP)
		return 0;
	if (bpf_current_task_under_cgroup(&smc_run_cgroup, 0) != 1)
		return 0;
	__sync_fetch_and_add(&smc_run_sockets, 1);
	return IPPROTO_SMC;
}

char _license[] SEC("license") = "GPL";
