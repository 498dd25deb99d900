// SPDX-License-Identifier: MIT
/*
 * validate.c - `drmacct validate`: check fdinfo texts against the spec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "cli.h"
#include "json.h"
#include "output.h"
#include "source.h"

static const char *const CMD = "validate";

/* An fd that holds a client, as seen by the /proc walk. */
struct vholder {
	pid_t pid;
	int fd;
	char *comm;
};

/*
 * One client found by a /proc walk: dup'd and inherited fds show the same
 * client (same device, same drm-client-id), which is checked and reported
 * once with every fd holding it. Texts without drm-client-id cannot be
 * matched and are each their own entry. A DRM fd whose driver prints no
 * usage stats (no drm- key) has no id either: on the real /proc, fds of one
 * open file (kcmp()) are one entry all the same.
 */
struct vclient {
	dev_t rdev;
	char *source;		/* /proc/PID/fdinfo/FD of the lowest holder */
	struct dac_fdinfo fi;
	int read_err;		/* parse failure other than ENOMEM */
	bool no_stats;		/* the driver prints no usage stats */
	struct vholder *holders;
	size_t nholders;
};

/* A client reported for an earlier operand: not reported again. */
struct vseen {
	dev_t rdev;
	bool no_stats;		/* then known by one of its fds (kcmp) */
	uint64_t id;
	pid_t pid;
	int fd;
};

struct vstate {
	enum dac_profile profile;
	bool json;
	bool quiet;
	bool all;		/* --all: every DRM fd of every process */
	struct dac_json j;
	const char *proc_root;
	size_t checked, errors, warnings, notes, read_failures, no_stats, dup_fds;
	bool all_unreadable;	/* --all: something could not be read */
	/*
	 * checked: sources read and checked; read_failures: operands or sources
	 * not read; no_stats: sources whose driver prints no usage stats
	 */
	struct vclient *clients;	/* of the walk in progress */
	size_t nclients, cap_clients;
	struct vseen *seen;		/* of the walks before */
	size_t nseen, cap_seen;
	size_t op_fds;			/* DRM fds the walk in progress found */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct validate [OPTIONS] FILE|PID|PID:FD...\n"
		"       drmacct validate [OPTIONS] --all\n\n"
		"Check DRM fdinfo texts against the client usage stats spec.\n"
		"Operands made only of digits (PID or PID:FD) name /proc/PID/fdinfo;\n"
		"'-' is standard input; anything else is a file (write ./123 for a\n"
		"file named 123).\n\n"
		"Options:\n"
		"  -a, --all              every DRM/accel fd of every process\n"
		"      --spec=PROFILE     'current' (default) or '2022'\n"
		"  -j, --json             machine-readable output\n"
		"  -q, --quiet            print only errors and the summary\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"  -h, --help             this text\n\n"
		"A DRM fd whose driver prints no usage stats (no drm- key) is said so\n"
		"and counted, not judged.\n\n"
		"Exit status: 0 no errors (warnings and notes allowed), 1 an error was\n"
		"found or a source could not be read (--all: nothing could be read),\n"
		"2 usage error, 4 nothing to check (no source has usage stats).\n"
		"See drmacct(1).\n");
}

/* Where operand @s points: 1 = PID[:FD] (filled), 0 = file. */
static int parse_pidfd(const char *s, long *pid, long *fd)
{
	const char *colon = strchr(s, ':');
	char buf[32];
	uint64_t v;
	size_t n;

	n = colon ? (size_t)(colon - s) : strlen(s);
	if (!n || n >= sizeof(buf) || strspn(s, "0123456789") != n)
		return 0;
	if (colon && (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1)))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (cli_parse_u64(buf, &v) || !v || v > 0x7fffffff)
		return -1;
	*pid = (long)v;
	*fd = -1;
	if (colon) {
		if (cli_parse_u64(colon + 1, &v) || v > 0x7fffffff)
			return -1;
		*fd = (long)v;
	}
	return 1;
}

/*
 * "renderD129" and, on this machine's /proc, ", vgem": the device's driver
 * in sysfs or, for a device no driver is bound to (vgem's platform device)
 * or one on the faux bus (vgem from 6.15 on: every faux device's driver is
 * "faux_driver"), the device's own name.
 */
