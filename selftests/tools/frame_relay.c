// SPDX-License-Identifier: GPL-2.0
/*
 * The wire between two QEMU stream netdevs (vm.sh pair): listens on two
 * unix sockets, takes one QEMU on each, and passes the frames of QEMU's
 * stream format (a 4-byte big-endian length, then the frame) from each to
 * the other. Neither QEMU blocks on the other: a frame for a side that
 * reads nothing (its guest's NIC down) waits in a bounded queue, and what
 * does not fit is dropped whole, as a switch drops for a port without a
 * cable. (With QEMU's own server end, the listening QEMU wrote with a
 * blocking socket and stood still, its whole VM with it, while the other
 * VM's NIC was down.)
 *
 *   frame_relay SOCK_A SOCK_B
 *
 * Runs until both sides have connected and one of them hangs up.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The largest frame QEMU's stream netdev sends (NET_BUFSIZE). */
#define MAX_FRAME 69632
/* What waits for a side that does not read, before frames are dropped. */
#define QUEUE_CAP (4 << 20)

struct side {
	int fd;
	/* Bytes read from this side, not yet a whole frame. */
	unsigned char in[4 + MAX_FRAME];
	size_t in_len;
	/* Frames for this side, not yet written: out[out_off, out_len). */
	unsigned char *out;
	size_t out_off, out_len;
	unsigned long long dropped;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		die("socket");
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1))
		die(path);
	return fd;
}

/* Queues one whole frame for `to`, or drops it when the queue is full. */
static void queue_frame(struct side *to, const unsigned char *frame, size_t len)
{
	if (to->out_off > 0 && to->out_len + len > QUEUE_CAP) {
		memmove(to->out, to->out + to->out_off, to->out_len - to->out_off);
		to->out_len -= to->out_off;
		to->out_off = 0;
	}
	if (to->out_len + len > QUEUE_CAP) {
		to->dropped++;
		return;
	}
	memcpy(to->out + to->out_len, frame, len);
	to->out_len += len;
}

/* Reads what `from` has and moves its whole frames to `to`; -1 on EOF. */
static int pass(struct side *from, struct side *to)
{
	for (;;) {
		ssize_t n = read(from->fd, from->in + from->in_len, sizeof(from->in) - from->in_len);
		size_t off = 0;

		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		from->in_len += n;
		while (from->in_len - off >= 4) {
			const unsigned char *h = from->in + off;
			size_t len = (size_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];

			if (len > MAX_FRAME) {
				fprintf(stderr, "frame_relay: frame of %zu bytes\n", len);
				return -1;
			}
			if (from->in_len - off < 4 + len)
				break;
			queue_frame(to, h, 4 + len);
			off += 4 + len;
		}
		memmove(from->in, from->in + off, from->in_len - off);
		from->in_len -= off;
	}
}

/* Writes what waits for `s`; -1 when its peer is gone. */
static int flush_out(struct side *s)
{
	while (s->out_off < s->out_len) {
		ssize_t n = write(s->fd, s->out + s->out_off, s->out_len - s->out_off);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		s->out_off += n;
	}
	s->out_off = s->out_len = 0;
	return 0;
}

int main(int argc, char **argv)
{
	static struct side sides[2];
	int i;

	if (argc != 3) {
		fprintf(stderr, "usage: frame_relay SOCK_A SOCK_B\n");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		int l = listen_on(argv[1 + i]);

		sides[i].out = malloc(QUEUE_CAP);
		if (!sides[i].out)
			die("malloc");
		sides[i].fd = l;
	}
	/* Both QEMUs connect (in either order) before anything moves. */
	for (i = 0; i < 2; i++) {
		int l = sides[i].fd, fd = accept(l, NULL, NULL);

		if (fd < 0)
			die("accept");
		close(l);
		if (fcntl(fd, F_SETFL, O_NONBLOCK))
			die("fcntl");
		sides[i].fd = fd;
	}
	for (;;) {
		struct pollfd p[2];

		for (i = 0; i < 2; i++) {
			p[i].fd = sides[i].fd;
			p[i].events = POLLIN | (sides[i].out_off < sides[i].out_len ? POLLOUT : 0);
		}
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (i = 0; i < 2; i++) {
			if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) && pass(&sides[i], &sides[1 - i]))
				goto out;
			if ((p[i].revents & POLLOUT) && flush_out(&sides[i]))
				goto out;
		}
		/* Write at once what just came in (the other side may be idle). */
		for (i = 0; i < 2; i++)
			if (flush_out(&sides[i]))
				goto out;
	}
out:
	fprintf(stderr, "frame_relay: %llu and %llu frames dropped\n", sides[0].dropped,
		sides[1].dropped);
	return 0;
}
