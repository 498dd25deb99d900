// SPDX-License-Identifier: MIT
/*
 * export.c - `drmacct export`: Prometheus text exposition, printed once
 * (--prometheus) or served over HTTP on a loopback address (--listen).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "prom.h"

static const char *const CMD = "export";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct export --prometheus [OPTIONS]\n"
		"       drmacct export --listen ADDR:PORT [OPTIONS]\n\n"
		"Per-client GPU usage in the Prometheus text format (Documentation/exporter.rst):\n"
		"busy seconds, cycles and jobs per engine as counters, memory bytes by region\n"
		"and kind as gauges, labelled with driver, device, client id, pid and comm.\n\n"
		"Options:\n"
		"      --prometheus       print the exposition once to stdout\n"
		"  -l, --listen=ADDR:PORT serve it at http://ADDR:PORT/metrics until SIGINT or\n"
		"                         SIGTERM; ADDR must be a loopback address (127.x.x.x\n"
		"                         or [::1]); PORT 0 picks a free port. The address\n"
		"                         is printed on stderr.\n"
		"      --pid=PID          only this process\n"
		"      --spec=PROFILE     parse fdinfo as 'current' (default) or '2022'\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 success (--listen: after SIGINT/SIGTERM), 1 /proc, the\n"
		"--pid process or the port cannot be used, or the output failed, 2 usage\n"
		"error (also a non-loopback ADDR), 141 the reader of the output went away.\n");
}

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

/* "127.0.0.1:9400" or "[::1]:9400" -> a loopback socket address. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (!end || end[1] != ':' || (size_t)(end - arg - 1) >= sizeof(host))
			return -EINVAL;
		memcpy(host, arg + 1, (size_t)(end - arg - 1));
		host[end - arg - 1] = 0;
		if (cli_parse_u64(end + 2, &port) || port > 65535)
			return -EINVAL;
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		if (!IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return -EPERM;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		return 0;
	}
	colon = strrchr(arg, ':');
	if (!colon || (size_t)(colon - arg) >= sizeof(host))
		return -EINVAL;
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = 0;
	if (cli_parse_u64(colon + 1, &port) || port > 65535)
		return -EINVAL;
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		if ((ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			return -EPERM;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
	}
	return 0;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* the scraper went away: nothing to do */
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, int code, const char *reason, const char *type, const char *body,
		    size_t len, bool head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", code, reason, type, len);

	send_all(fd, hdr, (size_t)n);
	if (!head)
		send_all(fd, body, len);
}

/* One request on @fd: read the request head, answer, done. */
static void serve_one(int fd, struct dac_prom *p)
{
	char req[8192], method[16], path[1024];
	size_t n = 0;
	bool head;
	struct timeval tv = { .tv_sec = 5 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (n < sizeof(req) - 1) {
		ssize_t r = recv(fd, req + n, sizeof(req) - 1 - n, 0);

		if (r < 0 && errno == EINTR && !stop_sig)
			continue;
		if (r <= 0)
			return;
		n += (size_t)r;
		req[n] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n] = 0;
	if (sscanf(req, "%15s %1023s", method, path) != 2) {
		respond(fd, 400, "Bad Request", "text/plain", "bad request\n", 12, false);
		return;
	}
	head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head) {
		respond(fd, 405, "Method Not Allowed", "text/plain", "GET only\n", 9, false);
		return;
	}
	if (!strcmp(path, "/")) {
		static const char idx[] = "drmacct exporter: see /metrics\n";

		respond(fd, 200, "OK", "text/plain; charset=utf-8", idx, sizeof(idx) - 1, head);
		return;
	}
	if (strcmp(path, "/metrics") && strncmp(path, "/metrics?", 9)) {
		respond(fd, 404, "Not Found", "text/plain", "not found\n", 10, false);
		return;
	}
	{
		char *body = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&body, &len);
		int ret = m ? dac_prom_scrape(p, m) : -ENOMEM;

		if (m)
			fclose(m);
		if (ret) {
			char msg[128];
			int l = snprintf(msg, sizeof(msg), "scrape failed: %s\n", strerror(-ret));

			respond(fd, 500, "Internal Server Error", "text/plain", msg, (size_t)l,
				head);
			fprintf(stderr, "drmacct export: %s", msg);
		} else {
			respond(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body,
				len, head);
		}
		free(body);
	}
}

static int serve(const char *arg, struct dac_prom *p)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;
	struct sigaction sa;
	int lfd, one = 1, ret;
	char shown[80];

	ret = parse_listen(arg, &ss, &len);
	if (ret == -EPERM)
		return cli_usage_error(CMD, "'%s' is not a loopback address (use 127.0.0.1:PORT "
				       "or [::1]:PORT)", arg);
	if (ret)
		return cli_usage_error(CMD, "bad --listen '%s' (ADDR:PORT)", arg);
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		cli_error(CMD, "socket: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 16)) {
		cli_error(CMD, "cannot listen on %s: %s", arg, strerror(errno));
		close(lfd);
		return CLI_EXIT_FAIL;
	}
	len = sizeof(ss);
	getsockname(lfd, (struct sockaddr *)&ss, &len);
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(shown, sizeof(shown), "%s:%u", a, ntohs(s4->sin_port));
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(shown, sizeof(shown), "[%s]:%u", a, ntohs(s6->sin6_port));
	}
	fprintf(stderr, "drmacct export: listening on http://%s/metrics\n", shown);
	fflush(stderr);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!stop_sig) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int cfd;

		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		serve_one(cfd, p);
		close(cfd);
	}
	close(lfd);
	return CLI_EXIT_OK;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prometheus", no_argument, NULL, 'M' },
		{ "listen", required_argument, NULL, 'l' },
		{ "pid", required_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_discover_opts dopts = { .proc_root = NULL, .pid = 0, .fd = -1 };
	enum dac_profile profile = DAC_PROFILE_CURRENT;
	const char *listen_at = NULL;
	bool once = false;
	struct dac_prom *p;
	const struct cli_common_opts co = {
		.pid = &dopts.pid, .profile = &profile, .proc_root = &dopts.proc_root,
		.usage = usage,
	};
	int c, opt, ret, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
			once = true;
			break;
		case 'l':
			listen_at = optarg;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, c);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (once == !!listen_at)
		return cli_usage_error(CMD, "give exactly one of --prometheus and --listen");
	if (dopts.pid) {
		/* As list and top: a --pid that does not exist at the start fails. */
		char path[PATH_MAX];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%d", dopts.proc_root ? dopts.proc_root : "/proc",
			 (int)dopts.pid);
		if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
			cli_error(CMD, "no process %d", (int)dopts.pid);
			return CLI_EXIT_FAIL;
		}
	}
	p = dac_prom_new(&dopts, profile);
	if (!p) {
		cli_error(CMD, "cannot open %s: %s", dopts.proc_root ? dopts.proc_root : "/proc",
			  strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (listen_at) {
		rc = serve(listen_at, p);
	} else {
		ret = dac_prom_scrape(p, stdout);
		rc = ret ? CLI_EXIT_FAIL : CLI_EXIT_OK;
		if (ret == -ESRCH)
			cli_error(CMD, "no process %d", (int)dopts.pid);
		else if (ret == -EIO || ret == -EPIPE)
			cli_output_done(CMD, ret);
		else if (ret)
			cli_error(CMD, "%s", strerror(-ret));
	}
	dac_prom_free(p);
	return rc;
}

DRMACCT_COMMAND(export, cmd_export, "Prometheus metrics, once or served on a loopback port");
