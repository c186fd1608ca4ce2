/* SPDX-License-Identifier: MIT */
/*
 * The resources, templates, prompts and completions of the plugins' methods: descriptors read
 * once with jansson when the catalog is built (a start-up or a reload, never per call), kept as
 * the keys a request is matched against and the one-line text a list shows.
 */
#include "methods/mcp_catalog.h"

#include "methods/tool_policy.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A template's pieces: literal text, or a variable ({name}, or {+name} which may hold '/'). */
typedef struct piece {
    bool variable, reserved;
    size_t start, length; /* in the entry's key; for a variable, its name */
} piece;

/* Expressions a template may hold: its URIs are matched by backtracking, bounded by this. */
enum { MAX_PIECES = 33, MAX_MATCHED_URI = 1024 };

typedef struct entry {
    const reg_method *method;
    char *key; /* owned: URI, uriTemplate, prompt name, or the reference's name or URI */
    size_t key_length;
    bool prompt_reference; /* completions: a ref/prompt, else a ref/resource */
    piece *pieces;         /* templates */
    size_t piece_count;
} entry;

typedef struct entry_list {
    entry *items;
    size_t count;
} entry_list;

struct mcp_catalog {
    entry_list resources, templates, prompts, completions;
    mcp_catalog *hidden; /* owned: what the tool policy does not serve (mcp_catalog_hide) */
};

static json_t *parse(const char *text)
{
    return text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
}

static bool optional_string(const json_t *object, const char *key)
{
    const json_t *value = json_object_get(object, key);
    return !value || json_is_string(value);
}

static bool nonempty_string(const json_t *value)
{
    return json_is_string(value) && json_string_length(value) > 0;
}

/* Splits a uriTemplate into pieces. Returns the count, or -1 with why in *problem. */
static long split_template(const char *text, size_t length, piece *pieces, const char **problem)
{
    long count = 0;
    size_t at = 0;
    bool last_variable = false;
    while (at < length) {
        if (count == MAX_PIECES) {
            *problem = "its uriTemplate has more than 16 expressions";
            return -1;
        }
        piece *item = &pieces[count];
        if (text[at] != '{') {
            size_t end = at;
            while (end < length && text[end] != '{' && text[end] != '}')
                end++;
            if (end < length && text[end] == '}') {
                *problem = "its uriTemplate has a '}' that closes nothing";
                return -1;
            }
            *item = (piece){false, false, at, end - at};
            at = end;
            last_variable = false;
            count++;
            continue;
        }
        if (last_variable) {
            *problem = "its uriTemplate has two expressions with no text between them";
            return -1;
        }
        size_t start = ++at;
        bool reserved = at < length && text[at] == '+';
        if (reserved)
            start = ++at;
        while (at < length &&
               (text[at] == '_' || text[at] == '.' || (text[at] >= 'a' && text[at] <= 'z') ||
                (text[at] >= 'A' && text[at] <= 'Z') || (text[at] >= '0' && text[at] <= '9')))
            at++;
        if (at == start || at >= length || text[at] != '}') {
            *problem = "its uriTemplate has an expression other than {name} or {+name}";
            return -1;
        }
        *item = (piece){true, reserved, start, at - start};
        at++;
        last_variable = true;
        count++;
    }
    return count;
}

static const char *resource_problem(const json_t *value)
{
    const json_t *uri = json_object_get(value, "uri");
    const json_t *template = json_object_get(value, "uriTemplate");
    if ((uri != NULL) == (template != NULL))
        return "a resource descriptor needs \"uri\" or \"uriTemplate\", not both";
    if (!nonempty_string(uri ? uri : template))
        return "its \"uri\" or \"uriTemplate\" is not a string of UTF-8";
    if (!nonempty_string(json_object_get(value, "name")))
        return "a resource descriptor needs a string \"name\"";
    if (!optional_string(value, "title") || !optional_string(value, "description") ||
        !optional_string(value, "mimeType"))
        return "its title, description or mimeType is not a string";
    const json_t *size = json_object_get(value, "size");
    if (size && !json_is_integer(size))
        return "its \"size\" is not an integer";
    if (template) {
        piece pieces[MAX_PIECES];
        const char *problem = NULL;
        if (split_template(json_string_value(template), json_string_length(template), pieces,
                           &problem) < 0)
            return problem;
    }
    return NULL;
}

