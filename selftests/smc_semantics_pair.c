// SPDX-License-Identifier: GPL-2.0
/*
 * Two-sided socket semantics probe for the differential TCP vs AF_SMC suite
 * across two hosts, where AF_SMC connections run over SMC-R.
 *
 *   smc_semantics_pair -r server|client -f smc|inet [-a PEER_ADDR] [-p BASEPORT]
 *
 * The server listens on BASEPORT (a plain TCP control connection that keeps
 * both sides in step) and on BASEPORT+1 (the family under test); the client
 * connects to PEER_ADDR, retrying until the server is up. Each scenario runs
 * on a new connection. Both sides print one line per observation,
 * "scenario/observation: value"; run with inet and with smc, each side's
 * lines must be the same (TCP is the oracle).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "probe_names.h"

#include "sock_io.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define MIB (1 << 20)

static int domain, is_server, port = 7600;
static const char *peer = "10.10.0.1";
static int ctl, data_listener;
static const char *scenario;
static unsigned char step;
static char big[8 * MIB];

#define OBS(name, fmt, ...) printf("%s/%s: " fmt "\n", scenario, name, __VA_ARGS__)
#define SHOW(name, expr) OBS(name, "%s", res(expr))

static void die(const char *what)
{
	fprintf(stderr, "%s %s: %s: %s\n", is_server ? "server" : "client",
		scenario ? scenario : "setup", what, strerror(errno));
	exit(1);
}

static const char *poll_bits(int fd)
{
	static char buf[64];
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP | POLLPRI };

	if (poll(&p, 1, 0) < 0)
		return err_name(errno);
	snprintf(buf, sizeof(buf), "%s%s%s%s%s%s",
		 p.revents & POLLIN ? "IN " : "", p.revents & POLLOUT ? "OUT " : "",
		 p.revents & POLLRDHUP ? "RDHUP " : "", p.revents & POLLHUP ? "HUP " : "",
		 p.revents & POLLERR ? "ERR " : "", p.revents & POLLPRI ? "PRI " : "");
	return buf;
}

/* Waits (up to 5 s) for one of events, then lets things settle 150 ms. */
static void wait_for(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	poll(&p, 1, 5000);
	usleep(150000);
}

/* Both sides meet here: each sends its step number, each reads the other's. */
static void sync_peer(void)
{
	unsigned char got;

	step++;
	if (write_all(ctl, &step, 1) || read_all(ctl, &got, 1))
		die("control connection");
	if (got != step) {
		fprintf(stderr, "out of step: %u vs %u\n", step, got);
		exit(1);
	}
}

static struct sockaddr_in addr_of(const char *a, int p)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(p) };

	inet_pton(AF_INET, a, &sa.sin_addr);
	return sa;
}

static int listen_on(int d, int p)
{
	struct sockaddr_in sa = addr_of("0.0.0.0", p);
	int one = 1, fd = socket(d, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (void *)&sa, sizeof(sa)) || listen(fd, 16))
		die("listen");
	return fd;
}

static int connect_to(int d, int p, int retry_secs)
{
	struct sockaddr_in sa = addr_of(peer, p);
	time_t end = time(NULL) + retry_secs;

	for (;;) {
		int fd = socket(d, SOCK_STREAM, 0);

		if (fd < 0)
			die("socket");
		if (!connect(fd, (void *)&sa, sizeof(sa)))
			return fd;
		if (time(NULL) > end || (errno != ECONNREFUSED && errno != EHOSTUNREACH &&
					 errno != ENETUNREACH && errno != ETIMEDOUT))
			die("connect");
		close(fd);
		usleep(200000);
	}
}

/* A scenario that outlasts its time says so, then the probe ends. */
static void on_alarm(int sig)
{
	static const char msg[] = "/timed out: 1\n";
	ssize_t r = write(1, scenario, strlen(scenario));

	(void)sig;
	if (r >= 0)
		r = write(1, msg, sizeof(msg) - 1);
	_exit(r < 0 ? 4 : 3);
}

/*
 * A new connection of the family under test for scenario name. A call that
 * blocks where TCP's does not gives up after 10 s (EAGAIN) instead of
 * hanging the probe; TCP never gets there.
 */
static int begin(const char *name)
{
	struct timeval tv = { 10, 0 };
	int fd;

	scenario = name;
	alarm(120);
	fd = is_server ? accept(data_listener, NULL, NULL) : connect_to(domain, port + 1, 0);
	if (fd < 0)
		die("accept");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = 60;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	sync_peer();
	return fd;
}

