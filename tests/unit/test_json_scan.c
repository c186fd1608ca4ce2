/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for json_scan.c: the validator on hand-written cases and on the JSONTestSuite
 * corpus, the children it indexes, and the UTF-8 checks.
 */
#include "json/json_scan.h"

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Literal texts may hold NUL bytes, so their length comes from sizeof, not strlen. */
#define VALIDATE(literal, depth) js_validate((literal), sizeof(literal) - 1, (depth), NULL, NULL)
#define SPAN(literal) ((js_span){(literal), sizeof(literal) - 1})

static void test_validate_every_type(void **state)
{
    (void)state;
    static const char *const valid[] = {
        "null",
        "true",
        "false",
        "0",
        "-0",
        "1",
        "-1",
        "1.5",
        "-1.5e+10",
        "1E-2",
        "0e0",
        "123456789012345678901234567890",
        "1e400",
        "18446744073709551617",
        "\"\"",
        "\"abc\"",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD834\\uDD1E\"",
        "\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"",
        "\"\x7F\"",
        "\"\\uD800\"",
        "\"\\uDC00x\"",
        "[]",
        "{}",
        "[ ]",
        "{ }",
        "[1,\"a\",null,true,false,{},[]]",
        "{\"a\":{\"b\":[1,{\"c\":null}]},\"\":0}",
        "{\"a\":1,\"a\":2}",
        " \t\r\n[ 1 , 2 ] \n",
        "\n{\n\"k\"\n:\n\"v\"\n}\n",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        size_t offset = 12345;
        int status = js_validate(valid[i], strlen(valid[i]), 512, NULL, &offset);
        if (status != 0)
            fail_msg("valid text %zu (%s) rejected with %d at %zu", i, valid[i], status, offset);
    }
}

static void test_validate_rejects(void **state)
{
    (void)state;
    static const char *const invalid[] = {
        "",
        " ",
        "\n",
        "nul",
        "True",
        "nulls",
        "truefalse",
        "01",
        "-01",
        "-",
        "1.",
        ".1",
        "+1",
        "1e",
        "1e+",
        "0x10",
        "NaN",
        "Infinity",
        "-Infinity",
        "[",
        "]",
        "{",
        "}",
        "[1,]",
        "[,1]",
        "[,]",
        "{\"a\"}",
        "{\"a\":}",
        "{a:1}",
        "{\"a\":1,}",
        "{,}",
        "{1:2}",
        "[1 2]",
        "{\"a\":1 \"b\":2}",
        "[}",
        "{]",
        "[[]}",
        "{\"a\":[}]",
        "\"abc",
        "\"\\x\"",
        "\"\\u12G4\"",
        "\"\\u123\"",
        "\"\\u123x\"",
        "\"\\\"",
        "\"a\tb\"",
        "\"a\nb\"",
        "\"\x1F\"",
        "1 2",
        "[] []",
        "'a'",
        "\f1",
        "\v1",
        "\xEF\xBB\xBF{}",
        "\"\xC3\"",
        "\"\xC0\x80\"",
        "\"\xC1\xBF\"",
        "\"\xE0\x80\x80\"",
        "\"\xED\xA0\x80\"",
        "\"\xF0\x80\x80\x80\"",
        "\"\xF4\x90\x80\x80\"",
        "\"\xF5\x80\x80\x80\"",
        "\"\xFF\"",
        "\"\x80\"",
        "\"\xE2\x82\"",
        "\xC3\xA9",
        "[1]]",
        "{\"a\":1}}",
        "/* */1",
        "1//",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        size_t offset = 12345;
        int status = js_validate(invalid[i], strlen(invalid[i]), 512, NULL, &offset);
        if (status != JS_ERR_SYNTAX)
            fail_msg("invalid text %zu (%s) gave %d, not JS_ERR_SYNTAX", i, invalid[i], status);
        if (offset > strlen(invalid[i]))
            fail_msg("invalid text %zu: error offset %zu past the end", i, offset);
    }
}

