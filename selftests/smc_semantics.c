// SPDX-License-Identifier: GPL-2.0
/*
 * Socket semantics probe for the differential TCP vs AF_SMC suite.
 *
 *   smc_semantics -f FAMILY [-p BASEPORT] [-c CASE]
 *
 * Runs a fixed list of scenarios over loopback with sockets of FAMILY (smc,
 * smc6, ipproto-smc, ipproto-smc6 (AF_INET/AF_INET6 with IPPROTO_SMC), inet,
 * inet6) and prints one line per observation: "name: value",
 * values being results or errno names. Run once with inet and once with smc
 * (or inet6/smc6): every line must be the same, TCP is the oracle.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "probe_names.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

static int domain, protocol, v6;
static int port;

#define SHOW(name, expr) printf("%s: %s\n", name, res(expr))

static socklen_t addr(struct sockaddr_storage *ss, int p)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *a = (void *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		a->sin6_port = htons(p);
		return sizeof(*a);
	} else {
		struct sockaddr_in *a = (void *)ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a->sin_port = htons(p);
		return sizeof(*a);
	}
}

static int sock(void)
{
	int fd = socket(domain, SOCK_STREAM, protocol);

	if (fd < 0) {
		perror("socket");
		exit(1);
	}
	return fd;
}

/* A listening socket of domain d and protocol proto on port p. */
static int listen_on(int d, int proto, int p, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, p);
	int one = 1, fd = socket(d, SOCK_STREAM, proto);

	if (fd < 0) {
		perror("socket");
		exit(1);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (void *)&ss, sl) || listen(fd, backlog)) {
		perror("listen");
		exit(1);
	}
	return fd;
}

static int listener(int p)
{
	return listen_on(domain, protocol, p, 16);
}

/* A connected pair: client c, accepted server s. */
static void pair(int p, int *c, int *s, int *l)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, p);

	*l = listener(p);
	*c = sock();
	if (connect(*c, (void *)&ss, sl)) {
		perror("connect");
		exit(1);
	}
	*s = accept(*l, NULL, NULL);
	if (*s < 0) {
		perror("accept");
		exit(1);
	}
}

static const char *poll_bits(int fd, int timeout)
{
	static char buf[64];
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP | POLLPRI };

	if (poll(&p, 1, timeout) < 0)
		return err_name(errno);
	snprintf(buf, sizeof(buf), "%s%s%s%s%s%s",
		 p.revents & POLLIN ? "IN " : "", p.revents & POLLOUT ? "OUT " : "",
		 p.revents & POLLRDHUP ? "RDHUP " : "", p.revents & POLLHUP ? "HUP " : "",
		 p.revents & POLLERR ? "ERR " : "", p.revents & POLLPRI ? "PRI " : "");
	return buf;
}

static int so_error(int fd)
{
	int e = -1;
	socklen_t l = sizeof(e);

	getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
	return e;
}

/* Connects fd without blocking, waits for POLLOUT, shows SO_ERROR. */
static void nonblocking_connect(const char *name, int fd, struct sockaddr_storage *ss, socklen_t sl)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	fcntl(fd, F_SETFL, O_NONBLOCK);
	SHOW(name, connect(fd, (void *)ss, sl));
	poll(&p, 1, 2000);
	printf("%s SO_ERROR: %s\n", name, err_name(so_error(fd)));
}

static void unconnected(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char b[4];
	int fd = sock(), v;

	SHOW("unconnected getpeername", getpeername(fd, (void *)&ss, &sl));
	SHOW("unconnected send", send(fd, "x", 1, MSG_NOSIGNAL));
	SHOW("unconnected recv", recv(fd, b, 1, MSG_DONTWAIT));
	SHOW("unconnected shutdown", shutdown(fd, SHUT_RDWR));
	printf("unconnected poll: %s\n", poll_bits(fd, 0));
	SHOW("unconnected SIOCINQ", ioctl(fd, SIOCINQ, &v));
	SHOW("unconnected accept", accept4(fd, NULL, NULL, SOCK_NONBLOCK));
	SHOW("unconnected listen backlog 0", listen(fd, 0));
	close(fd);

	/* Options set before connecting stay with the connection. */
	{
		struct sockaddr_storage la;
		socklen_t ll = addr(&la, port + 9);
		int l = listener(port + 9), c = sock(), s, size = 65536, idle = 77;
		socklen_t ol = sizeof(v);

		SHOW("setsockopt SO_SNDBUF", setsockopt(c, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)));
		SHOW("setsockopt SO_RCVBUF", setsockopt(c, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)));
		SHOW("setsockopt TCP_KEEPIDLE", setsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)));
		SHOW("getsockopt SO_SNDBUF unconnected", (getsockopt(c, SOL_SOCKET, SO_SNDBUF, &v, &ol), v));
		SHOW("connect with options", connect(c, (void *)&la, ll));
		s = accept(l, NULL, NULL);
		SHOW("getsockopt SO_SNDBUF connected", (getsockopt(c, SOL_SOCKET, SO_SNDBUF, &v, &ol), v));
		SHOW("getsockopt SO_RCVBUF connected", (getsockopt(c, SOL_SOCKET, SO_RCVBUF, &v, &ol), v));
		SHOW("getsockopt TCP_KEEPIDLE connected", (getsockopt(c, IPPROTO_TCP, TCP_KEEPIDLE, &v, &ol), v));
		close(s);
		close(c);
		close(l);
	}
}

