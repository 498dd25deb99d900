// SPDX-License-Identifier: MIT
/*
 * prom_util.c - see prom_util.h.
 */
#define _GNU_SOURCE
#include "prom_util.h"
#include "cli_run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int prom_start_exporter_argv(struct prom_child *c, char *const args[])
{
	const char *bin = cli_bin();
	char buf[4096];
	size_t n = 0, nargs = 0;
	uint64_t end;
	int p[2];

	c->pid = 0;
	c->errfd = -1;
	c->port = 0;
	while (args[nargs])
		nargs++;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		c->pid = 0;
		return -e;
	}
	if (c->pid == 0) {
		char **argv = calloc(nargs + 3, sizeof(*argv));

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 2);
		cli_child_env();
		if (!argv)
			_exit(127);
		argv[0] = (char *)bin;
		argv[1] = "export";
		memcpy(argv + 2, args, nargs * sizeof(*argv));
		execv(bin, argv);
		_exit(127);
	}
	close(p[1]);
	c->errfd = p[0];
	end = mono_ms() + 10000;
	while (n < sizeof(buf) - 1) {
		struct pollfd pfd = { .fd = c->errfd, .events = POLLIN };
		uint64_t now = mono_ms();
		const char *at, *nl, *colon;
		ssize_t r;

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			return -ETIMEDOUT;
		r = read(c->errfd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			return -EPIPE;	/* it exited */
		n += (size_t)r;
		buf[n] = 0;
		/* "listening on http[s]://ADDR:PORT/metrics" */
		at = strstr(buf, "listening on ");
		if (at && (nl = strchr(at, '\n'))) {
			const char *m = strstr(at, "/metrics");

			if (!m || m > nl)
				return -EINVAL;
			for (colon = m; colon > at && *colon != ':'; colon--)
				;
			c->port = atoi(colon + 1);
			return c->port > 0 ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

int prom_start_exporter(struct prom_child *c, const char *proc_root)
{
	return prom_start_exporter_argv(c, (char *const[]){ "--listen", "127.0.0.1:0",
							   "--proc-root", (char *)proc_root, NULL });
}

int prom_spawn(struct prom_child *c, char *const argv[], const char *log)
{
	c->pid = 0;
	c->errfd = -1;
	c->port = 0;
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		return -errno;
	}
	if (c->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return 0;
}

int prom_stop(struct prom_child *c)
{
	int status = -1;
	uint64_t end;

	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		end = mono_ms() + 10000;
		for (;;) {
			pid_t w = waitpid(c->pid, &status, WNOHANG);

			if (w == c->pid || (w < 0 && errno != EINTR))
				break;
			if (mono_ms() >= end) {
				kill(c->pid, SIGKILL);
				waitpid(c->pid, &status, 0);
				break;
			}
			usleep(20000);
		}
		c->pid = 0;
	}
	if (c->errfd >= 0) {
		close(c->errfd);
		c->errfd = -1;
	}
	return status;
}

int prom_connect(int port, int secs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = secs };
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int prom_read_status(int fd)
{
	char buf[4096];
	size_t n = 0;
	int status = 0;

	for (;;) {
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECONNRESET && n)
			break;
		if (r < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (!r)
			break;
		n += (size_t)r;
		if (n == sizeof(buf) - 1)
			n = 64;	/* keep the status line, drop the rest */
	}
	buf[n] = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		status = 0;
	return status;
}

int prom_raw(int port, const void *req, size_t len, int *status)
{
	int fd = prom_connect(port, 20), ret;

	*status = 0;
	if (fd < 0)
		return fd;
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	ret = prom_read_status(fd);
	close(fd);
	if (ret < 0)
		return ret;
	*status = ret;
	return 0;
}

int prom_http(int port, const char *method, const char *path, int *status, char **body)
{
	char *buf = NULL, req[1024];
	size_t n = 0, cap = 0;
	const char *b;
	int fd, len, ret = 0;

	*status = 0;
	if (body)
		*body = NULL;
	fd = prom_connect(port, 10);
	if (fd < 0)
		return fd;
	len = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", method,
		       path);
	if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
		ret = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap += 65536;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (!buf || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
		ret = -EPROTO;
		goto out;
	}
	buf[n] = 0;
	b = strstr(buf, "\r\n\r\n");
	if (body && b)
		*body = strdup(b + 4);
out:
	free(buf);
	close(fd);
	return ret;
}

int prom_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!bind(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    !getsockname(fd, (struct sockaddr *)&sa, &len))
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}
