/* SPDX-License-Identifier: MIT */
/*
 * What json_scan.c, json_string.c and json_walk.c share and their callers do not need:
 * whitespace, hex digits and the end of a string token.
 */
#ifndef RPCD_JSON_SCAN_INTERNAL_H
#define RPCD_JSON_SCAN_INTERNAL_H

#include <stddef.h>

static inline const char *js_skip_whitespace(const char *p, const char *end)
{
    /* Every whitespace byte is at most a space; compact JSON has none, and leaves at the first
     * test. */
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The value of the hex digit c, or -1 when it is none. */
static inline int js_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * p points at the opening quote of a string token; returns the byte after its closing quote, or
 * NULL when the string is not valid JSON (json_scan.c).
 */
const char *js_string_end(const char *p, const char *end);

#endif
