// SPDX-License-Identifier: GPL-2.0
/*
 * Echo test over AF_SMC, AF_INET or AF_INET6 stream sockets.
 *
 *   smc_echo server -f FAMILY -p PORT [-b ADDR] [-n CONNS] [-x HOSTILE] [-B BACKLOG] [-L]
 *   smc_echo client -f FAMILY -a ADDR -p PORT [-s BYTES] [-n CONNS] [-r ROUNDS] [-w SECS] [-N]
 *                   [-X OPENING] [-S USEC] [-W FILE] [-P N]
 *   smc_echo hold -f FAMILY -p PORT
 *   smc_echo churn -f FAMILY -p PORT [-n CONNS]
 *   smc_echo probe
 *
 * FAMILY: smc (AF_SMC, IPv4), smc6 (AF_SMC, SMCPROTO_SMC6), inet, inet6,
 * ipproto-smc (AF_INET with IPPROTO_SMC). The client sends an 8-byte length
 * and that many random bytes on each of CONNS concurrent connections; the
 * server echoes every byte back; the client checks the echo byte for byte
 * and prints an FNV-1a checksum of the payload; with -r each of the CONNS
 * threads makes ROUNDS connections in a row; -N connects non-blocking
 * (poll for POLLOUT, then SO_ERROR); -S sends the client threads SIGALRM
 * every USEC microseconds while they exchange data (EINTR everywhere, no
 * byte may be lost); with -W each connection, once connected, prints
 * "connected" and waits until FILE exists before it sends (an idle
 * connection while the test changes the network); with -P at most N
 * connects are in flight at once. Exit status 0 on success.
 * "hold" keeps a listening socket open until stdin is closed or a signal
 * arrives (for unload tests). "churn" starts CONNS clients against a listener
 * that closes without accepting any once half of them connected (or after
 * 2 s), while the others' handshakes are under way and the server may still
 * be finishing those of the last ones; every client must end (connected
 * then reset, or refused) within 30 s. With -x, the server plays a hostile peer: a
 * connection that starts with a CLC proposal is answered with HOSTILE bytes
 * (garbage, truncated, oversized, badversion, badlength, decline,
 * syncdecline: a decline that says the link groups are out of sync, and
 * slowdecline: the decline after 1.5 s) before the
 * echo; a client that then resets the connection just loses it. -L sets
 * SMC_LIMIT_HS on the listener, -B its backlog. With -X, the
 * client opens its connection the way a hostile or confused client with the
 * SMC option on its SYN would (see client_opening()) before the echo, or
 * checks that the server dropped it. "probe" checks that AF_SMC refuses socket
 * types and protocols it does not implement, with upstream's errno values.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sock_io.h"

#ifndef AF_SMC
#define AF_SMC 43
#endif
#define SMCPROTO_SMC 0
#define SMCPROTO_SMC6 1
#ifndef IPPROTO_SMC
#define IPPROTO_SMC 256
#endif

struct family {
	const char *name;
	int domain, protocol, addr_family;
};

static const struct family families[] = {
	{ "smc", AF_SMC, SMCPROTO_SMC, AF_INET },
	{ "smc6", AF_SMC, SMCPROTO_SMC6, AF_INET6 },
	{ "inet", AF_INET, 0, AF_INET },
	{ "inet6", AF_INET6, 0, AF_INET6 },
	{ "ipproto-smc", AF_INET, IPPROTO_SMC, AF_INET },
	{ "ipproto-smc6", AF_INET6, IPPROTO_SMC, AF_INET6 },
};

static const struct family *fam;
static const char *addr_str;
static int port;
static uint64_t size = 1 << 20;
static int conns = 1;
static int wait_secs = 20;
static int rounds = 1;
static int nonblocking_connect;
/* -P N: at most N connects in flight at once (0: no bound). */
static int connect_max;
static sem_t connect_sem;
static const char *hostile;
static const char *opening;
static int backlog = -1;
static int limit_hs;
static const char *go_file;

#ifndef SOL_SMC
#define SOL_SMC 286
#endif
#define SMC_LIMIT_HS 1

static const unsigned char smcr_eyecatcher[4] = { 0xe2, 0xd4, 0xc3, 0xd9 };

