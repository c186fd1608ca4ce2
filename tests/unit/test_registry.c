/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for registry: adding and finding methods, the descriptor checks, descriptors of an
 * older, shorter size, a large table, and who frees the plugins' user data and when.
 */
#include "methods/registry.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int handler_a(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

static int handler_b(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_ERR_INTERNAL;
}

/* Records every free_user_data call, in order. */
enum { MAX_FREES = 64 };
static void *freed[MAX_FREES];
static size_t freed_count;

static void record_free(void *data)
{
    assert_true(freed_count < MAX_FREES);
    freed[freed_count++] = data;
}

static int reset_freed(void **state)
{
    (void)state;
    freed_count = 0;
    memset(freed, 0, sizeof freed);
    return 0;
}

static registry *new_registry(void)
{
    registry *reg = NULL;
    assert_int_equal(reg_new(&reg), 0);
    assert_non_null(reg);
    return reg;
}

static void test_add_and_find(void **state)
{
    (void)state;
    registry *reg = new_registry();
    assert_int_equal(reg_count(reg), 0);
    assert_null(reg_find(reg, "x", 1));
    assert_null(reg_at(reg, 0));

    static const char owner[] = "owner";
    char name[] = "math.add";
    rpcd_method method = rpcd_method_new(name, handler_a);
    method.description = "Adds numbers.";
    method.params_schema = "{\"type\":\"array\"}";
    method.flags = RPCD_METHOD_SERIALIZED;
    int user = 7;
    method.user_data = &user;
    assert_int_equal(reg_add(reg, &method, owner, "math", NULL), 0);
    name[0] = 'X'; /* the registry keeps its own copy */

    const reg_method *found = reg_find(reg, "math.add", 8);
    assert_non_null(found);
    assert_string_equal(found->name, "math.add");
    assert_int_equal(found->name_length, 8);
    assert_ptr_equal(found->handler, handler_a);
    assert_ptr_equal(found->user_data, &user);
    assert_null(found->free_user_data);
    assert_int_equal(found->flags, RPCD_METHOD_SERIALIZED);
    assert_string_equal(found->description, "Adds numbers.");
    assert_ptr_not_equal(found->description, method.description);
    assert_string_equal(found->params_schema, "{\"type\":\"array\"}");
    assert_ptr_equal(found->owner, owner);
    assert_string_equal(found->owner_name, "math");
    assert_int_equal(reg_count(reg), 1);
    assert_ptr_equal(reg_at(reg, 0), found);
    assert_null(reg_at(reg, 1));

    rpcd_method bare = rpcd_method_new("bare", handler_b);
    assert_int_equal(reg_add(reg, &bare, owner, "math", NULL), 0);
    found = reg_find(reg, "bare", 4);
    assert_non_null(found);
    assert_null(found->description);
    assert_null(found->params_schema);
    assert_int_equal(found->flags, 0);
    assert_ptr_equal(found->handler, handler_b);
    reg_free(reg);
    reg_free(NULL);
}

static void test_find_by_bytes(void **state)
{
    (void)state;
    registry *reg = new_registry();
    rpcd_method method = rpcd_method_new("math.add", handler_a);
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), 0);
    /* The name is bytes and a length, as it comes out of a request: no NUL needed. */
    static const char request[] = "\"math.add\",\"params\"";
    assert_non_null(reg_find(reg, request + 1, 8));
    assert_non_null(reg_find(reg, "math.addition", 8));
    /* The same prefix is another name. */
    assert_null(reg_find(reg, "math.ad", 7));
    assert_null(reg_find(reg, "math.addition", 13));
    assert_null(reg_find(reg, "math.add\0", 9));
    assert_null(reg_find(reg, "math.add.x", 10));
    assert_null(reg_find(reg, "Math.add", 8));
    assert_null(reg_find(reg, "", 0));
    rpcd_method longer = rpcd_method_new("math.add.more", handler_b);
    assert_int_equal(reg_add(reg, &longer, NULL, "p", NULL), 0);
    assert_ptr_equal(reg_find(reg, "math.add", 8)->handler, handler_a);
    assert_ptr_equal(reg_find(reg, "math.add.more", 13)->handler, handler_b);
    assert_null(reg_find(reg, "math.add.mor", 12));
    reg_free(reg);
}

