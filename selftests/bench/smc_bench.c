// SPDX-License-Identifier: GPL-2.0
/*
 * smc_bench: the socket workloads of `make bench` (scripts/bench.sh,
 * Documentation/benchmarks.rst), over AF_SMC or plain TCP.
 *
 *   smc_bench server -f FAMILY -p PORT [-b ADDR] [-c CTLCMD] [-T SECS]
 *   smc_bench client -f FAMILY -a ADDR -p PORT -w WORKLOAD [-s SECS] [-t THREADS]
 *                    [-n COUNT] [-r REP] [-M CMD] [-W SECS] [-T SECS] [-l REQUEST]
 *
 * FAMILY: tcp (AF_INET), smc (AF_SMC, SMCPROTO_SMC), ipproto-smc (AF_INET,
 * IPPROTO_SMC). The server listens on PORT with FAMILY for the workloads and
 * on PORT+1 with AF_INET for control requests; it runs until a control
 * request "quit" (or SIGALRM after -T SECS, the safety net).
 *
 * A workload connection starts with one byte from the client, the request,
 * which the server answers with one byte:
 *   'C'  connection rate: nothing more; the client closes, then the server.
 *   'P'  ping-pong: the server echoes every byte (TCP_NODELAY on both sides).
 *   'B'  bulk: the server counts bytes until EOF, answers the count (8 bytes,
 *        big endian) and closes.
 *   'I'  idle: the server keeps the connection, without a thread, until the
 *        client closes it.
 *
 * Client workloads (one RESULT line per figure on stdout, key=value):
 *   bulk      -t STREAMS connections send 64 KiB writes for -s SECS, then
 *             half-close and wait for the server's count: goodput in Mbit/s
 *             from the first byte to the last count (metric bulkN).
 *   pingpong  one connection, 1-byte round trips: -n COUNT timed ones (after
 *             COUNT/10, at most 100, untimed), or fewer when -s SECS is up;
 *             p50 and p99 round trip in microseconds (lat_p50, lat_p99).
 *   cps       -t THREADS threads each connect, send 'C', read the answer and
 *             close, for -s SECS (or, with -n COUNT, until COUNT connections
 *             are made): connections per second (cpsN), and the mean time
 *             a connection spent in connect, request/answer and close.
 *   idle      -n COUNT connections opened one after the other and held; -M CMD
 *             runs while they are all open (the memory snapshots), then all
 *             close (idle_setup: their opening rate).
 *   ctl       sends the control request -l REQUEST (a line) to PORT+1 and exits
 *             with the server's status for it; connects for up to -W SECS.
 * For bulk and pingpong, -M CMD runs once the connections are open, before
 * the clock starts (scripts record smc_diag rows there). -r REP is copied
 * into the RESULT lines. -T SECS bounds the whole run (SIGALRM).
 *
 * The server runs `CTLCMD REQUEST` (through /bin/sh) for each control request
 * other than ping and quit; REQUEST may only hold [A-Za-z0-9_.=-] and blanks.
 * Exit status 0 on success.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../sock_io.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0
#ifndef IPPROTO_SMC
#define IPPROTO_SMC 256
#endif

#define IO_TIMEOUT_SECS 30
#define BULK_WRITE (64 * 1024)

struct family {
	const char *name;
	int domain, protocol;
};

static const struct family families[] = {
	{ "tcp", AF_INET, 0 },
	{ "inet", AF_INET, 0 },
	{ "smc", AF_SMC, SMCPROTO_SMC },
	{ "ipproto-smc", AF_INET, IPPROTO_SMC },
};

static const struct family *fam;
static const struct family ctl_fam = { "tcp", AF_INET, 0 };
static const char *addr_str;
static const char *workload;
static const char *ctl_cmd;
static const char *probe_cmd;
static const char *request;
static int port;
static int secs = 5;
static int threads = 1;
static long count = 1000;
static int rep = 1;
static int wait_secs = 10;
static int total_secs;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "smc_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static socklen_t make_addr(struct sockaddr_in *a, const char *s, int p)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(p);
	if (s && inet_pton(AF_INET, s, &a->sin_addr) != 1) {
		fprintf(stderr, "smc_bench: bad IPv4 address %s\n", s);
		exit(2);
	}
	return sizeof(*a);
}

static void set_timeouts(int fd, int secs_)
{
	struct timeval tv = { .tv_sec = secs_ };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ? 0 : 1;
}

static int run_cmd(const char *cmd)
{
	int st;

	if (!cmd)
		return 0;
	fflush(stdout);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return 126;
	return WEXITSTATUS(st);
}

/* ---------------------------------------------------------------- server */