static void dev_label(const struct vstate *vs, dev_t rdev, char *buf, size_t len)
{
	char link[PATH_MAX], target[PATH_MAX], name[32];
	ssize_t n = -1;

	dac_dev_name(major(rdev), minor(rdev), name, sizeof(name));
	if (!strcmp(vs->proc_root, "/proc")) {
		snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device/driver", major(rdev),
			 minor(rdev));
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && n >= 12 && !memcmp(target + n - 12, "/faux_driver", 12))
			n = -1;
		if (n <= 0) {
			snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(rdev),
				 minor(rdev));
			n = readlink(link, target, sizeof(target) - 1);
		}
	}
	if (n > 0) {
		target[n] = '\0';
		snprintf(buf, len, "%s, %.64s", name,
			 strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	} else {
		snprintf(buf, len, "%s", name);
	}
}

static void json_holders(struct vstate *vs, const struct vholder *h, size_t nh)
{
	struct dac_json *j = &vs->j;

	dac_json_i64(j, "pid", h[0].pid);
	dac_json_i64(j, "fd", h[0].fd);
	dac_json_str(j, "comm", h[0].comm);
	dac_json_arr_begin(j, "holders");
	for (size_t i = 0; i < nh; i++) {
		dac_json_obj_begin(j, NULL);
		dac_json_i64(j, "pid", h[i].pid);
		dac_json_i64(j, "fd", h[i].fd);
		dac_json_str(j, "comm", h[i].comm);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
}

/*
 * A source whose driver prints no usage stats: said and counted, nothing
 * judged. @rdev: its device when it is an fd (nh > 0).
 */
static void report_no_stats(struct vstate *vs, const char *source, const struct vholder *h,
			    size_t nh, dev_t rdev)
{
	char dev[128] = "";

	vs->no_stats++;
	if (nh)
		dev_label(vs, rdev, dev, sizeof(dev));
	if (vs->json) {
		struct dac_json *j = &vs->j;

		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "source", source);
		if (nh) {
			json_holders(vs, h, nh);
			dac_json_str(j, "device", dev);
		}
		dac_json_str(j, "usage_stats", "none");
		dac_json_bool(j, "ok", true);
		dac_json_u64(j, "errors", 0);
		dac_json_u64(j, "warnings", 0);
		dac_json_u64(j, "notes", 0);
		dac_json_arr_begin(j, "findings");
		dac_json_arr_end(j);
		dac_json_obj_end(j);
		return;
	}
	if (vs->quiet)
		return;
	printf("%s: driver prints no usage stats (no drm- key%s%s)", source, *dev ? "; " : "",
	       dev);
	if (nh > 1) {
		printf(" held by");
		for (size_t i = 0; i < nh; i++)
			printf("%s %d:%d", i ? "," : "", (int)h[i].pid, h[i].fd);
	}
	printf("\n");
}