static void test_duplicate(void **state)
{
    (void)state;
    registry *reg = new_registry();
    static const char first_owner[] = "first", second_owner[] = "second";
    int first_data = 1, second_data = 2;
    rpcd_method method = rpcd_method_new("same", handler_a);
    method.user_data = &first_data;
    method.free_user_data = record_free;
    assert_int_equal(reg_add(reg, &method, first_owner, "first", NULL), 0);

    rpcd_method again = rpcd_method_new("same", handler_b);
    again.user_data = &second_data;
    again.free_user_data = record_free;
    const reg_method *existing = NULL;
    assert_int_equal(reg_add(reg, &again, second_owner, "second", &existing), REG_ERR_EXISTS);
    assert_non_null(existing);
    assert_ptr_equal(existing->owner, first_owner);
    assert_string_equal(existing->owner_name, "first");
    assert_ptr_equal(existing->handler, handler_a);
    assert_int_equal(reg_add(reg, &again, second_owner, "second", NULL), REG_ERR_EXISTS);
    assert_int_equal(reg_count(reg), 1);
    assert_ptr_equal(reg_find(reg, "same", 4)->user_data, &first_data);
    /* The refused plugin keeps its user data: nothing freed by the failure. */
    assert_int_equal(freed_count, 0);
    reg_free(reg);
    assert_int_equal(freed_count, 1);
    assert_ptr_equal(freed[0], &first_data);
}

static void test_invalid_descriptors(void **state)
{
    (void)state;
    registry *reg = new_registry();
    int data = 0;
    static const char *const bad_names[] = {"",
                                            "rpc.",
                                            "rpc.discover",
                                            "rpc.x.y",
                                            ("bad\xFF"
                                             "utf8"),
                                            "\xC0\x80"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        rpcd_method method = rpcd_method_new(bad_names[i], handler_a);
        method.user_data = &data;
        method.free_user_data = record_free;
        if (reg_add(reg, &method, NULL, "p", NULL) != REG_ERR_INVALID)
            fail_msg("name '%s' accepted", bad_names[i]);
    }
    rpcd_method method = rpcd_method_new(NULL, handler_a);
    method.free_user_data = record_free;
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), REG_ERR_INVALID);
    method = rpcd_method_new("no.handler", NULL);
    method.free_user_data = record_free;
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), REG_ERR_INVALID);
    assert_int_equal(reg_add(reg, NULL, NULL, "p", NULL), REG_ERR_INVALID);

    static const char *const bad_schemas[] = {"",           "{",     "not json",
                                              "{\"a\":1,}", "{} {}", "[\"\xFF\"]"};
    for (size_t i = 0; i < sizeof bad_schemas / sizeof bad_schemas[0]; i++) {
        method = rpcd_method_new("schema.bad", handler_a);
        method.params_schema = bad_schemas[i];
        method.user_data = &data;
        method.free_user_data = record_free;
        if (reg_add(reg, &method, NULL, "p", NULL) != REG_ERR_INVALID)
            fail_msg("schema '%s' accepted", bad_schemas[i]);
    }

    /* A size that does not reach the handler cannot describe a method. */
    method = rpcd_method_new("small", handler_a);
    method.size = offsetof(rpcd_method, handler) + sizeof method.handler - 1;
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), REG_ERR_INVALID);
    method.size = 0;
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), REG_ERR_INVALID);

    assert_int_equal(reg_count(reg), 0);
    assert_int_equal(freed_count, 0);

    /* Names close to the reserved prefix are fine. */
    static const char *const fine[] = {"rpc",   "rpcx",    "rpc_",
                                       "RPC.x", "x.rpc.y", "\xC3\xA9t\xC3\xA9"};
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        method = rpcd_method_new(fine[i], handler_a);
        if (reg_add(reg, &method, NULL, "p", NULL) != 0)
            fail_msg("name '%s' refused", fine[i]);
    }
    /* A schema that is JSON is kept, whatever its shape. */
    method = rpcd_method_new("schema.ok", handler_a);
    method.params_schema = " true ";
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), 0);
    reg_free(reg);
    assert_int_equal(freed_count, 0);
}