static void end(int fd)
{
	sync_peer();
	if (fd >= 0)
		close(fd);
}

/* The byte at offset i of a stream: changes within and across 64 KiB rings. */
static unsigned char pattern(size_t i)
{
	return (unsigned char)(i % 251 + i / 65536);
}

static void fill(size_t len)
{
	for (size_t i = 0; i < len; i++)
		big[i] = pattern(i);
}

/*
 * Reads until EOF or error, chunk bytes at a time, sleeping pause_us after
 * each of the first slow_chunks reads; says how much came and whether it
 * was the pattern.
 */
static void read_stream(int fd, size_t chunk, int slow_chunks, int pause_us, size_t want)
{
	size_t total = 0, bad = 0;
	long n = 0;
	int reads = 0;

	while (total < want || want == 0) {
		n = recv(fd, big, chunk, 0);
		if (n <= 0)
			break;
		for (long k = 0; k < n; k++)
			bad += (unsigned char)big[k] != pattern(total + k);
		total += n;
		if (reads++ < slow_chunks)
			usleep(pause_us);
	}
	OBS("received", "%zu", total);
	OBS("content", "%s", bad ? "bad" : "ok");
	if (want == 0)
		SHOW("end of stream", n);
}

static void data(void)
{
	struct iovec iov[2] = { { "hello ", 6 }, { "world", 5 } };
	char buf[64] = { 0 };
	int fd = begin("data"), v;

	if (!is_server) {
		SHOW("writev", writev(fd, iov, 2));
		sync_peer();
		sync_peer();
		SHOW("SIOCOUTQ unread by peer", (ioctl(fd, SIOCOUTQ, &v), v));
		sync_peer();
		sync_peer();
		usleep(150000);
		SHOW("SIOCOUTQ idle", (ioctl(fd, SIOCOUTQ, &v), v));
		SHOW("SIOCOUTQNSD idle", (ioctl(fd, SIOCOUTQNSD, &v), v));
		SHOW("recv MSG_WAITALL 5000 sent by the peer", recv(fd, big, 5000, MSG_WAITALL));
	} else {
		sync_peer();
		wait_for(fd, POLLIN);
		sync_peer();
		sync_peer();
		SHOW("SIOCINQ", (ioctl(fd, SIOCINQ, &v), v));
		SHOW("recv MSG_PEEK", recv(fd, buf, 5, MSG_PEEK));
		SHOW("recv after peek", recv(fd, buf, 5, 0));
		OBS("data", "%.5s", buf);
		SHOW("recv MSG_WAITALL", recv(fd, buf, 6, MSG_WAITALL));
		OBS("data after waitall", "%.6s", buf);
		SHOW("SIOCINQ after reading all", (ioctl(fd, SIOCINQ, &v), v));
		SHOW("recv MSG_DONTWAIT nothing left", recv(fd, buf, 1, MSG_DONTWAIT));
		sync_peer();
		SHOW("send 5000", send(fd, big, 5000, 0));
	}
	end(fd);
}

/* One side shuts down writing, the other reads EOF, writes back, shuts down. */
static void half_close(int first_is_server)
{
	int fd = begin(first_is_server ? "half close by server" : "half close by client");
	char b = 0;

	if (is_server == first_is_server) {
		SHOW("shutdown SHUT_WR", shutdown(fd, SHUT_WR));
		sync_peer();
		sync_peer();
		wait_for(fd, POLLIN);
		SHOW("recv reply", recv(fd, &b, 1, 0));
		OBS("reply", "%c", b);
		SHOW("send after own SHUT_WR", send(fd, "x", 1, MSG_NOSIGNAL));
		OBS("poll after own SHUT_WR", "%s", poll_bits(fd));
		sync_peer();
		sync_peer();
		wait_for(fd, POLLIN | POLLRDHUP);
		OBS("poll after both SHUT_WR", "%s", poll_bits(fd));
		SHOW("recv after both SHUT_WR", recv(fd, &b, 1, 0));
	} else {
		sync_peer();
		wait_for(fd, POLLIN | POLLRDHUP);
		OBS("poll after peer SHUT_WR", "%s", poll_bits(fd));
		SHOW("recv after peer SHUT_WR", recv(fd, &b, 1, 0));
		SHOW("recv again", recv(fd, &b, 1, MSG_DONTWAIT));
		SHOW("send to half-closed peer", send(fd, "y", 1, MSG_NOSIGNAL));
		sync_peer();
		sync_peer();
		SHOW("shutdown SHUT_WR", shutdown(fd, SHUT_WR));
		sync_peer();
		usleep(150000);
		OBS("poll after both SHUT_WR", "%s", poll_bits(fd));
	}
	end(fd);
}

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

