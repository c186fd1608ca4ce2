/* SPDX-License-Identifier: MIT */
/*
 * notes plugin: a notebook kept in memory that shows every kind of thing an MCP server offers.
 * A tool adds notes, a resource lists them, a resource template reads one, a prompt asks for a
 * summary of one and a completion offers titles for it; each note added is logged.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcd/plugin-jansson.h>

#define NOTES_MAX_COUNT 1000
#define NOTES_MAX_TITLE 64
#define NOTES_MAX_TEXT 65536
#define NOTES_INDEX_URI "notes://index"
#define NOTES_NOTE_URI "notes://note/"
/* MCP's error code for a URI that names no resource. */
#define NOTES_RESOURCE_NOT_FOUND -32002

typedef struct notes_note {
    char *title;
    char *text;
} notes_note;

/* The notebook; handlers run on several threads at once, so every access holds the lock. */
typedef struct notes_book {
    pthread_mutex_t lock;
    notes_note *notes;
    size_t count;
} notes_book;

/* Set once by init, on the main thread before any call, and only read afterwards. */
static const rpcd_host_api *host;
static rpcd_plugin *self;

/*
 * Titles become part of a URI (notes://note/TITLE) that clients send back unencoded, so they
 * keep to characters a URI carries as they are.
 */
static int notes_title_ok(const char *title)
{
    size_t length = strlen(title);

    if (length == 0 || length > NOTES_MAX_TITLE) {
        return 0;
    }
    for (const char *c = title; *c != '\0'; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_' || *c == '.')) {
            return 0;
        }
    }
    return 1;
}

/* The note with that title, or NULL. The caller holds the lock. */
static notes_note *notes_find(notes_book *book, const char *title)
{
    for (size_t i = 0; i < book->count; i++) {
        if (strcmp(book->notes[i].title, title) == 0) {
            return &book->notes[i];
        }
    }
    return NULL;
}

/*
 * Adds a note, or replaces the text of the note with that title. Returns RPCD_OK,
 * RPCD_ERR_UNSUPPORTED when the notebook is full, or RPCD_ERR_NO_MEMORY.
 */
static int notes_put(notes_book *book, const char *title, const char *text)
{
    char *text_copy = strdup(text);
    char *title_copy = NULL;
    int status = RPCD_ERR_NO_MEMORY;

    if (text_copy == NULL) {
        return RPCD_ERR_NO_MEMORY;
    }
    pthread_mutex_lock(&book->lock);
    notes_note *note = notes_find(book, title);
    if (note != NULL) {
        free(note->text);
        note->text = text_copy;
        text_copy = NULL;
        status = RPCD_OK;
    } else if (book->count == NOTES_MAX_COUNT) {
        status = RPCD_ERR_UNSUPPORTED;
    } else if ((title_copy = strdup(title)) != NULL) {
        notes_note *grown = realloc(book->notes, (book->count + 1) * sizeof(*grown));
        if (grown != NULL) {
            book->notes = grown;
            book->notes[book->count].title = title_copy;
            book->notes[book->count].text = text_copy;
            book->count++;
            title_copy = text_copy = NULL;
            status = RPCD_OK;
        }
    }
    pthread_mutex_unlock(&book->lock);
    free(title_copy);
    free(text_copy);
    return status;
}

/* A copy of the text of the note with that title (free it), or NULL when there is none. */
static char *notes_get_text(notes_book *book, const char *title)
{
    char *text = NULL;

    pthread_mutex_lock(&book->lock);
    notes_note *note = notes_find(book, title);
    if (note != NULL) {
        text = strdup(note->text);
    }
    pthread_mutex_unlock(&book->lock);
    return text;
}

/* The string member key of params, or NULL. */
static const char *notes_string(const json_t *params, const char *key)
{
    return json_string_value(json_object_get(params, key));
}

/* Loads params, which must be an object. */
static int notes_load(rpcd_call *call, const char *params, size_t params_length, json_t **out)
{
    if (rpcd_params_load(params, params_length, out) != RPCD_OK || !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "params must be an object", NULL, 0);
    }
    return RPCD_OK;
}

