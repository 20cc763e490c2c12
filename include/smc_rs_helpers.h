/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One-line C helpers for static inline functions and macros bindgen cannot
 * reach. Nothing here carries logic of its own.
 */
#ifndef SMC_RS_HELPERS_H
#define SMC_RS_HELPERS_H

#include <linux/sockptr.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <linux/scatterlist.h>
#include <linux/uio.h>
#include <linux/completion.h>
#include <net/genetlink.h>
#include <net/route.h>
#include <net/neighbour.h>
#include <linux/inetdevice.h>

struct sock *smc_rs_sk_alloc(struct net *net, int family, struct proto *prot,
			     int kern);
void smc_rs_sock_hold(struct sock *sk);
void smc_rs_sock_put(struct sock *sk);
void smc_rs_lock_sock(struct sock *sk);
void smc_rs_sock_orphan(struct sock *sk);
void smc_rs_sock_set_flag(struct sock *sk, enum sock_flags flag);
struct net *smc_rs_sock_net(const struct sock *sk);
void smc_rs_sock_lock_init_class(struct sock *sk);
void smc_rs_set_file_private(struct file *file, void *data);
struct net *smc_rs_get_net(struct net *net);
void smc_rs_put_net(struct net *net);
void smc_rs_pr_debug(const void *rust_fmt_args);
void smc_rs_pr_warn_ratelimited(const void *rust_fmt_args);
struct dentry *smc_rs_debugfs_create_dir(const char *name);
void smc_rs_debugfs_create_u32(const char *name, umode_t mode,
			       struct dentry *dir, u32 *value);
void smc_rs_debugfs_create_u64(const char *name, umode_t mode,
			       struct dentry *dir, u64 *value);
void smc_rs_debugfs_remove(struct dentry *dir);
void smc_rs_spin_lock_bh(spinlock_t *lock);
void smc_rs_spin_unlock_bh(spinlock_t *lock);
void smc_rs_local_bh_disable(void);
void smc_rs_local_bh_enable(void);

int smc_rs_copy_from_sockptr(void *dst, sockptr_t src, size_t size);
void smc_rs_tcp_set_syn_smc(struct sock *sk, bool on);
bool smc_rs_tcp_syn_smc(const struct sock *sk);
void __percpu *smc_rs_alloc_percpu(size_t size, size_t align);
void smc_rs_this_cpu_add_u64(u64 __percpu *base, size_t idx, u64 n);
u64 smc_rs_per_cpu_u64(u64 __percpu *base, int cpu, size_t idx);
int smc_rs_next_possible_cpu(int cpu);
bool smc_rs_accept_queue_empty(const struct sock *sk);
long smc_rs_sk_swap_rcvtimeo(struct sock *sk, long timeo);
void smc_rs_tcp_have_smc_inc(void);
void smc_rs_tcp_have_smc_dec(void);
void *smc_rs_net_generic(const struct net *net, unsigned int id);
void smc_rs_callback_write_lock(struct sock *sk);
void smc_rs_callback_write_unlock(struct sock *sk);
void smc_rs_callback_read_lock(struct sock *sk);
void smc_rs_callback_read_unlock(struct sock *sk);
void smc_rs_set_user_data_nocopy(struct sock *sk, void *data);
void *smc_rs_user_data(const struct sock *sk);
void smc_rs_tcp_set_hs_congested(struct sock *sk,
				 bool (*congested)(const struct sock *sk));
long smc_rs_sk_rcvtimeo(const struct sock *sk, bool noblock);
long smc_rs_sk_sndtimeo(const struct sock *sk, bool noblock);
int smc_rs_sock_intr_errno(long timeo);
bool smc_rs_sock_flag(const struct sock *sk, enum sock_flags flag);
void smc_rs_sk_wake_async(const struct sock *sk, int how, int band);
void smc_rs_sock_poll_wait(struct file *file, struct socket *sock, poll_table *p);
void smc_rs_sk_wake_poll(struct sock *sk, __poll_t events);
void smc_rs_sk_set_async_nospace(struct sock *sk);

u32 smc_rs_rdma_start_port(const struct ib_device *dev);
u32 smc_rs_rdma_end_port(const struct ib_device *dev);
const char *smc_rs_ib_device_name(const struct ib_device *dev);
void smc_rs_init_ib_event_handler(struct ib_event_handler *h, struct ib_device *dev,
				  void (*handler)(struct ib_event_handler *, struct ib_event *));
void smc_rs_rcu_read_lock(void);
void smc_rs_rcu_read_unlock(void);

void smc_rs_genlmsg_end(struct sk_buff *skb, void *hdr);
void smc_rs_genlmsg_cancel(struct sk_buff *skb, void *hdr);
u32 smc_rs_netlink_cb_portid(const struct sk_buff *skb);
u8 smc_rs_genl_dump_cmd(struct netlink_callback *cb);
const struct genl_family *smc_rs_genl_dump_family(struct netlink_callback *cb);
struct sk_buff *smc_rs_genlmsg_new(void);
void smc_rs_nlmsg_free(struct sk_buff *skb);
int smc_rs_genlmsg_reply(struct sk_buff *skb, struct genl_info *info);
const char *smc_rs_netdev_name(const struct net_device *dev);
struct net *smc_rs_init_net(void);
unsigned int smc_rs_skb_len(const struct sk_buff *skb);
void smc_rs_skb_trim(struct sk_buff *skb, unsigned int len);
u64 smc_rs_net_cookie(const struct net *net);

