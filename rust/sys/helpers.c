// SPDX-License-Identifier: GPL-2.0
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
/*
 * One-line wrappers around static inline functions and macros of the kernel
 * that bindgen cannot turn into callable symbols. No logic lives here.
 */
#include <linux/file.h>
#include <linux/poll.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/netns/generic.h>
#include <rdma/ib_verbs.h>
#include <net/genetlink.h>
#include <linux/sock_diag.h>
#include <linux/utsname.h>
#include <net/route.h>
#include <net/neighbour.h>
#include <linux/inetdevice.h>
#include <linux/debugfs.h>

#include "smc_rs_helpers.h"

struct sock *smc_rs_sk_alloc(struct net *net, int family, struct proto *prot,
			     int kern)
{
	return sk_alloc(net, family, GFP_KERNEL, prot, kern);
}

void smc_rs_sock_hold(struct sock *sk)
{
	sock_hold(sk);
}

void smc_rs_sock_put(struct sock *sk)
{
	sock_put(sk);
}

void smc_rs_lock_sock(struct sock *sk)
{
	lock_sock(sk);
}

void smc_rs_sock_orphan(struct sock *sk)
{
	sock_orphan(sk);
}

void smc_rs_sock_set_flag(struct sock *sk, enum sock_flags flag)
{
	sock_set_flag(sk, flag);
}

struct net *smc_rs_sock_net(const struct sock *sk)
{
	return sock_net(sk);
}

static struct lock_class_key smc_rs_sk_key;
static struct lock_class_key smc_rs_slock_key;

void smc_rs_sock_lock_init_class(struct sock *sk)
{
	sock_lock_init_class_and_name(sk, "slock-AF_SMC", &smc_rs_slock_key,
				      "sk_lock-AF_SMC", &smc_rs_sk_key);
}


void smc_rs_set_file_private(struct file *file, void *data)
{
	smp_store_release(&file->private_data, data);
}

struct net *smc_rs_get_net(struct net *net)
{
	return get_net(net);
}

void smc_rs_put_net(struct net *net)
{
	put_net(net);
}

void smc_rs_pr_debug(const void *rust_fmt_args)
{
	pr_debug("%pA\n", rust_fmt_args);
}

void smc_rs_pr_warn_ratelimited(const void *rust_fmt_args)
{
	pr_warn_ratelimited("%pA\n", rust_fmt_args);
}

struct dentry *smc_rs_debugfs_create_dir(const char *name)
{
	struct dentry *dir = debugfs_create_dir(name, NULL);

	return IS_ERR_OR_NULL(dir) ? NULL : dir;
}

void smc_rs_debugfs_create_u32(const char *name, umode_t mode,
			       struct dentry *dir, u32 *value)
{
	debugfs_create_u32(name, mode, dir, value);
}

void smc_rs_debugfs_create_u64(const char *name, umode_t mode,
			       struct dentry *dir, u64 *value)
{
	debugfs_create_u64(name, mode, dir, value);
}

void smc_rs_debugfs_remove(struct dentry *dir)
{
	debugfs_remove(dir);
}

void smc_rs_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void smc_rs_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

void smc_rs_local_bh_disable(void)
{
	local_bh_disable();
}

void smc_rs_local_bh_enable(void)
{
	local_bh_enable();
}

int smc_rs_copy_from_sockptr(void *dst, sockptr_t src, size_t size)
{
	return copy_from_sockptr(dst, src, size);
}

void smc_rs_tcp_set_syn_smc(struct sock *sk, bool on)
{
	tcp_sk(sk)->syn_smc = on;
}

bool smc_rs_tcp_syn_smc(const struct sock *sk)
{
	return tcp_sk(sk)->syn_smc;
}

void __percpu *smc_rs_alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu(size, align);
}

void smc_rs_this_cpu_add_u64(u64 __percpu *base, size_t idx, u64 n)
{
	this_cpu_add(base[idx], n);
}

u64 smc_rs_per_cpu_u64(u64 __percpu *base, int cpu, size_t idx)
{
	return READ_ONCE(*per_cpu_ptr(&base[idx], cpu));
}

int smc_rs_next_possible_cpu(int cpu)
{
	unsigned int next = cpumask_next(cpu, cpu_possible_mask);

	return next < nr_cpu_ids ? next : -1;
}

bool smc_rs_accept_queue_empty(const struct sock *sk)
{
	return reqsk_queue_empty(&inet_csk(sk)->icsk_accept_queue);
}

