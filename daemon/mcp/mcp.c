/* SPDX-License-Identifier: MIT */
/*
 * MCP answers built from the method registry: the tool table (registration order, plus a sorted
 * index for look-ups, and the config's instructions) and the results of the requests the daemon
 * answers itself.
 */
#include "mcp/mcp.h"

#include "base/log.h"
#include "methods/mcp_catalog.h"
#include "methods/mcp_methods.h"
#include "methods/mcp_tool.h"
#include "methods/tool_policy.h"
#include "mcp/mcp_revision.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RPCD_VERSION
#define RPCD_VERSION "unknown"
#endif

/* The handshake era's, newest first: what initialize negotiates (the stateless revision has no
 * initialize), and what server/discover lists after MCP_STATELESS_VERSION. */
static const char *const supported_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                 "2024-11-05"};
enum { VERSION_COUNT = sizeof supported_versions / sizeof supported_versions[0] };

bool mcp_handshake_version(js_span version)
{
    for (size_t i = 0; i < VERSION_COUNT; i++)
        if (js_string_equals(version, supported_versions[i], strlen(supported_versions[i])))
            return true;
    return false;
}

int mcp_append_versions(buffer *out)
{
    int failed = buf_append_string(out, "[\"" MCP_STATELESS_VERSION "\"");
    for (size_t i = 0; i < VERSION_COUNT; i++) {
        failed |= buf_append_char(out, ',');
        failed |= buf_append_json_string(out, supported_versions[i], strlen(supported_versions[i]));
    }
    return failed | buf_append_char(out, ']');
}

typedef struct tool {
    char *name; /* owned */
    size_t length;
    const reg_method *method;
} tool;

struct mcp_tools {
    tool *items; /* registration order: the order of tools/list */
    size_t count;
    tool **sorted;        /* by name, for look-ups */
    char *instructions;   /* owned: [mcp] instructions, or NULL */
    mcp_catalog *catalog; /* owned: resources, prompts, completions */
    tool_policy *policy;  /* owned, or NULL: every tool served */
};

static int compare_tools(const void *a, const void *b)
{
    const tool *left = *(tool *const *)a, *right = *(tool *const *)b;
    size_t shorter = left->length < right->length ? left->length : right->length;
    int order = memcmp(left->name, right->name, shorter);
    if (order != 0)
        return order;
    return (left->length > right->length) - (left->length < right->length);
}

/* The tool name config gives method, or NULL. */
static const char *configured_name(const rpcd_config *config, const reg_method *method)
{
    for (size_t i = 0; i < config->mcp_name_count; i++)
        if (strcmp(config->mcp_names[i].key, method->name) == 0)
            return config->mcp_names[i].value;
    return NULL;
}

/*
 * The next item of a comma-separated list, spaces around it trimmed: returns true with the
 * item's start and length, and moves *cursor past it; false at the end of the list.
 */
static bool next_item(const char **cursor, const char **item, size_t *length)
{
    const char *start = *cursor;
    while (*start == ' ' || *start == ',')
        start++;
    if (!*start)
        return false;
    const char *end = start;
    while (*end && *end != ',')
        end++;
    const char *last = end;
    while (last > start && last[-1] == ' ')
        last--;
    *item = start;
    *length = (size_t)(last - start);
    *cursor = end;
    return true;
}

/* True when the comma-separated list holds name as one of its items. */
static bool listed(const char *list, const char *name)
{
    const char *item;
    size_t length;
    while (next_item(&list, &item, &length))
        if (length == strlen(name) && memcmp(item, name, length) == 0)
            return true;
    return false;
}

