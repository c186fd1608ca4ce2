/* SPDX-License-Identifier: MIT */
/*
 * What one check of a tool's params costs in instructions: the bench plugin's five-property
 * schema and arguments (bench/schema), checked N times as the dispatcher checks them
 * (schema_check_span on the validated text), or through the full check of a tree (--full).
 * Run under callgrind at two counts, the difference divided by theirs is one check.
 * usage: schema_loop [--full] N
 */
#include "json/json_scan.h"
#include "schema/schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kept the same as bench_plugin.c's BENCH_FIELDS_SCHEMA and bench/schema's ARGS. */
static const char schema_text[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\",\"days\"],"
    "\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"
    "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14},"
    "\"units\":{\"enum\":[\"metric\",\"imperial\"]},\"hourly\":{\"type\":\"boolean\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":8}}}";
static const char arguments[] =
    "{\"city\":\"Oslo\",\"days\":3,\"units\":\"metric\",\"hourly\":false,\"tags\":[\"rain\","
    "\"wind\"]}";

int main(int argc, char **argv)
{
    bool full = argc > 1 && strcmp(argv[1], "--full") == 0;
    long count = argc > 1 + full ? strtol(argv[1 + full], NULL, 10) : 10000;
    json_schema *compiled = NULL;
    char error[256];
    schema_options options = {false};
    js_span value;
    if (schema_compile(schema_text, strlen(schema_text), &options, &compiled, error,
                       sizeof error) != 0 ||
        js_validate(arguments, strlen(arguments), 64, &value, NULL) != 0) {
        fprintf(stderr, "schema_loop: %s\n", error);
        return 2;
    }
    long valid = 0;
    schema_failure failure;
    for (long i = 0; i < count; i++)
        valid += (full ? schema_check_text(compiled, value.start, value.length, &failure)
                       : schema_check_span(compiled, value, &failure)) == SCHEMA_VALID;
    schema_free(compiled);
    printf("%ld of %ld valid\n", valid, count);
    return valid == count ? 0 : 1;
}
