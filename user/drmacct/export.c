// SPDX-License-Identifier: MIT
/*
 * export.c - `drmacct export`: the Prometheus text exposition, printed once
 * (--prometheus), served over HTTP or HTTPS (--listen, http.c, with a web
 * configuration: webconfig.c) or written for node_exporter's textfile
 * collector (--textfile), one tracker for the whole run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"
#include "output.h"
#include "prom.h"
#include "tracker.h"
#include "webconfig.h"

static const char *const CMD = "export";

/* The file the textfile collector reads, in --textfile DIR. */
#define TEXTFILE_NAME	"drmacct.prom"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct export --prometheus [OPTIONS]\n"
		"       drmacct export --listen ADDR:PORT [--web-config FILE | --insecure] [OPTIONS]\n"
		"       drmacct export --textfile DIR [--interval DUR] [--state FILE] [OPTIONS]\n\n"
		"Per-client GPU usage in the Prometheus text format (see drmacct(1)):\n"
		"busy seconds, cycles and jobs per engine as counters, memory bytes by region\n"
		"and kind as gauges, keyed by driver, device and client id; pid, comm, every\n"
		"holder and the cgroup in drmacct_client_info; totals per device.\n\n"
		"Options:\n"
		"      --prometheus       print the exposition once to stdout\n"
		"  -l, --listen=ADDR:PORT serve it at http(s)://ADDR:PORT/metrics until SIGINT\n"
		"                         or SIGTERM; :PORT is every address. Beyond loopback\n"
		"                         (127.x.x.x, [::1], localhost) only with --web-config\n"
		"                         or --insecure. PORT 0 picks a free port; the address\n"
		"                         is printed on stderr.\n"
		"      --web-config=FILE  TLS certificate and key, client certificates, basic\n"
		"                         auth users (bcrypt) and headers, in the Prometheus\n"
		"                         exporter-toolkit's web configuration format\n"
		"      --insecure         serve plain HTTP without auth beyond loopback\n"
		"      --textfile=DIR     write DIR/" TEXTFILE_NAME " for node_exporter's textfile\n"
		"                         collector, replaced atomically (a rename)\n"
		"  -i, --interval=DUR     with --textfile: write every DUR (1ms..1h) until\n"
		"                         SIGINT or SIGTERM, with one tracker; without it, once\n"
		"      --state=FILE       with --textfile: read the series and device totals\n"
		"                         the last run left in FILE, and save them there, so\n"
		"                         that runs started by a timer keep counters counters\n"
		"      --drop-after=N     drop the series of a client gone from N scrapes in a\n"
		"                         row (default %d; its counters stay in the device totals)\n"
		"      --pid=PID          only this process\n"
		"      --spec=PROFILE     parse fdinfo as 'current' (default) or '2022'\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 success (--listen, --textfile --interval: after SIGINT or\n"
		"SIGTERM), 1 /proc, the --pid process, the web configuration, the port or the\n"
		"textfile cannot be used, or the output failed, 2 usage error (also a\n"
		"non-loopback ADDR without --web-config or --insecure), 141 the reader of the\n"
		"output went away.\n", DAC_PROM_DROP_AFTER);
}

/*
 * "127.0.0.1:9400", "[::1]:9400", "localhost:9400" or ":9400" (every
 * address, IPv6 and IPv4) -> a socket address; *@loopback says whether it
 * is one. 0 or -EINVAL.
 */
static int parse_listen(const char *arg, struct sockaddr_storage *ss, socklen_t *len,
			bool *loopback)
{
	const char *colon = strrchr(arg, ':'), *host = arg;
	size_t hlen = colon ? (size_t)(colon - arg) : 0;
	char *h;
	uint64_t port;
	int ret = 0;

	memset(ss, 0, sizeof(*ss));
	if (!colon || cli_parse_u64(colon + 1, &port) || port > 65535)
		return -EINVAL;
	if (arg[0] == '[') {
		if (hlen < 2 || arg[hlen - 1] != ']')
			return -EINVAL;
		host = arg + 1;
		hlen -= 2;
	}
	h = strndup(host, hlen);
	if (!h)
		return -ENOMEM;
	if (!*h && arg[0] != '[') {		/* ":PORT": every address */
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		*loopback = false;
	} else if (arg[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, h, &s6->sin6_addr) != 1)
			ret = -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*s6);
		*loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, strcmp(h, "localhost") ? h : "127.0.0.1",
			      &s4->sin_addr) != 1)
			ret = -EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof(*s4);
		*loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	free(h);
	return ret;
}

