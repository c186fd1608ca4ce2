/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: JSON Schema compiling and checking. The input is a schema's text, a line break,
 * and an instance's text. Any schema gives a compiled schema or a one-line reason; any instance
 * gives the same verdict through the full check and the quick path on its text, the same
 * failure both ways, and a failure whose three texts are NUL-terminated within their room; never a
 * crash, a leak or a hang (patterns run under PCRE2's limits).
 */
#include "json/json_scan.h"
#include "schema/schema.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *split = memchr(text, '\n', size);
    size_t schema_length = split ? (size_t)(split - text) : size;
    const char *instance = split ? split + 1 : "null";
    size_t instance_length = split ? size - schema_length - 1 : 4;
    json_schema *compiled = NULL;
    char error[256];
    schema_options options = {size % 2 == 1};
    if (schema_compile(text, schema_length, &options, &compiled, error, sizeof error) != 0) {
        if (compiled || strlen(error) >= sizeof error || strchr(error, '\n'))
            abort(); /* refused: nothing kept, one line */
        return 0;
    }
    js_span value;
    if (js_validate(instance, instance_length, 64, &value, NULL) == 0) {
        schema_failure first, second;
        int verdict = schema_check_text(compiled, instance, instance_length, &first);
        if (verdict != schema_check_span(compiled, value, &second))
            abort(); /* the quick path on the text never says other than the full check */
        if (verdict == SCHEMA_INVALID &&
            (strlen(first.pointer) >= sizeof first.pointer ||
             strlen(first.keyword) >= sizeof first.keyword || first.keyword[0] == '\0' ||
             strlen(first.expected) >= sizeof first.expected ||
             strcmp(first.pointer, second.pointer) != 0 ||
             strcmp(first.keyword, second.keyword) != 0 ||
             strcmp(first.expected, second.expected) != 0))
            abort();
    }
    schema_free(compiled);
    return 0;
}