/* The tool notes_add {title, text}: its answer links to the note's resource. */
static int notes_add(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    char uri[sizeof(NOTES_NOTE_URI) + NOTES_MAX_TITLE];
    char saved[sizeof("Saved note .") + NOTES_MAX_TITLE];
    int status = notes_load(call, params, params_length, &root);

    if (status != RPCD_OK) {
        return status;
    }
    const char *title = notes_string(root, "title");
    const char *text = notes_string(root, "text");
    if (title == NULL || !notes_title_ok(title) || text == NULL || strlen(text) > NOTES_MAX_TEXT) {
        status = host->call_fail(call, RPCD_ERR_INVALID_PARAMS,
                                 "need a title (1 to 64 of A-Z a-z 0-9 . _ -) and a text of at "
                                 "most 64 KiB",
                                 NULL, 0);
    } else if ((status = notes_put(user_data, title, text)) == RPCD_ERR_UNSUPPORTED) {
        status = host->call_fail(call, RPCD_ERR_INTERNAL, "the notebook is full", NULL, 0);
    }
    if (status == RPCD_OK) {
        snprintf(uri, sizeof(uri), NOTES_NOTE_URI "%s", title);
        snprintf(saved, sizeof(saved), "Saved note %s.", title);
        host->log(self, RPCD_LOG_INFO, "note %s saved (%zu bytes)", title, strlen(text));
        if (RPCD_HOST_HAS(host, resource_updated)) {
            host->resource_updated(self, uri);
            host->resource_updated(self, NOTES_INDEX_URI);
        }
        json_t *result =
            json_pack("{s:[{s:s,s:s},{s:s,s:s,s:s,s:s}]}", "content", "type", "text", "text", saved,
                      "type", "resource_link", "uri", uri, "name", title, "mimeType", "text/plain");
        char *text_result = result != NULL ? json_dumps(result, JSON_COMPACT) : NULL;
        json_decref(result);
        status = text_result != NULL
                     ? host->call_tool_result(call, text_result, strlen(text_result))
                     : RPCD_ERR_NO_MEMORY;
        free(text_result);
    }
    json_decref(root);
    return status;
}

/* The resource notes://index: the titles, one a line. */
static int notes_index(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    notes_book *book = user_data;
    size_t length = 0;

    (void)params;
    (void)params_length;
    pthread_mutex_lock(&book->lock);
    for (size_t i = 0; i < book->count; i++) {
        length += strlen(book->notes[i].title) + 1;
    }
    char *text = malloc(length + 1);
    if (text != NULL) {
        text[0] = '\0';
        for (size_t i = 0, at = 0; i < book->count; i++) {
            at += (size_t)sprintf(text + at, "%s\n", book->notes[i].title);
        }
    }
    pthread_mutex_unlock(&book->lock);
    if (text == NULL) {
        return RPCD_ERR_NO_MEMORY;
    }
    int status = rpcd_call_result_json(host, call, json_string(text));
    free(text);
    return status;
}

/* The template notes://note/{title}: one note's text. */
static int notes_read(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    int status = notes_load(call, params, params_length, &root);

    if (status != RPCD_OK) {
        return status;
    }
    const char *title = notes_string(json_object_get(root, "variables"), "title");
    char *text = title != NULL ? notes_get_text(user_data, title) : NULL;
    if (text == NULL) {
        status =
            rpcd_call_fail_code_json(host, call, NOTES_RESOURCE_NOT_FOUND, "Resource not found",
                                     json_pack("{s:O?}", "uri", json_object_get(root, "uri")));
    } else {
        status = rpcd_call_result_json(host, call, json_string(text));
    }
    free(text);
    json_decref(root);
    return status;
}

/* The prompt summarize {title}: an instruction, then the note as an embedded resource. */
static int notes_summarize(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    json_t *root = NULL;
    char uri[sizeof(NOTES_NOTE_URI) + NOTES_MAX_TITLE];
    int status = notes_load(call, params, params_length, &root);

    if (status != RPCD_OK) {
        return status;
    }
    /* rpcd has checked that the required title is there and is a string. */
    const char *title = notes_string(json_object_get(root, "arguments"), "title");
    char *text = title != NULL ? notes_get_text(user_data, title) : NULL;
    if (text == NULL) {
        status = host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "no note has that title", NULL, 0);
    } else {
        snprintf(uri, sizeof(uri), NOTES_NOTE_URI "%s", title);
        status = rpcd_call_result_json(
            host, call,
            json_pack("{s:s,s:[{s:s,s:{s:s,s:s}},{s:s,s:{s:s,s:{s:s,s:s,s:s}}}]}", "description",
                      "Summarize a note", "messages", "role", "user", "content", "type", "text",
                      "text", "Summarize this note in one sentence.", "role", "user", "content",
                      "type", "resource", "resource", "uri", uri, "mimeType", "text/plain", "text",
                      text));
    }
    free(text);
    json_decref(root);
    return status;
}

