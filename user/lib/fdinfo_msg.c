// SPDX-License-Identifier: MIT
/*
 * fdinfo_msg.c - the findings' messages, made when asked for.
 *
 * A finding keeps which message it is and its parts (strings of the parsed
 * text, numbers, a line); dac_finding_message() puts them together. The
 * texts are those of Documentation/fdinfo-validation.rst's examples; keys
 * and values quoted are cut to 64 bytes with "...".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fdinfo_priv.h"

/* Quoted text longer than this is cut, so a 1 MiB key makes no 1 MiB message. */
#define KEYMAX 64
#define NFMT "%.*s%s"
#define KFMT "'" NFMT "'"
#define KARG(k) (int)(strlen(k) > KEYMAX ? KEYMAX : strlen(k)), (k), \
		(strlen(k) > KEYMAX ? "..." : "")

static const char *const subset_names[] = { "total", "shared", "resident", "purgeable",
					    "active" };

const char *dac_finding_message(const struct dac_finding *f, char *buf, size_t len)
{
	const char *s0 = f->priv_str[0] ? f->priv_str[0] : "";
	const char *s1 = f->priv_str[1] ? f->priv_str[1] : "";
	const unsigned long long n0 = f->priv_num[0], n1 = f->priv_num[1];
	const enum dac_unit_kind kind = (enum dac_unit_kind)n0;
	const char *cur_or_not = n0 ? "drm-engine- or drm-cycles- key" : "drm-engine- key";
	char meant[64] = "";

	if (!buf || !len)
		return buf;
	switch ((enum dac_msg)f->priv_msg) {
	case DAC_MSG_NUL_BYTE:
		snprintf(buf, len, "line contains a NUL byte; line ignored");
		break;
	case DAC_MSG_NO_COLON:
		snprintf(buf, len, "drm- line without ':' between key and value; line ignored");
		break;
	case DAC_MSG_KEY_EMPTY:
		snprintf(buf, len, "empty key before ':'");
		break;
	case DAC_MSG_KEY_WHITESPACE:
		snprintf(buf, len, "key " KFMT " contains whitespace (keys must not); line ignored",
			 KARG(s0));
		break;
	case DAC_MSG_TRAILING_WS:
		snprintf(buf, len, KFMT ": trailing whitespace after the value", KARG(s0));
		break;
	case DAC_MSG_DUPLICATE:
		snprintf(buf, len, "key " KFMT " already appeared on line %u; the first value is used",
			 KARG(s0), f->priv_line);
		break;
	case DAC_MSG_NAME_EMPTY:
		snprintf(buf, len, "key " KFMT " has an empty engine/region name", KARG(s0));
		break;
	case DAC_MSG_UNKNOWN_DRM_KEY:
		snprintf(buf, len, "key " KFMT " is not defined by the %s spec", KARG(s0),
			 dac_profile_name((enum dac_profile)n0));
		break;
	case DAC_MSG_DRIVER_PREFIX:
		snprintf(buf, len, "driver-specific key " KFMT " is not prefixed with the driver name "
			 KFMT, KARG(s0), KARG(s1));
		break;
	case DAC_MSG_VALUE_EMPTY:
		snprintf(buf, len, KFMT ": empty value", KARG(s0));
		break;
	case DAC_MSG_VALUE_INVALID:
		snprintf(buf, len, KFMT ": value " KFMT " is not an unsigned integer", KARG(s0),
			 KARG(s1));
		break;
	case DAC_MSG_VALUE_RANGE:
		snprintf(buf, len, KFMT ": value does not fit in 64 bits (in base units)", KARG(s0));
		break;
	case DAC_MSG_VALUE_WHITESPACE:
		snprintf(buf, len, KFMT ": value contains whitespace", KARG(s0));
		break;
	case DAC_MSG_UNIT_SPACING:
		snprintf(buf, len, KFMT ": no space between number and unit " KFMT, KARG(s0),
			 KARG(s1));
		break;
	case DAC_MSG_UNIT_MISSING_NS:
		snprintf(buf, len, KFMT ": no unit, the spec requires 'ns'; ns assumed", KARG(s0));
		break;
	case DAC_MSG_UNIT_MISSING_HZ:
		snprintf(buf, len, KFMT ": no unit (%s); Hz assumed", KARG(s0), dac__unit_list(kind));
		break;
	case DAC_MSG_UNIT_NONSTANDARD:
		/* priv_line: the value in base units (n1) is known */
		if (f->priv_line)
			dac__unit_suggest(kind, n1, meant, sizeof(meant));
		snprintf(buf, len, KFMT ": unit " KFMT " is not in the spec (%s); value not used%s%s%s",
			 KARG(s0), KARG(s1), dac__unit_list(kind),
			 *meant ? " (probably meant '" : "", meant, *meant ? "')" : "");
		break;
	case DAC_MSG_UNIT_UNEXPECTED:
		snprintf(buf, len, KFMT ": takes no unit, found " KFMT, KARG(s0), KARG(s1));
		break;
	case DAC_MSG_UNIT_INVALID:
		snprintf(buf, len, KFMT ": unit " KFMT " not allowed here (%s)", KARG(s0), KARG(s1),
			 dac__unit_list(kind));
		break;
	case DAC_MSG_PDEV_FORMAT:
		snprintf(buf, len, "drm-pdev " KFMT " is not a PCI address dddd:bb:dd.f", KARG(s0));
		break;
	case DAC_MSG_CAPACITY_ZERO:
		snprintf(buf, len, KFMT ": zero capacity is not allowed; 1 assumed", KARG(s0));
		break;
	case DAC_MSG_MAXFREQ_ZERO:
		snprintf(buf, len, KFMT ": a maximum frequency of 0 Hz is meaningless", KARG(s0));
		break;
	case DAC_MSG_CAPACITY_ORPHAN:
		snprintf(buf, len, "'drm-engine-capacity-" NFMT "' names an engine without %s",
			 KARG(s0), cur_or_not);
		break;
	case DAC_MSG_CYCLES_ORPHAN_NOTE:
		snprintf(buf, len, "engine " KFMT " reports cycles but no drm-engine- time", KARG(s0));
		break;
	case DAC_MSG_CYCLES_ORPHAN:
		snprintf(buf, len, "'drm-cycles-" NFMT "' names an engine without drm-engine- key",
			 KARG(s0));
		break;
	case DAC_MSG_MAXFREQ_ORPHAN:
		snprintf(buf, len, "'drm-maxfreq-" NFMT "' names an engine without %s", KARG(s0),
			 cur_or_not);
		break;
	case DAC_MSG_TOTAL_CYCLES_ORPHAN:
		snprintf(buf, len, "'drm-total-cycles-" NFMT "' without drm-cycles- for that engine",
			 KARG(s0));
		break;
	case DAC_MSG_MAXFREQ_AND_TOTAL:
		snprintf(buf, len, "engine " KFMT " has both drm-maxfreq- and drm-total-cycles- "
			 "(only one is allowed)", KARG(s0));
		break;
	case DAC_MSG_MEMORY_DEPRECATED:
		snprintf(buf, len, "'drm-memory-" NFMT "' is deprecated; drm-resident- is its "
			 "replacement", KARG(s0));
		break;
	case DAC_MSG_MEMORY_MISMATCH:
		snprintf(buf, len, "'drm-memory-" NFMT "' (%llu bytes) is an alias of drm-resident- "
			 "(line %u, %llu bytes) but differs; drm-resident- is used", KARG(s0), n0,
			 f->priv_line, n1);
		break;
	case DAC_MSG_MEMORY_LEGACY_DUP:
		snprintf(buf, len, "deprecated drm-memory-" KFMT " printed next to drm-resident- "
			 "(line %u) with the same value", KARG(s0), f->priv_line);
		break;
	case DAC_MSG_MEMORY_SUBSET:
		/* priv_line: the two categories, small * 8 + big */
		snprintf(buf, len, "region " KFMT ": %s (%llu bytes) exceeds %s (%llu bytes)",
			 KARG(s0), subset_names[(f->priv_line >> 3) % 5], n0,
			 subset_names[(f->priv_line & 7) % 5], n1);
		break;
	case DAC_MSG_DRIVER_MISSING:
		snprintf(buf, len, "mandatory key drm-driver is missing");
		break;
	case DAC_MSG_CLIENT_ID_MISSING:
		snprintf(buf, len, "no drm-client-id: shared or duplicated fds cannot be told apart");
		break;
	default:
		snprintf(buf, len, "%s", f->code ? f->code : "?");
		break;
	}
	return buf;
}