static void test_validate_nul_bytes(void **state)
{
    (void)state;
    assert_int_equal(VALIDATE("\0", 512), JS_ERR_SYNTAX);
    assert_int_equal(VALIDATE("[1,\0 2]", 512), JS_ERR_SYNTAX);
    assert_int_equal(VALIDATE("[1]\0", 512), JS_ERR_SYNTAX);
    assert_int_equal(VALIDATE("\0[1]", 512), JS_ERR_SYNTAX);
    /* A raw NUL is a control character: JSON wants it escaped even inside a string. */
    assert_int_equal(VALIDATE("\"a\0b\"", 512), JS_ERR_SYNTAX);
    assert_int_equal(VALIDATE("\"a\\u0000b\"", 512), 0);
}

/*
 * Strings are scanned several bytes at a step: every byte value, at every offset within and
 * across those steps, must get the verdict it gets on its own.
 */
static void test_validate_every_byte_at_every_offset(void **state)
{
    (void)state;
    enum { BODY = 40 };
    char text[BODY + 2];
    for (int offset = 0; offset < BODY; offset++) {
        for (int byte = 0; byte < 256; byte++) {
            memset(text, 'a', sizeof text);
            text[0] = '"';
            text[BODY + 1] = '"';
            text[1 + offset] = (char)byte;
            /* Alone among 'a's, a byte of 0x80 or more is never UTF-8; a quote ends the string
             * early, before the trailing 'a's; a backslash escapes an 'a', which is no escape. */
            bool plain = byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
            int status = js_validate(text, sizeof text, 512, NULL, NULL);
            if ((status == 0) != plain)
                fail_msg("byte 0x%02x at offset %d: status %d", byte, offset, status);
        }
    }
    /* A two-byte sequence at every offset, straddling a step's edge too, and a broken one. */
    for (int offset = 0; offset + 1 < BODY; offset++) {
        memset(text, 'a', sizeof text);
        text[0] = '"';
        text[BODY + 1] = '"';
        memcpy(text + 1 + offset, "\xC3\xA9", 2);
        assert_int_equal(js_validate(text, sizeof text, 512, NULL, NULL), 0);
        text[2 + offset] = 'a';
        assert_int_equal(js_validate(text, sizeof text, 512, NULL, NULL), JS_ERR_SYNTAX);
    }
    /* An unterminated string whose length is a multiple of the step. */
    memset(text, 'a', sizeof text);
    text[0] = '"';
    assert_int_equal(js_validate(text, 33, 512, NULL, NULL), JS_ERR_SYNTAX);
}

static void test_validate_value_span(void **state)
{
    (void)state;
    static const char text[] = " \t\r\n {\"a\" : [1, 2]} \n\r\t ";
    js_span value = {NULL, 99};
    assert_int_equal(js_validate(text, sizeof text - 1, 512, &value, NULL), 0);
    assert_ptr_equal(value.start, text + 5);
    assert_int_equal(value.length, strlen("{\"a\" : [1, 2]}"));
    assert_memory_equal(value.start, "{\"a\" : [1, 2]}", value.length);

    static const char number[] = "  -12.5e3\n";
    assert_int_equal(js_validate(number, sizeof number - 1, 512, &value, NULL), 0);
    assert_ptr_equal(value.start, number + 2);
    assert_int_equal(value.length, 7);

    static const char bare[] = "true";
    assert_int_equal(js_validate(bare, 4, 512, &value, NULL), 0);
    assert_ptr_equal(value.start, bare);
    assert_int_equal(value.length, 4);

    /* Whitespace inside a string at the end of the value stays in the span. */
    static const char string[] = "\"a \" ";
    assert_int_equal(js_validate(string, sizeof string - 1, 512, &value, NULL), 0);
    assert_int_equal(value.length, 4);
}

static void test_validate_length_bounds_text(void **state)
{
    (void)state;
    /* Only the given bytes count: what follows them must not be read or judged. */
    static const char text[] = "[1,2]garbage";
    assert_int_equal(js_validate(text, 5, 512, NULL, NULL), 0);
    assert_int_equal(js_validate(text, 4, 512, NULL, NULL), JS_ERR_SYNTAX);
    static const char number[] = "12345";
    js_span value;
    assert_int_equal(js_validate(number, 3, 512, &value, NULL), 0);
    assert_int_equal(value.length, 3);
    static const char literal[] = "true";
    assert_int_equal(js_validate(literal, 3, 512, NULL, NULL), JS_ERR_SYNTAX);
}