static void report(struct vstate *vs, const char *source, const struct vholder *h, size_t nh,
		   const struct dac_fdinfo *fi, int read_err)
{
	char pbuf[CLI_PRINTABLE_MAX];
	size_t e = 0, w = 0, n = 0, i;

	if (read_err) {
		vs->read_failures++;
	} else {
		vs->checked++;
		e = dac_fdinfo_count(fi, DAC_SEV_ERROR);
		w = dac_fdinfo_count(fi, DAC_SEV_WARNING);
		n = dac_fdinfo_count(fi, DAC_SEV_NOTE);
	}
	vs->errors += e;
	vs->warnings += w;
	vs->notes += n;

	if (vs->json) {
		struct dac_json *j = &vs->j;

		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "source", source);
		if (nh)
			json_holders(vs, h, nh);
		if (read_err) {
			dac_json_str(j, "read_error", strerror(-read_err));
			dac_json_bool(j, "ok", false);
			dac_json_obj_end(j);
			return;
		}
		dac_json_str(j, "driver", fi->driver);
		if (fi->has_client_id)
			dac_json_u64(j, "client_id", fi->client_id);
		dac_json_str(j, "usage_stats", dac_stats_name(dac_fdinfo_stats(fi)));
		dac_json_bool(j, "ok", e == 0);
		dac_json_u64(j, "errors", e);
		dac_json_u64(j, "warnings", w);
		dac_json_u64(j, "notes", n);
		dac_json_arr_begin(j, "findings");
		for (i = 0; i < fi->nfind; i++) {
			const struct dac_finding *f = &fi->find[i];
			char msg[DAC_FINDING_MSG_MAX];

			dac_json_obj_begin(j, NULL);
			dac_json_u64(j, "line", f->line);
			dac_json_str(j, "severity", dac_severity_name(f->sev));
			dac_json_str(j, "code", f->code);
			dac_json_str(j, "message", dac_finding_message(f, msg, sizeof(msg)));
			dac_json_obj_end(j);
		}
		dac_json_arr_end(j);
		dac_json_obj_end(j);
		return;
	}

	if (read_err) {
		cli_error(CMD, "cannot read %s: %s", source, strerror(-read_err));
		return;
	}
	for (i = 0; i < fi->nfind; i++) {
		const struct dac_finding *f = &fi->find[i];
		char raw[DAC_FINDING_MSG_MAX];
		const char *msg = cli_printable(dac_finding_message(f, raw, sizeof(raw)), pbuf,
						sizeof(pbuf));

		if (vs->quiet && f->sev != DAC_SEV_ERROR)
			continue;
		if (f->line)
			printf("%s:%u: %s: %s [%s]\n", source, f->line, dac_severity_name(f->sev),
			       msg, f->code);
		else
			printf("%s: %s: %s [%s]\n", source, dac_severity_name(f->sev), msg,
			       f->code);
	}
	if (vs->quiet)
		return;
	printf("%s: %s%s: %zu error%s, %zu warning%s, %zu note%s", source,
	       fi->driver ? "driver " : "",
	       fi->driver ? cli_printable(fi->driver, pbuf, sizeof(pbuf)) : "no driver",
	       e, e == 1 ? "" : "s", w, w == 1 ? "" : "s", n, n == 1 ? "" : "s");
	if (nh > 1) {
		printf(" (client %llu held by", (unsigned long long)fi->client_id);
		for (i = 0; i < nh; i++)
			printf("%s %d:%d", i ? "," : "", (int)h[i].pid, h[i].fd);
		printf(")");
	}
	if (dac_fdinfo_stats(fi) == DAC_STATS_CORE)
		printf(" (core keys only: no engine or memory key)");
	printf("\n");
}

static void vclient_free(struct vclient *c)
{
	size_t i;

	for (i = 0; i < c->nholders; i++)
		free(c->holders[i].comm);
	free(c->holders);
	free(c->source);
	if (!c->read_err)
		dac_fdinfo_free(&c->fi);
}

/*
 * Are fd @fa of @pa and fd @fb of @pb the same open file? Only on the real
 * /proc (kcmp() asks the kernel); a synthetic tree cannot say: no.
 */
static bool same_file(const struct vstate *vs, pid_t pa, int fa, pid_t pb, int fb)
{
	if (strcmp(vs->proc_root, "/proc"))
		return false;
	return syscall(SYS_kcmp, pa, pb, KCMP_FILE, fa, fb) == 0;
}

/* A client of an earlier operand: 1 (counted as another fd of it), 0 no. */
static int seen_before(struct vstate *vs, const struct vclient *nc, const struct dac_fd_info *fdi)
{
	for (size_t i = 0; i < vs->nseen; i++) {
		const struct vseen *x = &vs->seen[i];

		if (x->rdev != fdi->rdev || x->no_stats != nc->no_stats)
			continue;
		if (nc->no_stats ? same_file(vs, x->pid, x->fd, fdi->pid, fdi->fd)
				 : nc->fi.has_client_id && x->id == nc->fi.client_id)
			return 1;
	}
	return 0;
}