/* Builds the answer of a hostile peer to a CLC proposal; returns its length. */
static size_t hostile_answer(unsigned char *b)
{
	memset(b, 0, 64);
	memcpy(b, smcr_eyecatcher, 4);
	b[4] = 4; /* decline */
	if (!strcmp(hostile, "garbage")) {
		memcpy(b, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
		return 28;
	}
	if (!strcmp(hostile, "truncated")) {
		b[6] = 44; b[7] = 0x20;
		return 20; /* says 44 bytes, sends 20 */
	}
	if (!strcmp(hostile, "oversized")) {
		b[5] = 0xff; b[6] = 0xff; b[7] = 0x20;
		return 44;
	}
	if (!strcmp(hostile, "badversion")) {
		b[6] = 44; b[7] = 0x00; /* version 0 */
		memcpy(b + 40, smcr_eyecatcher, 4);
		return 44;
	}
	if (!strcmp(hostile, "badlength")) {
		b[6] = 30; b[7] = 0x20; /* a v2 decline is 44 bytes */
		memcpy(b + 26, smcr_eyecatcher, 4);
		return 30;
	}
	/*
	 * "decline": a valid v2 decline, PEERNOSMC: the client falls back on
	 * this connection; "slowdecline": the same after 1.5 s.
	 * "syncdecline": SYNCERR with the first contact bit (upstream's "your
	 * link group is out of sync"), sent before the client has any link
	 * group with us: the client falls back (upstream's crashed on one
	 * before 6.12.118).
	 */
	b[6] = 44; b[7] = 0x20;
	b[16] = 0x03; b[17] = 0x01;
	if (!strcmp(hostile, "syncdecline")) {
		b[7] = 0x28; /* version 2, typev2 with the first contact bit */
		b[16] = 0x04; b[17] = 0x00;
	}
	b[20] = 0x20;
	memcpy(b + 40, smcr_eyecatcher, 4);
	return 44;
}


/* Fuzzed openings the listener answered with a CLC decline. */
static int fuzz_declined;

/* Waits up to 20 s for the server to drop the connection (reset or EOF). */
static int expect_dropped(int fd)
{
	struct timeval tv = { .tv_sec = 20 };
	char c;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, &c, 1, 0);
	if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
		return 1;
	fprintf(stderr, "smc_echo: opening %s: connection not dropped (%zd, %s)\n",
		opening, n, n < 0 ? strerror(errno) : "data");
	return -1;
}

/* Reads the server's CLC decline; checks its type and reason code. */
static int expect_decline(int fd, uint32_t reason)
{
	unsigned char b[64];
	unsigned int len;
	uint32_t got;

	if (read_all(fd, b, 8) || memcmp(b, smcr_eyecatcher, 4) || b[4] != 4)
		goto bad;
	len = b[5] << 8 | b[6];
	if (len < 28 || len > sizeof(b) || read_all(fd, b + 8, len - 8))
		goto bad;
	got = (uint32_t)b[16] << 24 | b[17] << 16 | b[18] << 8 | b[19];
	if (got != reason) {
		fprintf(stderr, "smc_echo: decline reason %08x, expected %08x\n", got, reason);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "smc_echo: opening %s: no valid CLC decline\n", opening);
	return -1;
}

/*
 * The first bytes of a client whose SYN carried the SMC option (a BPF
 * program adds it to plain TCP sockets). Returns 0 to go on with the echo,
 * 1 when the server dropped the connection as it must, -1 on a failure.
 *   plain       no CLC at all: the echo protocol right away
 *   late        nothing for 8 s (longer than the server waits for CLC)
 *   decline     a valid v2 decline instead of a proposal
 *   badlength   a proposal whose length disagrees with its layout: the
 *               server declines with SYNCERR (0x04000000)
 *   truncated   a proposal header announcing 84 bytes, then 20 bytes only
 *   oversized   a header announcing 65535 bytes
 *   badversion  a proposal header with version 0
 *   fuzz        a CLC header (mostly a proposal) of random length, flags and
 *               content: any answer, a reset or nothing within 1 s will do;
 *               the listener must survive it (checked by the caller)
 *   unanswered  a valid proposal that must NOT be answered in CLC: the
 *               listener took the connection as plain TCP (SMC_LIMIT_HS),
 *               so the echo server sends back all but its first 8 bytes
 */
