/* SPDX-License-Identifier: MIT */
/*
 * duration.h - parse a command-line duration.
 */
#ifndef DRMACCT_DURATION_H
#define DRMACCT_DURATION_H

#include <stdint.h>

/*
 * dac_parse_duration() - a decimal number (digits, at most one '.') with an
 * optional unit ms, s, m or h; a bare number is seconds ("500ms", "2s",
 * "1m", "1.5"). Return: 0, -EINVAL (not a duration) or -ERANGE.
 */
int dac_parse_duration(const char *s, uint64_t *ns);

#endif /* DRMACCT_DURATION_H */
