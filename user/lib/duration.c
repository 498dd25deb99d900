// SPDX-License-Identifier: MIT
/*
 * duration.c - the duration grammar of every drmacct command line, shared
 * by the CLI (cli_parse_duration()) and the standalone programs.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int dac_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
		{ "", 1e9 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
	};
	char num[64];
	size_t n = 0, i;
	bool dot = false, digit = false;
	double v;

	if (!s)
		return -EINVAL;
	/* digits with at most one '.', nothing else (no sign, exponent, nan) */
	for (; s[n]; n++) {
		if (s[n] == '.' && !dot)
			dot = true;
		else if (s[n] >= '0' && s[n] <= '9')
			digit = true;
		else
			break;
	}
	if (!digit)
		return -EINVAL;
	if (n >= sizeof(num))
		return -ERANGE;
	memcpy(num, s, n);
	num[n] = '\0';
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s + n, units[i].suffix))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	v = strtod(num, NULL) * units[i].ns;
	if (!isfinite(v) || v >= 1.8e19)
		return -ERANGE;
	*ns = (uint64_t)(v + 0.5);
	return 0;
}
