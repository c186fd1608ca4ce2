/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the hand-written JSON validator against jansson. Both must agree on every
 * input, except where the daemon accepts on purpose what jansson refuses (numbers too large
 * for a double or a 64-bit integer, lone surrogate escapes, "\u0000"): the transport passes
 * those through untouched.
 */
#include "json/json_scan.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* jansson's own nesting limit, so that depth alone never makes the two differ. */
enum { JANSSON_MAX_DEPTH = 2048 };

static int known_jansson_limit(const char *text)
{
    static const char *const reasons[] = {
        "too big",         "overflow", "surrogate", "\\u0000", "maximum parsing depth",
        "invalid Unicode", "NUL byte"};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strstr(text, reasons[i]))
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    js_span value;
    int ours = js_validate(text, size, JANSSON_MAX_DEPTH, &value, NULL);
    json_error_t error;
    json_t *theirs = json_loadb(text, size, JSON_DECODE_ANY, &error);

    /* jansson stops at a NUL byte as if the text ended there; a NUL outside a string is no
     * JSON whitespace, so rpcd rightly refuses it. Elsewhere, refusing what jansson accepts is
     * always rpcd's bug. */
    if (theirs && ours != 0 && !memchr(text, '\0', size))
        abort();
    if (!theirs && ours == 0 && !known_jansson_limit(error.text))
        abort(); /* we accept what jansson refuses for a reason we do not share */
    if (ours == 0 && (js_kind_of(value) == JS_OBJECT || js_kind_of(value) == JS_ARRAY)) {
        /* The children noted while validating are the ones an iteration finds. */
        js_child children[8];
        js_index index = {children, 8, 0};
        if (js_validate_indexed(text, size, JANSSON_MAX_DEPTH, NULL, NULL, &index) != 0)
            abort();
        js_iter iter;
        js_span key, child;
        size_t count = 0;
        js_iter_init(&iter, value);
        while (js_iter_next(&iter, &key, &child)) {
            if (count < 8) {
                if (child.start != children[count].value.start ||
                    child.length != children[count].value.length)
                    abort();
                if (js_kind_of(value) == JS_OBJECT && (key.start != children[count].key.start ||
                                                       key.length != children[count].key.length))
                    abort();
            }
            count++;
        }
        if (count != index.count)
            abort();
    }
    if (ours == 0) {
        /* The value span holds exactly the value: validating it alone agrees. */
        if (js_validate(value.start, value.length, JANSSON_MAX_DEPTH, NULL, NULL) != 0)
            abort();
        if (js_kind_of(value) == JS_STRING) {
            char decoded[256];
            size_t length;
            js_string_decode(value, decoded, sizeof decoded, &length);
        }
    }
    json_decref(theirs);
    return 0;
}
