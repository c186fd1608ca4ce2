/* SPDX-License-Identifier: MIT */
/*
 * A tool's title, annotations, output schema and icons, checked when a plugin registers them and
 * shown in tools/list; complete tool results and results of tools with an output schema, checked
 * before they are written. jansson reads them: they are small, and only tools that use them pay.
 */
#include "methods/mcp_tool.h"

#include "json/json_scan.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Nesting rpcd accepts in what a plugin describes, as for params schemas. */
enum { MAX_DEPTH = 512 };

static json_t *parse(const char *text, size_t length)
{
    if (js_validate(text, length, MAX_DEPTH, NULL, NULL) != 0)
        return NULL;
    return json_loadb(text, length, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                      NULL);
}

/* True when object's member key is absent or satisfies is (a json_is_* test). */
#define ABSENT_OR(object, key, is)                                                                 \
    (!json_object_get(object, key) || is(json_object_get(object, key)))

static bool valid_annotations(const json_t *value)
{
    static const char *const hints[] = {"readOnlyHint", "destructiveHint", "idempotentHint",
                                        "openWorldHint"};
    if (!json_is_object(value) || !ABSENT_OR(value, "title", json_is_string))
        return false;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (!ABSENT_OR(value, hints[i], json_is_boolean))
            return false;
    return true;
}

static bool valid_string_array(const json_t *value)
{
    size_t i;
    json_t *item;
    if (!json_is_array(value))
        return false;
    json_array_foreach(value, i, item)
    {
        if (!json_is_string(item))
            return false;
    }
    return true;
}

static bool valid_icons(const json_t *value)
{
    size_t i;
    json_t *icon;
    if (!json_is_array(value))
        return false;
    json_array_foreach(value, i, icon)
    {
        if (!json_is_object(icon) || !json_is_string(json_object_get(icon, "src")) ||
            !ABSENT_OR(icon, "mimeType", json_is_string))
            return false;
        const json_t *sizes = json_object_get(icon, "sizes");
        const json_t *theme = json_object_get(icon, "theme");
        if ((sizes && !valid_string_array(sizes)) ||
            (theme && (!json_is_string(theme) || (strcmp(json_string_value(theme), "light") != 0 &&
                                                  strcmp(json_string_value(theme), "dark") != 0))))
            return false;
    }
    return true;
}

static bool valid_output_schema(const json_t *value)
{
    const json_t *type = json_object_get(value, "type");
    return json_is_object(value) && json_is_string(type) &&
           strcmp(json_string_value(type), "object") == 0;
}

/* Checks one optional descriptor member of JSON text with check. */
static bool member_ok(const char *text, bool (*check)(const json_t *value))
{
    if (!text)
        return true;
    json_t *value = parse(text, strlen(text));
    bool ok = value && check(value);
    json_decref(value);
    return ok;
}

const char *mcp_tool_refusal(const char *title, const char *annotations, const char *output_schema,
                             const char *icons)
{
    if (title && !js_utf8_valid(title, strlen(title)))
        return "its title is not UTF-8";
    if (!member_ok(annotations, valid_annotations))
        return "its annotations are not a JSON object of MCP's tool annotations (the four hints "
               "booleans, title a string)";
    if (!member_ok(output_schema, valid_output_schema))
        return "its output_schema is not a JSON Schema object with \"type\": \"object\"";
    if (!member_ok(icons, valid_icons))
        return "its icons are not a JSON array of MCP icons (objects with a string \"src\")";
    return NULL;
}

int mcp_tool_append_members(buffer *out, const reg_method *method)
{
    int failed = 0;
    if (method->title) {
        failed |= buf_append_string(out, ",\"title\":");
        failed |= buf_append_json_string(out, method->title, strlen(method->title));
    }
    if (method->annotations) {
        failed |= buf_append_string(out, ",\"annotations\":");
        failed |= buf_append_string(out, method->annotations);
    }
    if (method->output_schema) {
        failed |= buf_append_string(out, ",\"outputSchema\":");
        failed |= buf_append_string(out, method->output_schema);
    }
    if (method->icons) {
        failed |= buf_append_string(out, ",\"icons\":");
        failed |= buf_append_string(out, method->icons);
    }
    return failed;
}