static void test_short_descriptor(void **state)
{
    (void)state;
    registry *reg = new_registry();
    int data = 5;
    rpcd_method full = rpcd_method_new("older.plugin", handler_a);
    full.user_data = &data;
    full.free_user_data = record_free;
    full.flags = RPCD_METHOD_SERIALIZED;
    full.description = "must not be read";
    full.params_schema = "{ not read either";
    /* A plugin built when the descriptor ended before description: exactly that many bytes. */
    size_t size = offsetof(rpcd_method, description);
    full.size = size;
    rpcd_method *shorter = malloc(size);
    assert_non_null(shorter);
    memcpy(shorter, &full, size);
    assert_int_equal(reg_add(reg, shorter, NULL, "old", NULL), 0);
    free(shorter);

    const reg_method *found = reg_find(reg, "older.plugin", 12);
    assert_non_null(found);
    assert_ptr_equal(found->handler, handler_a);
    assert_ptr_equal(found->user_data, &data);
    assert_ptr_equal(found->free_user_data, record_free);
    assert_int_equal(found->flags, RPCD_METHOD_SERIALIZED);
    assert_null(found->description);
    assert_null(found->params_schema);

    /* Shortest possible: name and handler only. */
    size = offsetof(rpcd_method, handler) + sizeof full.handler;
    rpcd_method minimal_source = rpcd_method_new("minimal", handler_b);
    minimal_source.size = size;
    minimal_source.user_data = &data;
    rpcd_method *minimal = malloc(size);
    assert_non_null(minimal);
    memcpy(minimal, &minimal_source, size);
    assert_int_equal(reg_add(reg, minimal, NULL, "old", NULL), 0);
    free(minimal);
    found = reg_find(reg, "minimal", 7);
    assert_non_null(found);
    assert_null(found->user_data);
    assert_null(found->free_user_data);
    assert_int_equal(found->flags, 0);

    /* Up to params_schema, which is then checked. */
    size = offsetof(rpcd_method, params_schema);
    rpcd_method described_source = rpcd_method_new("described", handler_b);
    described_source.size = size;
    described_source.description = "read";
    rpcd_method *described = malloc(size);
    assert_non_null(described);
    memcpy(described, &described_source, size);
    assert_int_equal(reg_add(reg, described, NULL, "old", NULL), 0);
    free(described);
    found = reg_find(reg, "described", 9);
    assert_string_equal(found->description, "read");
    assert_null(found->params_schema);

    reg_free(reg);
    assert_int_equal(freed_count, 1);
    assert_ptr_equal(freed[0], &data);
}

static void test_many_methods(void **state)
{
    (void)state;
    enum { COUNT = 10000 };
    registry *reg = new_registry();
    for (int i = 0; i < COUNT; i++) {
        char name[32];
        snprintf(name, sizeof name, "method.%d", i);
        rpcd_method method = rpcd_method_new(name, i % 2 ? handler_a : handler_b);
        method.user_data = (void *)(uintptr_t)(i + 1);
        assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), 0);
    }
    assert_int_equal(reg_count(reg), COUNT);
    for (int i = 0; i < COUNT; i++) {
        char name[32];
        int length = snprintf(name, sizeof name, "method.%d", i);
        const reg_method *found = reg_find(reg, name, (size_t)length);
        if (!found)
            fail_msg("%s not found", name);
        assert_ptr_equal(found->user_data, (void *)(uintptr_t)(i + 1));
        assert_ptr_equal(reg_at(reg, (size_t)i), found); /* registration order */
        rpcd_method again = rpcd_method_new(name, handler_a);
        assert_int_equal(reg_add(reg, &again, NULL, "p", NULL), REG_ERR_EXISTS);
    }
    assert_null(reg_find(reg, "method.10000", 12));
    assert_null(reg_find(reg, "method.", 7));
    assert_int_equal(reg_count(reg), COUNT);
    reg_free(reg);
}