static int client_opening(int fd)
{
	unsigned char b[84];

	memset(b, 0, sizeof(b));
	memcpy(b, smcr_eyecatcher, 4);
	b[4] = 1; /* proposal */
	b[7] = 0x2a; /* version 2, typev2 N, typev1 N */
	if (!strcmp(opening, "plain"))
		return 0;
	if (!strcmp(opening, "late")) {
		sleep(8);
		return 0;
	}
	if (!strcmp(opening, "decline")) {
		b[4] = 4; b[6] = 44; b[7] = 0x20;
		b[16] = 0x03; b[17] = 0x01;
		b[20] = 0x20;
		memcpy(b + 40, smcr_eyecatcher, 4);
		return write_all(fd, b, 44) ? -1 : 0;
	}
	if (!strcmp(opening, "badlength")) {
		b[6] = 60;
		memcpy(b + 56, smcr_eyecatcher, 4);
		if (write_all(fd, b, 60))
			return -1;
		return expect_decline(fd, 0x04000000);
	}
	if (!strcmp(opening, "truncated")) {
		b[6] = 84;
		return write_all(fd, b, 20) ? -1 : expect_dropped(fd);
	}
	if (!strcmp(opening, "oversized")) {
		b[5] = 0xff; b[6] = 0xff;
		return write_all(fd, b, 84) ? -1 : expect_dropped(fd);
	}
	if (!strcmp(opening, "fuzz")) {
		unsigned char m[1024], back[64];
		struct timeval tv = { .tv_sec = 1 };
		unsigned int len;

		if (getrandom(m, sizeof(m), 0) != sizeof(m))
			return -1;
		memcpy(m, smcr_eyecatcher, 4);
		if (m[4] % 8)
			m[4] = 1;
		len = 12 + (unsigned int)((m[5] << 8 | m[6]) % (sizeof(m) - 11));
		m[5] = len >> 8;
		m[6] = len & 0xff;
		if (m[8] & 1)
			memcpy(m + len - 4, smcr_eyecatcher, 4);
		if (write_all(fd, m, len))
			return 1; /* dropped already */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(fd, back, sizeof(back), 0) >= 5 && !memcmp(back, smcr_eyecatcher, 4) &&
		    back[4] == 4)
			__atomic_fetch_add(&fuzz_declined, 1, __ATOMIC_RELAXED);
		return 1;
	}
	if (!strcmp(opening, "unanswered")) {
		unsigned char back[76];

		b[6] = 84;
		memcpy(b + 80, smcr_eyecatcher, 4);
		if (write_all(fd, b, 84) || read_all(fd, back, sizeof(back)))
			return -1;
		if (memcmp(back, b + 8, sizeof(back))) {
			fprintf(stderr, "smc_echo: the listener answered in CLC\n");
			return -1;
		}
		return 1;
	}
	if (!strcmp(opening, "badversion")) {
		b[6] = 84; b[7] = 0x0a;
		memcpy(b + 80, smcr_eyecatcher, 4);
		return write_all(fd, b, 84) ? -1 : expect_dropped(fd);
	}
	fprintf(stderr, "smc_echo: unknown opening %s\n", opening);
	return -1;
}