static const char *prompt_problem(const json_t *value)
{
    if (!nonempty_string(json_object_get(value, "name")))
        return "a prompt descriptor needs a string \"name\"";
    if (!optional_string(value, "title") || !optional_string(value, "description"))
        return "its title or description is not a string";
    const json_t *arguments = json_object_get(value, "arguments");
    if (!arguments)
        return NULL;
    if (!json_is_array(arguments))
        return "its \"arguments\" is not an array";
    size_t i;
    const json_t *argument;
    json_array_foreach(arguments, i, argument)
    {
        const json_t *required = json_object_get(argument, "required");
        if (!json_is_object(argument) || !nonempty_string(json_object_get(argument, "name")) ||
            (required && !json_is_boolean(required)) || !optional_string(argument, "description"))
            return "an argument is not an object with a string \"name\" (and a boolean "
                   "\"required\", a string \"description\")";
    }
    return NULL;
}

/* The reference of a completion descriptor: true and its key, or false. */
static bool completion_reference(const json_t *value, bool *prompt, const json_t **key)
{
    const json_t *ref = json_object_get(value, "ref");
    const char *type = json_string_value(json_object_get(ref, "type"));
    if (!json_is_object(ref) || !type)
        return false;
    *prompt = strcmp(type, "ref/prompt") == 0;
    if (!*prompt && strcmp(type, "ref/resource") != 0)
        return false;
    *key = json_object_get(ref, *prompt ? "name" : "uri");
    return nonempty_string(*key);
}

const char *mcp_catalog_refusal(uint32_t role, const char *descriptor)
{
    if (role > RPCD_MCP_HIDDEN)
        return "its mcp_role is none this daemon knows";
    if (role == RPCD_MCP_TOOL || role == RPCD_MCP_HIDDEN)
        return descriptor ? "an mcp_descriptor is for resources, prompts and completions only"
                          : NULL;
    if (!descriptor)
        return "its mcp_role needs an mcp_descriptor";
    json_t *value = parse(descriptor);
    const char *problem = NULL;
    bool prompt;
    const json_t *key;
    if (!json_is_object(value))
        problem = "its mcp_descriptor is not a JSON object";
    else if (role == RPCD_MCP_RESOURCE)
        problem = resource_problem(value);
    else if (role == RPCD_MCP_PROMPT)
        problem = prompt_problem(value);
    else if (!completion_reference(value, &prompt, &key))
        problem = "a completion descriptor needs \"ref\": {\"type\":\"ref/prompt\",\"name\":...} "
                  "or {\"type\":\"ref/resource\",\"uri\":...}";
    json_decref(value);
    return problem;
}

static void free_entry(entry *item)
{
    free(item->key);
    free(item->pieces);
}

static void free_entries(entry_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free_entry(&list->items[i]);
    free(list->items);
}

void mcp_catalog_free(mcp_catalog *catalog)
{
    if (!catalog)
        return;
    free_entries(&catalog->resources);
    free_entries(&catalog->templates);
    free_entries(&catalog->prompts);
    free_entries(&catalog->completions);
    mcp_catalog_free(catalog->hidden);
    free(catalog);
}