static void test_release_owner(void **state)
{
    (void)state;
    registry *reg = new_registry();
    static const char plugin_a[] = "a", plugin_b[] = "b";
    int data[6];
    static const char *const names[] = {"a.1", "b.1", "a.2", "a.3", "b.2", "a.4"};
    for (int i = 0; i < 6; i++) {
        rpcd_method method = rpcd_method_new(names[i], handler_a);
        method.user_data = &data[i];
        method.free_user_data = record_free;
        const void *owner = names[i][0] == 'a' ? plugin_a : plugin_b;
        assert_int_equal(reg_add(reg, &method, owner, names[i][0] == 'a' ? "a" : "b", NULL), 0);
    }
    reg_release_owner(reg, plugin_a);
    /* Once each, newest first, and only plugin a's. */
    assert_int_equal(freed_count, 4);
    assert_ptr_equal(freed[0], &data[5]);
    assert_ptr_equal(freed[1], &data[3]);
    assert_ptr_equal(freed[2], &data[2]);
    assert_ptr_equal(freed[3], &data[0]);
    /* The methods stay findable; their user data is gone. */
    const reg_method *found = reg_find(reg, "a.2", 3);
    assert_non_null(found);
    assert_null(found->user_data);
    assert_null(found->free_user_data);
    assert_ptr_equal(reg_find(reg, "b.1", 3)->user_data, &data[1]);
    /* Releasing again frees nothing more. */
    reg_release_owner(reg, plugin_a);
    assert_int_equal(freed_count, 4);
    /* reg_free frees what is left: plugin b's, newest first. */
    reg_free(reg);
    assert_int_equal(freed_count, 6);
    assert_ptr_equal(freed[4], &data[4]);
    assert_ptr_equal(freed[5], &data[1]);
}

static void test_remove_owner(void **state)
{
    (void)state;
    registry *reg = new_registry();
    static const char plugin_a[] = "a", plugin_b[] = "b";
    int data[40];
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "%c.%d", i % 3 == 0 ? 'a' : 'b', i);
        rpcd_method method = rpcd_method_new(name, handler_a);
        method.user_data = &data[i];
        method.free_user_data = record_free;
        assert_int_equal(reg_add(reg, &method, i % 3 == 0 ? plugin_a : plugin_b, "p", NULL), 0);
    }
    reg_remove_owner(reg, plugin_a);
    assert_int_equal(freed_count, 14);
    for (size_t i = 0; i < freed_count; i++)
        assert_ptr_equal(freed[i], &data[39 - 3 * i]); /* newest first */
    assert_int_equal(reg_count(reg), 26);
    for (int i = 0; i < 40; i++) {
        char name[16];
        int length = snprintf(name, sizeof name, "%c.%d", i % 3 == 0 ? 'a' : 'b', i);
        const reg_method *found = reg_find(reg, name, (size_t)length);
        if (i % 3 == 0) {
            if (found)
                fail_msg("%s still found after its plugin was removed", name);
        } else {
            assert_non_null(found);
            assert_ptr_equal(found->user_data, &data[i]);
        }
    }
    /* Registration order of the rest is kept. */
    int previous = -1;
    for (size_t i = 0; i < reg_count(reg); i++) {
        int number = atoi(reg_at(reg, i)->name + 2);
        assert_true(number > previous);
        previous = number;
    }
    /* A removed name can be registered again, by anyone. */
    rpcd_method method = rpcd_method_new("a.0", handler_b);
    assert_int_equal(reg_add(reg, &method, plugin_b, "b", NULL), 0);
    assert_ptr_equal(reg_find(reg, "a.0", 3)->handler, handler_b);
    reg_free(reg);
    assert_int_equal(freed_count, 14 + 26);
}