static void test_validate_error_offsets(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t offset;
    } cases[] = {
        {"[1,]", 3}, {"[1 2]", 3}, {"{\"a\" 1}", 5}, {"  x", 2},        {"[1] x", 4},
        {"", 0},     {"01", 1},    {"[1,2", 4},      {"{\"a\":1,}", 7}, {"[}", 1},
        {"{]", 1},   {"{a:1}", 1}, {"[-]", 1},       {"   ", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t offset = 12345;
        assert_int_not_equal(js_validate(cases[i].text, strlen(cases[i].text), 512, NULL, &offset),
                             0);
        if (offset != cases[i].offset)
            fail_msg("'%s': error offset %zu, expected %zu", cases[i].text, offset,
                     cases[i].offset);
    }
}

static void test_validate_error_offset_inside_bad_token(void **state)
{
    (void)state;
    /*
     * The header promises the offset of the problem. A bad escape or byte inside a string in
     * the middle of a long text is at that string, not at the end of the text.
     */
    static const char escape[] = "[\"ok\", \"b\\q\", 1, 2, 3, 4, 5, 6]";
    size_t offset = 12345;
    assert_int_equal(js_validate(escape, sizeof escape - 1, 512, NULL, &offset), JS_ERR_SYNTAX);
    if (offset < 7 || offset > 12)
        fail_msg("bad escape at bytes 7..12 of %zu reported at offset %zu", sizeof escape - 1,
                 offset);

    static const char utf8[] = "[\"ok\", \"b\xFF\", 1, 2, 3, 4, 5, 6]";
    offset = 12345;
    assert_int_equal(js_validate(utf8, sizeof utf8 - 1, 512, NULL, &offset), JS_ERR_SYNTAX);
    if (offset < 7 || offset > 11)
        fail_msg("bad byte at bytes 7..11 of %zu reported at offset %zu", sizeof utf8 - 1, offset);
}

/* depth nested arrays around a number: "[[[1]]]" for 3. New string, length in *length. */
static char *nested_arrays(size_t depth, size_t *length)
{
    char *text = malloc(2 * depth + 2);
    assert_non_null(text);
    memset(text, '[', depth);
    text[depth] = '1';
    memset(text + depth + 1, ']', depth);
    text[2 * depth + 1] = '\0';
    *length = 2 * depth + 1;
    return text;
}

static void test_validate_depth_boundary(void **state)
{
    (void)state;
    /* Around the byte boundaries of the bit stack and its switch from stack to heap. */
    static const size_t depths[] = {1,  2,   7,   8,   9,   15,  16,   17,   63,  64,
                                    65, 511, 512, 513, 514, 520, 1000, 4096, 4097};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        size_t depth = depths[i], length, offset = 12345;
        char *text = nested_arrays(depth, &length);
        if (js_validate(text, length, depth, NULL, NULL) != 0)
            fail_msg("depth %zu rejected with max_depth %zu", depth, depth);
        assert_int_equal(js_validate(text, length, depth + 1, NULL, NULL), 0);
        assert_int_equal(js_validate(text, length, depth - 1, NULL, &offset), JS_ERR_DEPTH);
        assert_int_equal(offset, depth - 1); /* the bracket that opens one level too many */
        free(text);
    }
    assert_int_equal(VALIDATE("1", 0), 0);
    assert_int_equal(VALIDATE("\"a\"", 0), 0);
    assert_int_equal(VALIDATE("[]", 0), JS_ERR_DEPTH);
    assert_int_equal(VALIDATE("{}", 0), JS_ERR_DEPTH);
    assert_int_equal(VALIDATE("{\"a\":[{\"b\":[]}]}", 4), 0);
    assert_int_equal(VALIDATE("{\"a\":[{\"b\":[]}]}", 3), JS_ERR_DEPTH);
    /* Siblings do not add up: depth is nesting, not count. */
    assert_int_equal(VALIDATE("[[1],[2],[[3]],{\"a\":[]}]", 3), 0);
}

/* Alternating objects and arrays, so that a wrong bit in the kind stack shows. */
static char *nested_mixed(size_t depth, size_t *length)
{
    size_t capacity = depth * 8 + 16, used = 0;
    char *text = malloc(capacity);
    assert_non_null(text);
    for (size_t i = 0; i < depth; i++) {
        if (i % 3 == 0) {
            memcpy(text + used, "{\"k\":", 5);
            used += 5;
        } else {
            text[used++] = '[';
        }
    }
    text[used++] = '0';
    for (size_t i = depth; i-- > 0;)
        text[used++] = i % 3 == 0 ? '}' : ']';
    text[used] = '\0';
    *length = used;
    return text;
}

