/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash table (FNV-1a, linear probing) over an array of methods kept in
 * registration order.
 */
#include "methods/registry.h"

#include "base/metrics.h"
#include "json/json_scan.h"
#include "methods/mcp_catalog.h"
#include "methods/mcp_tool.h"
#include "methods/reserved_names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct registry {
    reg_method **methods; /* registration order, owned */
    size_t count;
    size_t capacity;
    size_t *slots;     /* index + 1 into methods, 0 when empty */
    size_t slot_count; /* a power of two, at least twice count */
};

uint64_t reg_hash(const char *name, size_t length)
{
    uint64_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < length; i++) {
        hash ^= (unsigned char)name[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

int reg_new(registry **out)
{
    registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return REG_ERR_NO_MEMORY;
    *out = reg;
    return 0;
}

static void free_method(reg_method *method)
{
    if (method->free_user_data)
        method->free_user_data(method->user_data);
    free(method->name);
    free(method->description);
    free(method->params_schema);
    free(method->title);
    free(method->annotations);
    free(method->output_schema);
    schema_free(method->arguments);
    schema_free(method->output);
    free(method->icons);
    free(method->mcp_descriptor);
    free(method);
}

void reg_free(registry *reg)
{
    if (!reg)
        return;
    for (size_t i = reg->count; i-- > 0;)
        free_method(reg->methods[i]);
    free(reg->methods);
    free(reg->slots);
    free(reg);
}

static int rebuild_slots(registry *reg, size_t slot_count)
{
    size_t *slots = calloc(slot_count, sizeof *slots);
    if (!slots)
        return REG_ERR_NO_MEMORY;
    for (size_t i = 0; i < reg->count; i++) {
        const reg_method *method = reg->methods[i];
        size_t slot = reg_hash(method->name, method->name_length) & (slot_count - 1);
        while (slots[slot])
            slot = (slot + 1) & (slot_count - 1);
        slots[slot] = i + 1;
    }
    free(reg->slots);
    reg->slots = slots;
    reg->slot_count = slot_count;
    return 0;
}

void reg_set_cancel_hook(registry *reg, const char *name,
                         void (*hook)(rpcd_call *call, void *user_data))
{
    const reg_method *found = reg_find(reg, name, strlen(name));
    for (size_t i = 0; found && i < reg->count; i++)
        if (reg->methods[i] == found)
            reg->methods[i]->cancel_hook = hook;
}

void reg_set_timeout(registry *reg, const char *name, size_t timeout_ms)
{
    const reg_method *found = reg_find(reg, name, strlen(name));
    for (size_t i = 0; found && i < reg->count; i++)
        if (reg->methods[i] == found)
            reg->methods[i]->timeout_ms = timeout_ms;
}

const reg_method *reg_find(const registry *reg, const char *name, size_t length)
{
    if (reg->slot_count == 0)
        return NULL;
    size_t slot = reg_hash(name, length) & (reg->slot_count - 1);
    while (reg->slots[slot]) {
        const reg_method *method = reg->methods[reg->slots[slot] - 1];
        if (method->name_length == length && memcmp(method->name, name, length) == 0)
            return method;
        slot = (slot + 1) & (reg->slot_count - 1);
    }
    return NULL;
}

static char *copy_optional(const char *text, int *failed)
{
    if (!text)
        return NULL;
    char *copy = strdup(text);
    if (!copy)
        *failed = 1;
    return copy;
}

/* True when the member lies inside the size the plugin declared. */
#define DESCRIBES(descriptor, member)                                                              \
    ((descriptor)->size >= offsetof(rpcd_method, member) + sizeof((descriptor)->member))

/* The method flags each ABI minor knows: RPCD_METHOD_QUICK came with 1.2,
 * RPCD_METHOD_VALIDATES_ITSELF with 1.6, the two task flags with 1.7. */
static uint32_t known_flags(uint32_t abi_minor)
{
    return RPCD_METHOD_SERIALIZED | (abi_minor >= 2 ? RPCD_METHOD_QUICK : 0) |
           (abi_minor >= 6 ? RPCD_METHOD_VALIDATES_ITSELF : 0) |
           (abi_minor >= 7 ? RPCD_METHOD_TASK | RPCD_METHOD_TASK_REQUIRED : 0);
}

/* Why a descriptor from a plugin built against abi_minor cannot be registered, or NULL. */
static const char *refusal(const rpcd_method *descriptor, unsigned abi_minor)
{
    if (!descriptor)
        return "no method descriptor";
    if (!DESCRIBES(descriptor, handler))
        return "the descriptor's size is too small to hold a name and a handler";
    const char *name = descriptor->name;
    if (!name)
        return "no name";
    if (!descriptor->handler)
        return "no handler";
    size_t length = strlen(name);
    if (length == 0)
        return "an empty name";
    if (!js_utf8_valid(name, length))
        return "the name is not UTF-8";
    const char *reserved = reserved_method_reason(name, length, abi_minor);
    if (reserved)
        return reserved;
    const char *schema = DESCRIBES(descriptor, params_schema) ? descriptor->params_schema : NULL;
    if (schema && js_validate(schema, strlen(schema), 512, NULL, NULL) != 0)
        return "its params_schema is not JSON (or nested deeper than 512)";
#define GIVEN(member) (DESCRIBES(descriptor, member) ? descriptor->member : NULL)
    const char *tool =
        mcp_tool_refusal(GIVEN(title), GIVEN(annotations), GIVEN(output_schema), GIVEN(icons));
    if (tool || !DESCRIBES(descriptor, mcp_role))
        return tool;
    return mcp_catalog_refusal(descriptor->mcp_role, GIVEN(mcp_descriptor));
#undef GIVEN
}

/* A copy of JSON text from a plugin on one line: tools/list shows it inside one. */
static char *copy_json_line(const char *text, int *failed)
{
    char *copy = copy_optional(text, failed);
    if (copy)
        copy[js_drop_line_breaks(copy, strlen(copy))] = '\0';
    return copy;
}

/*
 * A method of its own from a descriptor that passed refusal(): names, texts and JSON copied (JSON
 * on one line), flags the owner's minor knows; not its user data, which is taken over only once
 * nothing can fail. NULL when memory ran out (nothing kept).
 */
static reg_method *copy_descriptor(const rpcd_method *descriptor, const reg_owner *owner)
{
    reg_method *method = calloc(1, sizeof *method);
    if (!method)
        return NULL;
    int failed = 0;
    method->name = copy_optional(descriptor->name, &failed);
    method->name_length = strlen(descriptor->name);
    method->handler = descriptor->handler;
    method->owner = owner->plugin;
    method->owner_name = owner->name;
    method->abi_minor = owner->abi_minor;
    /* Found here once, so that a call's end counts without a lookup; NULL counts nothing. */
    method->series = mx_series_for(method->name, method->name_length, owner->name);
    if (DESCRIBES(descriptor, flags))
        method->flags = descriptor->flags & known_flags(owner->abi_minor);
    if (DESCRIBES(descriptor, description))
        method->description = copy_optional(descriptor->description, &failed);
    method->params_schema = copy_optional(
        DESCRIBES(descriptor, params_schema) ? descriptor->params_schema : NULL, &failed);
    /* tools/list shows it inside one line: a schema written over several must not split it. */
    if (method->params_schema)
        method->params_schema[js_drop_line_breaks(method->params_schema,
                                                  strlen(method->params_schema))] = '\0';
    if (DESCRIBES(descriptor, title))
        method->title = copy_optional(descriptor->title, &failed);
    if (DESCRIBES(descriptor, annotations))
        method->annotations = copy_json_line(descriptor->annotations, &failed);
    if (DESCRIBES(descriptor, output_schema))
        method->output_schema = copy_json_line(descriptor->output_schema, &failed);
    if (DESCRIBES(descriptor, icons))
        method->icons = copy_json_line(descriptor->icons, &failed);
    if (DESCRIBES(descriptor, mcp_role))
        method->mcp_role = descriptor->mcp_role;
    if (DESCRIBES(descriptor, mcp_descriptor))
        method->mcp_descriptor = copy_json_line(descriptor->mcp_descriptor, &failed);
    if (failed) {
        free_method(method); /* user data is not ours yet: the plugin keeps it on failure */
        return NULL;
    }
    return method;
}

/*
 * The method's schemas compiled once, here, so that a schema rpcd cannot apply is refused at
 * registration and a call only checks: its params_schema unless it or its section opted out,
 * its output_schema always. Returns 0, or REG_ERR_INVALID with error.
 */
static int compile_schemas(reg_method *method, const reg_owner *owner, char *error,
                           size_t error_size)
{
    char why[200];
    const schema_options arguments = {owner->assert_format}, output = {false};
    if (method->params_schema && owner->check_arguments &&
        !(method->flags & RPCD_METHOD_VALIDATES_ITSELF) &&
        schema_compile(method->params_schema, strlen(method->params_schema), &arguments,
                       &method->arguments, why, sizeof why) != 0) {
        if (error_size > 0)
            snprintf(error, error_size, "its params_schema is refused: %s", why);
        return REG_ERR_INVALID;
    }
    if (method->output_schema &&
        schema_compile(method->output_schema, strlen(method->output_schema), &output,
                       &method->output, why, sizeof why) != 0) {
        if (error_size > 0)
            snprintf(error, error_size, "its output_schema is refused: %s", why);
        return REG_ERR_INVALID;
    }
    return 0;
}

int reg_add(registry *reg, const rpcd_method *descriptor, const void *owner, const char *owner_name,
            const reg_method **existing)
{
    const reg_owner who = {owner, owner_name, RPCD_ABI_MINOR, true, false};
    return reg_add_owned(reg, descriptor, &who, existing, NULL, 0);
}

int reg_add_owned(registry *reg, const rpcd_method *descriptor, const reg_owner *owner,
                  const reg_method **existing, char *error, size_t error_size)
{
    const char *refused = refusal(descriptor, owner->abi_minor);
    if (refused) {
        if (error_size > 0)
            snprintf(error, error_size, "%s", refused);
        return REG_ERR_INVALID;
    }
    const char *name = descriptor->name;
    size_t length = strlen(name);

    const reg_method *found = reg_find(reg, name, length);
    if (found) {
        if (existing)
            *existing = found;
        return REG_ERR_EXISTS;
    }

    if (reg->count == reg->capacity) {
        size_t capacity = reg->capacity ? reg->capacity * 2 : 16;
        reg_method **methods = realloc(reg->methods, capacity * sizeof *methods);
        if (!methods)
            return REG_ERR_NO_MEMORY;
        reg->methods = methods;
        reg->capacity = capacity;
    }
    reg_method *method = copy_descriptor(descriptor, owner);
    if (!method)
        return REG_ERR_NO_MEMORY;
    if (compile_schemas(method, owner, error, error_size) != 0) {
        free_method(method); /* user data is not ours yet: the plugin keeps it on failure */
        return REG_ERR_INVALID;
    }
    method->index = reg->count;
    reg->methods[reg->count++] = method;
    if (reg->count * 2 > reg->slot_count &&
        rebuild_slots(reg, reg->slot_count ? reg->slot_count * 2 : 32) != 0) {
        reg->count--;
        free_method(method);
        return REG_ERR_NO_MEMORY;
    }
    if (reg->slot_count && reg->count * 2 <= reg->slot_count) {
        /* Insert the new method into the existing table. */
        size_t slot = reg_hash(name, length) & (reg->slot_count - 1);
        while (reg->slots[slot] && reg->slots[slot] != reg->count)
            slot = (slot + 1) & (reg->slot_count - 1);
        reg->slots[slot] = reg->count;
    }
    /* Only now, with nothing left to fail, does the daemon take the user data over. */
    if (DESCRIBES(descriptor, user_data))
        method->user_data = descriptor->user_data;
    if (DESCRIBES(descriptor, free_user_data))
        method->free_user_data = descriptor->free_user_data;
    return 0;
}

/*
 * Whether the character of sequence bytes at bytes prints as itself: not a control character
 * (C0, DEL, C1 U+0080-U+009F), not a line or paragraph separator (U+2028, U+2029, which some
 * terminals and log readers take as line breaks), not the backslash the escapes start with.
 */
static bool printable_character(const unsigned char *bytes, size_t sequence)
{
    if (sequence == 1)
        return bytes[0] >= 0x20 && bytes[0] < 0x7f && bytes[0] != '\\';
    if (sequence == 2)
        return !(bytes[0] == 0xc2 && bytes[1] < 0xa0);
    if (sequence == 3)
        return !(bytes[0] == 0xe2 && bytes[1] == 0x80 && (bytes[2] == 0xa8 || bytes[2] == 0xa9));
    return true;
}

void reg_printable_name(const char *name, size_t length, char *out, size_t size)
{
    /* used: bytes written; cut: where "..." goes should the rest not fit, the end of the last
     * character after which "..." and the NUL still have room. */
    size_t used = 0, cut = 0;
    for (size_t i = 0; i < length;) {
        const unsigned char *bytes = (const unsigned char *)name + i;
        size_t sequence = js_utf8_sequence_length(name + i, length - i);
        if (sequence == 0)
            sequence = 1; /* not UTF-8: escaped byte by byte */
        bool plain = printable_character(bytes, sequence);
        size_t need = plain ? sequence : 4 * sequence;
        if (used + need + 1 > size) {
            memcpy(out + cut, "...", 4);
            return;
        }
        if (plain) {
            memcpy(out + used, bytes, sequence);
        } else {
            /* By hand, not with snprintf: the names of calls are also logged from signal
             * handlers. */
            static const char hex[] = "0123456789abcdef";
            for (size_t j = 0; j < sequence; j++) {
                char *escape = out + used + 4 * j;
                escape[0] = '\\';
                escape[1] = 'x';
                escape[2] = hex[bytes[j] >> 4];
                escape[3] = hex[bytes[j] & 0xf];
            }
        }
        used += need;
        i += sequence;
        if (used + 4 <= size)
            cut = used;
    }
    out[used] = '\0';
}

void reg_show(const reg_method *method, reg_shown *out)
{
    reg_printable_name(method->owner_name, strlen(method->owner_name), out->plugin,
                       sizeof out->plugin);
    reg_printable_name(method->name, method->name_length, out->method, sizeof out->method);
}

size_t reg_count(const registry *reg)
{
    return reg->count;
}

const reg_method *reg_at(const registry *reg, size_t index)
{
    return index < reg->count ? reg->methods[index] : NULL;
}

void reg_release_owner(registry *reg, const void *owner)
{
    for (size_t i = reg->count; i-- > 0;) {
        reg_method *method = reg->methods[i];
        if (method->owner != owner)
            continue;
        if (method->free_user_data)
            method->free_user_data(method->user_data);
        method->free_user_data = NULL;
        method->user_data = NULL;
    }
}

void reg_remove_owner(registry *reg, const void *owner)
{
    reg_release_owner(reg, owner);
    size_t kept = 0;
    for (size_t i = 0; i < reg->count; i++) {
        if (reg->methods[i]->owner == owner)
            free_method(reg->methods[i]);
        else {
            reg->methods[i]->index = kept;
            reg->methods[kept++] = reg->methods[i];
        }
    }
    reg->count = kept;
    rebuild_slots(reg, reg->slot_count ? reg->slot_count : 32);
}