static void die(const char *what)
{
	fprintf(stderr, "smc_echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static socklen_t make_addr(struct sockaddr_storage *ss, const char *s)
{
	memset(ss, 0, sizeof(*ss));
	if (fam->addr_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (s && inet_pton(AF_INET, s, &a->sin_addr) != 1)
			errno = EINVAL, die("address");
		return sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (s && inet_pton(AF_INET6, s, &a->sin6_addr) != 1)
			errno = EINVAL, die("address");
		return sizeof(*a);
	}
}

static uint64_t fnv1a(const unsigned char *p, size_t len, uint64_t h)
{
	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static void *serve_one(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint64_t len, be;
	static __thread char buf[65536];

	if (hostile) {
		unsigned char head[4], answer[64], prop[1024];
		unsigned int plen;

		/* The whole proposal (its header says how long), empty or not. */
		if (recv(fd, head, 4, MSG_PEEK | MSG_WAITALL) == 4 &&
		    !memcmp(head, smcr_eyecatcher, 4)) {
			if (read_all(fd, prop, 8))
				goto out;
			plen = prop[5] << 8 | prop[6];
			if (plen < 8 || plen > sizeof(prop) || read_all(fd, prop + 8, plen - 8))
				goto out;
			if (!strcmp(hostile, "slowdecline"))
				usleep(1500000);
			if (write_all(fd, answer, hostile_answer(answer)))
				goto out;
		}
	}
	if (read_all(fd, &be, sizeof(be)))
		goto out;
	len = be64toh(be);
	while (len) {
		size_t chunk = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t n = recv(fd, buf, chunk, 0);

		if (n < 0 && errno == EINTR)
			continue;
		/* The client sees the failure; why it failed is told here. */
		if (n <= 0) {
			fprintf(stderr, "smc_echo: server: recv: %s (%llu bytes left to echo)\n",
				n ? strerror(errno) : "end of stream", (unsigned long long)len);
			goto out;
		}
		if (write_all(fd, buf, n)) {
			fprintf(stderr, "smc_echo: server: send: %s (%llu bytes left to echo)\n",
				strerror(errno), (unsigned long long)len);
			goto out;
		}
		len -= n;
	}
out:
	close(fd);
	return NULL;
}

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done_count;

static void *serve_and_count(void *arg)
{
	serve_one(arg);
	pthread_mutex_lock(&done_lock);
	done_count++;
	pthread_cond_signal(&done_cond);
	pthread_mutex_unlock(&done_lock);
	return NULL;
}

static int server(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(&ss, addr_str);
	pthread_attr_t attr;
	pthread_t th;
	int one = 1, fd, i;

	fd = socket(fam->domain, SOCK_STREAM, fam->protocol);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		die("SO_REUSEADDR");
	if (bind(fd, (struct sockaddr *)&ss, sl))
		die("bind");
	if (limit_hs && setsockopt(fd, SOL_SMC, SMC_LIMIT_HS, &one, sizeof(one)))
		die("SMC_LIMIT_HS");
	if (listen(fd, backlog >= 0 ? backlog : conns > 128 ? conns : 128))
		die("listen");
	printf("listening\n");
	fflush(stdout);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < conns; i++) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			die("accept");
		if (pthread_create(&th, &attr, serve_and_count, (void *)(intptr_t)c))
			die("pthread_create");
	}
	pthread_mutex_lock(&done_lock);
	while (done_count < conns)
		pthread_cond_wait(&done_cond, &done_lock);
	pthread_mutex_unlock(&done_lock);
	close(fd);
	return 0;
}

static int expect_socket_error(int type, int protocol, int want)
{
	int fd = socket(AF_SMC, type, protocol);

	if (fd >= 0) {
		fprintf(stderr, "socket(AF_SMC, %d, %d) succeeded\n", type, protocol);
		close(fd);
		return 1;
	}
	if (errno != want) {
		fprintf(stderr, "socket(AF_SMC, %d, %d): %s, expected %s\n",
			type, protocol, strerror(errno), strerror(want));
		return 1;
	}
	return 0;
}

/* SMC_LIMIT_HS (SOL_SMC) is set and read back; unknown SOL_SMC options fail. */
static int limit_hs_option(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC), on = 1, v = 0;
	socklen_t l = sizeof(v);
	int bad = 0;

	if (fd < 0)
		return 1;
	if (getsockopt(fd, SOL_SMC, SMC_LIMIT_HS, &v, &l) || v != 0)
		bad = 1;
	if (setsockopt(fd, SOL_SMC, SMC_LIMIT_HS, &on, sizeof(on)) ||
	    getsockopt(fd, SOL_SMC, SMC_LIMIT_HS, &v, &l) || v != 1)
		bad = 1;
	if (setsockopt(fd, SOL_SMC, 99, &on, sizeof(on)) == 0 || errno != ENOPROTOOPT)
		bad = 1;
	if (bad)
		fprintf(stderr, "SMC_LIMIT_HS: unexpected behaviour\n");
	close(fd);
	return bad;
}

static int probe(void)
{
	return expect_socket_error(SOCK_DGRAM, 0, ESOCKTNOSUPPORT) |
	       expect_socket_error(SOCK_SEQPACKET, 0, ESOCKTNOSUPPORT) |
	       expect_socket_error(SOCK_STREAM, 2, EPROTONOSUPPORT) |
	       limit_hs_option();
}