/* The socket, bound and listening, its address printed; -1 (said why). */
static int open_listener(const char *arg, const struct sockaddr_storage *ss, socklen_t len,
			 bool tls)
{
	int lfd, one = 1, zero = 0;
	struct sockaddr_storage got;
	socklen_t glen = sizeof(got);
	char a[INET6_ADDRSTRLEN], shown[INET6_ADDRSTRLEN + 16];

	lfd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		cli_error(CMD, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)	/* [::] takes IPv4 too */
		setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(lfd, (const struct sockaddr *)ss, len) || listen(lfd, 64)) {
		cli_error(CMD, "cannot listen on %s: %s", arg, strerror(errno));
		close(lfd);
		return -1;
	}
	getsockname(lfd, (struct sockaddr *)&got, &glen);
	if (got.ss_family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&got;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(shown, sizeof(shown), "%s:%u", a, ntohs(s4->sin_port));
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&got;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(shown, sizeof(shown), "[%s]:%u", a, ntohs(s6->sin6_port));
	}
	fprintf(stderr, "drmacct export: listening on %s://%s/metrics\n", tls ? "https" : "http",
		shown);
	fflush(stderr);
	return lfd;
}

static int scrape_to_buffer(void *arg, char **body, size_t *len)
{
	FILE *m = open_memstream(body, len);
	int ret;

	if (!m)
		return -ENOMEM;
	ret = dac_prom_scrape(arg, m);
	if (fclose(m) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*body);
		*body = NULL;
	}
	return ret;
}

static int serve(const char *arg, const char *web_config, bool insecure, struct dac_prom *p)
{
	struct sockaddr_storage ss;
	struct web_config wc;
	socklen_t len = 0;
	bool loopback, tls;
	char *err = NULL;
	int lfd, ret;

#ifdef DRMACCT_NO_HTTP
	(void)web_config, (void)insecure, (void)p, (void)wc, (void)err, (void)tls, (void)lfd;
	(void)open_listener, (void)scrape_to_buffer;
	cli_error(CMD, "--listen: this drmacct was built without the web server (HTTP=0)");
	return CLI_EXIT_FAIL;
#endif
	ret = parse_listen(arg, &ss, &len, &loopback);
	if (ret == -ENOMEM) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	if (ret)
		return cli_usage_error(CMD, "bad --listen '%s' (ADDR:PORT, [ADDR]:PORT or :PORT)",
				       arg);
	if (!loopback && !web_config && !insecure)
		return cli_usage_error(CMD, "'%s' is not a loopback address (127.0.0.1:PORT, "
				       "[::1]:PORT): beyond loopback give --web-config FILE "
				       "(TLS, basic auth) or --insecure", arg);
	if (web_config) {
		if (web_config_load(web_config, &wc, &err)) {
			cli_error(CMD, "--web-config: %s", err ? err : strerror(ENOMEM));
			free(err);
			return CLI_EXIT_FAIL;
		}
		if (!loopback && !insecure && !wc.cert_pem && !wc.nusers) {
			cli_error(CMD, "--web-config: %s sets neither TLS nor basic auth: beyond "
				  "loopback that is --insecure", web_config);
			web_config_free(&wc);
			return CLI_EXIT_FAIL;
		}
		if (wc.nusers && !wc.cert_pem)
			fprintf(stderr, "drmacct export: note: basic auth without TLS: passwords "
				"cross the network in clear text\n");
	}
	tls = web_config && wc.cert_pem;
	lfd = open_listener(arg, &ss, len, tls);
	if (lfd < 0) {
		ret = CLI_EXIT_FAIL;
	} else {
		signal(SIGPIPE, SIG_IGN);
		ret = http_serve(CMD, lfd, web_config ? &wc : NULL, scrape_to_buffer, p);
	}
	if (web_config)
		web_config_free(&wc);
	return ret;
}

