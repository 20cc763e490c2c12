/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel headers smc_rs binds to. Only what include/bindgen_parameters
 * allows is generated, to keep the bindings (and compile time) small.
 */
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/file.h>
#include <linux/poll.h>
#include <linux/tcp.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/inet_common.h>
#include <net/inet_sock.h>
#include <net/protocol.h>
#include <linux/ipv6.h>
#include <net/net_namespace.h>
#include <linux/sysctl.h>
#include <linux/jiffies.h>
#include <uapi/linux/smc.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <net/genetlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <linux/smc_diag.h>
#include <net/route.h>
#include <net/neighbour.h>
#include <linux/inetdevice.h>
#include <linux/random.h>

#include "smc_rs_helpers.h"