static int hold(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(&ss, NULL);
	char c;
	int fd;

	fd = socket(fam->domain, SOCK_STREAM, fam->protocol);
	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 1))
		die("bind/listen");
	printf("holding\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	close(fd);
	return 0;
}

static int churn_failed, churn_connected;

static void *churn_client(void *arg)
{
	struct sockaddr_storage *ss = arg;
	socklen_t sl = fam->addr_family == AF_INET ? sizeof(struct sockaddr_in) :
						      sizeof(struct sockaddr_in6);
	int fd = socket(fam->domain, SOCK_STREAM, fam->protocol);
	char c = 'c';

	if (fd < 0)
		return NULL;
	if (connect(fd, (struct sockaddr *)ss, sl)) {
		__atomic_fetch_add(&churn_failed, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&churn_connected, 1, __ATOMIC_RELAXED);
		if (send(fd, &c, 1, MSG_NOSIGNAL) == 1)
			recv(fd, &c, 1, 0);
	}
	close(fd);
	return NULL;
}

static int churn(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(&ss, fam->addr_family == AF_INET6 ? "::1" : "127.0.0.1");
	pthread_t *th = calloc(conns, sizeof(*th));
	int one = 1, fd, i;

	fd = socket(fam->domain, SOCK_STREAM, fam->protocol);
	if (fd < 0 || !th)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, conns))
		die("bind/listen");
	alarm(30);
	for (i = 0; i < conns; i++)
		if (pthread_create(&th[i], NULL, churn_client, &ss))
			die("pthread_create");
	for (i = 0; i < 2000 && __atomic_load_n(&churn_connected, __ATOMIC_RELAXED) < conns / 2; i++)
		usleep(1000);
	close(fd);
	for (i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	printf("churn: %d clients ended after the listener closed (%d connects failed)\n",
	       conns, churn_failed);
	return 0;
}

struct client_result {
	uint64_t sum;
	int ok;
	/* The longest time nothing moved in an echo (a failover's pause). */
	long pause_ms;
};

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int connect_once(void);

static int connect_retry(void)
{
	int fd;

	if (connect_max)
		while (sem_wait(&connect_sem) && errno == EINTR)
			;
	fd = connect_once();
	if (connect_max)
		sem_post(&connect_sem);
	return fd;
}

static int connect_once(void)
{
	struct sockaddr_storage ss;
	socklen_t sl = make_addr(&ss, addr_str);
	time_t end = time(NULL) + wait_secs;

	for (;;) {
		int fd = socket(fam->domain, SOCK_STREAM, fam->protocol);

		if (fd < 0)
			die("socket");
		if (nonblocking_connect) {
			/* connect(O_NONBLOCK), wait for POLLOUT, read SO_ERROR. */
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			int err = 0;
			socklen_t el = sizeof(err);

			fcntl(fd, F_SETFL, O_NONBLOCK);
			if (connect(fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS)
				err = errno;
			else if (poll(&p, 1, wait_secs * 1000) != 1)
				err = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
				err = errno;
			fcntl(fd, F_SETFL, 0);
			if (!err)
				return fd;
			errno = err;
		} else if (!connect(fd, (struct sockaddr *)&ss, sl)) {
			return fd;
		}
		if ((errno != ECONNREFUSED && errno != EHOSTUNREACH &&
		     errno != ENETUNREACH && errno != ETIMEDOUT) || time(NULL) > end)
			die("connect");
		close(fd);
		usleep(200 * 1000);
	}
}

static void *client_once(void *arg);

/*
 * -S USEC: SIGALRM every USEC microseconds, without SA_RESTART, while the
 * clients exchange data (connects are shielded): every wait in a send or
 * receive may end in EINTR, and no byte may be lost or doubled by it.
 */
static int signal_usec;

static void on_alarm(int sig)
{
	(void)sig;
}

static void alarm_mask(int how)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(how, &s, NULL);
}

static void start_alarms(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_interval = { .tv_usec = signal_usec },
		.it_value = { .tv_usec = signal_usec },
	};

	/* The main thread only waits: the signals go to the clients. */
	alarm_mask(SIG_BLOCK);
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		die("SIGALRM timer");
}

