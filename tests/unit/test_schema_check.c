/* SPDX-License-Identifier: MIT */
/*
 * The official JSON Schema Test Suite (draft 2020-12, tests/data/json-schema-test-suite) run
 * through schema/: every case of every non-optional file must give the expected verdict, but
 * those listed in skipped[] with the reason; the optional files are run too, and only counted.
 */
#include "schema/schema.h"

#include <jansson.h>

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Groups rpcd does not pass on purpose: "file/group description", and why. */
static const struct {
    const char *group;
    const char *why;
} skipped[] = {
    /* clang-format off */
    {"refRemote.json/*", "remote references (http://localhost:1234/...) are refused at "
                         "registration: rpcd fetches nothing"},
    {"defs.json/validate definition against metaschema",
     "$ref to the 2020-12 meta-schema, a remote reference"},
    {"ref.json/remote ref, containing refs itself",
     "$ref to the 2020-12 meta-schema, a remote reference"},
    {"vocabulary.json/schema that uses custom metaschema with with no validation vocabulary",
     "$schema naming a custom meta-schema that would drop vocabularies: rpcd applies the "
     "2020-12 vocabularies whatever $schema says"},
    {"dynamicRef.json/strict-tree schema, guards against misspelled properties",
     "$ref to tree.json, a remote reference"},
    {"dynamicRef.json/tests for implementation dynamic anchor and reference link",
     "$ref to extendible-dynamic-ref.json, a remote reference"},
    {"dynamicRef.json/$ref and $dynamicAnchor are independent of order - $defs first",
     "$ref to extendible-dynamic-ref.json, a remote reference"},
    {"dynamicRef.json/$ref and $dynamicAnchor are independent of order - $ref first",
     "$ref to extendible-dynamic-ref.json, a remote reference"},
    {"dynamicRef.json/$ref to $dynamicRef finds detached $dynamicAnchor",
     "$ref to detached-dynamicref.json, a remote reference"},
    /* clang-format on */
};

typedef struct tally {
    size_t passed, failed, skipped, refused;
} tally;

static const char *skip_reason(const char *file, const char *group)
{
    char star[300], name[600];
    snprintf(star, sizeof star, "%s/*", file);
    snprintf(name, sizeof name, "%s/%s", file, group);
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (strcmp(skipped[i].group, star) == 0 || strcmp(skipped[i].group, name) == 0)
            return skipped[i].why;
    return NULL;
}

static void run_group(const char *file, const json_t *group, bool assert_format, bool loud,
                      tally *counts)
{
    const char *description = json_string_value(json_object_get(group, "description"));
    const json_t *tests = json_object_get(group, "tests");
    const char *skip = getenv("RPCD_SCHEMA_NO_SKIP") ? NULL : skip_reason(file, description);
    char *text = json_dumps(json_object_get(group, "schema"), JSON_ENCODE_ANY | JSON_COMPACT);
    assert_non_null(text);
    json_schema *compiled = NULL;
    char error[256] = "";
    schema_options options = {assert_format};
    int status = schema_compile(text, strlen(text), &options, &compiled, error, sizeof error);
    free(text);
    size_t i;
    json_t *test;
    json_array_foreach(tests, i, test)
    {
        bool expected = json_is_true(json_object_get(test, "valid"));
        bool got = false, agree = true;
        if (status == 0) {
            schema_failure failure;
            int verdict = schema_check(compiled, json_object_get(test, "data"), &failure);
            assert_int_not_equal(verdict, SCHEMA_NO_MEMORY);
            got = verdict == SCHEMA_VALID;
            /* The same value as text, as rpcd checks params: the quick path on the text, when
             * the schema allows it, must agree with the check of the tree. */
            char *data = json_dumps(json_object_get(test, "data"), JSON_ENCODE_ANY | JSON_COMPACT);
            assert_non_null(data);
            js_span span;
            assert_int_equal(js_validate(data, strlen(data), 4096, &span, NULL), 0);
            int from_text = schema_check_span(compiled, span, &failure);
            if (from_text != verdict)
                print_message("TEXT DIFFERS %s / %s / %s: %s\n", file, description,
                              json_string_value(json_object_get(test, "description")), data);
            agree = from_text == verdict;
            free(data);
        }
        if (skip) {
            counts->skipped++;
        } else if (status == 0 && got == expected && agree) {
            counts->passed++;
        } else {
            counts->failed++;
            if (status != 0)
                counts->refused++;
            if (loud)
                print_message("FAIL %s / %s / %s%s%s\n", file, description,
                              json_string_value(json_object_get(test, "description")),
                              status != 0 ? ": refused: " : "", status != 0 ? error : "");
        }
    }
    schema_free(compiled);
}

static void run_file(const char *directory, const char *file, bool assert_format, bool loud,
                     tally *counts)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", directory, file);
    json_error_t error;
    json_t *groups = json_load_file(path, JSON_ALLOW_NUL, &error);
    if (!groups) /* bignum.json: integers beyond 64 bits, read as doubles as rpcd reads them */
        groups = json_load_file(path, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &error);
    if (!groups)
        fail_msg("%s: %s", path, error.text);
    size_t i;
    json_t *group;
    json_array_foreach(groups, i, group)
    {
        run_group(file, group, assert_format, loud, counts);
    }
    json_decref(groups);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static tally run_directory(const char *directory, bool assert_format, bool loud)
{
    tally counts = {0, 0, 0, 0};
    struct dirent **names;
    int count = scandir(directory, &names, NULL, by_name);
    assert_true(count > 0);
    for (int i = 0; i < count; i++) {
        size_t length = strlen(names[i]->d_name);
        if (length > 5 && strcmp(names[i]->d_name + length - 5, ".json") == 0)
            run_file(directory, names[i]->d_name, assert_format, loud, &counts);
        free(names[i]);
    }
    free(names);
    return counts;
}

static char suite_dir[900];

static void required_cases_pass(void **state)
{
    (void)state;
    tally counts = run_directory(suite_dir, false, true);
    print_message("draft2020-12: %zu passed, %zu failed (%zu with the schema refused), %zu "
                  "skipped as listed\n",
                  counts.passed, counts.failed, counts.refused, counts.skipped);
    assert_true(counts.passed > 1000);
    assert_int_equal(counts.failed, 0);
}

static void optional_cases_are_counted(void **state)
{
    (void)state;
    char optional[1000], format[1100];
    snprintf(optional, sizeof optional, "%s/optional", suite_dir);
    snprintf(format, sizeof format, "%s/optional/format", suite_dir);
    tally counts = run_directory(optional, false, getenv("RPCD_SCHEMA_SUITE_LOUD") != NULL);
    print_message("optional: %zu passed, %zu failed\n", counts.passed, counts.failed);
    tally formats = run_directory(format, true, getenv("RPCD_SCHEMA_SUITE_LOUD") != NULL);
    print_message("optional/format (asserted): %zu passed, %zu failed\n", formats.passed,
                  formats.failed);
    assert_true(counts.passed + formats.passed > 0);
}

int main(void)
{
    const char *data = getenv("RPCD_TEST_DATA");
    if (!data) {
        fprintf(stderr, "RPCD_TEST_DATA is not set\n");
        return 1;
    }
    snprintf(suite_dir, sizeof suite_dir, "%s/json-schema-test-suite/tests/draft2020-12", data);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(required_cases_pass),
        cmocka_unit_test(optional_cases_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