static int idle_pipe[2];
static volatile sig_atomic_t quit;

static int listener(const struct family *f, int p)
{
	struct sockaddr_in a;
	socklen_t sl = make_addr(&a, addr_str, p);
	int one = 1, fd = socket(f->domain, SOCK_STREAM | SOCK_CLOEXEC, f->protocol);

	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("SO_REUSEADDR");
	if (bind(fd, (struct sockaddr *)&a, sl))
		die("bind");
	if (listen(fd, 1024))
		die("listen");
	return fd;
}

/* Holds the idle connections: one thread, poll(), no thread per connection. */
static void *idle_keeper(void *arg)
{
	struct pollfd *p = calloc(1, sizeof(*p));
	size_t n = 1, cap = 1, i;

	(void)arg;
	if (!p)
		return NULL;
	p[0].fd = idle_pipe[0];
	p[0].events = POLLIN;
	for (;;) {
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		for (i = 1; i < n; i++) {
			char c;
			ssize_t r;

			if (!p[i].revents)
				continue;
			r = recv(p[i].fd, &c, 1, MSG_DONTWAIT);
			if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
				continue;
			close(p[i].fd);
			p[i--] = p[--n];
		}
		if (p[0].revents & POLLIN) {
			int fd;

			if (read(idle_pipe[0], &fd, sizeof(fd)) != sizeof(fd))
				continue;
			if (n == cap) {
				struct pollfd *q = realloc(p, 2 * cap * sizeof(*p));

				if (!q) {
					close(fd);
					continue;
				}
				p = q;
				cap *= 2;
			}
			p[n].fd = fd;
			p[n].events = POLLIN;
			p[n].revents = 0;
			n++;
		}
	}
}

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	size_t bufsz = 256 * 1024;
	char req, ok = 'k', small[64], *buf = NULL;
	uint64_t total = 0, be;
	ssize_t n;

	set_timeouts(fd, IO_TIMEOUT_SECS);
	if (read_all(fd, &req, 1))
		goto out;
	if (req == 'P')
		set_nodelay(fd);
	if ((req == 'P' || req == 'B') && !(buf = malloc(bufsz)))
		goto out;
	if (write_all(fd, &ok, 1))
		goto out;
	switch (req) {
	case 'C':
		/* Wait for the client's close (or the timeout). */
		while (recv(fd, small, sizeof(small), 0) > 0)
			;
		break;
	case 'P':
		while ((n = recv(fd, buf, bufsz, 0)) > 0 || (n < 0 && errno == EINTR))
			if (n > 0 && write_all(fd, buf, n))
				break;
		break;
	case 'B':
		while ((n = recv(fd, buf, bufsz, 0)) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				total += n;
		if (n == 0) {
			be = htobe64(total);
			write_all(fd, &be, sizeof(be));
		}
		break;
	case 'I':
		if (write(idle_pipe[1], &fd, sizeof(fd)) == sizeof(fd))
			return NULL;
		break;
	default:
		break;
	}
out:
	free(buf);
	close(fd);
	return NULL;
}