/* Checks that every method the config names exists. */
static int check_named_methods(const registry *methods, const rpcd_config *config, char *error,
                               size_t error_size)
{
    for (size_t i = 0; i < config->mcp_name_count; i++) {
        const char *method = config->mcp_names[i].key;
        if (!reg_find(methods, method, strlen(method))) {
            snprintf(error, error_size, "%s: [mcp] tool.%s names no method of any plugin",
                     config->path, method);
            return -1;
        }
    }
    const char *list = config->mcp_tools;
    if (!list || strcmp(list, "all") == 0 || strcmp(list, "none") == 0)
        return 0;
    const char *item;
    size_t length;
    while (next_item(&list, &item, &length)) {
        if (!reg_find(methods, item, length)) {
            snprintf(error, error_size, "%s: [mcp] tools lists '%.*s', no method of any plugin",
                     config->path, (int)length, item);
            return -1;
        }
    }
    return 0;
}

/*
 * Adds method to tools under its tool name (configured, portable or its own). Returns 1 when
 * added, 0 when skipped (with a warning), -1 with the reason in error.
 */
static int add_tool(mcp_tools *tools, const rpcd_config *config, const reg_method *method, bool all,
                    char *error, size_t error_size)
{
    bool specification = config->mcp_tool_names == CFG_TOOL_NAMES_SPECIFICATION;
    const char *name = configured_name(config, method);
    char portable[MCP_PORTABLE_NAME_MAX + 1];
    if (!name && !specification)
        mcp_portable_name_of(method->name, portable);
    if (!name)
        name = specification ? method->name : portable;
    size_t length = strlen(name);
    if (specification ? !mcp_valid_tool_name(name, length)
                      : !mcp_portable_tool_name(name, length)) {
        if (all && name == method->name) {
            log_message(LOG_WARNING,
                        "method '%s' is no valid MCP tool name: not a tool "
                        "(name it with tool.%s = ... in [mcp])",
                        name, name);
            return 0;
        }
        snprintf(error, error_size, "%s: [mcp] tool name '%s' for method '%s' is not valid (%s)",
                 config->path, name, method->name,
                 specification ? "1 to 128 of a-z A-Z 0-9 _ . -"
                               : "1 to 64 of a-z A-Z 0-9 _ -, with tool_names = portable");
        return -1;
    }
    tool *item = &tools->items[tools->count];
    item->name = strdup(name);
    item->length = length;
    item->method = method;
    if (!item->name) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    tools->sorted[tools->count++] = item;
    return 1;
}

/* Sorts the tools by name and refuses two of one name, naming both methods. Returns 0 or -1. */
static int sort_tools(mcp_tools *tools, const rpcd_config *config, char *error, size_t error_size)
{
    qsort(tools->sorted, tools->count, sizeof *tools->sorted, compare_tools);
    for (size_t i = 1; i < tools->count; i++) {
        if (compare_tools(&tools->sorted[i - 1], &tools->sorted[i]) != 0)
            continue;
        /* In registration order, whatever order the sort left them in. */
        const tool *first = tools->sorted[i - 1], *second = tools->sorted[i];
        if (first > second) {
            const tool *swap = first;
            first = second;
            second = swap;
        }
        snprintf(error, error_size,
                 "%s: [mcp] two methods, '%s' and '%s', have the tool name '%s' (name one "
                 "with tool.METHOD = ... in [mcp])",
                 config->path, first->method->name, second->method->name, first->name);
        return -1;
    }
    return 0;
}

int mcp_tools_new(const registry *methods, const rpcd_config *config, mcp_tools **out, char *error,
                  size_t error_size)
{
    mcp_tools *tools = calloc(1, sizeof *tools);
    size_t total = reg_count(methods);
    if (!tools || !(tools->items = calloc(total + 1, sizeof *tools->items)) ||
        !(tools->sorted = calloc(total + 1, sizeof *tools->sorted))) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    if (check_named_methods(methods, config, error, error_size) != 0)
        goto fail;
    const char *list = config->mcp_tools ? config->mcp_tools : "all";
    bool all = strcmp(list, "all") == 0;
    for (size_t i = 0; strcmp(list, "none") != 0 && i < total; i++) {
        const reg_method *method = reg_at(methods, i);
        if (method->mcp_role != RPCD_MCP_TOOL)
            continue; /* a resource, prompt or completion (mcp_catalog), or hidden from MCP */
        if ((all || listed(list, method->name)) &&
            add_tool(tools, config, method, all, error, error_size) < 0)
            goto fail;
    }
    if (sort_tools(tools, config, error, error_size) != 0 ||
        mcp_catalog_new(methods, &tools->catalog, error, error_size) != 0)
        goto fail;
    if (config->mcp_instructions && !(tools->instructions = strdup(config->mcp_instructions))) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    *out = tools;
    return 0;
fail:
    mcp_tools_free(tools);
    return -1;
}