void smc_rs_sk_add_node(struct sock *sk, struct hlist_head *list);
bool smc_rs_sk_del_node_init(struct sock *sk);
struct nlmsghdr *smc_rs_nlmsg_put(struct sk_buff *skb, u32 portid, u32 seq, int type,
				  int payload, int flags);
void smc_rs_nlmsg_end(struct sk_buff *skb, struct nlmsghdr *nlh);
void smc_rs_nlmsg_cancel(struct sk_buff *skb, struct nlmsghdr *nlh);
u32 smc_rs_diag_uid(const struct sk_buff *request, struct sock *sk);
struct net *smc_rs_skb_sock_net(const struct sk_buff *skb);
struct sock *smc_rs_net_diag_nlsk(const struct net *net);
u32 smc_rs_diag_min_dump_alloc(void);
void *smc_rs_nlmsg_data(const struct nlmsghdr *nlh);
struct nlattr *smc_rs_nla_nest_start(struct sk_buff *skb, int attrtype);
void smc_rs_nla_nest_end(struct sk_buff *skb, struct nlattr *start);
void smc_rs_nla_nest_cancel(struct sk_buff *skb, struct nlattr *start);
struct net *smc_rs_genl_info_net(const struct genl_info *info);
const char *smc_rs_init_nodename(void);

struct rtable *smc_rs_ip_route_output_key(struct net *net, struct flowi4 *fl4);
void smc_rs_ip_rt_put(struct rtable *rt);
int smc_rs_rt_ifindex(const struct rtable *rt);
struct neighbour *smc_rs_dst_neigh_lookup(const struct rtable *rt, const __be32 *daddr);
u8 smc_rs_neigh_nud_state(const struct neighbour *n);
void smc_rs_neigh_ha_snapshot(char *dst, const struct neighbour *n);
void smc_rs_neigh_release(struct neighbour *n);
struct in_device *smc_rs_in_dev_get_rcu(const struct net_device *dev);
struct in_ifaddr *smc_rs_in_dev_ifa_list_rcu(const struct in_device *in_dev);
struct in_ifaddr *smc_rs_ifa_next_rcu(const struct in_ifaddr *ifa);
bool smc_rs_inet_ifa_match(__be32 addr, const struct in_ifaddr *ifa);
struct net *smc_rs_dev_net(const struct net_device *dev);
void smc_rs_ib_devices_lock(void);
void smc_rs_ib_devices_unlock(void);
struct ib_pd *smc_rs_ib_alloc_pd(struct ib_device *dev);
void smc_rs_ib_dealloc_pd(struct ib_pd *pd);
struct ib_cq *smc_rs_ib_alloc_cq(struct ib_device *dev, int nr_cqe, int comp_vector);
struct ib_qp *smc_rs_ib_create_qp(struct ib_pd *pd, struct ib_qp_init_attr *attr);
int smc_rs_ib_destroy_qp(struct ib_qp *qp);
int smc_rs_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr);
int smc_rs_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr);
bool smc_rs_ib_has_drain_ops(const struct ib_device *dev);
int smc_rs_ib_dereg_mr(struct ib_mr *mr);
void smc_rs_rdma_ah_set_port_num(struct rdma_ah_attr *attr, u32 port);
void smc_rs_rdma_ah_set_grh(struct rdma_ah_attr *attr, u8 sgid_index, u8 hop_limit);
void smc_rs_rdma_ah_set_dgid_raw(struct rdma_ah_attr *attr, const u8 *dgid);
void smc_rs_init_completion(struct completion *done);
struct page *smc_rs_alloc_buf_pages(unsigned int order);
void *smc_rs_page_address(struct page *page);
void smc_rs_sg_set_page(struct scatterlist *sg, struct page *page, unsigned int len);
u64 smc_rs_sg_dma_address(const struct scatterlist *sg);
int smc_rs_ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents);
void smc_rs_ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents);
void smc_rs_ib_dma_sync_for_cpu(struct ib_device *dev, u64 addr, size_t size);
void smc_rs_ib_dma_sync_for_device(struct ib_device *dev, u64 addr, size_t size);
size_t smc_rs_copy_to_iter(const void *addr, size_t bytes, struct iov_iter *iter);
size_t smc_rs_copy_from_iter(void *addr, size_t bytes, struct iov_iter *iter);
int smc_rs_sg_alloc_table_one(struct sg_table *table);
void smc_rs_init_delayed_work(struct delayed_work *dw, work_func_t fn);
bool smc_rs_queue_delayed_work(struct delayed_work *dw, unsigned long delay);
bool smc_rs_queue_delayed_work_on(struct workqueue_struct *wq, struct delayed_work *dw,
				  unsigned long delay);
bool smc_rs_mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
			     unsigned long delay);
bool smc_rs_sk_rx_queue_empty(const struct sock *sk);
unsigned long smc_rs_jiffies(void);
u8 smc_rs_tcp_nonagle(const struct sock *sk);

#endif
