/* SPDX-License-Identifier: MIT */
/*
 * "pattern" and "patternProperties" through PCRE2, compiled once, matched under a match limit
 * and a depth limit so that no string makes a check slow; and the formats rpcd asserts when
 * told to (date-time, date, time, email, ipv4, ipv6, uri, uuid), checked by hand.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "schema/schema_internal.h"

#include <pcre2.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds of one match: backtracking steps, and nested backtracking frames. */
enum { MATCH_LIMIT = 100000, DEPTH_LIMIT = 1000 };

struct sc_regex {
    pcre2_code *code;
    pcre2_match_context *context;
};

/* clang-format off */
/* ECMA-262's long names of Unicode general categories, which PCRE2 10.42 knows only short. */
static const char *const categories[][2] = {
    {"Letter", "L"}, {"Cased_Letter", "L&"}, {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"}, {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"}, {"Mark", "M"}, {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"}, {"Number", "N"}, {"Decimal_Number", "Nd"},
    {"digit", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"}, {"Punctuation", "P"},
    {"punct", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"},
    {"Math_Symbol", "Sm"}, {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"}, {"Control", "Cc"},
    {"cntrl", "Cc"}, {"Format", "Cf"}, {"Surrogate", "Cs"}, {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};
/* clang-format on */

/* The short name of a long category name (length bytes), or NULL. */
static const char *short_category(const char *name, size_t length)
{
    static const char *const prefixes[] = {"General_Category=", "gc="};
    for (size_t i = 0; i < 2; i++) {
        size_t skip = strlen(prefixes[i]);
        if (length > skip && memcmp(name, prefixes[i], skip) == 0) {
            name += skip;
            length -= skip;
        }
    }
    for (size_t i = 0; i < sizeof categories / sizeof categories[0]; i++)
        if (strlen(categories[i][0]) == length && memcmp(categories[i][0], name, length) == 0)
            return categories[i][1];
    return NULL;
}

/* The pattern with \p{Long_Name} and \P{...} made short (new, NUL-terminated), or NULL. */
static char *translate(const char *pattern, size_t length, size_t *out_length)
{
    char *out = malloc(length + 1);
    size_t used = 0;
    for (size_t i = 0; out && i < length; i++) {
        out[used++] = pattern[i];
        if (pattern[i] != '\\' || i + 1 == length)
            continue;
        out[used++] = pattern[++i]; /* the escaped character, never a new escape */
        const char *close = memchr(pattern + i, '}', length - i);
        if ((pattern[i] != 'p' && pattern[i] != 'P') || i + 1 == length || pattern[i + 1] != '{' ||
            !close)
            continue;
        const char *name = pattern + i + 2;
        const char *shorter = short_category(name, (size_t)(close - name));
        if (!shorter)
            continue;
        used += (size_t)sprintf(out + used, "{%s}", shorter); /* never longer than the name */
        i = (size_t)(close - pattern);
    }
    if (out)
        out[used] = '\0';
    *out_length = used;
    return out;
}

sc_regex *sc_regex_compile(const char *pattern, size_t length, char *error, size_t error_size)
{
    int code;
    PCRE2_SIZE offset;
    sc_regex *regex = calloc(1, sizeof *regex);
    if (!regex) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    /* ECMA-262: $ matches only at the end, never before a final newline; \uXXXX is a character. */
    size_t translated_length;
    char *translated = translate(pattern, length, &translated_length);
    if (translated)
        regex->code = pcre2_compile((PCRE2_SPTR)translated, translated_length,
                                    PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX,
                                    &code, &offset, NULL);
    free(translated);
    if (!translated) {
        snprintf(error, error_size, "out of memory");
        free(regex);
        return NULL;
    }
    if (!regex->code) {
        PCRE2_UCHAR message[120];
        char shown[64];
        pcre2_get_error_message(code, message, sizeof message);
        snprintf(error, error_size, "the pattern \"%s\" does not compile at offset %zu: %s",
                 sc_printable(pattern, shown, sizeof shown), (size_t)offset, (const char *)message);
        free(regex);
        return NULL;
    }
    regex->context = pcre2_match_context_create(NULL);
    if (!regex->context) {
        snprintf(error, error_size, "out of memory");
        sc_regex_free(regex);
        return NULL;
    }
    pcre2_set_match_limit(regex->context, MATCH_LIMIT);
    pcre2_set_depth_limit(regex->context, DEPTH_LIMIT);
    return regex;
}

void sc_regex_free(sc_regex *regex)
{
    if (!regex)
        return;
    pcre2_match_context_free(regex->context);
    pcre2_code_free(regex->code);
    free(regex);
}

int sc_regex_search(const sc_regex *regex, const char *text, size_t length)
{
    pcre2_match_data *data = pcre2_match_data_create(1, NULL);
    if (!data)
        return -1;
    /* The text is a JSON string jansson decoded: UTF-8 already checked. */
    int found = pcre2_match(regex->code, (PCRE2_SPTR)text, length, 0, PCRE2_NO_UTF_CHECK, data,
                            regex->context);
    pcre2_match_data_free(data);
    if (found >= 0)
        return 1;
    return found == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* clang-format off */
static const struct {
    const char *name;
    sc_format format;
} formats[] = {
    {"date-time", SC_FORMAT_DATE_TIME},
    {"date",      SC_FORMAT_DATE},
    {"time",      SC_FORMAT_TIME},
    {"email",     SC_FORMAT_EMAIL},
    {"ipv4",      SC_FORMAT_IPV4},
    {"ipv6",      SC_FORMAT_IPV6},
    {"uri",       SC_FORMAT_URI},
    {"uuid",      SC_FORMAT_UUID},
};
/* clang-format on */

sc_format sc_format_named(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return formats[i].format;
    return SC_FORMAT_NONE;
}

/* Reads count digits at *at into *value. */
static bool digits(const char *text, size_t length, size_t *at, size_t count, int *value)
{
    *value = 0;
    for (size_t i = 0; i < count; i++, (*at)++) {
        if (*at >= length || text[*at] < '0' || text[*at] > '9')
            return false;
        *value = *value * 10 + (text[*at] - '0');
    }
    return true;
}

static bool leap(int year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

/* RFC 3339 full-date at *at. */
static bool full_date(const char *text, size_t length, size_t *at)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year, month, day;
    if (!digits(text, length, at, 4, &year) || *at >= length || text[(*at)++] != '-' ||
        !digits(text, length, at, 2, &month) || *at >= length || text[(*at)++] != '-' ||
        !digits(text, length, at, 2, &day))
        return false;
    if (month < 1 || month > 12 || day < 1)
        return false;
    return day <= days[month - 1] + (month == 2 && leap(year));
}

/* RFC 3339 full-time at *at: hh:mm:ss[.frac](Z|±hh:mm); a leap second only at 23:59 UTC. */
static bool full_time(const char *text, size_t length, size_t *at)
{
    int hour, minute, second, offset_hour = 0, offset_minute = 0;
    if (!digits(text, length, at, 2, &hour) || *at >= length || text[(*at)++] != ':' ||
        !digits(text, length, at, 2, &minute) || *at >= length || text[(*at)++] != ':' ||
        !digits(text, length, at, 2, &second))
        return false;
    if (*at < length && text[*at] == '.') {
        size_t start = ++*at;
        while (*at < length && text[*at] >= '0' && text[*at] <= '9')
            (*at)++;
        if (*at == start)
            return false;
    }
    if (*at >= length)
        return false;
    char zone = text[(*at)++];
    int sign = 0;
    if (zone == '+' || zone == '-') {
        sign = zone == '+' ? 1 : -1;
        if (!digits(text, length, at, 2, &offset_hour) || *at >= length || text[(*at)++] != ':' ||
            !digits(text, length, at, 2, &offset_minute) || offset_hour > 23 || offset_minute > 59)
            return false;
    } else if (zone != 'Z' && zone != 'z') {
        return false;
    }
    if (hour > 23 || minute > 59 || second > 60)
        return false;
    if (second == 60) {
        int utc = (hour * 60 + minute - sign * (offset_hour * 60 + offset_minute) + 1440) % 1440;
        return utc == 23 * 60 + 59;
    }
    return true;
}

static bool date_time(const char *text, size_t length)
{
    size_t at = 0;
    if (!full_date(text, length, &at) || at >= length ||
        (text[at] != 'T' && text[at] != 't' && text[at] != ' '))
        return false;
    at++;
    return full_time(text, length, &at) && at == length;
}

static bool email(const char *text, size_t length)
{
    const char *at = memchr(text, '@', length);
    if (!at || at == text || at == text + length - 1 || memchr(at + 1, '@', text + length - at - 1))
        return false;
    size_t local = (size_t)(at - text);
    /* No leading, trailing or doubled dot in the local part (RFC 5321's dot-string). */
    if (text[0] == '.' || text[local - 1] == '.')
        return false;
    for (size_t i = 0; i + 1 < local; i++)
        if (text[i] == '.' && text[i + 1] == '.')
            return false;
    return true;
}

static bool address(int family, const char *text, size_t length)
{
    char copy[64];
    unsigned char binary[16];
    if (length >= sizeof copy || memchr(text, '\0', length))
        return false;
    memcpy(copy, text, length);
    copy[length] = '\0';
    return inet_pton(family, copy, binary) == 1;
}

static bool uri(const char *text, size_t length)
{
    /* scheme ":" ..., the scheme a letter then letters, digits, "+", "-" or "."; no spaces,
     * no characters outside ASCII (an IRI is not a URI). */
    size_t i = 0;
    if (length == 0 || !((text[0] | 0x20) >= 'a' && (text[0] | 0x20) <= 'z'))
        return false;
    while (i < length && text[i] != ':') {
        char c = text[i++];
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '+' &&
            c != '-' && c != '.')
            return false;
    }
    if (i == length)
        return false;
    for (; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= 0x20 || c >= 0x7f || strchr("\"<>\\^`{|}", c))
            return false;
    }
    return true;
}

static bool uuid(const char *text, size_t length)
{
    if (length != 36)
        return false;
    for (size_t i = 0; i < length; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        char c = text[i];
        bool hex = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
        if (dash ? c != '-' : !hex)
            return false;
    }
    return true;
}

bool sc_format_holds(sc_format format, const char *text, size_t length)
{
    size_t at = 0;
    switch (format) {
    case SC_FORMAT_DATE_TIME: return date_time(text, length);
    case SC_FORMAT_DATE: return full_date(text, length, &at) && at == length;
    case SC_FORMAT_TIME: return full_time(text, length, &at) && at == length;
    case SC_FORMAT_EMAIL: return email(text, length);
    case SC_FORMAT_IPV4: return address(AF_INET, text, length);
    case SC_FORMAT_IPV6: return address(AF_INET6, text, length);
    case SC_FORMAT_URI: return uri(text, length);
    case SC_FORMAT_UUID: return uuid(text, length);
    case SC_FORMAT_NONE: break;
    }
    return true;
}