void mcp_tools_free(mcp_tools *tools)
{
    if (!tools)
        return;
    for (size_t i = 0; i < tools->count; i++)
        free(tools->items[i].name);
    free(tools->items);
    free(tools->sorted);
    free(tools->instructions);
    mcp_catalog_free(tools->catalog);
    pol_free(tools->policy);
    free(tools);
}

void mcp_tools_take_policy(mcp_tools *tools, tool_policy *policy)
{
    pol_free(tools->policy);
    tools->policy = policy;
    mcp_catalog_hide(tools->catalog, policy);
}

tool_policy *mcp_tools_policy(const mcp_tools *tools)
{
    return tools ? tools->policy : NULL;
}

const mcp_catalog *mcp_tools_catalog(const mcp_tools *tools)
{
    return tools ? tools->catalog : NULL;
}

size_t mcp_tools_count(const mcp_tools *tools)
{
    return tools ? tools->count : 0;
}

const reg_method *mcp_tool_method(const mcp_tools *tools, const char *name, size_t length)
{
    if (!tools)
        return NULL;
    tool key = {(char *)name, length, NULL};
    tool *key_pointer = &key;
    tool **found =
        bsearch(&key_pointer, tools->sorted, tools->count, sizeof *tools->sorted, compare_tools);
    return found ? (*found)->method : NULL;
}

/*
 * The member named key of a params object, when params is one: 1 and its value, 0 when there
 * is none, -1 when it appears twice (what rpcd reads must mean one thing).
 */
static int member(js_span params, const char *key, js_span *value)
{
    if (params.length == 0)
        return 0;
    size_t count = js_object_get(params, key, strlen(key), value);
    return count > 1 ? -1 : (int)count;
}

static int append_server_info(buffer *out)
{
    int failed = buf_append_string(out, "\"serverInfo\":{\"name\":\"rpcd\",\"version\":");
    failed |= buf_append_json_string(out, RPCD_VERSION, strlen(RPCD_VERSION));
    return failed | buf_append_char(out, '}');
}

/* ,"instructions": the config's guidance for the model, when it gives some. */
static int append_instructions(const mcp_tools *tools, buffer *out)
{
    if (!tools || !tools->instructions)
        return 0;
    int failed = buf_append_string(out, ",\"instructions\":");
    return failed | buf_append_json_string(out, tools->instructions, strlen(tools->instructions));
}

/*
 * "capabilities":{...}: tools always; resources, prompts and completions when a plugin offers
 * some; logging always, since every plugin may log. A reload (SIGHUP) can change every list,
 * and a client that initialized is told of it.
 */
static int append_capabilities(const mcp_tools *tools, buffer *out, bool stateless)
{
    const mcp_catalog *catalog = mcp_tools_catalog(tools);
    int failed = buf_append_string(out, "\"capabilities\":{\"tools\":{\"listChanged\":true}");
    /* Tasks, the stateless revision's extension, when a tool may run as one. */
    bool tasks = false;
    for (size_t i = 0; stateless && tools && i < tools->count; i++)
        tasks |=
            (tools->items[i].method->flags & (RPCD_METHOD_TASK | RPCD_METHOD_TASK_REQUIRED)) != 0;
    if (tasks)
        failed |= buf_append_string(out, ",\"extensions\":{\"" MCP_TASKS_EXTENSION "\":{}}");
    if (mcp_catalog_count(catalog, RPCD_MCP_RESOURCE) > 0)
        failed |=
            buf_append_string(out, ",\"resources\":{\"subscribe\":true,\"listChanged\":true}");
    if (mcp_catalog_count(catalog, RPCD_MCP_PROMPT) > 0)
        failed |= buf_append_string(out, ",\"prompts\":{\"listChanged\":true}");
    if (mcp_catalog_count(catalog, RPCD_MCP_COMPLETION) > 0)
        failed |= buf_append_string(out, ",\"completions\":{}");
    return failed | buf_append_string(out, ",\"logging\":{}}");
}