static volatile sig_atomic_t stop_sig;

static void on_stop(int sig)
{
	stop_sig = sig;
}

/*
 * One scrape into DIR/drmacct.prom: written to a hidden temporary file
 * beside it (not *.prom, so the collector never reads it half-written),
 * flushed to disk, then renamed over the old one. 0, or the exit status.
 */
static int write_textfile(const char *dir, struct dac_prom *p)
{
	char *tmp = NULL, *dst = NULL;
	FILE *f = NULL;
	int fd = -1, ret;

	if (asprintf(&tmp, "%s/.%s.%d.tmp", dir, TEXTFILE_NAME, (int)getpid()) < 0 ||
	    asprintf(&dst, "%s/%s", dir, TEXTFILE_NAME) < 0) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		ret = CLI_EXIT_FAIL;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		cli_error(CMD, "cannot write %s: %s", tmp, strerror(errno));
		ret = CLI_EXIT_FAIL;
		goto out;
	}
	fd = -1;
	ret = dac_prom_scrape(p, f);
	if (ret == -EIO || (!ret && (fflush(f) || fsync(fileno(f))))) {
		cli_error(CMD, "cannot write %s: %s", tmp, strerror(errno ? errno : EIO));
		ret = CLI_EXIT_FAIL;
	} else if (ret) {
		cli_error(CMD, "scrape failed: %s", strerror(-ret));
		ret = CLI_EXIT_FAIL;
	}
	if (fclose(f) && !ret) {
		cli_error(CMD, "cannot write %s: %s", tmp, strerror(errno));
		ret = CLI_EXIT_FAIL;
	}
	f = NULL;
	if (!ret && rename(tmp, dst)) {
		cli_error(CMD, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
		ret = CLI_EXIT_FAIL;
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmp && ret)
		unlink(tmp);
	free(tmp);
	free(dst);
	return ret;
}

