// SPDX-License-Identifier: GPL-2.0
/*
 * Live kernel text patching while every CPU runs the patched code: the
 * sched_switch tracepoint's jump label sits inside __schedule(), so
 * toggling the event rewrites code that both CPUs execute at every context
 * switch, which two pipe ping-pong pairs keep happening. This is what
 * enabling any trace event or attaching a BPF program does.
 *
 * Multi-threaded TCG in QEMU 7.2 can keep a stale translation of the
 * temporary int3 that text_poke_bp() writes: the vCPU then traps on it for
 * ever with the runqueue lock held (kprobes sees the original byte back and
 * retries), and the whole guest freezes within seconds. The runner uses
 * single-threaded TCG for that reason; this program is its regression test
 * (run by test_runner.sh, not by make vm-test).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"

#define EVENT "/sys/kernel/tracing/events/sched/sched_switch/enable"
#define SECONDS 30

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A child that bounces one byte with its own child through two pipes. */
static pid_t ping_pong(void)
{
	pid_t pid = fork();
	int a[2], b[2];
	char c = 0;

	if (pid)
		return pid;
	if (pipe(a) || pipe(b))
		_exit(1);
	if (fork() == 0) {
		while (read(a[0], &c, 1) == 1 && write(b[1], &c, 1) == 1)
			;
		_exit(0);
	}
	while (write(a[1], &c, 1) == 1 && read(b[0], &c, 1) == 1)
		;
	_exit(0);
}

DT_TEST_TIMEOUT(toggle_sched_switch_under_load, 60)
{
	pid_t load[2];
	unsigned long toggles = 0;
	double end;
	int fd;

	fd = open(EVENT, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		DT_SKIP("no %s: %s", EVENT, strerror(errno));
	for (int i = 0; i < 2; i++) {
		load[i] = ping_pong();
		DT_ASSERT_GT(load[i], 0);
	}
	end = now() + SECONDS;
	while (now() < end) {
		DT_ASSERT_EQ(pwrite(fd, "1", 1, 0), 1);
		DT_ASSERT_EQ(pwrite(fd, "0", 1, 0), 1);
		if (++toggles % 10 == 0) {
			printf("# %lu pairs\n", toggles);
			fflush(stdout);
		}
	}
	close(fd);
	for (int i = 0; i < 2; i++) {
		kill(-load[i], SIGKILL);
		kill(load[i], SIGKILL);
		waitpid(load[i], NULL, 0);
	}
	printf("# %lu enable/disable pairs in %d s\n", toggles, SECONDS);
	/*
	 * A guest that froze never gets here. Multi-threaded TCG froze within
	 * 50 pairs in each of 4 tries; single-threaded TCG manages about 1.5
	 * pairs per second under this load. Fewer than 20 is no real test.
	 */
	DT_EXPECT_GE(toggles, 20ul);
}

DT_MAIN