/* Remember the clients of a walk for the walks after it. 0 or -ENOMEM. */
static int note_seen(struct vstate *vs, const struct vclient *c)
{
	if (c->read_err || !c->nholders || (!c->no_stats && !c->fi.has_client_id))
		return 0;
	if (vs->nseen == vs->cap_seen) {
		size_t ncap = vs->cap_seen ? vs->cap_seen * 2 : 16;
		struct vseen *n = realloc(vs->seen, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vs->seen = n;
		vs->cap_seen = ncap;
	}
	vs->seen[vs->nseen++] = (struct vseen){
		.rdev = c->rdev, .no_stats = c->no_stats, .id = c->fi.client_id,
		.pid = c->holders[0].pid, .fd = c->holders[0].fd,
	};
	return 0;
}

static int add_holder(struct vclient *c, const struct dac_fd_info *fdi)
{
	struct vholder *nh = realloc(c->holders, (c->nholders + 1) * sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	c->holders = nh;
	nh[c->nholders].comm = strdup(fdi->comm);
	if (!nh[c->nholders].comm)
		return -ENOMEM;
	nh[c->nholders].pid = fdi->pid;
	nh[c->nholders].fd = fdi->fd;
	c->nholders++;
	return 0;
}

/* The client of this walk @nc is one of (same id, or same open file), or NULL. */
static struct vclient *find_client(struct vstate *vs, const struct vclient *nc,
				   const struct dac_fd_info *fdi)
{
	size_t i;

	for (i = 0; i < vs->nclients; i++) {
		struct vclient *c = &vs->clients[i];

		if (c->read_err || c->rdev != fdi->rdev || c->no_stats != nc->no_stats)
			continue;
		if (c->no_stats ? same_file(vs, c->holders[0].pid, c->holders[0].fd, fdi->pid,
					    fdi->fd)
				: c->fi.has_client_id && nc->fi.has_client_id &&
				  c->fi.client_id == nc->fi.client_id)
			return c;
	}
	return NULL;
}

/* Walk callback: parse, then merge into the client seen before or add it. */
static int fd_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct vstate *vs = arg;
	struct vclient *c, nc = { .rdev = fdi->rdev };
	int ret;

	ret = dac_fdinfo_parse(fdi->text, fdi->len, vs->profile, &nc.fi);
	if (ret == -ENOMEM)
		return ret;
	vs->op_fds++;
	nc.read_err = ret;
	nc.no_stats = !ret && dac_fdinfo_stats(&nc.fi) == DAC_STATS_NONE;
	if (!ret && (nc.no_stats || nc.fi.has_client_id)) {
		c = find_client(vs, &nc, fdi);
		if (c || seen_before(vs, &nc, fdi)) {
			dac_fdinfo_free(&nc.fi);
			vs->dup_fds++;
			return c ? add_holder(c, fdi) : 0;
		}
	}
	ret = add_holder(&nc, fdi);
	if (!ret && vs->nclients == vs->cap_clients) {
		size_t ncap = vs->cap_clients ? vs->cap_clients * 2 : 16;
		struct vclient *nv = realloc(vs->clients, ncap * sizeof(*nv));

		if (!nv) {
			ret = -ENOMEM;
		} else {
			vs->clients = nv;
			vs->cap_clients = ncap;
		}
	}
	if (ret) {
		vclient_free(&nc);
		return ret;
	}
	vs->clients[vs->nclients++] = nc;
	return 0;
}

static int cmp_holder(const void *a, const void *b)
{
	const struct vholder *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

/*
 * Report the clients collected by a walk, in the order they were found, each
 * named after its lowest PID:FD. Returns 0 or -ENOMEM.
 */
static int flush_clients(struct vstate *vs)
{
	size_t i;

	for (i = 0; i < vs->nclients; i++) {
		struct vclient *c = &vs->clients[i];

		qsort(c->holders, c->nholders, sizeof(*c->holders), cmp_holder);
		if (asprintf(&c->source, "%s/%d/fdinfo/%d", vs->proc_root,
			     (int)c->holders[0].pid, c->holders[0].fd) < 0) {
			c->source = NULL;
			return -ENOMEM;
		}
		if (c->no_stats)
			report_no_stats(vs, c->source, c->holders, c->nholders, c->rdev);
		else
			report(vs, c->source, c->holders, c->nholders, &c->fi, c->read_err);
		if (note_seen(vs, c))
			return -ENOMEM;
	}
	for (i = 0; i < vs->nclients; i++)
		vclient_free(&vs->clients[i]);
	vs->nclients = 0;
	return 0;
}

static void drop_clients(struct vstate *vs)
{
	size_t i;

	for (i = 0; i < vs->nclients; i++)
		vclient_free(&vs->clients[i]);
	vs->nclients = 0;
	free(vs->clients);
	vs->clients = NULL;
	vs->cap_clients = 0;
	free(vs->seen);
	vs->seen = NULL;
	vs->nseen = vs->cap_seen = 0;
}

static int check_proc(struct vstate *vs, pid_t pid, int fd, const char *operand)
{
	struct dac_discover_opts o = { .proc_root = vs->proc_root, .pid = pid, .fd = fd };
	struct dac_discover_stats st;
	struct dac_discover *d;
	int ret;

	vs->op_fds = 0;
	d = cli_open_discover(CMD, &o);
	if (!d) {
		vs->read_failures++;
		return 0;
	}
	ret = dac_discover_run(d, fd_cb, vs, &st);
	dac_discover_free(d);
	if (ret == -ENOMEM || flush_clients(vs))
		return -ENOMEM;
	if (ret == -ESRCH)
		cli_error(CMD, "%s: no such process", operand);
	else if (ret == -EBADF)
		cli_error(CMD, "%s: process has no such fd", operand);
	else if (ret == -ENODEV)
		cli_error(CMD, "%s: not a DRM or accel device", operand);
	else if (ret < 0)
		cli_error(CMD, "%s: %s", operand, strerror(-ret));
	else if (pid > 0 && (st.denied_procs || st.denied_fds || st.denied_stat_fds))
		cli_error(CMD, "%s: permission denied", operand);
	else if (!vs->op_fds && pid > 0 && !st.gone_fds && !st.gone_procs)
		cli_error(CMD, "%s: process has no DRM or accel fds", operand);
	else if (!vs->op_fds && pid > 0)
		cli_error(CMD, "%s: the process or fd went away", operand);
	if (ret < 0 || (pid > 0 && !vs->op_fds))
		vs->read_failures++;
	if (pid == 0) {
		vs->all_unreadable = st.denied_procs || st.denied_fds || st.denied_stat_fds ||
				     st.errors;
		if (!vs->json)
			cli_note_discovery(CMD, &st);
		if (!vs->json && !st.drm_fds)
			printf("no DRM or accel fds found\n");
	}
	return 0;
}

/*
 * Standard input, whatever it is (a pipe, a file, a terminal, /dev/null):
 * read to the end and parse. 0 or -errno.
 */
static int read_stdin(enum dac_profile profile, struct dac_fdinfo *fi)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int ret;

	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 4096);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = cap ? cap * 2 : 4096;
		}
		n = read(STDIN_FILENO, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			free(buf);
			return ret;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	ret = dac_fdinfo_parse(buf, len, profile, fi);
	free(buf);
	return ret;
}

