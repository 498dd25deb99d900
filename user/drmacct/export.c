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
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "prom.h"
#include "tracker.h"

static const char *const CMD = "export";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct export --prometheus [OPTIONS]\n"
		"       drmacct export --listen ADDR:PORT [OPTIONS]\n\n"
		"Per-client GPU usage in the Prometheus text format (Documentation/exporter.rst):\n"
		"busy seconds, cycles and jobs per engine as counters, memory bytes by region\n"
		"and kind as gauges, keyed by driver, device and client id; pid, comm and\n"
		"every holder in drmacct_client_info.\n\n"
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

/*
 * The server: one poll() loop, every socket non-blocking, so an idle or slow
 * client never holds up another. Each connection carries one request:
 * its head must arrive within CONN_TIMEOUT_MS of the accept and the answer
 * must be taken within CONN_TIMEOUT_MS of being ready, else the connection
 * is closed (408 when the head was late). At most MAX_CONNS are open; one
 * more evicts the one open longest.
 */
#define MAX_CONNS	64
#define REQ_MAX		8192
#define CONN_TIMEOUT_MS	10000

struct conn {
	int fd;			/* -1: slot free */
	size_t n;		/* bytes of the request head so far */
	char req[REQ_MAX + 1];	/* NUL-terminated */
	char *out;		/* the whole answer once decided, NULL while reading */
	size_t outlen, outoff;
	uint64_t opened_ms, deadline_ms;
};

static uint64_t now_ms(void)
{
	return dac_now_ns() / 1000000;
}

/* Queue the answer on @c; the loop sends it and closes. */
static void respond(struct conn *c, int code, const char *reason, const char *type,
		    const char *extra, const char *body, size_t len, bool head)
{
	char hdr[320];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "%sConnection: close\r\n\r\n", code, reason, type, len, extra);
	size_t blen = head ? 0 : len;

	c->out = malloc((size_t)n + blen + 1);
	if (!c->out) {
		c->deadline_ms = 0;	/* out of memory: the caller closes */
		return;
	}
	memcpy(c->out, hdr, (size_t)n);
	if (blen)
		memcpy(c->out + n, body, blen);
	c->outlen = (size_t)n + blen;
	c->outoff = 0;
	c->deadline_ms = now_ms() + CONN_TIMEOUT_MS;
}

static void bad_request(struct conn *c, const char *why)
{
	char msg[128];
	int l = snprintf(msg, sizeof(msg), "bad request: %s\n", why);

	respond(c, 400, "Bad Request", "text/plain", "", msg, (size_t)l, false);
}

/*
 * "METHOD SP /target SP HTTP/1.x" ending in LF or CRLF. Returns the length of
 * the line (with its end) or 0 when it is not one; fills @method, @path.
 */
static size_t request_line(const char *s, size_t n, char *method, size_t mlen, char *path,
			   size_t plen)
{
	size_t i = 0, m, t;

	while (i < n && s[i] >= 'A' && s[i] <= 'Z')
		i++;
	if (!i || i >= mlen || i >= n || s[i] != ' ')
		return 0;
	memcpy(method, s, i);
	method[i] = 0;
	m = ++i;
	while (i < n && (unsigned char)s[i] > ' ' && (unsigned char)s[i] < 0x7f)
		i++;
	t = i - m;
	if (!t || t >= plen || s[m] != '/' || i >= n || s[i] != ' ')
		return 0;
	memcpy(path, s + m, t);
	path[t] = 0;
	i++;
	if (n - i < 8 || memcmp(s + i, "HTTP/1.", 7) || s[i + 7] < '0' || s[i + 7] > '9')
		return 0;
	i += 8;
	if (i < n && s[i] == '\r')
		i++;
	if (i >= n || s[i] != '\n')
		return 0;
	return i + 1;
}

static void answer(struct conn *c, struct dac_prom *p, const char *method, const char *path)
{
	bool head = !strcmp(method, "HEAD");

	if (strcmp(method, "GET") && !head) {
		respond(c, 405, "Method Not Allowed", "text/plain", "Allow: GET, HEAD\r\n",
			"GET or HEAD only\n", 17, false);
		return;
	}
	if (!strcmp(path, "/")) {
		static const char idx[] = "drmacct exporter: see /metrics\n";

		respond(c, 200, "OK", "text/plain; charset=utf-8", "", idx, sizeof(idx) - 1,
			head);
		return;
	}
	if (strcmp(path, "/metrics") && strncmp(path, "/metrics?", 9)) {
		respond(c, 404, "Not Found", "text/plain", "", "not found\n", 10, false);
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

			respond(c, 500, "Internal Server Error", "text/plain", "", msg,
				(size_t)l, head);
			fprintf(stderr, "drmacct export: %s", msg);
		} else {
			respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", "", body,
				len, head);
		}
		free(body);
	}
}

