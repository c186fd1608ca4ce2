/* SPDX-License-Identifier: MIT */
/*
 * spec plugin: the methods that the examples of the JSON-RPC 2.0 specification (section 7) call,
 * so that the examples can be replayed against rpcd as they are written: subtract, sum, get_data,
 * and the notification targets update, notify_hello and notify_sum.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include <rpcd/plugin-jansson.h>

#if JSON_INTEGER_IS_LONG_LONG
#define SPEC_INT_MAX LLONG_MAX
#define SPEC_INT_MIN LLONG_MIN
#else
#define SPEC_INT_MAX LONG_MAX
#define SPEC_INT_MIN LONG_MIN
#endif

/*
 * Set once by init, on the main thread before any call, and only read afterwards, so handlers
 * running at the same time on several threads need no lock.
 */
static const rpcd_host_api *host;

/*
 * Arithmetic keeps integers as integers ([1,2,4] sums to 7, not 7.0), as a client reading the
 * specification expects. As soon as a real takes part, or an integer result would overflow, the
 * result becomes a real: approximate, but never wrapped around.
 */
typedef struct spec_number {
    int is_integer;
    json_int_t integer;
    double real;
} spec_number;

static spec_number spec_number_from(const json_t *value)
{
    spec_number number;

    number.is_integer = json_is_integer(value);
    number.integer = number.is_integer ? json_integer_value(value) : 0;
    number.real = json_number_value(value);
    return number;
}

static void spec_number_add(spec_number *sum, const spec_number *term)
{
    sum->real += term->real;
    if (!sum->is_integer || !term->is_integer) {
        sum->is_integer = 0;
        return;
    }
    if ((term->integer > 0 && sum->integer > SPEC_INT_MAX - term->integer) ||
        (term->integer < 0 && sum->integer < SPEC_INT_MIN - term->integer)) {
        sum->is_integer = 0;
        return;
    }
    sum->integer += term->integer;
}

/* Sets the call's result to number; a real that is not finite cannot be written as JSON. */
static int spec_number_result(rpcd_call *call, const spec_number *number)
{
    if (number->is_integer) {
        return rpcd_call_result_json(host, call, json_integer(number->integer));
    }
    if (!isfinite(number->real)) {
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "result out of range", NULL, 0);
    }
    return rpcd_call_result_json(host, call, json_real(number->real));
}

/* Loads params, failing the call with jansson's reason when they cannot be loaded. */
static int spec_load(rpcd_call *call, const char *params, size_t params_length, json_t **out)
{
    json_error_t error;
    char detail[sizeof(error.text) + 32];

    if (rpcd_params_load_ex(params, params_length, out, &error) != RPCD_OK) {
        snprintf(detail, sizeof(detail), "cannot read params: %s", error.text);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, detail, NULL, 0);
    }
    return RPCD_OK;
}

/*
 * subtract: [minuend, subtrahend] or {"minuend": a, "subtrahend": b}. Other members of the
 * object are ignored, so that params._meta (progress tokens and the like) does not get in the way.
 */
static int spec_subtract(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    const json_t *minuend = NULL;
    const json_t *subtrahend = NULL;
    spec_number result;
    spec_number negated;
    int status;

    (void)user_data;
    status = spec_load(call, params, params_length, &root);
    if (status != RPCD_OK) {
        return status;
    }
    if (json_is_array(root) && json_array_size(root) == 2) {
        minuend = json_array_get(root, 0);
        subtrahend = json_array_get(root, 1);
    } else if (json_is_object(root)) {
        minuend = json_object_get(root, "minuend");
        subtrahend = json_object_get(root, "subtrahend");
    }
    if (!json_is_number(minuend) || !json_is_number(subtrahend)) {
        json_decref(root);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS,
                               "expected [minuend, subtrahend] or "
                               "{\"minuend\": number, \"subtrahend\": number}",
                               NULL, 0);
    }
    result = spec_number_from(minuend);
    negated = spec_number_from(subtrahend);
    negated.real = -negated.real;
    /* The most negative integer has no positive counterpart: subtract it as a real. */
    if (negated.is_integer && negated.integer == SPEC_INT_MIN) {
        negated.is_integer = 0;
    } else {
        negated.integer = -negated.integer;
    }
    spec_number_add(&result, &negated);
    json_decref(root);
    return spec_number_result(call, &result);
}