/* Completes a title: the titles that start with what was typed, in the order they were added. */
static int notes_complete(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    notes_book *book = user_data;
    json_t *root = NULL;
    int status = notes_load(call, params, params_length, &root);

    if (status != RPCD_OK) {
        return status;
    }
    json_t *argument = json_object_get(root, "argument");
    const char *name = notes_string(argument, "name");
    const char *typed = notes_string(argument, "value");
    json_t *values = json_array();
    if (name != NULL && strcmp(name, "title") == 0 && typed != NULL && values != NULL) {
        pthread_mutex_lock(&book->lock);
        for (size_t i = 0; i < book->count; i++) {
            if (strncmp(book->notes[i].title, typed, strlen(typed)) == 0) {
                json_array_append_new(values, json_string(book->notes[i].title));
            }
        }
        pthread_mutex_unlock(&book->lock);
    }
    json_decref(root);
    return rpcd_call_result_json(host, call, values);
}

static void notes_shutdown(void *state)
{
    notes_book *book = state;

    for (size_t i = 0; i < book->count; i++) {
        free(book->notes[i].title);
        free(book->notes[i].text);
    }
    free(book->notes);
    pthread_mutex_destroy(&book->lock);
    free(book);
}

static int notes_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                      size_t error_size)
{
    rpcd_method methods[6];
    notes_book *book;

    host = host_api;
    self = plugin;
    book = calloc(1, sizeof(*book));
    if (book == NULL || pthread_mutex_init(&book->lock, NULL) != 0) {
        free(book);
        snprintf(error, error_size, "out of memory");
        return RPCD_ERR_NO_MEMORY;
    }
    /* Something to read in a demo before anything was added. */
    if (notes_put(book, "welcome", "Notes live in rpcd's memory until it exits.") != RPCD_OK ||
        notes_put(book, "shopping", "milk, eggs, bread") != RPCD_OK) {
        notes_shutdown(book);
        snprintf(error, error_size, "out of memory");
        return RPCD_ERR_NO_MEMORY;
    }

    methods[0] = rpcd_method_new("notes_add", notes_add);
    methods[0].title = "Add a note";
    methods[0].description = "Saves a note under a title, replacing the text of a note with that "
                             "title.";
    methods[0].params_schema =
        "{\"type\":\"object\",\"properties\":{"
        "\"title\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9._-]{1,64}$\"},"
        "\"text\":{\"type\":\"string\",\"maxLength\":65536}},"
        "\"required\":[\"title\",\"text\"]}";
    methods[0].annotations = "{\"readOnlyHint\":false,\"destructiveHint\":true,"
                             "\"idempotentHint\":true,\"openWorldHint\":false}";

    methods[1] = rpcd_method_new("notes_index", notes_index);
    methods[1].mcp_role = RPCD_MCP_RESOURCE;
    methods[1].mcp_descriptor = "{\"uri\":\"" NOTES_INDEX_URI "\",\"name\":\"index\","
                                "\"title\":\"Notes\",\"description\":\"The titles of all notes, "
                                "one a line.\",\"mimeType\":\"text/plain\"}";

    methods[2] = rpcd_method_new("notes_read", notes_read);
    methods[2].mcp_role = RPCD_MCP_RESOURCE;
    methods[2].mcp_descriptor = "{\"uriTemplate\":\"" NOTES_NOTE_URI "{title}\",\"name\":\"note\","
                                "\"title\":\"Note\",\"description\":\"The text of one note.\","
                                "\"mimeType\":\"text/plain\"}";

    methods[3] = rpcd_method_new("notes_summarize", notes_summarize);
    methods[3].mcp_role = RPCD_MCP_PROMPT;
    methods[3].mcp_descriptor = "{\"name\":\"summarize\",\"title\":\"Summarize a note\","
                                "\"description\":\"Asks for a one-sentence summary of a note.\","
                                "\"arguments\":[{\"name\":\"title\",\"description\":\"The note's "
                                "title\",\"required\":true}]}";

    methods[4] = rpcd_method_new("notes_complete_prompt", notes_complete);
    methods[4].mcp_role = RPCD_MCP_COMPLETION;
    methods[4].mcp_descriptor = "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"summarize\"}}";

    methods[5] = rpcd_method_new("notes_complete_template", notes_complete);
    methods[5].mcp_role = RPCD_MCP_COMPLETION;
    methods[5].mcp_descriptor =
        "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"" NOTES_NOTE_URI "{title}\"}}";

    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        methods[i].user_data = book;
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK) {
            /* init failed: shutdown is not called, so the notebook goes now. */
            notes_shutdown(book);
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    *state = book;
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("notes", "1.0.0", notes_init, notes_shutdown);
