// SPDX-License-Identifier: GPL-2.0
/*
 * Manage the SMC user-defined EID table over the SMC generic netlink family,
 * like `smcr ueid add|del|flush` (SMC-Rv2 needs the same UEID on both peers).
 *
 *   smc_ueid add UEID | del UEID | flush | show
 *   smc_ueid add-raw LEN TEXT   the attribute as given: LEN bytes of TEXT,
 *                               blank padded, NUL last (for hostile tests)
 */
#include <ctype.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SMC_GENL_FAMILY_NAME "SMC_GEN_NETLINK"
#define SMC_NETLINK_DUMP_UEID 9
#define SMC_NETLINK_ADD_UEID 10
#define SMC_NETLINK_REMOVE_UEID 11
#define SMC_NETLINK_FLUSH_UEID 12
#define SMC_NLA_EID_TABLE_ENTRY 1
#define SMC_MAX_EID_LEN 32

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

static int nl_fd;
static unsigned int seq;

static void put_attr(struct req *r, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Calls fn for each attribute of a generic netlink message. */
static void for_each_attr(struct nlmsghdr *h, void (*fn)(struct nlattr *a, void *ctx), void *ctx)
{
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
	int alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

	while (alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= alen) {
		fn(a, ctx);
		alen -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
}

/*
 * Sends r with flags (NLM_F_ACK or NLM_F_DUMP) and reads the answer: each
 * message of it goes to on_msg. Returns 0 or a negative errno.
 */
static int transact(struct req *r, int flags, void (*on_attr)(struct nlattr *a, void *ctx),
		    void *ctx)
{
	char buf[8192];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t len;

	r->n.nlmsg_seq = ++seq;
	r->n.nlmsg_flags = NLM_F_REQUEST | flags;
	if (sendto(nl_fd, r, r->n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		len = recv(nl_fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			/* The ack of an earlier request may still be queued. */
			if (h->nlmsg_seq != r->n.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (on_attr)
				for_each_attr(h, on_attr, ctx);
		}
	}
}

static void family_id(struct nlattr *a, void *ctx)
{
	if (a->nla_type == CTRL_ATTR_FAMILY_ID)
		*(int *)ctx = *(unsigned short *)((char *)a + NLA_HDRLEN);
}

/* Prints a UEID of the table, trailing blanks dropped. */
static void print_ueid(struct nlattr *a, void *ctx)
{
	char *text = (char *)a + NLA_HDRLEN;
	int n = a->nla_len - NLA_HDRLEN;

	(void)ctx;
	if (a->nla_type != SMC_NLA_EID_TABLE_ENTRY)
		return;
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == 0))
		n--;
	printf("%.*s\n", n, text);
}

int main(int argc, char **argv)
{
	struct req r = { 0 };
	char eid[SMC_MAX_EID_LEN + 1];
	int family, cmd, rc;

	if (argc < 2 || (strcmp(argv[1], "flush") && strcmp(argv[1], "show") && argc < 3) ||
	    (!strcmp(argv[1], "add-raw") && argc < 4)) {
		fprintf(stderr, "usage: smc_ueid add UEID | del UEID | flush | show | add-raw LEN TEXT\n");
		return 2;
	}
	nl_fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (nl_fd < 0) {
		perror("socket");
		return 1;
	}

	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = GENL_ID_CTRL;
	r.g.cmd = CTRL_CMD_GETFAMILY;
	r.g.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, SMC_GENL_FAMILY_NAME, sizeof(SMC_GENL_FAMILY_NAME));
	family = 0;
	rc = transact(&r, NLM_F_ACK, family_id, &family);
	if (rc || family <= 0) {
		fprintf(stderr, "smc_ueid: no %s family: %s\n", SMC_GENL_FAMILY_NAME,
			strerror(rc ? -rc : ENOENT));
		return 1;
	}

	if (!strcmp(argv[1], "show")) {
		memset(&r, 0, sizeof(r));
		r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
		r.n.nlmsg_type = family;
		r.g.cmd = SMC_NETLINK_DUMP_UEID;
		r.g.version = 1;
		rc = transact(&r, NLM_F_DUMP, print_ueid, NULL);
		if (rc)
			fprintf(stderr, "smc_ueid show: %s\n", strerror(-rc));
		return rc ? 1 : 0;
	}
	if (!strcmp(argv[1], "add") || !strcmp(argv[1], "add-raw"))
		cmd = SMC_NETLINK_ADD_UEID;
	else if (!strcmp(argv[1], "del"))
		cmd = SMC_NETLINK_REMOVE_UEID;
	else if (!strcmp(argv[1], "flush"))
		cmd = SMC_NETLINK_FLUSH_UEID;
	else {
		fprintf(stderr, "smc_ueid: unknown command %s\n", argv[1]);
		return 2;
	}

	memset(&r, 0, sizeof(r));
	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = family;
	r.g.cmd = cmd;
	r.g.version = 1;
	if (!strcmp(argv[1], "add-raw")) {
		char raw[128];
		int n = atoi(argv[2]);

		if (n < 1 || n > (int)sizeof(raw))
			return 2;
		memset(raw, ' ', sizeof(raw));
		memcpy(raw, argv[3], strlen(argv[3]) < (size_t)n ? strlen(argv[3]) : (size_t)n);
		raw[n - 1] = 0;
		put_attr(&r, SMC_NLA_EID_TABLE_ENTRY, raw, n);
	} else if (cmd != SMC_NETLINK_FLUSH_UEID) {
		/* Upper case, blank padded to 32 characters, NUL terminated. */
		size_t i, n = strlen(argv[2]);

		if (n == 0 || n > SMC_MAX_EID_LEN) {
			fprintf(stderr, "smc_ueid: a UEID has 1 to 32 characters\n");
			return 2;
		}
		memset(eid, ' ', SMC_MAX_EID_LEN);
		for (i = 0; i < n; i++)
			eid[i] = toupper((unsigned char)argv[2][i]);
		eid[SMC_MAX_EID_LEN] = 0;
		put_attr(&r, SMC_NLA_EID_TABLE_ENTRY, eid, sizeof(eid));
	}
	rc = transact(&r, NLM_F_ACK, NULL, NULL);
	if (rc) {
		fprintf(stderr, "smc_ueid %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	return 0;
}