static void binding(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 1);
	int a = sock(), b = sock();

	SHOW("bind", bind(a, (void *)&ss, sl));
	SHOW("bind again same socket", bind(a, (void *)&ss, sl));
	SHOW("bind in use", bind(b, (void *)&ss, sl));
	SHOW("bind short address", bind(b, (void *)&ss, 4));
	sl = sizeof(ss);
	SHOW("getsockname after bind", getsockname(a, (void *)&ss, &sl));
	printf("getsockname port: %d\n", ntohs(((struct sockaddr_in *)&ss)->sin_port) - port);
	printf("getsockname family: %d\n", ss.ss_family);
	close(a);
	close(b);
}

static void refused(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 2);
	int fd = sock();

	SHOW("connect refused", connect(fd, (void *)&ss, sl));
	close(fd);

	fd = sock();
	nonblocking_connect("nonblocking connect refused", fd, &ss, sl);
	close(fd);
}

/*
 * A blocking connect that outlasts SO_SNDTIMEO: the SYN goes to a plain TCP
 * listener whose accept queue is full, which drops it until there is room.
 */
static void connect_timeout(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 10);
	struct timeval tv = { 0, 300000 };
	int l = listen_on(v6 ? AF_INET6 : AF_INET, 0, port + 10, 0), filler, c, s;

	filler = sock();
	SHOW("connect fills the accept queue", connect(filler, (void *)&ss, sl));
	usleep(100000);
	c = sock();
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	SHOW("connect past SO_SNDTIMEO", connect(c, (void *)&ss, sl));
	printf("poll while still connecting: %s\n", poll_bits(c, 200));
	SHOW("blocking connect again past SO_SNDTIMEO", connect(c, (void *)&ss, sl));
	fcntl(c, F_SETFL, O_NONBLOCK);
	SHOW("nonblocking connect again", connect(c, (void *)&ss, sl));
	SHOW("nonblocking send while connecting", send(c, "x", 1, MSG_NOSIGNAL));
	fcntl(c, F_SETFL, 0);
	s = accept(l, NULL, NULL);
	close(s);
	tv.tv_sec = 10;
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	SHOW("blocking connect completes once there is room", connect(c, (void *)&ss, sl));
	printf("connected SO_ERROR: %s\n", err_name(so_error(c)));
	close(c);
	close(filler);
	close(l);
}

static void nonblocking(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 3);
	int l = listener(port + 3), c = sock(), s, flags;

	fcntl(l, F_SETFL, O_NONBLOCK);
	SHOW("accept nothing pending", accept(l, NULL, NULL));
	printf("listener poll idle: %s\n", poll_bits(l, 0));
	nonblocking_connect("nonblocking connect", c, &ss, sl);
	SHOW("connect again", connect(c, (void *)&ss, sl));
	printf("listener poll pending: %s\n", poll_bits(l, 1000));
	s = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	printf("accept4 ok: %d\n", s >= 0);
	flags = fcntl(s, F_GETFL);
	printf("accept4 O_NONBLOCK: %d\n", !!(flags & O_NONBLOCK));
	printf("accept4 FD_CLOEXEC: %d\n", !!(fcntl(s, F_GETFD) & FD_CLOEXEC));
	SHOW("recv empty nonblocking", recv(s, &flags, 1, 0));
	SHOW("recv MSG_DONTWAIT", recv(c, &flags, 1, MSG_DONTWAIT));
	close(c);
	close(s);
	close(l);
}