/* The client closes; the server reads EOF, then writes into the closed end. */
static void close_then_write(void)
{
	int fd = begin("close, peer writes");
	char b;

	if (!is_server) {
		SHOW("close", close(fd));
		fd = -1;
		sync_peer();
	} else {
		struct sigaction sa = { .sa_handler = on_sigpipe };

		sync_peer();
		wait_for(fd, POLLIN | POLLRDHUP);
		OBS("poll after peer close", "%s", poll_bits(fd));
		SHOW("recv after peer close", recv(fd, &b, 1, 0));
		SHOW("first send after peer close", send(fd, "x", 1, MSG_NOSIGNAL));
		usleep(300000);
		OBS("poll after first send", "%s", poll_bits(fd));
		sigaction(SIGPIPE, &sa, NULL);
		sigpipes = 0;
		SHOW("second send (signals allowed)", send(fd, "x", 1, 0));
		OBS("SIGPIPE delivered", "%d", sigpipes > 0);
		signal(SIGPIPE, SIG_IGN);
		SHOW("third send", send(fd, "x", 1, MSG_NOSIGNAL));
		SHOW("recv after sends", recv(fd, &b, 1, MSG_DONTWAIT));
	}
	end(fd);
}

/*
 * The server resets the connection: SO_LINGER {1, 0}, or closing with data
 * it has not read. The client sees the reset.
 */