/* --state FILE: what the last run left (none the first time). 0 or 1. */
static int load_state(const char *path, struct dac_prom *p)
{
	FILE *f = fopen(path, "re");
	size_t bad = 0;
	int ret;

	if (!f && errno == ENOENT)
		return 0;
	if (!f) {
		cli_error(CMD, "--state: cannot read %s: %s", path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	ret = dac_prom_load(p, f, &bad);
	fclose(f);
	if (ret == -EINVAL) {
		/* a broken file must not stop every later run: said, then replaced */
		fprintf(stderr, "drmacct export: --state: %s:%zu: not a state this drmacct "
			"wrote; starting afresh (device counters restart)\n", path, bad);
		return 0;
	}
	if (ret) {
		cli_error(CMD, "--state: cannot read %s: %s", path, strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* Write the state to a temporary file beside @path, then rename it. */
static int save_state(const char *path, const struct dac_prom *p)
{
	char *tmp = NULL;
	FILE *f;
	int ret = CLI_EXIT_OK;

	if (asprintf(&tmp, "%s.%d.tmp", path, (int)getpid()) < 0) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		return CLI_EXIT_FAIL;
	}
	f = fopen(tmp, "we");
	if (!f || dac_prom_save(p, f) || fsync(fileno(f))) {
		cli_error(CMD, "--state: cannot write %s: %s", tmp, strerror(errno ? errno : EIO));
		ret = CLI_EXIT_FAIL;
	}
	if (f && fclose(f) && !ret) {
		cli_error(CMD, "--state: cannot write %s: %s", tmp, strerror(errno));
		ret = CLI_EXIT_FAIL;
	}
	if (!ret && rename(tmp, path)) {
		cli_error(CMD, "--state: cannot rename %s to %s: %s", tmp, path, strerror(errno));
		ret = CLI_EXIT_FAIL;
	}
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

/*
 * --textfile DIR [--interval DUR] [--state FILE]: once, or every DUR until
 * a signal; the state read before the first write and saved after each.
 */
static int textfile(const char *dir, uint64_t interval_ns, const char *state,
		    struct dac_prom *p)
{
	struct sigaction sa;
	struct timespec next;
	struct stat st;
	int ret;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		cli_error(CMD, "--textfile: %s is not a directory", dir);
		return CLI_EXIT_FAIL;
	}
	if (state && load_state(state, p))
		return CLI_EXIT_FAIL;
	if (!interval_ns) {
		ret = write_textfile(dir, p);
		return !ret && state ? save_state(state, p) : ret;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop_sig) {
		ret = write_textfile(dir, p);
		if (!ret && state)
			ret = save_state(state, p);
		if (ret)
			return ret;
		next.tv_sec += (time_t)(interval_ns / 1000000000u);
		next.tv_nsec += (long)(interval_ns % 1000000000u);
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		/* a signal ends the wait early (EINTR): stop_sig is set then */
		while (!stop_sig && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return CLI_EXIT_OK;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prometheus", no_argument, NULL, 'M' },
		{ "listen", required_argument, NULL, 'l' },
		{ "web-config", required_argument, NULL, 'W' },
		{ "insecure", no_argument, NULL, 'I' },
		{ "textfile", required_argument, NULL, 'T' },
		{ "interval", required_argument, NULL, 'i' },
		{ "drop-after", required_argument, NULL, 'D' },
		{ "state", required_argument, NULL, 'F' },
		{ "pid", required_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_discover_opts dopts = { .proc_root = NULL, .pid = 0, .fd = -1 };
	enum dac_profile profile = DAC_PROFILE_CURRENT;
	const char *listen_at = NULL, *web_config = NULL, *textdir = NULL, *state = NULL;
	bool once = false, insecure = false;
	uint64_t interval = 0, drop_after = DAC_PROM_DROP_AFTER;
	struct dac_prom *p;
	const struct cli_common_opts co = {
		.pid = &dopts.pid, .profile = &profile, .proc_root = &dopts.proc_root,
		.usage = usage,
	};
	int c, opt, ret, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'M':
			once = true;
			break;
		case 'l':
			listen_at = optarg;
			break;
		case 'W':
			web_config = optarg;
			break;
		case 'I':
			insecure = true;
			break;
		case 'T':
			textdir = optarg;
			break;
		case 'F':
			state = optarg;
			break;
		case 'i':
			opt = cli_opt_interval(CMD, optarg, false, &interval);
			if (opt)
				return opt;
			break;
		case 'D':
			if (cli_parse_u64(optarg, &drop_after) || drop_after < 1 ||
			    drop_after > 1000000)
				return cli_usage_error(CMD, "--drop-after: '%s' is not a number of "
						       "scrapes from 1 to 1000000", optarg);
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
	if (once + !!listen_at + !!textdir != 1)
		return cli_usage_error(CMD, "give exactly one of --prometheus, --listen and "
				       "--textfile");
	if ((web_config || insecure) && !listen_at)
		return cli_usage_error(CMD, "--%s is for --listen",
				       web_config ? "web-config" : "insecure");
	if (web_config && insecure)
		return cli_usage_error(CMD, "--web-config and --insecure exclude each other");
	if ((interval || state) && !textdir)
		return cli_usage_error(CMD, "--%s is for --textfile", interval ? "interval" : "state");
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
	if (dac_prom_set_version(p, DRMACCT_VERSION) ||
	    dac_prom_set_drop_after(p, (unsigned int)drop_after)) {
		cli_error(CMD, "%s", strerror(ENOMEM));
		dac_prom_free(p);
		return CLI_EXIT_FAIL;
	}
	if (listen_at) {
		rc = serve(listen_at, web_config, insecure, p);
	} else if (textdir) {
		rc = textfile(textdir, interval, state, p);
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

DRMACCT_COMMAND(export, cmd_export, "Prometheus metrics: once, over HTTP(S), or to a textfile");