long smc_rs_sk_swap_rcvtimeo(struct sock *sk, long timeo)
{
	return xchg(&sk->sk_rcvtimeo, timeo);
}

void smc_rs_tcp_have_smc_inc(void)
{
	static_branch_inc(&tcp_have_smc);
}

void smc_rs_tcp_have_smc_dec(void)
{
	static_branch_dec(&tcp_have_smc);
}

void *smc_rs_net_generic(const struct net *net, unsigned int id)
{
	return net_generic(net, id);
}

void smc_rs_callback_write_lock(struct sock *sk)
{
	write_lock_bh(&sk->sk_callback_lock);
}

void smc_rs_callback_write_unlock(struct sock *sk)
{
	write_unlock_bh(&sk->sk_callback_lock);
}

void smc_rs_callback_read_lock(struct sock *sk)
{
	read_lock_bh(&sk->sk_callback_lock);
}

void smc_rs_callback_read_unlock(struct sock *sk)
{
	read_unlock_bh(&sk->sk_callback_lock);
}

void smc_rs_set_user_data_nocopy(struct sock *sk, void *data)
{
	__rcu_assign_sk_user_data_with_flags(sk, data, data ? SK_USER_DATA_NOCOPY : 0);
}

void *smc_rs_user_data(const struct sock *sk)
{
	return (void *)((uintptr_t)rcu_access_pointer(sk->sk_user_data) & SK_USER_DATA_PTRMASK);
}

void smc_rs_tcp_set_hs_congested(struct sock *sk, bool (*congested)(const struct sock *sk))
{
	tcp_sk(sk)->smc_hs_congested = congested;
}

long smc_rs_sk_rcvtimeo(const struct sock *sk, bool noblock)
{
	return sock_rcvtimeo(sk, noblock);
}

int smc_rs_sock_intr_errno(long timeo)
{
	return sock_intr_errno(timeo);
}

long smc_rs_sk_sndtimeo(const struct sock *sk, bool noblock)
{
	return sock_sndtimeo(sk, noblock);
}

bool smc_rs_sock_flag(const struct sock *sk, enum sock_flags flag)
{
	return sock_flag(sk, flag);
}

void smc_rs_sk_wake_async(const struct sock *sk, int how, int band)
{
	sk_wake_async(sk, how, band);
}

void smc_rs_sk_set_async_nospace(struct sock *sk)
{
	sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
}

void smc_rs_sock_poll_wait(struct file *file, struct socket *sock, poll_table *p)
{
	sock_poll_wait(file, sock, p);
}

void smc_rs_sk_wake_poll(struct sock *sk, __poll_t events)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_sync_poll(&wq->wait, events);
	rcu_read_unlock();
}

u32 smc_rs_rdma_start_port(const struct ib_device *dev)
{
	return rdma_start_port(dev);
}

u32 smc_rs_rdma_end_port(const struct ib_device *dev)
{
	return rdma_end_port(dev);
}

const char *smc_rs_ib_device_name(const struct ib_device *dev)
{
	return dev_name(&dev->dev);
}

void smc_rs_init_ib_event_handler(struct ib_event_handler *h, struct ib_device *dev,
				  void (*handler)(struct ib_event_handler *, struct ib_event *))
{
	INIT_IB_EVENT_HANDLER(h, dev, handler);
}

void smc_rs_rcu_read_lock(void)
{
	rcu_read_lock();
}

void smc_rs_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void smc_rs_genlmsg_end(struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
}

void smc_rs_genlmsg_cancel(struct sk_buff *skb, void *hdr)
{
	genlmsg_cancel(skb, hdr);
}

u32 smc_rs_netlink_cb_portid(const struct sk_buff *skb)
{
	return NETLINK_CB(skb).portid;
}

u8 smc_rs_genl_dump_cmd(struct netlink_callback *cb)
{
	return genl_info_dump(cb)->genlhdr->cmd;
}

const struct genl_family *smc_rs_genl_dump_family(struct netlink_callback *cb)
{
	return genl_info_dump(cb)->family;
}

struct sk_buff *smc_rs_genlmsg_new(void)
{
	return nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
}

void smc_rs_nlmsg_free(struct sk_buff *skb)
{
	nlmsg_free(skb);
}

int smc_rs_genlmsg_reply(struct sk_buff *skb, struct genl_info *info)
{
	return genlmsg_reply(skb, info);
}

const char *smc_rs_netdev_name(const struct net_device *dev)
{
	return dev->name;
}