/* Fills item from method's descriptor and picks its list. Returns the list, or NULL (memory). */
static entry_list *describe(mcp_catalog *catalog, const reg_method *method, entry *item)
{
    json_t *value = parse(method->mcp_descriptor);
    entry_list *list = NULL;
    const json_t *key = NULL;
    *item = (entry){.method = method};
    if (method->mcp_role == RPCD_MCP_RESOURCE) {
        key = json_object_get(value, "uri");
        list = &catalog->resources;
        if (!key) {
            key = json_object_get(value, "uriTemplate");
            list = &catalog->templates;
        }
    } else if (method->mcp_role == RPCD_MCP_PROMPT) {
        key = json_object_get(value, "name");
        list = &catalog->prompts;
    } else {
        completion_reference(value, &item->prompt_reference, &key);
        list = &catalog->completions;
    }
    if (list && !(item->key = strndup(json_string_value(key), json_string_length(key))))
        list = NULL;
    if (list)
        item->key_length = json_string_length(key);
    if (list == &catalog->templates) {
        piece pieces[MAX_PIECES];
        const char *problem;
        long count = split_template(item->key, item->key_length, pieces, &problem);
        item->pieces = malloc((size_t)count * sizeof *pieces);
        if (!item->pieces)
            list = NULL;
        else
            memcpy(item->pieces, pieces, (size_t)count * sizeof *pieces);
        item->piece_count = (size_t)count;
    }
    json_decref(value);
    return list;
}

static const char *list_noun(const mcp_catalog *catalog, const entry_list *list)
{
    return list == &catalog->resources   ? "the resource URI"
           : list == &catalog->templates ? "the resource template"
           : list == &catalog->prompts   ? "the prompt name"
                                         : "the completion of";
}

/* The entry of list with item's key (and reference kind), or NULL. */
static const entry *find_key(const entry_list *list, const char *key, size_t length,
                             bool prompt_reference)
{
    for (size_t i = 0; i < list->count; i++) {
        const entry *item = &list->items[i];
        if (item->key_length == length && memcmp(item->key, key, length) == 0 &&
            item->prompt_reference == prompt_reference)
            return item;
    }
    return NULL;
}

int mcp_catalog_new(const registry *methods, mcp_catalog **out, char *error, size_t error_size)
{
    mcp_catalog *catalog = calloc(1, sizeof *catalog);
    size_t total = reg_count(methods);
    /* The hidden part has the room of the whole, so that hiding needs no memory. */
    if (!catalog || !(catalog->hidden = calloc(1, sizeof *catalog->hidden)))
        goto no_memory;
    for (mcp_catalog *part = catalog; part; part = part->hidden) {
        entry_list *lists[] = {&part->resources, &part->templates, &part->prompts,
                               &part->completions};
        for (size_t i = 0; i < 4; i++)
            if (!(lists[i]->items = calloc(total + 1, sizeof *lists[i]->items)))
                goto no_memory;
    }
    for (size_t i = 0; i < total; i++) {
        const reg_method *method = reg_at(methods, i);
        if (method->mcp_role != RPCD_MCP_RESOURCE && method->mcp_role != RPCD_MCP_PROMPT &&
            method->mcp_role != RPCD_MCP_COMPLETION)
            continue;
        entry item;
        entry_list *list = describe(catalog, method, &item);
        if (!list) {
            free_entry(&item);
            goto no_memory;
        }
        const entry *taken = find_key(list, item.key, item.key_length, item.prompt_reference);
        list->items[list->count++] = item;
        if (taken) {
            snprintf(error, error_size,
                     "methods '%s' (plugin '%s') and '%s' (plugin '%s') have %s '%s'",
                     taken->method->name, taken->method->owner_name, method->name,
                     method->owner_name, list_noun(catalog, list), item.key);
            mcp_catalog_free(catalog);
            return -1;
        }
    }
    *out = catalog;
    return 0;
no_memory:
    snprintf(error, error_size, "out of memory");
    mcp_catalog_free(catalog);
    return -1;
}