static void data(void)
{
	int c, s, l, v, one = 1;
	char buf[64] = { 0 };
	struct iovec iov[2] = { { "hello ", 6 }, { "world", 5 } };
	socklen_t ol = sizeof(v);

	pair(port + 4, &c, &s, &l);
	printf("connected poll client: %s\n", poll_bits(c, 0));
	SHOW("writev", writev(c, iov, 2));
	usleep(100000);
	SHOW("SIOCINQ", (ioctl(s, SIOCINQ, &v), v));
	SHOW("recv MSG_PEEK", recv(s, buf, 5, MSG_PEEK));
	SHOW("recv after peek", recv(s, buf, 5, 0));
	printf("data: %.5s\n", buf);
	SHOW("recv MSG_WAITALL", recv(s, buf, 6, MSG_WAITALL));
	printf("data: %.6s\n", buf);
	SHOW("SIOCOUTQ idle", (ioctl(c, SIOCOUTQ, &v), v));
	SHOW("setsockopt TCP_NODELAY", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)));
	SHOW("getsockopt TCP_NODELAY", (getsockopt(c, IPPROTO_TCP, TCP_NODELAY, &v, &ol), v != 0));
	SHOW("setsockopt TCP_CORK", setsockopt(c, IPPROTO_TCP, TCP_CORK, &one, sizeof(one)));
	SHOW("setsockopt SO_KEEPALIVE", setsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)));
	SHOW("getsockopt SO_KEEPALIVE", (getsockopt(c, SOL_SOCKET, SO_KEEPALIVE, &v, &ol), v != 0));
	SHOW("getsockopt SO_TYPE", (getsockopt(c, SOL_SOCKET, SO_TYPE, &v, &ol), v));
	SHOW("SIOCATMARK", (ioctl(s, SIOCATMARK, &v), v));
	{
		struct timeval tv = { 0, 200000 };

		SHOW("setsockopt SO_RCVTIMEO", setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
		SHOW("recv times out", recv(s, buf, 1, 0));
	}
	SHOW("send MSG_OOB", send(c, "!", 1, MSG_OOB));
	usleep(100000);
	SHOW("recv MSG_OOB", recv(s, buf, 1, MSG_OOB));
	SHOW("shutdown SHUT_WR", shutdown(c, SHUT_WR));
	usleep(100000);
	printf("poll after peer SHUT_WR: %s\n", poll_bits(s, 0));
	SHOW("recv after peer SHUT_WR", recv(s, buf, 1, 0));
	SHOW("send after own SHUT_WR", send(c, "x", 1, MSG_NOSIGNAL));
	SHOW("send to half-closed peer", send(s, "y", 1, MSG_NOSIGNAL));
	SHOW("recv from half-closed peer", recv(c, buf, 1, 0));
	close(s);
	usleep(100000);
	printf("poll after peer close: %s\n", poll_bits(c, 0));
	close(c);
	close(l);
}

static void reset(void)
{
	int c, s, l;
	struct linger lg = { 1, 0 };
	char b;

	pair(port + 5, &c, &s, &l);
	SHOW("SO_LINGER 0", setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(s);
	usleep(100000);
	printf("poll after reset: %s\n", poll_bits(c, 0));
	SHOW("recv after reset", recv(c, &b, 1, 0));
	SHOW("send after reset", send(c, "x", 1, MSG_NOSIGNAL));
	close(c);
	close(l);
}

static void epoll_edge(void)
{
	int c, s, l, ep = epoll_create1(0), n;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET | EPOLLRDHUP }, out[4];
	char b[8];

	pair(port + 6, &c, &s, &l);
	ev.data.fd = s;
	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	SHOW("epoll idle", epoll_wait(ep, out, 4, 0));
	send(c, "ab", 2, 0);
	n = epoll_wait(ep, out, 4, 1000);
	printf("epoll after data: %d events 0x%x\n", n, n > 0 ? out[0].events : 0);
	SHOW("epoll edge not rearmed", epoll_wait(ep, out, 4, 0));
	recv(s, b, 1, 0);
	SHOW("epoll edge after partial read", epoll_wait(ep, out, 4, 0));
	send(c, "c", 1, 0);
	n = epoll_wait(ep, out, 4, 1000);
	printf("epoll new data: %d events 0x%x\n", n, n > 0 ? out[0].events : 0);
	shutdown(c, SHUT_WR);
	n = epoll_wait(ep, out, 4, 1000);
	printf("epoll after peer SHUT_WR: %d events 0x%x\n", n, n > 0 ? out[0].events : 0);
	close(ep);
	close(c);
	close(s);
	close(l);
}

