/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h — read one KUnit suite's results out of KTAP text.
 *
 * The text is what KUnit writes for a suite: debugfs
 * kunit/<suite>/results, or the kernel log, where other messages may stand
 * between its lines. The suite is the subtest whose header line is
 * "# Subtest: <name>" at some indentation D; its plan, its cases' result
 * lines and their "#" diagnostics stand at D; lines deeper than D (a
 * parameterised case's own subtests, continuation lines of a message)
 * belong to the case whose result line follows; the first result line
 * shallower than D is the suite's own and ends it. Lines that are no KTAP
 * at all are counted and passed over, wherever they stand. A printk
 * timestamp before a line ("[    4.088054] ", dmesg, a console log) is
 * not part of it.
 *
 * Used by the VM test selftests/kernel/test_kunit and checked on the host
 * by selftests/user/test_ktap (fixtures in selftests/user/fixtures/ktap).
 */
#ifndef KTAP_H
#define KTAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ktap_status { KTAP_PASS, KTAP_FAIL, KTAP_SKIP };

struct ktap_case {
	unsigned int number;
	char *name;
	enum ktap_status status;
	char *directive;	/* text after '#' on the result line, or NULL */
	char *diag;		/* lines that came before the result, de-indented,
				 * one per '\n'-ended line; "" when none */
	unsigned int subtests;	/* result lines nested below it */
};

struct ktap_suite {
	char *name;
	long plan;		/* the plan's count; -1 without a plan line */
	unsigned int plans;	/* plan lines seen at the suite's level */
	struct ktap_case *cases;
	size_t ncases;
	bool ended;		/* its own result line was seen */
	unsigned int number;	/* the following only when ended */
	char *end_name;
	enum ktap_status status;
	char *directive;
	char *diag;		/* suite-level lines: before the plan, after
				 * the last case */
	size_t garbage;		/* lines of the text that are no KTAP */
};

/*
 * ktap_find_suite() - parse the suite @name out of @text (NUL-terminated).
 * On success @out holds it; free it with ktap_suite_free().
 * Return: 0; -ENOENT when no subtest has that name; -EEXIST when more than
 * one has (two runs in one text); -ENOMEM.
 */
int ktap_find_suite(const char *text, const char *name, struct ktap_suite *out);
void ktap_suite_free(struct ktap_suite *s);

/*
 * ktap_suite_complete() - did the suite end, with one plan and exactly the
 * cases it planned, numbered 1..N, each name once, its own result line
 * naming it and agreeing with its cases (not ok exactly when a case
 * failed)? When not, @why (of @len bytes) says what is wrong.
 */
bool ktap_suite_complete(const struct ktap_suite *s, char *why, size_t len);

/* ktap_suite_case() - the case named @name, or NULL. */
const struct ktap_case *ktap_suite_case(const struct ktap_suite *s, const char *name);

const char *ktap_status_name(enum ktap_status st);

/* ktap_strerror() - what a return value of ktap_find_suite() means. */
const char *ktap_strerror(int ret);

/*
 * ktap_kmsg_record() - one record read from /dev/kmsg ("6,1234,5678,-;text"
 * and maybe " KEY=value" lines), NUL-terminated, as the kernel log's text
 * on @out: what follows the first ';' up to the record's newline, with the
 * \xHH escapes the kernel writes for a byte below ' ' or above '~' and for
 * '\\' undone (so a record of several lines gives them all back), then a
 * '\n'.
 */
void ktap_kmsg_record(FILE *out, const char *rec);

#endif /* KTAP_H */