void mcp_catalog_hide(mcp_catalog *catalog, const tool_policy *policy)
{
    mcp_catalog *hidden = catalog ? catalog->hidden : NULL;
    if (!hidden)
        return;
    entry_list *lists[] = {&catalog->resources, &catalog->templates, &catalog->prompts,
                           &catalog->completions},
               *moved[] = {&hidden->resources, &hidden->templates, &hidden->prompts,
                           &hidden->completions};
    for (size_t l = 0; l < 4; l++) {
        size_t kept = 0;
        for (size_t i = 0; i < lists[l]->count; i++) {
            const entry *item = &lists[l]->items[i];
            /* A completion whose prompt or resource is hidden is too (they come last). */
            bool served =
                pol_served(policy, item->method, NULL) &&
                (l < 3 || !find_key(item->prompt_reference ? &hidden->prompts : &hidden->resources,
                                    item->key, item->key_length, false)) &&
                (l < 3 || item->prompt_reference ||
                 !find_key(&hidden->templates, item->key, item->key_length, false));
            entry_list *to = served ? lists[l] : moved[l];
            to->items[served ? kept++ : to->count++] = *item;
        }
        lists[l]->count = kept;
    }
}

const mcp_catalog *mcp_catalog_hidden(const mcp_catalog *catalog)
{
    return catalog ? catalog->hidden : NULL;
}

size_t mcp_catalog_count(const mcp_catalog *catalog, uint32_t role)
{
    return !catalog                      ? 0
           : role == RPCD_MCP_RESOURCE   ? catalog->resources.count + catalog->templates.count
           : role == RPCD_MCP_PROMPT     ? catalog->prompts.count
           : role == RPCD_MCP_COMPLETION ? catalog->completions.count
                                         : 0;
}

int mcp_page_start(js_span params, size_t count, size_t *start)
{
    *start = 0;
    js_span cursor;
    size_t found = params.length ? js_object_get(params, "cursor", 6, &cursor) : 0;
    if (found == 0)
        return 0;
    /* Cursors are ours: the decimal position of the page's first item. */
    char text[24];
    size_t length;
    if (found > 1 || js_kind_of(cursor) != JS_STRING ||
        js_string_decode(cursor, text, sizeof text - 1, &length) != 0 || length == 0)
        return -2;
    text[length] = '\0';
    char *end;
    unsigned long long position = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] < '0' || text[0] > '9' || position > count)
        return -2;
    *start = (size_t)position;
    return 0;
}

int mcp_catalog_answer_list(const mcp_catalog *catalog, mcp_catalog_list list, js_span params,
                            buffer *out)
{
    static const entry_list none = {NULL, 0};
    const entry_list *items = !catalog                     ? &none
                              : list == MCP_LIST_RESOURCES ? &catalog->resources
                              : list == MCP_LIST_TEMPLATES ? &catalog->templates
                                                           : &catalog->prompts;
    static const char *const members[] = {"{\"resources\":[", "{\"resourceTemplates\":[",
                                          "{\"prompts\":["};
    size_t start;
    if (mcp_page_start(params, items->count, &start) != 0)
        return -2;
    size_t stop = items->count - start > MCP_PAGE_SIZE ? start + MCP_PAGE_SIZE : items->count;
    int failed = buf_append_string(out, members[list]);
    for (size_t i = start; i < stop; i++) {
        if (i > start)
            failed |= buf_append_char(out, ',');
        /* The descriptor is the list's item as MCP shapes it; registration put it on one line. */
        failed |= buf_append_string(out, items->items[i].method->mcp_descriptor);
    }
    failed |= buf_append_char(out, ']');
    if (stop < items->count)
        failed |= buf_printf(out, ",\"nextCursor\":\"%zu\"", stop);
    return failed | buf_append_char(out, '}') ? -1 : 0;
}

/* Matches uri from position at against pieces from index; records variables' ends in ends.
 * failed remembers (piece, position) pairs already tried, so that no pair is tried twice. */