/* epoll on a listener, level- and edge-triggered. */
static void epoll_listener(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 11);
	int l = listener(port + 11), lt = epoll_create1(0), et = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out[4];
	int c1 = sock(), c2 = sock(), s;

	ev.data.fd = l;
	epoll_ctl(lt, EPOLL_CTL_ADD, l, &ev);
	ev.events = EPOLLIN | EPOLLET;
	epoll_ctl(et, EPOLL_CTL_ADD, l, &ev);
	SHOW("epoll listener idle", epoll_wait(lt, out, 4, 0));
	connect(c1, (void *)&ss, sl);
	SHOW("epoll listener level", epoll_wait(lt, out, 4, 2000));
	printf("epoll listener level events: 0x%x\n", out[0].events);
	SHOW("epoll listener level again", epoll_wait(lt, out, 4, 0));
	SHOW("epoll listener edge", epoll_wait(et, out, 4, 2000));
	SHOW("epoll listener edge again", epoll_wait(et, out, 4, 0));
	connect(c2, (void *)&ss, sl);
	SHOW("epoll listener edge, second connection", epoll_wait(et, out, 4, 2000));
	s = accept(l, NULL, NULL);
	close(s);
	s = accept(l, NULL, NULL);
	close(s);
	SHOW("epoll listener level after accepting all", epoll_wait(lt, out, 4, 0));
	close(c1);
	close(c2);
	close(lt);
	close(et);
	close(l);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static volatile sig_atomic_t sigio_count;

static void on_sigio(int sig)
{
	(void)sig;
	sigio_count++;
}

/*
 * SIGIO for room: the non-blocking `c` is written until the send fails
 * with EAGAIN, then the peer `s` reads everything.
 */
static void async_room(int c, int s)
{
	char buf[65536];
	int i, idle = 0;

	memset(buf, 'r', sizeof(buf));
	for (i = 0; i < 1024 && write(c, buf, sizeof(buf)) > 0; i++)
		;
	sigio_count = 0;
	fcntl(s, F_SETFL, O_NONBLOCK);
	while (idle < 5) {
		if (read(s, buf, sizeof(buf)) > 0)
			idle = 0;
		else
			idle++, usleep(50000);
	}
	usleep(300000);
	printf("SIGIO for room to write: %d\n", sigio_count > 0);
}

/*
 * O_ASYNC: SIGIO for a connection to accept, for a completed connect, for
 * bytes to read and for room to write.
 */
static void async_io(void)
{
	char buf[16];
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 12);
	struct sigaction sa = { .sa_handler = on_sigio };
	int l = listener(port + 12), c = sock(), s;

	sigaction(SIGIO, &sa, NULL);
	fcntl(l, F_SETOWN, getpid());
	fcntl(l, F_SETFL, O_ASYNC);
	sigio_count = 0;
	connect(c, (void *)&ss, sl);
	usleep(300000);
	printf("SIGIO for a connection to accept: %d\n", sigio_count > 0);
	s = accept(l, NULL, NULL);
	close(s);
	close(c);

	c = sock();
	fcntl(c, F_SETOWN, getpid());
	fcntl(c, F_SETFL, O_ASYNC | O_NONBLOCK);
	sigio_count = 0;
	connect(c, (void *)&ss, sl);
	usleep(300000);
	printf("SIGIO for a completed connect: %d\n", sigio_count > 0);
	s = accept(l, NULL, NULL);
	usleep(100000);
	sigio_count = 0;
	write(s, "x", 1);
	usleep(300000);
	printf("SIGIO for bytes to read: %d\n", sigio_count > 0);
	read(c, buf, sizeof(buf));
	async_room(c, s);
	close(s);
	close(c);
	close(l);
	signal(SIGIO, SIG_IGN);
}

struct blocked_accept {
	int fd, ret, err;
};

static void *accept_thread(void *arg)
{
	struct blocked_accept *b = arg;

	b->ret = accept(b->fd, NULL, NULL);
	b->err = errno;
	return NULL;
}