/* Each refusal says its own reason. */
static void test_refusal_reasons(void **state)
{
    (void)state;
    registry *reg = new_registry();
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
        const char *schema;
        const char *reason;
    } cases[] = {
        {NULL, handler_a, NULL, "no name"},
        {"x", NULL, NULL, "no handler"},
        {"", handler_a, NULL, "an empty name"},
        {"bad\xFF", handler_a, NULL, "the name is not UTF-8"},
        {"rpc.discover", handler_a, NULL, "names starting with 'rpc.' are reserved by JSON-RPC"},
        {"notifications/progress", handler_a, NULL,
         "names starting with 'notifications/' are reserved by MCP"},
        {"$/cancelRequest", handler_a, NULL,
         "names starting with '$/' are reserved for protocol notifications ($/cancelRequest)"},
        {"tools/call", handler_a, NULL, "the name is an MCP method that rpcd answers itself"},
        {"x", handler_a, "{", "its params_schema is not JSON (or nested deeper than 512)"},
    };
    const reg_owner owner = {NULL, "p", RPCD_ABI_MINOR, true, false};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rpcd_method method = rpcd_method_new(cases[i].name, cases[i].handler);
        method.params_schema = cases[i].schema;
        char reason[256] = "";
        assert_int_equal(reg_add_owned(reg, &method, &owner, NULL, reason, sizeof reason),
                         REG_ERR_INVALID);
        assert_string_equal(reason, cases[i].reason);
    }
    char reason[256] = "";
    assert_int_equal(reg_add_owned(reg, NULL, &owner, NULL, reason, sizeof reason),
                     REG_ERR_INVALID);
    assert_string_equal(reason, "no method descriptor");
    rpcd_method small = rpcd_method_new("small", handler_a);
    small.size = offsetof(rpcd_method, handler);
    assert_int_equal(reg_add_owned(reg, &small, &owner, NULL, reason, sizeof reason),
                     REG_ERR_INVALID);
    assert_string_equal(reason, "the descriptor's size is too small to hold a name and a handler");
    reg_free(reg);
}

/* Names have no length limit: a plugin built against 1.0-1.2 registered long ones, and still may.
 */
static void test_long_name(void **state)
{
    (void)state;
    registry *reg = new_registry();
    enum { LONG = 64 * 1024 };
    char *long_name = malloc(LONG + 1);
    assert_non_null(long_name);
    memset(long_name, 'x', LONG);
    long_name[LONG] = '\0';
    const reg_owner owner = {NULL, "p", 0, true, false};
    rpcd_method method = rpcd_method_new(long_name, handler_a);
    assert_int_equal(reg_add_owned(reg, &method, &owner, NULL, NULL, 0), 0);
    assert_non_null(reg_find(reg, long_name, LONG));
    free(long_name);
    reg_free(reg);
}

/* Printable names: what could break or fake a log line is escaped byte by byte. */
static void test_printable_escapes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *shown;
    } cases[] = {
        {"plain.name", "plain.name"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"a\nb\x7f\\", "a\\x0ab\\x7f\\x5c"},
        /* C1 controls: NEL (U+0085) and U+009F; U+00A0 is the first printable one after. */
        {"a\xc2\x85"
         "b\xc2\x9f"
         "c\xc2\xa0",
         "a\\xc2\\x85b\\xc2\\x9fc\xc2\xa0"},
        /* Line and paragraph separators; U+2027 and U+202A beside them stay. */
        {"\xe2\x80\xa8|\xe2\x80\xa9|\xe2\x80\xa7\xe2\x80\xaa",
         "\\xe2\\x80\\xa8|\\xe2\\x80\\xa9|\xe2\x80\xa7\xe2\x80\xaa"},
        /* Not UTF-8: a lone continuation byte, a truncated sequence at the end. */
        {"x\x80y\xe2\x82", "x\\x80y\\xe2\\x82"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[128];
        reg_printable_name(cases[i].name, strlen(cases[i].name), out, sizeof out);
        assert_string_equal(out, cases[i].shown);
    }
}

/*
 * A name that fits (with its NUL) is shown whole, however close to the edge; one that does not
 * is cut after a whole character, escapes included, with "..." and the NUL within size.
 */