/*
 * sum: an array of numbers, possibly empty (0), or {"numbers": [...]}, the form an MCP client
 * sends (tools/call arguments are always an object). Other members are ignored, as subtract's.
 */
static int spec_sum(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    json_t *numbers;
    json_t *item;
    size_t index;
    spec_number sum = {1, 0, 0.0};
    spec_number term;
    int status;

    (void)user_data;
    status = spec_load(call, params, params_length, &root);
    if (status != RPCD_OK) {
        return status;
    }
    numbers = json_is_object(root) ? json_object_get(root, "numbers") : root;
    if (!json_is_array(numbers)) {
        json_decref(root);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS,
                               "expected an array of numbers or {\"numbers\": [numbers]}", NULL, 0);
    }
    json_array_foreach(numbers, index, item)
    {
        if (!json_is_number(item)) {
            char detail[64];

            snprintf(detail, sizeof(detail), "%s[%zu] is not a number",
                     numbers == root ? "params" : "numbers", index);
            json_decref(root);
            return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, detail, NULL, 0);
        }
        term = spec_number_from(item);
        spec_number_add(&sum, &term);
    }
    json_decref(root);
    return spec_number_result(call, &sum);
}

/* get_data: takes nothing (no params, [] or {}) and returns ["hello", 5]. */
static int spec_get_data(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    int empty;
    int status;

    (void)user_data;
    status = spec_load(call, params, params_length, &root);
    if (status != RPCD_OK) {
        return status;
    }
    empty = root == NULL || (json_is_array(root) && json_array_size(root) == 0) ||
            (json_is_object(root) && json_object_size(root) == 0);
    json_decref(root);
    if (!empty) {
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "get_data takes no params", NULL, 0);
    }
    return rpcd_call_result_json(host, call, json_pack("[si]", "hello", 5));
}

/*
 * update, notify_hello, notify_sum: the specification only ever sends them as notifications, so
 * any params are accepted and the result is null.
 */
static int spec_accept(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

static const struct {
    const char *name;
    rpcd_handler_fn handler;
    const char *description;
    const char *params_schema;
} spec_methods[] = {
    /* Each schema allows an array, for JSON-RPC clients, and an object, the params an MCP
     * client's tools/call sends (rpcd lists such a schema with its type narrowed to "object"). */
    {"subtract", spec_subtract, "Returns minuend - subtrahend, given [a, b] or by name.",
     "{\"type\":[\"array\",\"object\"],\"items\":{\"type\":\"number\"},\"minItems\":2,\"maxItems\":"
     "2,"
     "\"required\":[\"minuend\",\"subtrahend\"],\"properties\":{"
     "\"minuend\":{\"type\":\"number\"},\"subtrahend\":{\"type\":\"number\"}}}"},
    {"sum", spec_sum,
     "Returns the sum of an array of numbers, given as [...] or {\"numbers\": [...]}.",
     "{\"type\":[\"array\",\"object\"],\"items\":{\"type\":\"number\"},"
     "\"required\":[\"numbers\"],\"properties\":{"
     "\"numbers\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}}}"},
    {"get_data", spec_get_data, "Returns [\"hello\", 5].",
     "{\"type\":[\"array\",\"object\"],\"maxItems\":0,\"maxProperties\":0}"},
    {"update", spec_accept, "Accepts anything and returns null.", NULL},
    {"notify_hello", spec_accept, "Accepts anything and returns null.", NULL},
    {"notify_sum", spec_accept, "Accepts anything and returns null.", NULL},
};

static int spec_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    size_t i;
    int status;

    (void)state;
    host = host_api;
    for (i = 0; i < sizeof(spec_methods) / sizeof(spec_methods[0]); i++) {
        rpcd_method method = rpcd_method_new(spec_methods[i].name, spec_methods[i].handler);

        method.description = spec_methods[i].description;
        method.params_schema = spec_methods[i].params_schema;
        method.flags = RPCD_METHOD_QUICK; /* arithmetic on small params, nothing that blocks */
        status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register method %s (status %d)",
                     spec_methods[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("spec", "1.0.0", spec_init, NULL);