static int request_ok(const char *r)
{
	if (!*r)
		return 0;
	for (; *r; r++)
		if (!(*r == ' ' || *r == '_' || *r == '.' || *r == '=' || *r == '-' ||
		      (*r >= '0' && *r <= '9') || (*r >= 'a' && *r <= 'z') ||
		      (*r >= 'A' && *r <= 'Z')))
			return 0;
	return 1;
}

static void *serve_ctl(void *arg)
{
	int fd = (int)(intptr_t)arg, st = 0;
	char line[256], cmd[512], answer[16];
	size_t len = 0;

	/* Requests like "perftest bw 1" may run a while: a generous timeout. */
	set_timeouts(fd, 300);
	while (len < sizeof(line) - 1) {
		if (recv(fd, line + len, 1, 0) != 1)
			goto out;
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = 0;
	if (!request_ok(line)) {
		st = 2;
	} else if (!strcmp(line, "quit")) {
		quit = 1;
	} else if (strcmp(line, "ping")) {
		if (!ctl_cmd) {
			st = 127;
		} else {
			snprintf(cmd, sizeof(cmd), "%s %s", ctl_cmd, line);
			st = run_cmd(cmd);
		}
	}
	snprintf(answer, sizeof(answer), "%d\n", st);
	write_all(fd, answer, strlen(answer));
out:
	close(fd);
	return NULL;
}

static int server(void)
{
	struct pollfd p[2];
	pthread_attr_t attr;
	pthread_t th;

	if (pipe2(idle_pipe, O_CLOEXEC))
		die("pipe");
	p[0].fd = listener(fam, port);
	p[1].fd = listener(&ctl_fam, port + 1);
	p[0].events = p[1].events = POLLIN;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	errno = pthread_create(&th, &attr, idle_keeper, NULL);
	if (errno)
		die("pthread_create");
	printf("listening on %d (%s) and %d (control)\n", port, fam->name, port + 1);
	fflush(stdout);
	while (!quit) {
		int i, r = poll(p, 2, 500);

		if (r < 0 && errno != EINTR)
			die("poll");
		for (i = 0; r > 0 && i < 2; i++) {
			int c;

			if (!(p[i].revents & POLLIN))
				continue;
			c = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0) {
				if (errno == EMFILE || errno == ENFILE)
					usleep(100 * 1000);
				continue;
			}
			if (pthread_create(&th, &attr, i ? serve_ctl : serve_conn, (void *)(intptr_t)c)) {
				close(c);
				usleep(10 * 1000);
			}
		}
	}
	/* Let the answer to "quit" leave before the process ends. */
	usleep(200 * 1000);
	printf("quit\n");
	return 0;
}

/* ---------------------------------------------------------------- client */

/*
 * A connection to PORT of the server; with retry, refused or unreachable
 * connects are tried again until wait_secs have passed. Returns -1 on failure.
 */
static int dial(const struct family *f, int p, int retry)
{
	struct sockaddr_in a;
	socklen_t sl = make_addr(&a, addr_str, p);
	double end = now() + wait_secs;

	for (;;) {
		int err, fd = socket(f->domain, SOCK_STREAM | SOCK_CLOEXEC, f->protocol);

		if (fd < 0)
			return -1;
		set_timeouts(fd, IO_TIMEOUT_SECS);
		if (!connect(fd, (struct sockaddr *)&a, sl))
			return fd;
		err = errno;
		close(fd);
		errno = err;
		if (!retry || now() > end ||
		    (err != ECONNREFUSED && err != EHOSTUNREACH && err != ENETUNREACH &&
		     err != ETIMEDOUT && err != EINTR))
			return -1;
		usleep(200 * 1000);
	}
}