/* One client thread: `rounds` connections one after the other. */
static void *client_one(void *arg)
{
	struct client_result *res = arg;
	uint64_t sum = 0;
	int r;

	for (r = 0; r < rounds; r++) {
		client_once(res);
		if (!res->ok)
			return NULL;
		sum ^= res->sum;
	}
	res->sum = sum;
	return NULL;
}

/*
 * Sends size bytes of out and reads their echo into in (got counts what
 * came back). Sending never blocks while echo waits to be read: the
 * server blocks writing the echo once our receive buffer is full, and
 * stops reading then, so a client blocked in send would wait for ever
 * (with SMC-R's 64 KiB buffers as soon as the echo lags by a few of
 * them). Fails when nothing moves for a minute. The longest time
 * nothing moved goes into *pause_ms when it is longer.
 */
static int echo_exchange(int fd, const unsigned char *out, unsigned char *in, size_t *got,
			 long *pause_ms)
{
	size_t off = 0;
	long last = now_ms();

	while (off < size || *got < size) {
		struct pollfd p = { .fd = fd, .events = POLLIN | (off < size ? POLLOUT : 0) };
		size_t sent_before = off, got_before = *got;
		ssize_t n;
		int r = poll(&p, 1, 60000);

		if (r < 0 && errno == EINTR)
			continue;
		if (r != 1) {
			fprintf(stderr, "smc_echo: no progress for 60 s (%zu sent, %zu echoed of %llu)\n",
				off, *got, (unsigned long long)size);
			return -1;
		}
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			n = recv(fd, in + *got, size - *got, MSG_DONTWAIT);
			if (n == 0 && *got < size) {
				fprintf(stderr, "smc_echo: the echo ended early (%zu sent, %zu echoed of %llu)\n",
					off, *got, (unsigned long long)size);
				return -1;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				fprintf(stderr, "smc_echo: recv: %s (%zu sent, %zu echoed of %llu)\n",
					strerror(errno), off, *got, (unsigned long long)size);
				return -1;
			}
			if (n > 0)
				*got += n;
		}
		if (off < size && (p.revents & POLLOUT)) {
			size_t chunk = size - off < 65536 ? size - off : 65536;

			n = send(fd, out + off, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR) {
				fprintf(stderr, "smc_echo: send: %s (%zu sent, %zu echoed of %llu)\n",
					strerror(errno), off, *got, (unsigned long long)size);
				return -1;
			}
			if (n > 0)
				off += n;
		}
		if (off != sent_before || *got != got_before) {
			long t = now_ms();

			if (t - last > *pause_ms)
				*pause_ms = t - last;
			last = t;
		}
	}
	return 0;
}

/* Where the echo first differs from what was sent, and 16 bytes of each
 * from there: a CLC message in the stream shows as its eyecatcher
 * (e2 d4 c3 d9). */
static void report_difference(const unsigned char *in, const unsigned char *out)
{
	size_t at = 0, i;

	while (at < size && in[at] == out[at])
		at++;
	fprintf(stderr, "smc_echo: echoed data differs from byte %zu of %llu:", at,
		(unsigned long long)size);
	for (i = at; i < at + 16 && i < size; i++)
		fprintf(stderr, " %02x", in[i]);
	fprintf(stderr, " (sent:");
	for (i = at; i < at + 16 && i < size; i++)
		fprintf(stderr, " %02x", out[i]);
	fprintf(stderr, ")\n");
	if (at + 16 <= size) {
		/* Bytes from elsewhere in the stream (stale or repeated) or
		 * none of ours, and how long the wrong stretch is. */
		const unsigned char *from = memmem(out, size, in + at, 16);
		size_t end = at;

		while (end < size && memcmp(in + end, out + end, end + 64 <= size ? 64 : size - end))
			end += 64;
		if (from)
			fprintf(stderr, "smc_echo: those bytes were sent at byte %zu (%+lld)",
				(size_t)(from - out), (long long)(from - out) - (long long)at);
		else
			fprintf(stderr, "smc_echo: those bytes were never sent");
		fprintf(stderr, "; the echo matches again from about byte %zu\n", end);
	}
}