static void reset(int unread)
{
	int fd = begin(unread ? "close with unread data" : "SO_LINGER 0 close");
	struct linger lg = { 1, 0 };
	char b;

	if (is_server) {
		if (unread) {
			sync_peer();
			wait_for(fd, POLLIN);
		} else {
			SHOW("SO_LINGER 0", setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		}
		SHOW("close", close(fd));
		fd = -1;
		sync_peer();
	} else {
		if (unread) {
			SHOW("send", send(fd, "unread", 6, MSG_NOSIGNAL));
			sync_peer();
		}
		sync_peer();
		wait_for(fd, POLLIN | POLLRDHUP);
		OBS("poll after reset", "%s", poll_bits(fd));
		SHOW("recv after reset", recv(fd, &b, 1, 0));
		SHOW("send after reset", send(fd, "x", 1, MSG_NOSIGNAL));
		SHOW("recv again", recv(fd, &b, 1, MSG_DONTWAIT));
	}
	end(fd);
}

/* SO_LINGER {1, 2}: close waits while a slow reader takes the data. */
static void linger_close(void)
{
	int fd = begin("SO_LINGER 2 close, slow reader");
	struct linger lg = { 1, 2 };
	size_t len = 256 * 1024;

	if (!is_server) {
		fill(len);
		SHOW("SO_LINGER 2", setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		sync_peer();
		OBS("send all", "%d", write_all(fd, big, len));
		SHOW("close", close(fd));
		fd = -1;
	} else {
		sync_peer();
		usleep(300000);
		read_stream(fd, 4096, 1000, 1000, 0);
	}
	end(fd);
}

static void shut_rd(void)
{
	int fd = begin("shutdown SHUT_RD");
	char b = 0;

	if (is_server) {
		SHOW("shutdown SHUT_RD", shutdown(fd, SHUT_RD));
		OBS("poll after own SHUT_RD", "%s", poll_bits(fd));
		SHOW("recv after own SHUT_RD", recv(fd, &b, 1, MSG_DONTWAIT));
		sync_peer();
		sync_peer();
		usleep(300000);
		SHOW("recv data sent after SHUT_RD", recv(fd, &b, 1, MSG_DONTWAIT));
		SHOW("send after own SHUT_RD", send(fd, "z", 1, MSG_NOSIGNAL));
	} else {
		sync_peer();
		SHOW("send to peer that shut down reading", send(fd, "x", 1, MSG_NOSIGNAL));
		sync_peer();
		wait_for(fd, POLLIN);
		OBS("poll", "%s", poll_bits(fd));
		SHOW("recv", recv(fd, &b, 1, MSG_DONTWAIT));
	}
	end(fd);
}

/* One blocking send of 1 MiB; the peer reads as fast as it can. */
static void send_1mib(void)
{
	int fd = begin("blocking 1 MiB send");

	if (!is_server) {
		fill(MIB);
		SHOW("send 1 MiB", send(fd, big, MIB, MSG_NOSIGNAL));
	} else {
		read_stream(fd, 65536, 0, 0, MIB);
	}
	end(fd);
}

/* 8 MiB through the RMB to a reader that is slow at first. */
static void slow_reader(void)
{
	int fd = begin("8 MiB to a slow reader");
	int full = 0;

	if (!is_server) {
		fill(8 * MIB);
		for (int i = 0; i < 8; i++)
			full += send(fd, big + (size_t)i * MIB, MIB, MSG_NOSIGNAL) == MIB;
		OBS("sends of 1 MiB complete", "%d", full);
	} else {
		read_stream(fd, 4096, 512, 1000, 8 * MIB);
	}
	end(fd);
}

/*
 * The client's part of a splice scenario: sends the 8 bytes of msg for the
 * server to splice, meets it, then shows what comes back (as back_name)
 * and its first back_len bytes.
 */
static void splice_round_trip(int fd, const char *msg, const char *back_name, int back_len)
{
	SHOW("send 8 bytes to be spliced", send(fd, msg, 8, MSG_NOSIGNAL));
	sync_peer();
	wait_for(fd, POLLIN);
	SHOW(back_name, recv(fd, big, 64, 0));
	OBS("bytes spliced back", "%.*s", back_len, big);
}

/*
 * sendfile() of 1 MiB from a file, then splice() both ways through a pipe:
 * the socket's data moves without read()/write().
 */
static void splice_sendfile(void)
{
	int fd = begin("sendfile and splice"), p[2];

	if (pipe(p))
		die("pipe");
	if (!is_server) {
		char path[] = "/tmp/smc_semantics_pair.XXXXXX";
		int f = mkstemp(path);
		off_t off = 0;
		size_t sent = 0;
		long n = 0;

		if (f < 0)
			die("mkstemp");
		unlink(path);
		fill(MIB);
		if (write(f, big, MIB) != MIB)
			die("write");
		while (sent < MIB && (n = sendfile(fd, f, &off, MIB - sent)) > 0)
			sent += n;
		OBS("sendfile 1 MiB", "%zu", sent);
		close(f);
		sync_peer();
		splice_round_trip(fd, "spliced!", "recv the bytes spliced back", 8);
	} else {
		read_stream(fd, 65536, 0, 0, MIB);
		sync_peer();
		sync_peer();
		wait_for(fd, POLLIN);
		SHOW("splice socket to pipe", splice(fd, NULL, p[1], NULL, 8, 0));
		SHOW("splice pipe to socket", splice(p[0], NULL, fd, NULL, 8, 0));
	}
	close(p[0]);
	close(p[1]);
	end(fd);
}

/*
 * tee() and a partial pipe-to-pipe splice of what splice() took from the
 * socket: the pipe's buffers must behave as TCP's do (upstream smc.ko's
 * zero-copy splice answers both with EFAULT since CVE-2026-31507), and the
 * bytes left in the pipe still go back to the peer whole.
 */
static void tee_splice(void)
{
	int fd = begin("tee and partial splice of a spliced pipe"), p[2], q[2], r[2];
	char got[16] = "";

	if (pipe(p) || pipe(q) || pipe(r))
		die("pipe");
	if (!is_server) {
		splice_round_trip(fd, "teedata!", "recv what the pipe kept", 5);
	} else {
		wait_for(fd, POLLIN);
		SHOW("splice socket to pipe", splice(fd, NULL, p[1], NULL, 8, 0));
		SHOW("tee the pipe", tee(p[0], q[1], 8, 0));
		SHOW("splice 3 bytes pipe to pipe", splice(p[0], NULL, r[1], NULL, 3, 0));
		SHOW("read the tee'd pipe", read(q[0], got, sizeof(got) - 1));
		OBS("tee'd bytes", "%s", got);
		memset(got, 0, sizeof(got));
		SHOW("read the 3 bytes", read(r[0], got, sizeof(got) - 1));
		OBS("pipe-to-pipe bytes", "%s", got);
		SHOW("splice the rest to the socket", splice(p[0], NULL, fd, NULL, 8, 0));
		sync_peer();
	}
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(r[0]);
	close(r[1]);
	end(fd);
}

/* SO_SNDTIMEO 200 ms towards a peer that does not read. */
static void send_timeout(void)
{
	int fd = begin("SO_SNDTIMEO, peer does not read");
	struct timeval tv = { 0, 200000 };
	long n, first;
	int v;

	if (!is_server) {
		SHOW("SO_SNDTIMEO", setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
		first = send(fd, big, 65536, MSG_NOSIGNAL);
		OBS("first send > 0", "%d", first > 0);
		while ((n = send(fd, big, 65536, MSG_NOSIGNAL)) > 0)
			;
		SHOW("final send", n);
		OBS("SIOCOUTQ > 0", "%d", ioctl(fd, SIOCOUTQ, &v) == 0 && v > 0);
		OBS("SIOCOUTQNSD > 0", "%d", ioctl(fd, SIOCOUTQNSD, &v) == 0 && v > 0);
	}
	end(fd);
}

static volatile sig_atomic_t sigurgs;

static void on_sigurg(int sig)
{
	(void)sig;
	sigurgs++;
}

/*
 * "abc", urgent "!", "def": the reader stops at the mark. The reader's
 * process owns the socket (F_SETOWN) before anything is sent: it gets
 * SIGURG once for the urgent byte.
 */
static void urgent(void)
{
	int fd = begin("urgent data mid-stream");
	struct sigaction sa = { .sa_handler = on_sigurg, .sa_flags = SA_RESTART };
	char buf[64] = { 0 };
	int v;

	if (is_server) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGURG, &sa, NULL);
		sigurgs = 0;
		SHOW("F_SETOWN", fcntl(fd, F_SETOWN, getpid()));
	}
	sync_peer();
	if (!is_server) {
		SHOW("send abc", send(fd, "abc", 3, MSG_NOSIGNAL));
		SHOW("send MSG_OOB", send(fd, "!", 1, MSG_OOB | MSG_NOSIGNAL));
		SHOW("send def", send(fd, "def", 3, MSG_NOSIGNAL));
		sync_peer();
	} else {
		sync_peer();
		wait_for(fd, POLLPRI);
		usleep(100000);
		OBS("poll with urgent data", "%s", poll_bits(fd));
		SHOW("SIOCINQ", (ioctl(fd, SIOCINQ, &v), v));
		SHOW("SIOCATMARK before", (ioctl(fd, SIOCATMARK, &v), v));
		SHOW("recv up to the mark", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
		OBS("data before the mark", "%s", buf);
		SHOW("SIOCATMARK at the mark", (ioctl(fd, SIOCATMARK, &v), v));
		memset(buf, 0, sizeof(buf));
		SHOW("recv MSG_OOB", recv(fd, buf, 1, MSG_OOB | MSG_DONTWAIT));
		OBS("urgent byte", "%s", buf);
		SHOW("recv MSG_OOB again", recv(fd, buf, 1, MSG_OOB | MSG_DONTWAIT));
		SHOW("SIOCATMARK after MSG_OOB", (ioctl(fd, SIOCATMARK, &v), v));
		memset(buf, 0, sizeof(buf));
		SHOW("recv after the mark", recv(fd, buf, sizeof(buf), MSG_DONTWAIT));
		OBS("data after the mark", "%s", buf);
		SHOW("SIOCATMARK after", (ioctl(fd, SIOCATMARK, &v), v));
		OBS("poll after reading all", "%s", poll_bits(fd));
		OBS("SIGURG delivered to the F_SETOWN owner", "%d", (int)sigurgs);
		signal(SIGURG, SIG_DFL);
	}
	end(fd);
}

static volatile sig_atomic_t sigios;

static void on_sigio(int sig)
{
	(void)sig;
	sigios++;
}

/* Reads what arrives on the non-blocking fd until nothing came for 0.5 s. */
static void drain(int fd)
{
	char b[65536];
	int idle = 0;

	while (idle < 10) {
		if (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
			idle = 0;
		else
			idle++, usleep(50000);
	}
}

/*
 * O_ASYNC on the server's socket: SIGIO for bytes to read, for room to
 * write once a send found the buffers full (the client then reads
 * everything), and for the client's close.
 */
static void async_io(void)
{
	int fd = begin("SIGIO (O_ASYNC)"), i;
	struct sigaction sa = { .sa_handler = on_sigio, .sa_flags = SA_RESTART };

	if (is_server) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGIO, &sa, NULL);
		SHOW("F_SETOWN", fcntl(fd, F_SETOWN, getpid()));
		SHOW("O_ASYNC", fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK));
		sigios = 0;
	}
	sync_peer();
	if (!is_server)
		send(fd, "x", 1, MSG_NOSIGNAL);
	else
		wait_for(fd, POLLIN);
	sync_peer();
	if (is_server) {
		OBS("SIGIO for bytes to read", "%d", sigios > 0);
		drain(fd);
		for (i = 0; i < 1024 && send(fd, big, 65536, MSG_NOSIGNAL) > 0; i++)
			;
		/*
		 * And staying full: TCP makes room as its segments in flight
		 * are acknowledged, and may signal that room before the count
		 * starts (its one signal for the send that found no room:
		 * TCP then observed 0). Filled again until a send after a
		 * pause finds none, only the client's reads make room.
		 */
		for (i = 0; i < 10; i++) {
			usleep(200000);
			if (send(fd, big, 65536, MSG_NOSIGNAL) <= 0)
				break;
			while (send(fd, big, 65536, MSG_NOSIGNAL) > 0)
				;
		}
		sigios = 0;
	}
	sync_peer();
	if (!is_server)
		drain(fd);
	sync_peer();
	if (is_server) {
		usleep(200000);
		OBS("SIGIO for room to write", "%d", sigios > 0);
		sigios = 0;
	}
	sync_peer();
	if (!is_server) {
		shutdown(fd, SHUT_WR);
	} else {
		wait_for(fd, POLLRDHUP);
		OBS("SIGIO for the peer's close", "%d", sigios > 0);
		signal(SIGIO, SIG_IGN);
	}
	end(fd);
}