static int answer_initialize(const mcp_tools *tools, js_span params, buffer *out)
{
    const char *version = supported_versions[0];
    js_span asked;
    int has_version = member(params, "protocolVersion", &asked);
    if (has_version < 0)
        return -2;
    if (has_version && js_kind_of(asked) == JS_STRING) {
        for (size_t i = 0; i < VERSION_COUNT; i++)
            if (js_string_equals(asked, supported_versions[i], strlen(supported_versions[i])))
                version = supported_versions[i]; /* the client's, since rpcd speaks it */
    }
    int failed = buf_append_string(out, "{\"protocolVersion\":");
    failed |= buf_append_json_string(out, version, strlen(version));
    failed |= buf_append_char(out, ',');
    failed |= append_capabilities(tools, out, false);
    failed |= buf_append_char(out, ',');
    failed |= append_server_info(out);
    failed |= append_instructions(tools, out);
    return failed | buf_append_char(out, '}');
}

/*
 * The stateless revision's discovery, whatever the request's era: after a reload,
 * subscriptions/listen tells of a changed tool list, so listChanged is true here. serverInfo is
 * where the revision's schema puts it (_meta) and where its discovery page shows it (a member), for
 * clients of either.
 */
static int answer_discover(const mcp_tools *tools, buffer *out)
{
    size_t start = out->length;
    int failed = buf_append_string(out, "{\"supportedVersions\":");
    failed |= mcp_append_versions(out);
    failed |= buf_append_char(out, ',');
    failed |= append_capabilities(tools, out, true);
    failed |= buf_append_char(out, ',');
    failed |= append_server_info(out);
    failed |= append_instructions(tools, out);
    failed |= buf_append_char(out, '}');
    return failed | mcp_finish_stateless_result(out, start, true, true);
}

/* Whether a schema's "type" allows an object: "object", or a list of types that holds it. */
static int allows_object(js_span type, bool *only)
{
    *only = js_kind_of(type) == JS_STRING;
    if (*only)
        return js_string_equals(type, "object", 6);
    if (js_kind_of(type) != JS_ARRAY)
        return 0;
    js_iter iter;
    js_span key, item;
    js_iter_init(&iter, type);
    while (js_iter_next(&iter, &key, &item) == 1)
        if (js_kind_of(item) == JS_STRING && js_string_equals(item, "object", 6))
            return 1;
    return 0;
}

/*
 * A plugin's params schema, when it describes an object as MCP requires; one that allows other
 * types too (sum's ["array","object"]: a JSON-RPC client may send an array) goes out with its
 * type narrowed to "object", the only params tools/call sends. Else {"type":"object"}.
 */
static int append_input_schema(buffer *out, const reg_method *method)
{
    js_span schema, type;
    bool only;
    if (method->params_schema &&
        js_validate(method->params_schema, strlen(method->params_schema), 512, &schema, NULL) ==
            0 &&
        member(schema, "type", &type) == 1 && allows_object(type, &only)) {
        if (only)
            return buf_append(out, schema.start, schema.length);
        int failed = buf_append(out, schema.start, (size_t)(type.start - schema.start));
        failed |= buf_append_string(out, "\"object\"");
        return failed |
               buf_append(out, type.start + type.length,
                          schema.length - (size_t)(type.start + type.length - schema.start));
    }
    return buf_append_string(out, "{\"type\":\"object\"}");
}