static bool match_from(const entry *item, size_t index, const char *uri, size_t length, size_t at,
                       size_t *ends, unsigned char *failed)
{
    if (index == item->piece_count)
        return at == length;
    size_t state = index * (MAX_MATCHED_URI + 1) + at;
    if (failed[state / 8] & (1u << (state % 8)))
        return false;
    const piece *part = &item->pieces[index];
    if (!part->variable) {
        if (length - at >= part->length &&
            memcmp(uri + at, item->key + part->start, part->length) == 0 &&
            match_from(item, index + 1, uri, length, at + part->length, ends, failed))
            return true;
    } else {
        /* Longest first: a variable takes all it can that leaves the rest matchable. */
        size_t most = at;
        while (most < length && (part->reserved || uri[most] != '/'))
            most++;
        for (size_t end = most; end > at; end--) {
            ends[index] = end;
            if (match_from(item, index + 1, uri, length, end, ends, failed))
                return true;
        }
    }
    failed[state / 8] |= (unsigned char)(1u << (state % 8));
    return false;
}

/* Appends the variables of a matched template as object members. Returns 0 or -1. */
static int append_variables(const entry *item, const char *uri, const size_t *ends,
                            buffer *variables)
{
    int failed = 0;
    size_t at = 0;
    bool first = true;
    for (size_t i = 0; i < item->piece_count; i++) {
        const piece *part = &item->pieces[i];
        if (!part->variable) {
            at += part->length;
            continue;
        }
        if (!first)
            failed |= buf_append_char(variables, ',');
        first = false;
        failed |= buf_append_json_string(variables, item->key + part->start, part->length);
        failed |= buf_append_char(variables, ':');
        failed |= buf_append_json_string(variables, uri + at, ends[i] - at);
        at = ends[i];
    }
    return failed;
}

const reg_method *mcp_catalog_resource(const mcp_catalog *catalog, const char *uri, size_t length,
                                       buffer *variables, bool *templated)
{
    *templated = false;
    if (!catalog)
        return NULL;
    const entry *exact = find_key(&catalog->resources, uri, length, false);
    if (exact)
        return exact->method;
    if (length > MAX_MATCHED_URI)
        return NULL;
    static const size_t bits = MAX_PIECES * (MAX_MATCHED_URI + 1);
    unsigned char *failed = malloc(bits / 8 + 1);
    if (!failed)
        return NULL;
    const reg_method *found = NULL;
    for (size_t i = 0; i < catalog->templates.count && !found; i++) {
        const entry *item = &catalog->templates.items[i];
        size_t ends[MAX_PIECES];
        memset(failed, 0, bits / 8 + 1);
        if (match_from(item, 0, uri, length, 0, ends, failed) &&
            append_variables(item, uri, ends, variables) == 0) {
            found = item->method;
            *templated = true;
        }
    }
    free(failed);
    return found;
}

const reg_method *mcp_catalog_prompt(const mcp_catalog *catalog, const char *name, size_t length)
{
    const entry *item = catalog ? find_key(&catalog->prompts, name, length, false) : NULL;
    return item ? item->method : NULL;
}

const char *mcp_catalog_prompt_arguments_problem(const reg_method *method, js_span arguments)
{
    json_t *value = parse(method->mcp_descriptor);
    const json_t *declared = json_object_get(value, "arguments");
    const char *problem = NULL;
    size_t i;
    const json_t *argument;
    json_array_foreach(declared, i, argument)
    {
        if (!json_is_true(json_object_get(argument, "required")))
            continue;
        const char *name = json_string_value(json_object_get(argument, "name"));
        js_span given;
        if (arguments.length == 0 ||
            js_object_get_decoded(arguments, name, strlen(name), &given) != 1) {
            problem = "a required argument is missing (or given twice)";
            break;
        }
    }
    json_decref(value);
    if (problem || arguments.length == 0)
        return problem;
    js_iter members;
    js_span key, given;
    js_iter_init(&members, arguments);
    while (js_iter_next(&members, &key, &given))
        if (js_kind_of(given) != JS_STRING)
            return "every argument of a prompt is a string";
    return NULL;
}

const reg_method *mcp_catalog_completion(const mcp_catalog *catalog, bool prompt, const char *key,
                                         size_t length)
{
    const entry *item = catalog ? find_key(&catalog->completions, key, length, prompt) : NULL;
    return item ? item->method : NULL;
}