/* Decide once the head is complete (or is already known to be bad). */
static void parse_request(struct conn *c, struct dac_prom *p)
{
	char method[16], path[1024];
	const char *nl = memchr(c->req, '\n', c->n);
	size_t l;

	if (!nl) {
		if (c->n == REQ_MAX)
			bad_request(c, "request line too long");
		return;
	}
	l = request_line(c->req, c->n, method, sizeof(method), path, sizeof(path));
	if (!l) {
		bad_request(c, "not an HTTP/1.x request line");
		return;
	}
	/* The head ends with an empty line right after the request line or later. */
	c->req[c->n] = 0;
	if (!(c->req[l] == '\n' || (c->req[l] == '\r' && c->req[l + 1] == '\n')) &&
	    !memmem(c->req, c->n, "\r\n\r\n", 4) && !memmem(c->req, c->n, "\n\n", 2)) {
		if (c->n == REQ_MAX)
			bad_request(c, "request head too long");
		return;
	}
	answer(c, p, method, path);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->n = 0;
}

/* Readable: take what is there, answer when the head is complete. */
static void conn_read(struct conn *c, struct dac_prom *p)
{
	while (c->n < REQ_MAX) {
		ssize_t r = recv(c->fd, c->req + c->n, REQ_MAX - c->n, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (r <= 0) {	/* closed before a whole request: nothing to answer */
			conn_close(c);
			return;
		}
		c->n += (size_t)r;
	}
	parse_request(c, p);
	if (c->out == NULL && c->deadline_ms == 0)
		conn_close(c);
}

/* Writable: send what the socket takes; close when all is out. */
static void conn_write(struct conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0)
			break;	/* the scraper went away */
		c->outoff += (size_t)w;
	}
	conn_close(c);
}

static void conn_accept(int lfd, struct conn *conns)
{
	for (;;) {
		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c = NULL, *oldest = NULL;

		if (cfd < 0)
			return;	/* EAGAIN, or a connection that went away meanwhile */
		for (size_t i = 0; i < MAX_CONNS && !c; i++) {
			if (conns[i].fd < 0)
				c = &conns[i];
			else if (!oldest || conns[i].opened_ms < oldest->opened_ms)
				oldest = &conns[i];
		}
		if (!c) {
			conn_close(oldest);
			c = oldest;
		}
		c->fd = cfd;
		c->n = 0;
		c->out = NULL;
		c->opened_ms = now_ms();
		c->deadline_ms = c->opened_ms + CONN_TIMEOUT_MS;
	}
}

/* Serve on @lfd until SIGINT/SIGTERM. */
static int serve_loop(int lfd, struct dac_prom *p)
{
	struct conn *conns = calloc(MAX_CONNS, sizeof(*conns));
	struct pollfd pfd[MAX_CONNS + 1];
	size_t idx[MAX_CONNS + 1];

	if (!conns) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	for (size_t i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	while (!stop_sig) {
		uint64_t now = now_ms(), next = now + 1000;
		nfds_t n = 1;
		int r;

		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (size_t i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (c->fd < 0)
				continue;
			if (c->deadline_ms <= now) {
				if (!c->out) {
					static const char late[] = "request head not received "
								   "in time\n";

					respond(c, 408, "Request Timeout", "text/plain", "", late,
						sizeof(late) - 1, false);
					/* best effort, once: the client was idle anyway */
					if (c->out)
						conn_write(c);
				}
				conn_close(c);
				continue;
			}
			if (c->deadline_ms < next)
				next = c->deadline_ms;
			pfd[n] = (struct pollfd){ .fd = c->fd, .events = c->out ? POLLOUT : POLLIN };
			idx[n++] = i;
		}
		r = poll(pfd, n, (int)(next - now));
		if (r <= 0)
			continue;
		for (nfds_t k = 1; k < n; k++) {
			struct conn *c = &conns[idx[k]];

			if (!pfd[k].revents)
				continue;
			if (!c->out)
				conn_read(c, p);
			if (c->fd >= 0 && c->out)
				conn_write(c);
		}
		if (pfd[0].revents & POLLIN)
			conn_accept(lfd, conns);
	}
	for (size_t i = 0; i < MAX_CONNS; i++)
		conn_close(&conns[i]);
	free(conns);
	return CLI_EXIT_OK;
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
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0) {
		cli_error(CMD, "socket: %s", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, MAX_CONNS)) {
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
	ret = serve_loop(lfd, p);
	close(lfd);
	return ret;
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
	if (dac_prom_set_version(p, DRMACCT_VERSION)) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		dac_prom_free(p);
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