/* ---- Checking results ------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int refuse(char *reason, size_t size,
                                                        const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(reason, size, format, args);
    va_end(args);
    return -1;
}

/* True for base64 text (RFC 4648 alphabet, padding only at the end), as MCP's data and blob. */
static bool valid_base64(const json_t *value)
{
    if (!json_is_string(value))
        return false;
    const char *text = json_string_value(value);
    size_t length = json_string_length(value), padding = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '=') {
            padding++;
            continue;
        }
        if (padding > 0 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                             (c >= '0' && c <= '9') || c == '+' || c == '/'))
            return false;
    }
    return padding <= 2 && length % 4 == 0;
}

/* MCP's Annotations of a content block or resource: audience, priority, lastModified. */
static bool valid_content_annotations(const json_t *value)
{
    size_t i;
    json_t *role;
    if (!json_is_object(value))
        return false;
    const json_t *audience = json_object_get(value, "audience");
    const json_t *priority = json_object_get(value, "priority");
    if (audience) {
        if (!json_is_array(audience))
            return false;
        json_array_foreach(audience, i, role)
        {
            if (!json_is_string(role) || (strcmp(json_string_value(role), "user") != 0 &&
                                          strcmp(json_string_value(role), "assistant") != 0))
                return false;
        }
    }
    if (priority && (!json_is_number(priority) || json_number_value(priority) < 0 ||
                     json_number_value(priority) > 1))
        return false;
    return ABSENT_OR(value, "lastModified", json_is_string);
}

/* Why an embedded resource's "resource" member is not MCP's, or NULL. */
static const char *resource_problem(const json_t *resource)
{
    if (!json_is_object(resource))
        return "\"resource\" must be an object";
    if (!json_is_string(json_object_get(resource, "uri")))
        return "its resource needs a string \"uri\"";
    const json_t *text = json_object_get(resource, "text");
    const json_t *blob = json_object_get(resource, "blob");
    if ((text != NULL) == (blob != NULL))
        return "its resource needs one of \"text\" and \"blob\"";
    if (text && !json_is_string(text))
        return "its resource's \"text\" must be a string";
    if (blob && !valid_base64(blob))
        return "its resource's \"blob\" must be base64";
    if (!ABSENT_OR(resource, "mimeType", json_is_string))
        return "its resource's \"mimeType\" must be a string";
    return NULL;
}

const char *mcp_tool_block_problem(const json_t *block)
{
    if (!json_is_object(block))
        return "is not an object";
    const json_t *type = json_object_get(block, "type");
    if (!json_is_string(type))
        return "has no string \"type\"";
    if (!ABSENT_OR(block, "annotations", valid_content_annotations))
        return "has \"annotations\" that are not MCP's (audience, priority 0 to 1, lastModified)";
    if (!ABSENT_OR(block, "_meta", json_is_object))
        return "has a \"_meta\" that is not an object";
    const char *kind = json_string_value(type);
    if (strcmp(kind, "text") == 0)
        return json_is_string(json_object_get(block, "text")) ? NULL
                                                              : "(text) needs a string \"text\"";
    if (strcmp(kind, "image") == 0 || strcmp(kind, "audio") == 0) {
        if (!valid_base64(json_object_get(block, "data")))
            return "(image or audio) needs base64 \"data\"";
        return json_is_string(json_object_get(block, "mimeType"))
                   ? NULL
                   : "(image or audio) needs a string \"mimeType\"";
    }
    if (strcmp(kind, "resource_link") == 0) {
        if (!json_is_string(json_object_get(block, "uri")) ||
            !json_is_string(json_object_get(block, "name")))
            return "(resource_link) needs a string \"uri\" and \"name\"";
        if (!ABSENT_OR(block, "size", json_is_number) ||
            !ABSENT_OR(block, "mimeType", json_is_string) ||
            !ABSENT_OR(block, "icons", valid_icons))
            return "(resource_link) has a size, mimeType or icons of the wrong type";
        return NULL;
    }
    if (strcmp(kind, "resource") == 0)
        return resource_problem(json_object_get(block, "resource"));
    return "has a type MCP does not define (text, image, audio, resource_link, resource)";
}

