/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole-buffer socket I/O for the test and benchmark programs: retried on
 * EINTR, MSG_NOSIGNAL on send; -1 on error or EOF, 0 when all is done.
 */
#ifndef SMC_RS_SOCK_IO_H
#define SMC_RS_SOCK_IO_H

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

static inline int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

static inline int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

#endif