static void *client_once(void *arg)
{
	struct client_result *res = arg;
	unsigned char *out = malloc(size), *in = malloc(size);
	uint64_t be = htobe64(size);
	size_t off = 0, got = 0;
	int fd = -1;

	res->ok = 0;
	if (!out || !in)
		goto out;
	if (signal_usec)
		alarm_mask(SIG_BLOCK);
	while (off < size) {
		ssize_t n = getrandom(out + off, size - off, 0);

		if (n <= 0)
			goto out;
		off += n;
	}
	fd = connect_retry();
	if (signal_usec)
		alarm_mask(SIG_UNBLOCK);
	if (go_file) {
		printf("connected\n");
		fflush(stdout);
		while (access(go_file, F_OK))
			usleep(100 * 1000);
	}
	if (opening) {
		int r = client_opening(fd);

		if (r < 0)
			goto out;
		if (r > 0) {
			res->ok = 1;
			goto out;
		}
	}
	if (write_all(fd, &be, sizeof(be))) {
		fprintf(stderr, "smc_echo: sending the length: %s\n", strerror(errno));
		goto out;
	}
	if (echo_exchange(fd, out, in, &got, &res->pause_ms))
		goto out;
	if (memcmp(in, out, size)) {
		report_difference(in, out);
		goto out;
	}
	res->sum = fnv1a(out, size, 0xcbf29ce484222325ULL);
	res->ok = 1;
out:
	if (fd >= 0)
		close(fd);
	free(out);
	free(in);
	return NULL;
}

static int client(void)
{
	struct client_result *res = calloc(conns, sizeof(*res));
	pthread_t *th = calloc(conns, sizeof(*th));
	uint64_t sum = 0;
	long pause_ms = 0;
	int i, failed = 0;

	if (signal_usec)
		start_alarms();
	for (i = 0; i < conns; i++)
		if (pthread_create(&th[i], NULL, client_one, &res[i]))
			die("pthread_create");
	for (i = 0; i < conns; i++) {
		pthread_join(th[i], NULL);
		if (!res[i].ok)
			failed++;
		sum ^= res[i].sum;
		if (res[i].pause_ms > pause_ms)
			pause_ms = res[i].pause_ms;
	}
	printf("%s: %d connection(s) x %llu bytes echoed, %d failed, fnv1a %016llx, longest pause %ld ms\n",
	       fam->name, conns * rounds, (unsigned long long)size, failed * rounds,
	       (unsigned long long)sum, pause_ms);
	if (opening && !strcmp(opening, "fuzz")) {
		/* Most fuzzed proposals are malformed: some must be declined. */
		printf("fuzz: %d of %d openings declined in CLC\n", fuzz_declined, conns * rounds);
		if (!fuzz_declined)
			failed = 1;
	}
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *famname = "smc";
	int opt;

	if (argc < 2) {
		fprintf(stderr, "usage: smc_echo server|client|hold|probe [options]\n");
		return 2;
	}
	if (!strcmp(argv[1], "probe"))
		return probe();
	optind = 2;
	while ((opt = getopt(argc, argv, "f:a:b:p:s:n:w:x:X:r:NB:LS:W:P:")) != -1) {
		switch (opt) {
		case 'f': famname = optarg; break;
		case 'a': case 'b': addr_str = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'n': conns = atoi(optarg); break;
		case 'w': wait_secs = atoi(optarg); break;
		case 'x': hostile = optarg; break;
		case 'X': opening = optarg; break;
		case 'B': backlog = atoi(optarg); break;
		case 'L': limit_hs = 1; break;
		case 'r': rounds = atoi(optarg); break;
		case 'N': nonblocking_connect = 1; break;
		case 'S': signal_usec = atoi(optarg); break;
		case 'W': go_file = optarg; break;
		case 'P': connect_max = atoi(optarg); break;
		default: return 2;
		}
	}
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(families[i].name, famname))
			fam = &families[i];
	if (!fam || !port || conns < 1) {
		fprintf(stderr, "smc_echo: bad family, port or connection count\n");
		return 2;
	}
	if (connect_max < 0 || (connect_max && sem_init(&connect_sem, 0, connect_max))) {
		fprintf(stderr, "smc_echo: bad -P\n");
		return 2;
	}
	if (!strcmp(argv[1], "server"))
		return server();
	if (!strcmp(argv[1], "hold"))
		return hold();
	if (!strcmp(argv[1], "churn"))
		return churn();
	if (!strcmp(argv[1], "client") && addr_str)
		return client();
	fprintf(stderr, "smc_echo: need server, or client with -a\n");
	return 2;
}