/* Checks value against the method's compiled output schema: where and why it fails. */
static int check_output(const json_t *value, const json_schema *output, char *reason, size_t size)
{
    if (!json_is_object(value))
        return refuse(reason, size,
                      "the method has an output schema, and its result is not an "
                      "object");
    schema_failure failure;
    int status = schema_check(output, value, &failure);
    if (status == SCHEMA_NO_MEMORY)
        return refuse(reason, size, "out of memory checking the result against the output schema");
    if (status != SCHEMA_VALID)
        return refuse(reason, size,
                      "the structured result fails the output schema at \"%s\": \"%s\" expects %s",
                      failure.pointer, failure.keyword, failure.expected);
    return 0;
}

/*
 * The 2026-07-28 revision's InputRequiredResult: the questions for the client ("inputRequests",
 * each a request of the client's: a method and its params) and the state the retry brings back.
 */
static int check_input_required(const json_t *result, char *reason, size_t size)
{
    const json_t *requests = json_object_get(result, "inputRequests");
    if (!json_is_object(requests) || json_object_size(requests) == 0)
        return refuse(reason, size,
                      "an \"input_required\" result needs an \"inputRequests\" "
                      "object with at least one request");
    const char *key;
    const json_t *request;
    json_object_foreach((json_t *)requests, key, request)
    {
        if (!json_is_object(request) || !json_is_string(json_object_get(request, "method")) ||
            !ABSENT_OR(request, "params", json_is_object))
            return refuse(reason, size,
                          "inputRequests[\"%s\"] must be an object with a string \"method\" "
                          "and, when present, object \"params\"",
                          key);
    }
    if (!ABSENT_OR(result, "requestState", json_is_string))
        return refuse(reason, size, "\"requestState\" must be a string");
    if (!ABSENT_OR(result, "_meta", json_is_object))
        return refuse(reason, size, "\"_meta\" must be an object");
    return 0;
}

static int check_result(const json_t *result, const json_schema *output, char *reason, size_t size)
{
    if (!json_is_object(result))
        return refuse(reason, size, "a complete tool result must be an object");
    /* A result type given is passed on as given (mcp_revision.c), so it must be one a client
     * reads as a tool's answer. */
    const json_t *type = json_object_get(result, "resultType");
    if (type && json_is_string(type) && strcmp(json_string_value(type), "input_required") == 0)
        return check_input_required(result, reason, size);
    if (type && !(json_is_string(type) && strcmp(json_string_value(type), "complete") == 0))
        return refuse(reason, size,
                      "\"resultType\" must be \"complete\" or \"input_required\" when given");
    const json_t *content = json_object_get(result, "content");
    if (!json_is_array(content))
        return refuse(reason, size, "a complete tool result needs a \"content\" array");
    size_t i;
    json_t *block;
    json_array_foreach(content, i, block)
    {
        const char *problem = mcp_tool_block_problem(block);
        if (problem)
            return refuse(reason, size, "content[%zu] %s", i, problem);
    }
    const json_t *is_error = json_object_get(result, "isError");
    const json_t *structured = json_object_get(result, "structuredContent");
    if (!ABSENT_OR(result, "isError", json_is_boolean))
        return refuse(reason, size, "\"isError\" must be a boolean");
    if (structured && !json_is_object(structured))
        return refuse(reason, size, "\"structuredContent\" must be an object");
    if (!ABSENT_OR(result, "_meta", json_is_object))
        return refuse(reason, size, "\"_meta\" must be an object");
    if (!output || json_is_true(is_error))
        return 0;
    if (!structured)
        return refuse(reason, size,
                      "the method has an output schema, and its result has no "
                      "\"structuredContent\"");
    return check_output(structured, output, reason, size);
}

int mcp_tool_check_result(const char *text, size_t length, const json_schema *output, char *reason,
                          size_t reason_size)
{
    json_t *result = parse(text, length);
    if (!result)
        return refuse(reason, reason_size, "a complete tool result must be JSON");
    int status = check_result(result, output, reason, reason_size);
    json_decref(result);
    return status;
}

int mcp_tool_check_output(const char *text, size_t length, const json_schema *output, char *reason,
                          size_t reason_size)
{
    size_t start = 0;
    while (start < length && strchr(" \t\r\n", text[start]))
        start++;
    if (start == length || text[start] != '{')
        return refuse(reason, reason_size,
                      "the method has an output schema, and its result is "
                      "not an object");
    json_t *result = parse(text, length);
    if (!result)
        return refuse(reason, reason_size, "the result is not JSON");
    int status = check_output(result, output, reason, reason_size);
    json_decref(result);
    return status;
}