/* accept() as TCP has it: timeouts, signals, shutdown, close with a backlog. */
static void listening(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = addr(&ss, port + 7);
	struct timeval tv = { 0, 200000 };
	struct itimerval it = { .it_value = { 0, 100000 } };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct blocked_accept b;
	pthread_t th;
	int l = listener(port + 7), c, s;
	char ch;

	{
		int v;
		socklen_t ol = sizeof(v);

		SHOW("SO_ACCEPTCONN listener", (getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &ol), v));
	}
	SHOW("accept SO_RCVTIMEO", setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	SHOW("accept times out", accept(l, NULL, NULL));
	tv.tv_usec = 0;
	setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	SHOW("accept interrupted by a signal", accept(l, NULL, NULL));

	b.fd = l;
	pthread_create(&th, NULL, accept_thread, &b);
	usleep(200000);
	SHOW("shutdown SHUT_RD listener", shutdown(l, SHUT_RD));
	pthread_join(th, NULL);
	printf("blocked accept after shutdown: %s\n", b.ret < 0 ? err_name(b.err) : "connection");
	SHOW("accept after shutdown", accept4(l, NULL, NULL, SOCK_NONBLOCK));
	{
		int v;
		socklen_t ol = sizeof(v);

		SHOW("SO_ACCEPTCONN after shutdown", (getsockopt(l, SOL_SOCKET, SO_ACCEPTCONN, &v, &ol), v));
	}
	SHOW("listen again", listen(l, 4));
	c = sock();
	SHOW("connect to listener again", connect(c, (void *)&ss, sl));
	s = accept(l, NULL, NULL);
	printf("accept from listener again: %d\n", s >= 0);
	close(s);
	close(c);

	/* Connections the application never accepted are reset with the listener. */
	c = sock();
	SHOW("connect, never accepted", connect(c, (void *)&ss, sl));
	usleep(200000);
	close(l);
	usleep(100000);
	printf("poll after listener closed: %s\n", poll_bits(c, 0));
	SHOW("recv after listener closed", recv(c, &ch, 1, 0));
	close(c);
}

/* sendfile, splice, SIOCOUTQNSD, SO_SNDTIMEO, SHUT_RD on a connection. */
static void transfers(void)
{
	static char big[1 << 16];
	char path[] = "/tmp/smc_semantics.XXXXXX";
	struct timeval tv = { 0, 200000 };
	int c, s, l, f, p[2], v, total = 0;
	long n;

	pair(port + 8, &c, &s, &l);
	f = mkstemp(path);
	unlink(path);
	memset(big, 'f', sizeof(big));
	write(f, big, 100000 > sizeof(big) ? sizeof(big) : 100000);
	SHOW("sendfile", sendfile(c, f, &(off_t){ 0 }, 50000));
	while (total < 50000 && (n = recv(s, big, sizeof(big), 0)) > 0)
		total += n;
	printf("sendfile received: %d\n", total);
	pipe(p);
	send(c, "spliced!", 8, 0);
	usleep(100000);
	SHOW("splice socket to pipe", splice(s, NULL, p[1], NULL, 8, 0));
	SHOW("splice pipe to socket", splice(p[0], NULL, s, NULL, 8, 0));
	usleep(100000);
	SHOW("recv spliced bytes", recv(c, big, sizeof(big), 0));
	SHOW("SIOCOUTQNSD idle", (ioctl(c, SIOCOUTQNSD, &v), v));
	SHOW("setsockopt SO_SNDTIMEO", setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	while ((n = send(c, big, sizeof(big), MSG_NOSIGNAL)) > 0)
		;
	SHOW("send to a peer that does not read times out", n);
	SHOW("shutdown SHUT_RD", shutdown(s, SHUT_RD));
	SHOW("recv after own SHUT_RD", recv(s, big, 1, MSG_DONTWAIT));
	close(p[0]);
	close(p[1]);
	close(f);
	close(c);
	close(s);
	close(l);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "unconnected", unconnected },
	{ "binding", binding },
	{ "refused", refused },
	{ "connect_timeout", connect_timeout },
	{ "nonblocking", nonblocking },
	{ "data", data },
	{ "reset", reset },
	{ "epoll_edge", epoll_edge },
	{ "epoll_listener", epoll_listener },
	{ "async_io", async_io },
	{ "listening", listening },
	{ "transfers", transfers },
};

int main(int argc, char **argv)
{
	const char *fam = "smc", *only = NULL;
	unsigned int i;
	int opt;

	port = 7400;
	while ((opt = getopt(argc, argv, "f:p:c:")) != -1) {
		if (opt == 'f')
			fam = optarg;
		else if (opt == 'c')
			only = optarg;
		else if (opt == 'p')
			port = atoi(optarg);
	}
	if (!strcmp(fam, "smc")) {
		domain = AF_SMC;
	} else if (!strcmp(fam, "smc6")) {
		domain = AF_SMC;
		protocol = 1;
		v6 = 1;
	} else if (!strcmp(fam, "ipproto-smc")) {
		domain = AF_INET;
		protocol = 256; /* IPPROTO_SMC */
	} else if (!strcmp(fam, "ipproto-smc6")) {
		domain = AF_INET6;
		protocol = 256;
		v6 = 1;
	} else if (!strcmp(fam, "inet")) {
		domain = AF_INET;
	} else if (!strcmp(fam, "inet6")) {
		domain = AF_INET6;
		v6 = 1;
	} else {
		fprintf(stderr, "unknown family %s\n", fam);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!only || !strcmp(only, cases[i].name))
			cases[i].run();
	return 0;
}