/* Sends the one-byte request on fd and reads the answer; closes fd on failure. */
static int send_request(int fd, char req)
{
	char ok;

	if (write_all(fd, &req, 1) || read_all(fd, &ok, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A workload connection: connect, send the request, read the answer. */
static int open_req(char req, int retry)
{
	int fd = dial(fam, port, retry);

	return fd < 0 ? -1 : send_request(fd, req);
}

static void result_failed(const char *metric, const char *why)
{
	printf("RESULT metric=%s rep=%d status=failed family=%s error=%s\n",
	       metric, rep, fam->name, why);
	fflush(stdout);
}

struct stream {
	pthread_t th;
	int fd, ok;
	uint64_t sent, acked;
	double end;
};

static pthread_barrier_t bar_open, bar_go;
static double t_start, t_deadline;
static char bulk_buf[BULK_WRITE];

static void *bulk_stream(void *arg)
{
	struct stream *s = arg;
	uint64_t be;

	s->fd = open_req('B', 1);
	pthread_barrier_wait(&bar_open);
	pthread_barrier_wait(&bar_go);
	if (s->fd < 0)
		return NULL;
	while (now() < t_deadline) {
		ssize_t n = send(s->fd, bulk_buf, sizeof(bulk_buf), MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		s->sent += n;
	}
	if (shutdown(s->fd, SHUT_WR) || read_all(s->fd, &be, sizeof(be)))
		goto out;
	s->acked = be64toh(be);
	s->end = now();
	s->ok = s->acked == s->sent;
out:
	close(s->fd);
	return NULL;
}

static int bulk(void)
{
	struct stream *s = calloc(threads, sizeof(*s));
	uint64_t bytes = 0, x = 0x9e3779b97f4a7c15ULL;
	double end = 0;
	char metric[32];
	int i, failed = 0;

	snprintf(metric, sizeof(metric), "bulk%d", threads);
	if (!s)
		die("calloc");
	for (i = 0; i < BULK_WRITE; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		bulk_buf[i] = (char)x;
	}
	pthread_barrier_init(&bar_open, NULL, threads + 1);
	pthread_barrier_init(&bar_go, NULL, threads + 1);
	for (i = 0; i < threads; i++)
		if ((errno = pthread_create(&s[i].th, NULL, bulk_stream, &s[i])))
			die("pthread_create");
	pthread_barrier_wait(&bar_open);
	for (i = 0; i < threads; i++)
		failed |= s[i].fd < 0;
	if (!failed)
		run_cmd(probe_cmd);
	t_start = now();
	t_deadline = failed ? t_start : t_start + secs;
	pthread_barrier_wait(&bar_go);
	for (i = 0; i < threads; i++) {
		pthread_join(s[i].th, NULL);
		if (!s[i].ok)
			failed = 1;
		bytes += s[i].acked;
		if (s[i].end > end)
			end = s[i].end;
	}
	if (failed) {
		result_failed(metric, "connect_or_transfer");
		return 1;
	}
	printf("RESULT metric=%s rep=%d status=ok family=%s value=%.3f unit=Mbit/s "
	       "bytes=%llu secs=%.3f streams=%d\n",
	       metric, rep, fam->name, bytes * 8 / (end - t_start) / 1e6,
	       (unsigned long long)bytes, end - t_start, threads);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int pingpong(void)
{
	double *rtt = calloc(count, sizeof(*rtt)), sum = 0, deadline;
	long warm = count / 10 > 100 ? 100 : count / 10, i, k = 0;
	int fd, nodelay;
	char c = 'p';

	if (!rtt)
		die("calloc");
	fd = open_req('P', 1);
	if (fd < 0) {
		result_failed("lat_p50", "connect");
		result_failed("lat_p99", "connect");
		return 1;
	}
	nodelay = set_nodelay(fd);
	run_cmd(probe_cmd);
	for (i = 0; i < warm; i++)
		if (write_all(fd, &c, 1) || read_all(fd, &c, 1))
			goto fail;
	deadline = now() + secs;
	for (k = 0; k < count; k++) {
		double t0 = now();

		if (write_all(fd, &c, 1) || read_all(fd, &c, 1))
			goto fail;
		rtt[k] = (now() - t0) * 1e6;
		sum += rtt[k];
		if (now() > deadline) {
			k++;
			break;
		}
	}
	close(fd);
	qsort(rtt, k, sizeof(*rtt), cmp_double);
	printf("RESULT metric=lat_p50 rep=%d status=ok family=%s value=%.1f unit=us "
	       "count=%ld mean=%.1f min=%.1f max=%.1f nodelay=%d\n",
	       rep, fam->name, rtt[(k - 1) / 2], k, sum / k, rtt[0], rtt[k - 1], nodelay);
	printf("RESULT metric=lat_p99 rep=%d status=ok family=%s value=%.1f unit=us count=%ld\n",
	       rep, fam->name, rtt[(k * 99 + 99) / 100 - 1], k);
	free(rtt);
	return 0;
fail:
	close(fd);
	result_failed("lat_p50", "transfer");
	result_failed("lat_p99", "transfer");
	return 1;
}

static long cps_ok, cps_err;
/* With -n: the connections to make in all (0: as many as -s SECS allows). */
static long cps_limit, cps_started;
/*
 * Where a successful connection's time goes, summed over all threads (in
 * seconds): socket() and connect(), the request and its answer, close().
 */
static double cps_t_connect, cps_t_reqresp, cps_t_close;

static pthread_mutex_t cps_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cps_thread(void *arg)
{
	long ok = 0, err = 0;
	double t_connect = 0, t_reqresp = 0, t_close = 0;

	(void)arg;
	while (now() < t_deadline) {
		double t0, t1, t2;
		int fd;

		if (cps_limit && __atomic_fetch_add(&cps_started, 1, __ATOMIC_RELAXED) >= cps_limit)
			break;
		t0 = now();
		fd = dial(fam, port, 0);
		t1 = now();
		if (fd >= 0)
			fd = send_request(fd, 'C');
		if (fd < 0) {
			err++;
			usleep(10 * 1000);
			continue;
		}
		t2 = now();
		close(fd);
		t_connect += t1 - t0;
		t_reqresp += t2 - t1;
		t_close += now() - t2;
		ok++;
	}
	__atomic_fetch_add(&cps_ok, ok, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cps_err, err, __ATOMIC_RELAXED);
	pthread_mutex_lock(&cps_lock);
	cps_t_connect += t_connect;
	cps_t_reqresp += t_reqresp;
	cps_t_close += t_close;
	pthread_mutex_unlock(&cps_lock);
	return NULL;
}

static int cps(void)
{
	pthread_t *th = calloc(threads, sizeof(*th));
	char metric[32];
	double elapsed, per_conn;
	int i;

	snprintf(metric, sizeof(metric), "cps%d", threads);
	if (!th)
		die("calloc");
	/* One connection first, so that a missing server fails fast. */
	i = open_req('C', 1);
	if (i < 0) {
		result_failed(metric, "connect");
		return 1;
	}
	close(i);
	t_start = now();
	t_deadline = t_start + secs;
	for (i = 0; i < threads; i++)
		if ((errno = pthread_create(&th[i], NULL, cps_thread, NULL)))
			die("pthread_create");
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	elapsed = now() - t_start;
	/* More than 5 % failed connects: the figure is not the contender's rate. */
	/* The phases' means per connection (us), in the thread's view. */
	per_conn = cps_ok ? 1e6 / cps_ok : 0;
	printf("RESULT metric=%s rep=%d status=%s family=%s value=%.1f unit=conn/s "
	       "conns=%ld errors=%ld secs=%.3f threads=%d connect_us=%.0f "
	       "reqresp_us=%.0f close_us=%.0f\n",
	       metric, rep, cps_err * 20 > cps_ok ? "failed" : "ok", fam->name,
	       cps_ok / elapsed, cps_ok, cps_err, elapsed, threads,
	       cps_t_connect * per_conn, cps_t_reqresp * per_conn, cps_t_close * per_conn);
	return cps_err * 20 > cps_ok;
}

static int idle(void)
{
	int *fds = calloc(count, sizeof(*fds));
	double t0 = now(), t;
	long i, n;

	if (!fds)
		die("calloc");
	for (n = 0; n < count; n++) {
		fds[n] = open_req('I', n == 0);
		if (fds[n] < 0)
			break;
	}
	t = now() - t0;
	if (n < count) {
		fprintf(stderr, "smc_bench: idle: connection %ld of %ld failed: %s\n",
			n + 1, count, strerror(errno));
		for (i = 0; i < n; i++)
			close(fds[i]);
		result_failed("idle_setup", "connect");
		return 1;
	}
	printf("INFO idle held=%ld\n", n);
	run_cmd(probe_cmd);
	for (i = 0; i < n; i++)
		close(fds[i]);
	printf("RESULT metric=idle_setup rep=%d status=ok family=%s value=%.1f unit=conn/s "
	       "conns=%ld secs=%.3f\n", rep, fam->name, n / t, n, t);
	return 0;
}

static int ctl(void)
{
	char line[300], answer[16];
	size_t len = 0;
	int fd;

	if (!request || !request_ok(request)) {
		fprintf(stderr, "smc_bench: ctl: bad request\n");
		return 2;
	}
	fd = dial(&ctl_fam, port + 1, 1);
	if (fd < 0)
		die("ctl connect");
	set_timeouts(fd, 300);
	snprintf(line, sizeof(line), "%s\n", request);
	if (write_all(fd, line, strlen(line)))
		die("ctl send");
	while (len < sizeof(answer) - 1 && recv(fd, answer + len, 1, 0) == 1 && answer[len] != '\n')
		len++;
	answer[len] = 0;
	close(fd);
	if (!len) {
		fprintf(stderr, "smc_bench: ctl: no answer to '%s'\n", request);
		return 1;
	}
	return atoi(answer);
}

int main(int argc, char **argv)
{
	const char *famname = "tcp";
	int opt, is_server;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: smc_bench server|client [options] (see the source)\n");
		return 2;
	}
	is_server = !strcmp(argv[1], "server");
	optind = 2;
	while ((opt = getopt(argc, argv, "f:a:b:p:c:T:w:s:t:n:r:M:W:l:")) != -1) {
		switch (opt) {
		case 'f': famname = optarg; break;
		case 'a': case 'b': addr_str = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'c': ctl_cmd = optarg; break;
		case 'T': total_secs = atoi(optarg); break;
		case 'w': workload = optarg; break;
		case 's': secs = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'n': count = cps_limit = atol(optarg); break;
		case 'r': rep = atoi(optarg); break;
		case 'M': probe_cmd = optarg; break;
		case 'W': wait_secs = atoi(optarg); break;
		case 'l': request = optarg; break;
		default: return 2;
		}
	}
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(families[i].name, famname))
			fam = &families[i];
	if (!fam || port <= 0 || port >= 65535 || secs < 1 || threads < 1 || count < 1) {
		fprintf(stderr, "smc_bench: bad family, port, -s, -t or -n\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* The safety net: a stuck contender cannot hold the run forever. */
	alarm(total_secs > 0 ? total_secs : is_server ? 3600 : 4 * secs + 120);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (is_server)
		return server();
	if (!addr_str || !workload) {
		fprintf(stderr, "smc_bench: client needs -a and -w\n");
		return 2;
	}
	if (!strcmp(workload, "bulk"))
		return bulk();
	if (!strcmp(workload, "pingpong"))
		return pingpong();
	if (!strcmp(workload, "cps"))
		return cps();
	if (!strcmp(workload, "idle"))
		return idle();
	if (!strcmp(workload, "ctl"))
		return ctl();
	fprintf(stderr, "smc_bench: unknown workload %s\n", workload);
	return 2;
}
