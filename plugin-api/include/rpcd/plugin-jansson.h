/* SPDX-License-Identifier: MIT */
/*
 * Optional glue between the rpcd plugin ABI and jansson, for plugins that prefer json_t values to
 * JSON text. Header-only (static inline), so the daemon never depends on jansson: a plugin that
 * includes this header links jansson itself.
 */
#ifndef RPCD_PLUGIN_JANSSON_H
#define RPCD_PLUGIN_JANSSON_H

#include <stdlib.h>

#include <jansson.h>

#include <rpcd/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every function below is safe to call from any thread at the same time as the others, as far as
 * jansson allows: a json_t value must not be used from two threads at once, and values given to a
 * function here are no longer the caller's anyway (they are stolen).
 */

/* Flags used to turn values into text: one line, and any value, not only arrays and objects. */
#define RPCD_JANSSON_DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY)

/*
 * Parses a handler's params into a jansson value.
 *   params, params_length  the text as handed to the handler (borrowed, not NUL-terminated).
 *   out                    receives a new reference to the array or object, or NULL when the
 *                          request had no params (params == NULL).
 *   error                  optional (may be NULL): jansson's reason when the text is refused,
 *                          worth passing on as the detail of call_fail().
 * Returns RPCD_OK, RPCD_ERR_INVALID_ARGUMENT for a NULL out, or RPCD_ERR_INVALID_PARAMS when
 * jansson refuses the text. The daemon has already checked that params is JSON, so a refusal
 * means a jansson limit: an integer beyond json_int_t, a "\u0000" inside a string, deep nesting.
 */
static inline int rpcd_params_load_ex(const char *params, size_t params_length, json_t **out,
                                      json_error_t *error)
{
    json_t *value;

    if (out == NULL) {
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (params == NULL) {
        return RPCD_OK;
    }
    value = json_loadb(params, params_length, 0, error);
    if (value == NULL) {
        return RPCD_ERR_INVALID_PARAMS;
    }
    *out = value;
    return RPCD_OK;
}

/* rpcd_params_load_ex() without the reason. */
static inline int rpcd_params_load(const char *params, size_t params_length, json_t **out)
{
    return rpcd_params_load_ex(params, params_length, out, NULL);
}

/*
 * Not part of the API: writes value as compact text, into small when it fits (most results do,
 * which spares an allocation), else into a buffer from malloc() that the caller frees when it is
 * not small. Returns NULL when jansson cannot encode the value or memory runs out.
 */
static inline char *rpcd_jansson_dump_(const json_t *value, char *small, size_t small_size,
                                       size_t *length)
{
    char *text;
    size_t needed;

    needed = json_dumpb(value, small, small_size, RPCD_JANSSON_DUMP_FLAGS);
    if (needed == 0) {
        return NULL;
    }
    *length = needed;
    if (needed <= small_size) {
        return small;
    }
    text = (char *)malloc(needed);
    if (text == NULL) {
        return NULL;
    }
    if (json_dumpb(value, text, needed, RPCD_JANSSON_DUMP_FLAGS) != needed) {
        free(text);
        return NULL;
    }
    return text;
}

/*
 * Sets the call's result to value, as host->call_result() does with text.
 *   host    the table given to init (borrowed).
 *   call    the handler's call (borrowed).
 *   result  any JSON value; STOLEN: released even on failure. NULL, what a jansson constructor
 *           returns when it runs out of memory, gives RPCD_ERR_NO_MEMORY, so that
 *           `return rpcd_call_result_json(host, call, json_integer(n));` needs no check.
 * Returns the status of call_result(), or RPCD_ERR_NO_MEMORY when the value could not be encoded.
 */
static inline int rpcd_call_result_json(const rpcd_host_api *host, rpcd_call *call, json_t *result)
{
    char small[512];
    char *text;
    size_t length = 0;
    int status;

    if (result == NULL) {
        return RPCD_ERR_NO_MEMORY;
    }
    text = rpcd_jansson_dump_(result, small, sizeof(small), &length);
    json_decref(result);
    if (text == NULL) {
        return RPCD_ERR_NO_MEMORY;
    }
    status = host->call_result(call, text, length);
    if (text != small) {
        free(text);
    }
    return status;
}

/*
 * Sends a notification, as host->call_notify() does with text.
 *   method  the notification's method (borrowed, copied by the daemon).
 *   params  an array or object, or NULL for none; STOLEN: released even on failure.
 * Returns the status of call_notify(), or RPCD_ERR_NO_MEMORY when params could not be encoded.
 * A scalar params reaches call_notify() all the same, which refuses it.
 */
static inline int rpcd_call_notify_json(const rpcd_host_api *host, rpcd_call *call,
                                        const char *method, json_t *params)
{
    char small[512];
    char *text;
    size_t length = 0;
    int status;

    if (params == NULL) {
        return host->call_notify(call, method, NULL, 0);
    }
    text = rpcd_jansson_dump_(params, small, sizeof(small), &length);
    json_decref(params);
    if (text == NULL) {
        return RPCD_ERR_NO_MEMORY;
    }
    status = host->call_notify(call, method, text, length);
    if (text != small) {
        free(text);
    }
    return status;
}

/*
 * Records a failure, as host->call_fail() does with text, and returns status the same way:
 *   return rpcd_call_fail_json(host, call, RPCD_ERR_INTERNAL, "disk full", json_pack(...));
 *   message  optional human text (borrowed, copied by the daemon).
 *   data     optional value for error.data.data, or NULL; STOLEN: released even on failure.
 * Returns what call_fail() returns; when data cannot be encoded, the failure is still recorded,
 * without data, so that the handler's status is not lost to a secondary problem.
 */
static inline int rpcd_call_fail_json(const rpcd_host_api *host, rpcd_call *call, int status,
                                      const char *message, json_t *data)
{
    char small[512];
    char *text = NULL;
    size_t length = 0;
    int result;

    if (data != NULL) {
        text = rpcd_jansson_dump_(data, small, sizeof(small), &length);
        json_decref(data);
    }
    result = host->call_fail(call, status, message, text, text != NULL ? length : 0);
    if (text != NULL && text != small) {
        free(text);
    }
    return result;
}

/*
 * Records a failure with the plugin's own code, as host->call_fail_code() does with text, and
 * returns what it returns (RPCD_ERR_APPLICATION on success).
 *   message  required (borrowed, copied by the daemon).
 *   data     optional value for error.data, or NULL; STOLEN: released even on failure. When it
 *            cannot be encoded, the failure is recorded without data.
 */
static inline int rpcd_call_fail_code_json(const rpcd_host_api *host, rpcd_call *call, int64_t code,
                                           const char *message, json_t *data)
{
    char small[512];
    char *text = NULL;
    size_t length = 0;
    int result;

    if (data != NULL) {
        text = rpcd_jansson_dump_(data, small, sizeof(small), &length);
        json_decref(data);
    }
    result = host->call_fail_code(call, code, message, text, text != NULL ? length : 0);
    if (text != NULL && text != small) {
        free(text);
    }
    return result;
}

#ifdef __cplusplus
}
#endif

#endif /* RPCD_PLUGIN_JANSSON_H */