static void test_validate_mixed_nesting(void **state)
{
    (void)state;
    static const size_t depths[] = {5, 64, 600, 5000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        size_t length;
        char *text = nested_mixed(depths[i], &length);
        assert_int_equal(js_validate(text, length, depths[i], NULL, NULL), 0);
        assert_int_equal(js_validate(text, length, depths[i] - 1, NULL, NULL), JS_ERR_DEPTH);
        /* Swap one closing bracket for the other kind, deep inside: now it must fail. */
        char *closer = text + length - depths[i] / 2 - 1;
        *closer = *closer == '}' ? ']' : '}';
        assert_int_equal(js_validate(text, length, depths[i], NULL, NULL), JS_ERR_SYNTAX);
        free(text);
    }
}

static void test_validate_hostile_depth(void **state)
{
    (void)state;
    enum { DEPTH = 100000 };
    char *text = malloc(2 * DEPTH);
    assert_non_null(text);
    memset(text, '[', DEPTH);
    size_t offset = 0;
    assert_int_equal(js_validate(text, DEPTH, 512, NULL, &offset), JS_ERR_DEPTH);
    assert_int_equal(offset, 512);
    /* With a limit above the depth the text is merely unfinished. */
    offset = 0;
    assert_int_equal(js_validate(text, DEPTH, 2 * DEPTH, NULL, &offset), JS_ERR_SYNTAX);
    assert_int_equal(offset, DEPTH);
    memset(text + DEPTH, ']', DEPTH);
    assert_int_equal(js_validate(text, 2 * DEPTH, DEPTH, NULL, NULL), 0);
    assert_int_equal(js_validate(text, 2 * DEPTH, DEPTH - 1, NULL, NULL), JS_ERR_DEPTH);
    free(text);

    /* The same with objects: {"":{"":{"": ... */
    text = malloc(4 * DEPTH);
    assert_non_null(text);
    for (size_t i = 0; i < DEPTH; i++)
        memcpy(text + 4 * i, "{\"\":", 4);
    offset = 0;
    assert_int_equal(js_validate(text, 4 * DEPTH, 512, NULL, &offset), JS_ERR_DEPTH);
    assert_int_equal(offset, 4 * 512);
    assert_int_equal(js_validate(text, 4 * DEPTH, 2 * DEPTH, NULL, &offset), JS_ERR_SYNTAX);
    assert_int_equal(offset, 4 * DEPTH);
    free(text);
}

/* Reads a whole file, NUL bytes and newlines included. New buffer or NULL. */
static char *read_whole_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    size_t capacity = 4096, used = 0;
    char *data = malloc(capacity);
    while (data) {
        size_t n = fread(data + used, 1, capacity - used, file);
        used += n;
        if (used < capacity)
            break;
        capacity *= 2;
        char *grown = realloc(data, capacity);
        if (!grown)
            free(data);
        data = grown;
    }
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        free(data);
        return NULL;
    }
    *length = used;
    return data;
}

static void test_validate_jsontestsuite(void **state)
{
    (void)state;
    const char *dir_path = getenv("RPCD_JSONTESTSUITE");
    if (!dir_path)
        fail_msg("RPCD_JSONTESTSUITE is not set");
    DIR *dir = opendir(dir_path);
    if (!dir)
        fail_msg("cannot open %s", dir_path);
    size_t accepted = 0, rejected = 0, either = 0, wrong = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        size_t name_length = strlen(name);
        if (name_length < 7 || name[1] != '_' || strcmp(name + name_length - 5, ".json") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir_path, name);
        size_t length = 0;
        char *text = read_whole_file(path, &length);
        if (!text)
            fail_msg("cannot read %s", path);
        js_span value;
        size_t offset = 0;
        int status = js_validate(text, length, 512, &value, &offset);
        if (name[0] == 'y') {
            accepted++;
            if (status != 0) {
                print_error("%s: rejected with %d at byte %zu\n", name, status, offset);
                wrong++;
            } else if (value.start < text || value.start + value.length > text + length) {
                print_error("%s: value span outside the text\n", name);
                wrong++;
            }
        } else if (name[0] == 'n') {
            rejected++;
            if (status == 0) {
                print_error("%s: accepted\n", name);
                wrong++;
            } else if (offset > length) {
                print_error("%s: error offset %zu past the end (%zu)\n", name, offset, length);
                wrong++;
            }
        } else if (name[0] == 'i') {
            either++; /* the point is only that it returns */
        }
        free(text);
    }
    closedir(dir);
    print_message("JSONTestSuite: %zu y_, %zu n_, %zu i_ files\n", accepted, rejected, either);
    assert_true(accepted > 50);
    assert_true(rejected > 50);
    assert_int_equal(wrong, 0);
}