static void test_printable_edge(void **state)
{
    (void)state;
    enum { SIZE = 16 };
    char out[SIZE + 8];
    for (size_t length = SIZE - 5; length < SIZE; length++) {
        char name[SIZE];
        memset(name, 'n', length);
        memset(out, '#', sizeof out);
        reg_printable_name(name, length, out, SIZE);
        assert_int_equal(strlen(out), length);
        assert_memory_equal(out, name, length);
    }
    /* One byte too many: cut, as long as it can be with "..." inside SIZE. */
    memset(out, '#', sizeof out);
    reg_printable_name("nnnnnnnnnnnnnnnn", SIZE, out, SIZE);
    assert_string_equal(out, "nnnnnnnnnnnn...");
    assert_int_equal(out[SIZE], '#');
    /* Two-byte characters: 7 of them (14 bytes) fit whole; 8 do not, and the cut never splits
     * one, so 6 are kept (12 bytes) before "...". */
    reg_printable_name("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 14, out, SIZE);
    assert_string_equal(out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    reg_printable_name("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 16, out,
                       SIZE);
    assert_string_equal(out, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
    /* A four-byte character that would end past the room for "...": cut before it. */
    memset(out, '#', sizeof out);
    reg_printable_name("nnnnnnnnnn\xf0\x9f\x98\x80nn", 16, out, SIZE);
    assert_string_equal(out, "nnnnnnnnnn...");
    assert_int_equal(out[SIZE], '#');
    /* An escape (4 bytes for one) is never split either. */
    reg_printable_name("nnnnnnnnnnn\x01nnnn", 16, out, SIZE);
    assert_string_equal(out, "nnnnnnnnnnn...");
    reg_printable_name("nnnnnnnn\x01n", 10, out, SIZE);
    assert_string_equal(out, "nnnnnnnn\\x01n");
}

/* Flags keep only the bits the owner's ABI minor defines: QUICK means nothing before 1.2,
 * VALIDATES_ITSELF nothing before 1.6, TASK and TASK_REQUIRED nothing before 1.7. */
static void test_flags_by_minor(void **state)
{
    (void)state;
    registry *reg = new_registry();
    static const struct {
        const char *name;
        uint32_t minor;
        uint32_t kept;
    } cases[] = {
        {"m0", 0, RPCD_METHOD_SERIALIZED},
        {"m1", 1, RPCD_METHOD_SERIALIZED},
        {"m2", 2, RPCD_METHOD_SERIALIZED | RPCD_METHOD_QUICK},
        {"m5", 5, RPCD_METHOD_SERIALIZED | RPCD_METHOD_QUICK},
        {"m6", 6, RPCD_METHOD_SERIALIZED | RPCD_METHOD_QUICK | RPCD_METHOD_VALIDATES_ITSELF},
        {"m7", 7,
         RPCD_METHOD_SERIALIZED | RPCD_METHOD_QUICK | RPCD_METHOD_VALIDATES_ITSELF |
             RPCD_METHOD_TASK | RPCD_METHOD_TASK_REQUIRED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const reg_owner owner = {NULL, "p", cases[i].minor, true, false};
        rpcd_method method = rpcd_method_new(cases[i].name, handler_a);
        method.flags = 0xffffffffu;
        assert_int_equal(reg_add_owned(reg, &method, &owner, NULL, NULL, 0), 0);
        const reg_method *added = reg_find(reg, cases[i].name, 2);
        assert_non_null(added);
        assert_int_equal(added->flags, cases[i].kept);
        assert_int_equal(added->abi_minor, cases[i].minor);
    }
    reg_free(reg);
}

/* A schema written over several lines is kept on one, the same JSON. */
static void test_schema_on_one_line(void **state)
{
    (void)state;
    registry *reg = new_registry();
    rpcd_method method = rpcd_method_new("s", handler_a);
    method.params_schema = "{\r\n  \"type\": \"object\",\r  \"a\": \"x\\ny\"\n}\n";
    assert_int_equal(reg_add(reg, &method, NULL, "p", NULL), 0);
    assert_string_equal(reg_find(reg, "s", 1)->params_schema,
                        "{  \"type\": \"object\",  \"a\": \"x\\ny\"}");
    reg_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_add_and_find, reset_freed),
        cmocka_unit_test_setup(test_find_by_bytes, reset_freed),
        cmocka_unit_test_setup(test_duplicate, reset_freed),
        cmocka_unit_test_setup(test_invalid_descriptors, reset_freed),
        cmocka_unit_test_setup(test_short_descriptor, reset_freed),
        cmocka_unit_test_setup(test_many_methods, reset_freed),
        cmocka_unit_test_setup(test_release_owner, reset_freed),
        cmocka_unit_test_setup(test_remove_owner, reset_freed),
        cmocka_unit_test(test_refusal_reasons),
        cmocka_unit_test(test_long_name),
        cmocka_unit_test(test_printable_escapes),
        cmocka_unit_test(test_printable_edge),
        cmocka_unit_test(test_flags_by_minor),
        cmocka_unit_test(test_schema_on_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