static int answer_tools_list(const mcp_tools *tools, js_span params, buffer *out)
{
    size_t start;
    if (mcp_page_start(params, mcp_tools_count(tools), &start) != 0)
        return -2;
    size_t count = mcp_tools_count(tools);
    size_t stop = count - start > MCP_PAGE_SIZE ? start + MCP_PAGE_SIZE : count;
    int failed = buf_append_string(out, "{\"tools\":[");
    bool first = true;
    for (size_t i = start; i < stop; i++) {
        const tool *item = &tools->items[i];
        const reg_method *method = item->method;
        /* What tools/call and a call by name refuse is not listed (a page may come out short). */
        if (!pol_served(tools->policy, method, NULL))
            continue;
        if (!first)
            failed |= buf_append_char(out, ',');
        first = false;
        failed |= buf_append_string(out, "{\"name\":");
        failed |= buf_append_json_string(out, item->name, item->length);
        failed |= buf_append_string(out, ",\"description\":");
        if (method->description) {
            failed |= buf_append_json_string(out, method->description, strlen(method->description));
        } else {
            /* Names of any length: a method renamed to a short tool name may have a long one. */
            buffer text = BUFFER_INIT;
            if (buf_printf(&text, "Method %s of the %s plugin.", method->name,
                           method->owner_name) == 0)
                failed |= buf_append_json_string(out, text.data, text.length);
            else
                failed = -1;
            buf_free(&text);
        }
        failed |= buf_append_string(out, ",\"inputSchema\":");
        failed |= append_input_schema(out, method);
        failed |= mcp_tool_append_members(out, method);
        failed |= buf_append_char(out, '}');
    }
    failed |= buf_append_char(out, ']');
    if (stop < count)
        failed |= buf_printf(out, ",\"nextCursor\":\"%zu\"", stop);
    return failed | buf_append_char(out, '}');
}

/* The lists a client may cache (ttlMs) in the stateless revision. */
static bool is_list(int id)
{
    return id == MCP_TOOLS_LIST || id == MCP_RESOURCES_LIST || id == MCP_RESOURCES_TEMPLATES_LIST ||
           id == MCP_PROMPTS_LIST;
}

int mcp_answer_in(const mcp_tools *tools, int id, int era, js_span params, buffer *out)
{
    size_t start = out->length;
    int status;
    switch (id) {
    case MCP_INITIALIZE: status = answer_initialize(tools, params, out); break;
    case MCP_PING: status = buf_append_string(out, "{}"); break;
    case MCP_SERVER_DISCOVER: status = answer_discover(tools, out); break;
    case MCP_TOOLS_LIST: status = answer_tools_list(tools, params, out); break;
    case MCP_RESOURCES_LIST:
        status = mcp_catalog_answer_list(mcp_tools_catalog(tools), MCP_LIST_RESOURCES, params, out);
        break;
    case MCP_RESOURCES_TEMPLATES_LIST:
        status = mcp_catalog_answer_list(mcp_tools_catalog(tools), MCP_LIST_TEMPLATES, params, out);
        break;
    case MCP_PROMPTS_LIST:
        status = mcp_catalog_answer_list(mcp_tools_catalog(tools), MCP_LIST_PROMPTS, params, out);
        break;
    default: return -1; /* not MCP's, or a call of a plugin's method (mcp_route_message) */
    }
    /* initialize belongs to the handshake era; discovery has its revision's shape already. */
    if (status == 0 && era == MCP_ERA_STATELESS && id != MCP_INITIALIZE &&
        id != MCP_SERVER_DISCOVER)
        status = mcp_finish_stateless_result(out, start, true, is_list(id));
    return status == -2 ? -2 : status != 0 ? -3 : 0;
}

int mcp_answer(const mcp_tools *tools, const char *method, size_t method_length, js_span params,
               buffer *out)
{
    int id = mcp_method_find(method, method_length);
    if (id < 0 || id == MCP_TOOLS_CALL || id == MCP_SUBSCRIPTIONS_LISTEN)
        return -1;
    /* initialize selects the handshake era, whatever its _meta says. */
    int era = id == MCP_INITIALIZE ? MCP_ERA_HANDSHAKE : mcp_revision_read(params, out);
    if (era < 0)
        return era;
    return mcp_answer_in(tools, id, era, params, out);
}