/* Edge-triggered epoll: one wake-up per arrival, none without one. */
static void epoll_edge(void)
{
	int fd = begin("epoll edge-triggered"), ep = epoll_create1(0), n;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET | EPOLLRDHUP }, out[4];
	char b[8];
	static const char *const msgs[] = { "ab", "c", "d" };

	for (int i = 0; i < 4; i++) {
		if (!is_server) {
			/* Nothing is sent before the server looked at the idle
			 * socket: otherwise its "idle" sees the first arrival. */
			if (i == 0)
				sync_peer();
			if (i < 3)
				send(fd, msgs[i], strlen(msgs[i]), MSG_NOSIGNAL);
			else
				shutdown(fd, SHUT_WR);
			sync_peer();
			continue;
		}
		if (i == 0) {
			ev.data.fd = fd;
			epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
			SHOW("idle", epoll_wait(ep, out, 4, 0));
			sync_peer();
		}
		n = epoll_wait(ep, out, 4, 5000);
		printf("%s/arrival %d: %d events 0x%x\n", scenario, i, n, n > 0 ? out[0].events : 0);
		printf("%s/arrival %d again: %s\n", scenario, i, res(epoll_wait(ep, out, 4, 0)));
		if (i == 0) {
			SHOW("partial read", recv(fd, b, 1, 0));
			SHOW("after partial read", epoll_wait(ep, out, 4, 0));
		}
		sync_peer();
	}
	close(ep);
	end(fd);
}