#define UTF8_VALID(literal) js_utf8_valid((literal), sizeof(literal) - 1)
#define SEQUENCE_LENGTH(literal) js_utf8_sequence_length((literal), sizeof(literal) - 1)

static void test_utf8_valid(void **state)
{
    (void)state;
    assert_true(UTF8_VALID(""));
    assert_true(UTF8_VALID("plain ascii \x01\x7F"));
    assert_true(UTF8_VALID("\0"));
    assert_true(UTF8_VALID("\xC2\x80"));         /* U+0080 */
    assert_true(UTF8_VALID("\xDF\xBF"));         /* U+07FF */
    assert_true(UTF8_VALID("\xE0\xA0\x80"));     /* U+0800 */
    assert_true(UTF8_VALID("\xED\x9F\xBF"));     /* U+D7FF */
    assert_true(UTF8_VALID("\xEE\x80\x80"));     /* U+E000 */
    assert_true(UTF8_VALID("\xEF\xBF\xBF"));     /* U+FFFF */
    assert_true(UTF8_VALID("\xF0\x90\x80\x80")); /* U+10000 */
    assert_true(UTF8_VALID("\xF4\x8F\xBF\xBF")); /* U+10FFFF */
    assert_true(UTF8_VALID("a\xC3\xA9z\xE2\x82\xAC\xF0\x9F\x98\x80"));

    assert_false(UTF8_VALID("\x80")); /* lone continuation */
    assert_false(UTF8_VALID("\xBF"));
    assert_false(UTF8_VALID("\xC0\x80"));     /* overlong NUL */
    assert_false(UTF8_VALID("\xC1\xBF"));     /* overlong 2-byte */
    assert_false(UTF8_VALID("\xE0\x80\x80")); /* overlong 3-byte */
    assert_false(UTF8_VALID("\xE0\x9F\xBF"));
    assert_false(UTF8_VALID("\xF0\x80\x80\x80")); /* overlong 4-byte */
    assert_false(UTF8_VALID("\xF0\x8F\xBF\xBF"));
    assert_false(UTF8_VALID("\xED\xA0\x80"));     /* U+D800 */
    assert_false(UTF8_VALID("\xED\xBF\xBF"));     /* U+DFFF */
    assert_false(UTF8_VALID("\xF4\x90\x80\x80")); /* U+110000 */
    assert_false(UTF8_VALID("\xF5\x80\x80\x80"));
    assert_false(UTF8_VALID("\xF8\x88\x80\x80\x80"));
    assert_false(UTF8_VALID("\xFE"));
    assert_false(UTF8_VALID("\xFF"));
    assert_false(UTF8_VALID("\xC3")); /* truncated */
    assert_false(UTF8_VALID("\xE2\x82"));
    assert_false(UTF8_VALID("\xF0\x9F\x98"));
    assert_false(UTF8_VALID("ok\xF0\x9F\x98"));
    assert_false(UTF8_VALID("\xC3\x28")); /* bad continuation */
    assert_false(UTF8_VALID("\xE2\x28\xA1"));
    assert_false(UTF8_VALID("\xE2\x82\x28"));
    assert_false(UTF8_VALID("\xF0\x9F\x28\x80"));
    assert_false(UTF8_VALID("\xF0\x9F\x98\x28"));
    /* Only the given bytes count: a truncated sequence must not be completed from beyond. */
    assert_false(js_utf8_valid("\xC3\xA9", 1));
    assert_false(js_utf8_valid("\xF0\x9F\x98\x80", 3));
}