static int check_file(struct vstate *vs, const char *path)
{
	bool in = !strcmp(path, "-");
	struct dac_fdinfo fi;
	int ret = in ? read_stdin(vs->profile, &fi) :
		       dac_fdinfo_read_file(path, vs->profile, &fi);

	if (ret == -ENOMEM)
		return ret;
	if (!ret && dac_fdinfo_stats(&fi) == DAC_STATS_NONE)
		report_no_stats(vs, in ? "<stdin>" : path, NULL, 0, 0);
	else
		report(vs, in ? "<stdin>" : path, NULL, 0, &fi, ret);
	if (!ret)
		dac_fdinfo_free(&fi);
	return 0;
}

static int cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "spec", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vstate vs = { .profile = DAC_PROFILE_CURRENT, .proc_root = "/proc" };
	const struct cli_common_opts co = {
		.profile = &vs.profile, .proc_root = &vs.proc_root, .usage = usage,
	};
	int c, opt, i, ret = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ajqh", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			vs.all = true;
			break;
		case 'j':
			vs.json = true;
			break;
		case 'q':
			vs.quiet = true;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, c);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (vs.all && optind < argc)
		return cli_usage_error(CMD, "--all takes no operands (got '%s')", argv[optind]);
	if (!vs.all && optind >= argc)
		return cli_usage_error(CMD, "nothing to validate: give FILE, PID, PID:FD or --all");
	for (i = optind; i < argc; i++) {
		long pid, fd;

		if (!*argv[i])
			return cli_usage_error(CMD, "empty operand");
		if (parse_pidfd(argv[i], &pid, &fd) < 0)
			return cli_usage_error(CMD, "bad PID[:FD] '%s'", argv[i]);
	}

	if (vs.json) {
		dac_json_init(&vs.j, stdout, true);
		dac_json_obj_begin(&vs.j, NULL);
		dac_json_str(&vs.j, "schema", "drmacct-validate/1");
		dac_json_str(&vs.j, "spec", dac_profile_name(vs.profile));
		dac_json_arr_begin(&vs.j, "sources");
	}
	if (vs.all)
		ret = check_proc(&vs, 0, -1, "--all");
	for (i = optind; i < argc && !ret; i++) {
		long pid, fd;

		if (parse_pidfd(argv[i], &pid, &fd) == 1)
			ret = check_proc(&vs, (pid_t)pid, (int)fd, argv[i]);
		else
			ret = check_file(&vs, argv[i]);
	}
	drop_clients(&vs);
	if (ret) {
		cli_error(CMD, "%s", strerror(-ret));
		if (vs.json)
			dac_json_finish(&vs.j);
		return CLI_EXIT_FAIL;
	}
	if (vs.json) {
		dac_json_arr_end(&vs.j);
		dac_json_obj_begin(&vs.j, "summary");
		dac_json_u64(&vs.j, "sources", vs.checked);
		dac_json_u64(&vs.j, "errors", vs.errors);
		dac_json_u64(&vs.j, "warnings", vs.warnings);
		dac_json_u64(&vs.j, "notes", vs.notes);
		dac_json_u64(&vs.j, "failures", vs.read_failures);
		dac_json_u64(&vs.j, "without_stats", vs.no_stats);
		dac_json_u64(&vs.j, "shared_fds", vs.dup_fds);
		dac_json_obj_end(&vs.j);
		dac_json_obj_end(&vs.j);
		if (cli_output_done(CMD, dac_json_finish(&vs.j)))
			return CLI_EXIT_FAIL;
	} else {
		printf("%zu checked against the %s spec: %zu error%s, %zu warning%s, %zu note%s",
		       vs.checked, dac_profile_name(vs.profile), vs.errors,
		       vs.errors == 1 ? "" : "s", vs.warnings, vs.warnings == 1 ? "" : "s",
		       vs.notes, vs.notes == 1 ? "" : "s");
		if (vs.read_failures)
			printf(", %zu could not be read", vs.read_failures);
		if (vs.dup_fds)
			printf(", %zu more fd%s of clients already checked", vs.dup_fds,
			       vs.dup_fds == 1 ? "" : "s");
		if (vs.no_stats)
			printf(", %zu without usage stats", vs.no_stats);
		printf("\n");
		if (cli_output_done(CMD, 0))
			return CLI_EXIT_FAIL;
	}
	if (vs.errors || vs.read_failures)
		return CLI_EXIT_FAIL;
	if (!vs.checked) {
		/* Nothing was validated: not a pass. */
		if (vs.all && vs.all_unreadable) {
			cli_error(CMD, "nothing could be validated: no readable DRM client "
				  "(see the note above)");
			return CLI_EXIT_FAIL;
		}
		cli_error(CMD, "nothing to validate: %s", vs.no_stats ?
			  "the driver prints no usage stats (no drm- key)" :
			  "no DRM client with usage stats");
		return CLI_EXIT_NOTHING;
	}
	return CLI_EXIT_OK;
}

DRMACCT_COMMAND(validate, cmd_validate, "check fdinfo against the usage stats spec");