struct net *smc_rs_init_net(void)
{
	return &init_net;
}

unsigned int smc_rs_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

void smc_rs_skb_trim(struct sk_buff *skb, unsigned int len)
{
	skb_trim(skb, len);
}

u64 smc_rs_net_cookie(const struct net *net)
{
	return net->net_cookie;
}

void smc_rs_sk_add_node(struct sock *sk, struct hlist_head *list)
{
	sk_add_node(sk, list);
}

bool smc_rs_sk_del_node_init(struct sock *sk)
{
	return sk_del_node_init(sk);
}

struct nlmsghdr *smc_rs_nlmsg_put(struct sk_buff *skb, u32 portid, u32 seq, int type,
				  int payload, int flags)
{
	return nlmsg_put(skb, portid, seq, type, payload, flags);
}

void smc_rs_nlmsg_end(struct sk_buff *skb, struct nlmsghdr *nlh)
{
	nlmsg_end(skb, nlh);
}

void smc_rs_nlmsg_cancel(struct sk_buff *skb, struct nlmsghdr *nlh)
{
	nlmsg_cancel(skb, nlh);
}

u32 smc_rs_diag_uid(const struct sk_buff *request, struct sock *sk)
{
	return from_kuid_munged(sk_user_ns(NETLINK_CB(request).sk), sock_i_uid(sk));
}

struct net *smc_rs_skb_sock_net(const struct sk_buff *skb)
{
	return sock_net(skb->sk);
}

struct sock *smc_rs_net_diag_nlsk(const struct net *net)
{
	return net->diag_nlsk;
}

u32 smc_rs_diag_min_dump_alloc(void)
{
	return SKB_WITH_OVERHEAD(32768);
}

void *smc_rs_nlmsg_data(const struct nlmsghdr *nlh)
{
	return nlmsg_data(nlh);
}

struct nlattr *smc_rs_nla_nest_start(struct sk_buff *skb, int attrtype)
{
	return nla_nest_start(skb, attrtype);
}

void smc_rs_nla_nest_end(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_end(skb, start);
}

void smc_rs_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start)
{
	nla_nest_cancel(skb, start);
}

struct net *smc_rs_genl_info_net(const struct genl_info *info)
{
	return genl_info_net(info);
}

const char *smc_rs_init_nodename(void)
{
	return init_utsname()->nodename;
}

struct rtable *smc_rs_ip_route_output_key(struct net *net, struct flowi4 *fl4)
{
	return ip_route_output_key(net, fl4);
}

void smc_rs_ip_rt_put(struct rtable *rt)
{
	ip_rt_put(rt);
}

int smc_rs_rt_ifindex(const struct rtable *rt)
{
	return rt->dst.dev->ifindex;
}

struct neighbour *smc_rs_dst_neigh_lookup(const struct rtable *rt, const __be32 *daddr)
{
	return dst_neigh_lookup(&rt->dst, daddr);
}

u8 smc_rs_neigh_nud_state(const struct neighbour *n)
{
	return READ_ONCE(n->nud_state);
}

void smc_rs_neigh_ha_snapshot(char *dst, const struct neighbour *n)
{
	neigh_ha_snapshot(dst, n, n->dev);
}

void smc_rs_neigh_release(struct neighbour *n)
{
	neigh_release(n);
}

struct in_device *smc_rs_in_dev_get_rcu(const struct net_device *dev)
{
	return __in_dev_get_rcu(dev);
}

struct in_ifaddr *smc_rs_in_dev_ifa_list_rcu(const struct in_device *in_dev)
{
	return rcu_dereference(in_dev->ifa_list);
}

struct in_ifaddr *smc_rs_ifa_next_rcu(const struct in_ifaddr *ifa)
{
	return rcu_dereference(ifa->ifa_next);
}

bool smc_rs_inet_ifa_match(__be32 addr, const struct in_ifaddr *ifa)
{
	return inet_ifa_match(addr, ifa);
}

struct net *smc_rs_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

/* Serialises changes to smc_rs's list of RDMA devices (readers use RCU). */
static DEFINE_MUTEX(smc_rs_ib_devices_mutex);

void smc_rs_ib_devices_lock(void)
{
	mutex_lock(&smc_rs_ib_devices_mutex);
}

void smc_rs_ib_devices_unlock(void)
{
	mutex_unlock(&smc_rs_ib_devices_mutex);
}

struct ib_pd *smc_rs_ib_alloc_pd(struct ib_device *dev)
{
	return ib_alloc_pd(dev, 0);
}

