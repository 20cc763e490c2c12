/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the differential probes print for a call's result: the value, or
 * the name of its errno, so that TCP's and AF_SMC's lines compare as text.
 */
#ifndef SMC_RS_PROBE_NAMES_H
#define SMC_RS_PROBE_NAMES_H

#include <errno.h>
#include <stdio.h>

static inline const char *err_name(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "0";
	case EAGAIN: return "EAGAIN";
	case EINPROGRESS: return "EINPROGRESS";
	case EALREADY: return "EALREADY";
	case EISCONN: return "EISCONN";
	case ENOTCONN: return "ENOTCONN";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ECONNABORTED: return "ECONNABORTED";
	case EADDRINUSE: return "EADDRINUSE";
	case EINVAL: return "EINVAL";
	case EPIPE: return "EPIPE";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case EBADF: return "EBADF";
	case EFAULT: return "EFAULT";
	case EDESTADDRREQ: return "EDESTADDRREQ";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINTR: return "EINTR";
	}
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* Result of a call: the value when >= 0, else the errno name. */
static inline const char *res(long r)
{
	static char buf[32];

	if (r < 0)
		return err_name(errno);
	snprintf(buf, sizeof(buf), "%ld", r);
	return buf;
}

#endif
