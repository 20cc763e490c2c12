// SPDX-License-Identifier: GPL-2.0
/*
 * What smc_run promises an unmodified program, checked from inside one.
 *
 *   smc_run smc_preload_check [-e smc|tcp]
 *
 * Under smc_run (libsmc-preload.so preloaded), socket(AF_INET/AF_INET6,
 * SOCK_STREAM, 0|IPPROTO_TCP) must give a socket of family EXPECTED
 * (getsockopt SO_DOMAIN: AF_SMC (43) by default; -e tcp: the original
 * family, when the kernel has no AF_SMC), with the caller's SOCK_NONBLOCK
 * and SOCK_CLOEXEC honoured; UDP, UNIX and raw-protocol calls stay as they
 * are; a forked child, an exec'd program (LD_PRELOAD inherited) and
 * threads creating sockets at once get the same. One "ok"/"not ok" line
 * per check; exit status 0 when all pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_SMC
#define AF_SMC 43
#endif

#define THREADS 8
#define PER_THREAD 64

static int expect_smc = 1;
static int failures;

static void report(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (!ok)
		failures++;
}

static int sockopt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0)
		return -errno;
	return v;
}

/* The family a TCP call must produce for ORIG (AF_INET or AF_INET6). */
static int wanted(int orig)
{
	return expect_smc ? AF_SMC : orig;
}

/* A TCP socket of DOMAIN/TYPE/PROTO has the expected family; closes it. */
static int tcp_mapped(int domain, int type, int proto)
{
	int fd = socket(domain, type, proto);
	int ok;

	if (fd < 0)
		return 0;
	ok = sockopt(fd, SO_DOMAIN) == wanted(domain) && sockopt(fd, SO_TYPE) == SOCK_STREAM;
	close(fd);
	return ok;
}

static void check_flags(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int dom = fd < 0 ? -errno : sockopt(fd, SO_DOMAIN);

	printf("# AF_INET|NONBLOCK|CLOEXEC: fd %d domain %d protocol %d\n", fd, dom,
	       fd < 0 ? -1 : sockopt(fd, SO_PROTOCOL));
	report(fd >= 0 && dom == wanted(AF_INET),
	       "socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, 0) has the SMC family");
	report(fd >= 0 && (fcntl(fd, F_GETFL) & O_NONBLOCK), "... and O_NONBLOCK");
	report(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "... and FD_CLOEXEC");
	if (fd >= 0)
		close(fd);

	fd = socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	report(fd >= 0 && sockopt(fd, SO_DOMAIN) == wanted(AF_INET6) &&
		       !(fcntl(fd, F_GETFL) & O_NONBLOCK) && !(fcntl(fd, F_GETFD) & FD_CLOEXEC),
	       "socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP): SMC family, blocking, no FD_CLOEXEC");
	if (fd >= 0)
		close(fd);
	report(tcp_mapped(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0),
	       "socket(AF_INET6, SOCK_STREAM|SOCK_NONBLOCK, 0) has the SMC family");
}

static void check_untouched(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	report(fd >= 0 && sockopt(fd, SO_DOMAIN) == AF_INET && sockopt(fd, SO_TYPE) == SOCK_DGRAM &&
		       sockopt(fd, SO_PROTOCOL) == IPPROTO_UDP,
	       "socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC, 0) stays UDP");
	if (fd >= 0)
		close(fd);
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	report(fd >= 0 && sockopt(fd, SO_DOMAIN) == AF_INET6, "socket(AF_INET6, SOCK_DGRAM, 0) stays UDP");
	if (fd >= 0)
		close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	report(fd >= 0 && sockopt(fd, SO_DOMAIN) == AF_UNIX, "socket(AF_UNIX, SOCK_STREAM, 0) stays AF_UNIX");
	if (fd >= 0)
		close(fd);
	/* An explicit protocol other than TCP is not rewritten. */
	fd = socket(AF_INET, SOCK_STREAM, 256);
	report(fd < 0 || sockopt(fd, SO_DOMAIN) == AF_INET,
	       "socket(AF_INET, SOCK_STREAM, IPPROTO_SMC) is not rewritten");
	if (fd >= 0)
		close(fd);
}

static int child_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_fork_exec(const char *self)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(tcp_mapped(AF_INET, SOCK_STREAM, 0) ? 0 : 1);
	report(child_status(pid) == 0, "a forked child's TCP socket has the SMC family");

	pid = fork();
	if (pid == 0) {
		char *argv[] = { "smc_preload_check", "--exec-child", expect_smc ? "smc" : "tcp", NULL };

		execv(self, argv);
		_exit(127);
	}
	report(child_status(pid) == 0, "an exec'd program's TCP socket has the SMC family");
}

static void *thread_body(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		int domain = i & 1 ? AF_INET6 : AF_INET;
		int type = SOCK_STREAM | (i & 2 ? SOCK_NONBLOCK : 0) | (i & 4 ? SOCK_CLOEXEC : 0);

		if (!tcp_mapped(domain, type, 0))
			bad++;
	}
	return (void *)bad;
}

static void check_threads(void)
{
	pthread_t t[THREADS];
	long bad = 0;
	int started = 0;

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_body, NULL) == 0)
			started++;
		else
			break;
	for (int i = 0; i < started; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("# threads: %d started, %ld sockets of the wrong family\n", started, bad);
	report(started == THREADS && bad == 0,
	       "8 threads x 64 concurrent socket() calls all have the SMC family");
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;
	int opt;

	if (argc == 3 && !strcmp(argv[1], "--exec-child")) {
		expect_smc = !strcmp(argv[2], "smc");
		return tcp_mapped(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0) ? 0 : 1;
	}
	while ((opt = getopt(argc, argv, "e:")) != -1) {
		if (opt == 'e' && (!strcmp(optarg, "smc") || !strcmp(optarg, "tcp"))) {
			expect_smc = !strcmp(optarg, "smc");
			continue;
		}
		fprintf(stderr, "usage: smc_run %s [-e smc|tcp]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		perror("readlink /proc/self/exe");
		return 2;
	}
	self[n] = 0;
	printf("# LD_PRELOAD=%s, expecting %s\n", getenv("LD_PRELOAD") ?: "(unset)",
	       expect_smc ? "AF_SMC" : "the original family (no AF_SMC here)");
	report(getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "smc"),
	       "runs with the SMC preload library (LD_PRELOAD)");
	check_flags();
	check_untouched();
	check_fork_exec(self);
	check_threads();
	printf("# %d failed\n", failures);
	return failures ? 1 : 0;
}