void smc_rs_ib_dealloc_pd(struct ib_pd *pd)
{
	ib_dealloc_pd(pd);
}

struct ib_cq *smc_rs_ib_alloc_cq(struct ib_device *dev, int nr_cqe, int comp_vector)
{
	return ib_alloc_cq(dev, NULL, nr_cqe, comp_vector, IB_POLL_SOFTIRQ);
}

struct ib_qp *smc_rs_ib_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *attr)
{
	return ib_create_qp(pd, attr);
}

int smc_rs_ib_destroy_qp(struct ib_qp *qp)
{
	return ib_destroy_qp(qp);
}

int smc_rs_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	return ib_post_send(qp, wr, NULL);
}

int smc_rs_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr)
{
	return ib_post_recv(qp, wr, NULL);
}

bool smc_rs_ib_has_drain_ops(const struct ib_device *dev)
{
	return dev->ops.drain_sq || dev->ops.drain_rq;
}

int smc_rs_ib_dereg_mr(struct ib_mr *mr)
{
	return ib_dereg_mr(mr);
}

void smc_rs_rdma_ah_set_port_num(struct rdma_ah_attr *attr, u32 port)
{
	rdma_ah_set_port_num(attr, port);
}

void smc_rs_rdma_ah_set_grh(struct rdma_ah_attr *attr, u8 sgid_index, u8 hop_limit)
{
	rdma_ah_set_grh(attr, NULL, 0, sgid_index, hop_limit, 0);
}

void smc_rs_rdma_ah_set_dgid_raw(struct rdma_ah_attr *attr, const u8 *dgid)
{
	rdma_ah_set_dgid_raw(attr, (void *)dgid);
}

void smc_rs_init_completion(struct completion *done)
{
	init_completion(done);
}

struct page *smc_rs_alloc_buf_pages(unsigned int order)
{
	return alloc_pages(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL | __GFP_COMP | __GFP_ZERO, order);
}

void *smc_rs_page_address(struct page *page)
{
	return page_address(page);
}

void smc_rs_sg_set_page(struct scatterlist *sg, struct page *page, unsigned int len)
{
	sg_set_page(sg, page, len, 0);
}

u64 smc_rs_sg_dma_address(const struct scatterlist *sg)
{
	return sg_dma_address(sg);
}

int smc_rs_ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents)
{
	return ib_dma_map_sg(dev, sg, nents, DMA_BIDIRECTIONAL);
}

void smc_rs_ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents)
{
	ib_dma_unmap_sg(dev, sg, nents, DMA_BIDIRECTIONAL);
}

void smc_rs_ib_dma_sync_for_cpu(struct ib_device *dev, u64 addr, size_t size)
{
	ib_dma_sync_single_for_cpu(dev, addr, size, DMA_BIDIRECTIONAL);
}

void smc_rs_ib_dma_sync_for_device(struct ib_device *dev, u64 addr, size_t size)
{
	ib_dma_sync_single_for_device(dev, addr, size, DMA_BIDIRECTIONAL);
}

size_t smc_rs_copy_to_iter(const void *addr, size_t bytes, struct iov_iter *iter)
{
	return copy_to_iter(addr, bytes, iter);
}

size_t smc_rs_copy_from_iter(void *addr, size_t bytes, struct iov_iter *iter)
{
	return copy_from_iter(addr, bytes, iter);
}

int smc_rs_sg_alloc_table_one(struct sg_table *table)
{
	return sg_alloc_table(table, 1, GFP_KERNEL);
}

void smc_rs_init_delayed_work(struct delayed_work *dw, work_func_t fn)
{
	INIT_DELAYED_WORK(dw, fn);
}

bool smc_rs_queue_delayed_work(struct delayed_work *dw, unsigned long delay)
{
	return queue_delayed_work(system_wq, dw, delay);
}

bool smc_rs_queue_delayed_work_on(struct workqueue_struct *wq, struct delayed_work *dw,
				  unsigned long delay)
{
	return queue_delayed_work(wq, dw, delay);
}

bool smc_rs_mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
			     unsigned long delay)
{
	return mod_delayed_work(wq, dw, delay);
}

bool smc_rs_sk_rx_queue_empty(const struct sock *sk)
{
	return skb_queue_empty_lockless(&sk->sk_receive_queue);
}

unsigned long smc_rs_jiffies(void)
{
	return jiffies;
}

u8 smc_rs_tcp_nonagle(const struct sock *sk)
{
	return tcp_sk(sk)->nonagle;
}
