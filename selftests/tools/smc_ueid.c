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

/* Sends r and waits for the ack; returns 0, a negative errno, or the family id for GETFAMILY. */
static int transact(struct req *r, int want_family)
{
	char buf[8192];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t len;

	r->n.nlmsg_seq = ++seq;
	r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
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
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error || !want_family)
					return e->error;
				continue;
			}
			if (want_family) {
				struct genlmsghdr *g = NLMSG_DATA(h);
				struct nlattr *a = (struct nlattr *)((char *)g + GENL_HDRLEN);
				int alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

				while (alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN) {
					if (a->nla_type == CTRL_ATTR_FAMILY_ID)
						return *(unsigned short *)((char *)a + NLA_HDRLEN);
					alen -= NLA_ALIGN(a->nla_len);
					a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
				}
			}
		}
	}
}

/* Dumps the UEID table: one UEID per line, trailing blanks dropped. */
static int dump(int family)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct req r = { 0 };
	char buf[8192];
	ssize_t len;

	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = family;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	r.n.nlmsg_seq = ++seq;
	r.g.cmd = SMC_NETLINK_DUMP_UEID;
	r.g.version = 1;
	if (sendto(nl_fd, &r, r.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		len = recv(nl_fd, buf, sizeof(buf), 0);
		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct genlmsghdr *g = NLMSG_DATA(h);
			struct nlattr *a = (struct nlattr *)((char *)g + GENL_HDRLEN);
			int alen = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

			if (h->nlmsg_seq != r.n.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			while (alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN) {
				if (a->nla_type == SMC_NLA_EID_TABLE_ENTRY) {
					char *text = (char *)a + NLA_HDRLEN;
					int n = a->nla_len - NLA_HDRLEN;

					while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == 0))
						n--;
					printf("%.*s\n", n, text);
				}
				alen -= NLA_ALIGN(a->nla_len);
				a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
			}
		}
	}
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
	family = transact(&r, 1);
	if (family <= 0) {
		fprintf(stderr, "smc_ueid: no %s family: %s\n", SMC_GENL_FAMILY_NAME, strerror(-family));
		return 1;
	}

	if (!strcmp(argv[1], "show")) {
		rc = dump(family);
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
	rc = transact(&r, 0);
	if (rc) {
		fprintf(stderr, "smc_ueid %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	return 0;
}