int main(int argc, char **argv)
{
	const char *fam = "smc", *role = "server";
	int opt;

	while ((opt = getopt(argc, argv, "r:f:a:p:")) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 'f': fam = optarg; break;
		case 'a': peer = optarg; break;
		case 'p': port = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -r server|client -f smc|inet [-a PEER] [-p PORT]\n",
				argv[0]);
			return 2;
		}
	}
	is_server = !strcmp(role, "server");
	domain = !strcmp(fam, "inet") ? AF_INET : AF_SMC;
	if (strcmp(fam, "inet") && strcmp(fam, "smc")) {
		fprintf(stderr, "unknown family %s\n", fam);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (is_server) {
		int l = listen_on(AF_INET, port);

		data_listener = listen_on(domain, port + 1);
		ctl = accept(l, NULL, NULL);
		close(l);
	} else {
		ctl = connect_to(AF_INET, port, 180);
	}
	if (ctl < 0)
		die("control connection");
	data();
	half_close(0);
	half_close(1);
	close_then_write();
	reset(0);
	reset(1);
	linger_close();
	shut_rd();
	send_1mib();
	slow_reader();
	splice_sendfile();
	tee_splice();
	send_timeout();
	urgent();
	epoll_edge();
	async_io();
	alarm(0);
	return 0;
}
