/* SPDX-License-Identifier: MIT */
/*
 * The names a tool may have: MCP's own rule, the portable subset every host and model API
 * takes, and a method's portable name.
 */
#include "mcp/mcp.h"

static bool portable_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

bool mcp_valid_tool_name(const char *name, size_t length)
{
    if (length == 0 || length > 128)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!portable_char(name[i]) && name[i] != '.')
            return false;
    return true;
}

bool mcp_portable_tool_name(const char *name, size_t length)
{
    if (length == 0 || length > MCP_PORTABLE_NAME_MAX)
        return false;
    for (size_t i = 0; i < length; i++)
        if (!portable_char(name[i]))
            return false;
    return true;
}

size_t mcp_portable_name_of(const char *name, char *out)
{
    size_t length = 0;
    for (const unsigned char *at = (const unsigned char *)name;
         *at && length < MCP_PORTABLE_NAME_MAX; at++) {
        if ((*at & 0xC0) == 0x80)
            continue; /* the rest of a UTF-8 sequence, whose first byte gave its _ */
        out[length++] = portable_char((char)*at) ? (char)*at : '_';
    }
    out[length] = '\0';
    return length;
}