static void test_utf8_sequence_length(void **state)
{
    (void)state;
    assert_int_equal(js_utf8_sequence_length("a", 0), 0);
    assert_int_equal(SEQUENCE_LENGTH("a"), 1);
    assert_int_equal(SEQUENCE_LENGTH("\0"), 1);
    assert_int_equal(SEQUENCE_LENGTH("\x7F"), 1);
    assert_int_equal(SEQUENCE_LENGTH("ab"), 1);
    assert_int_equal(SEQUENCE_LENGTH("\xC3\xA9"), 2);
    assert_int_equal(SEQUENCE_LENGTH("\xC3\xA9z"), 2);
    assert_int_equal(SEQUENCE_LENGTH("\xE2\x82\xAC"), 3);
    assert_int_equal(SEQUENCE_LENGTH("\xF0\x9F\x98\x80"), 4);
    assert_int_equal(SEQUENCE_LENGTH("\xF4\x8F\xBF\xBF"), 4);
    assert_int_equal(SEQUENCE_LENGTH("\x80"), 0);
    assert_int_equal(SEQUENCE_LENGTH("\xC0\x80"), 0);
    assert_int_equal(SEQUENCE_LENGTH("\xE0\x80\x80"), 0);
    assert_int_equal(SEQUENCE_LENGTH("\xED\xA0\x80"), 0);
    assert_int_equal(SEQUENCE_LENGTH("\xF4\x90\x80\x80"), 0);
    assert_int_equal(SEQUENCE_LENGTH("\xFF"), 0);
    assert_int_equal(js_utf8_sequence_length("\xC3\xA9", 1), 0);
    assert_int_equal(js_utf8_sequence_length("\xE2\x82\xAC", 2), 0);
    assert_int_equal(js_utf8_sequence_length("\xF0\x9F\x98\x80", 3), 0);
}

static void assert_child(const js_child *child, const char *key, const char *value)
{
    if (key) {
        assert_int_equal(child->key.length, strlen(key));
        assert_memory_equal(child->key.start, key, strlen(key));
    } else {
        assert_int_equal(child->key.length, 0);
    }
    assert_int_equal(child->value.length, strlen(value));
    assert_memory_equal(child->value.start, value, strlen(value));
}

/* The children noted while validating: members of an object, items of an array, top level only. */
static void test_validate_indexed(void **state)
{
    (void)state;
    js_child children[3];
    js_index index = {children, 3, 0};
    const char *text = " { \"a\" : [1, {\"x\":2}] ,\"b\\u0041\":\"s\" , \"c\":{} } ";
    assert_int_equal(js_validate_indexed(text, strlen(text), 16, NULL, NULL, &index), 0);
    assert_int_equal(index.count, 3);
    assert_child(&children[0], "\"a\"", "[1, {\"x\":2}]");
    assert_child(&children[1], "\"b\\u0041\"", "\"s\"");
    assert_child(&children[2], "\"c\"", "{}");

    text = "[1,\"two\", [3] ,{\"four\":4}, null]";
    assert_int_equal(js_validate_indexed(text, strlen(text), 16, NULL, NULL, &index), 0);
    assert_int_equal(index.count, 5); /* counted past the room it had */
    assert_child(&children[0], NULL, "1");
    assert_child(&children[1], NULL, "\"two\"");
    assert_child(&children[2], NULL, "[3]");

    text = "[]";
    assert_int_equal(js_validate_indexed(text, strlen(text), 16, NULL, NULL, &index), 0);
    assert_int_equal(index.count, 0);
    text = "\"scalar\"";
    assert_int_equal(js_validate_indexed(text, strlen(text), 16, NULL, NULL, &index), 0);
    assert_int_equal(index.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_indexed),
        cmocka_unit_test(test_validate_every_type),
        cmocka_unit_test(test_validate_rejects),
        cmocka_unit_test(test_validate_nul_bytes),
        cmocka_unit_test(test_validate_every_byte_at_every_offset),
        cmocka_unit_test(test_validate_value_span),
        cmocka_unit_test(test_validate_length_bounds_text),
        cmocka_unit_test(test_validate_error_offsets),
        cmocka_unit_test(test_validate_error_offset_inside_bad_token),
        cmocka_unit_test(test_validate_depth_boundary),
        cmocka_unit_test(test_validate_mixed_nesting),
        cmocka_unit_test(test_validate_hostile_depth),
        cmocka_unit_test(test_validate_jsontestsuite),
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_sequence_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
