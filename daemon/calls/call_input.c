/* SPDX-License-Identifier: MIT */
/*
 * (1.6) Asking the client mid-call: the questions a round records (call_ask), the state it
 * keeps for the next (call_set_state), and what the previous round left to read (call_input,
 * call_state). How the client is asked is the asker's (call_request), never the plugin's.
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "methods/plugin_contract.h"

#include <string.h>

/*
 * The span of the member key in the round's questions, as "key":{...} with the comma before it
 * (or after it, for the first): 1 and *start, *end when asked, else 0.
 */
static int find_question(const call_slot *slot, const char *key, size_t *start, size_t *end)
{
    if (slot->questions.length == 0)
        return 0;
    /* The members sit in braces of their own for the iterator; the text is rpcd's, valid. */
    buffer object = BUFFER_INIT;
    int found = 0;
    if (buf_append_char(&object, '{') != 0 ||
        buf_append(&object, slot->questions.data, slot->questions.length) != 0 ||
        buf_append_char(&object, '}') != 0) {
        buf_free(&object);
        return -1;
    }
    js_iter members;
    js_span name, value;
    js_iter_init(&members, (js_span){object.data, object.length});
    while (!found && js_iter_next(&members, &name, &value)) {
        size_t key_length = strlen(key);
        char decoded[CONTRACT_MOST_KEY_BYTES];
        size_t decoded_length;
        if (js_string_decode(name, decoded, sizeof decoded, &decoded_length) == 0 &&
            decoded_length == key_length && memcmp(decoded, key, key_length) == 0) {
            *start = (size_t)(name.start - object.data) - 1;
            *end = (size_t)(value.start + value.length - object.data) - 1;
            found = 1;
        }
    }
    buf_free(&object);
    if (found) {
        /* Take the comma between it and a neighbour along. */
        if (*start > 0)
            (*start)--;
        else if (*end < slot->questions.length)
            (*end)++;
    }
    return found;
}

static int host_call_ask(rpcd_call *call, const char *key, const char *method, const char *params,
                         size_t params_length)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    size_t start = 0, end = 0;
    int asked = key ? find_question(slot, key, &start, &end) : 0;
    int status =
        asked < 0
            ? RPCD_ERR_NO_MEMORY
            : contract_check_ask(key, method, params, params_length, slot->table->limits.max_depth,
                                 slot->ask_capabilities, slot->question_count, asked == 1);
    if (status == RPCD_OK && slot->answered)
        status = RPCD_ERR_STALE;
    if (status != RPCD_OK) {
        lock_release(&slot->lock);
        return status;
    }
    if (asked == 1) {
        memmove(slot->questions.data + start, slot->questions.data + end,
                slot->questions.length - end);
        slot->questions.length -= end - start;
        slot->question_count--;
    }
    buffer *out = &slot->questions;
    size_t before = out->length;
    int failed = before > 0 ? buf_append_char(out, ',') : 0;
    failed |= buf_append_json_string(out, key, strlen(key));
    failed |= buf_append_string(out, ":{\"method\":");
    failed |= buf_append_json_string(out, method, strlen(method));
    failed |= buf_append_string(out, ",\"params\":");
    if (params) {
        /* On one line, as everything rpcd writes is. */
        size_t at = out->length;
        failed |= buf_append(out, params, params_length);
        if (!failed)
            out->length = at + js_drop_line_breaks(out->data + at, params_length);
    } else {
        failed |= buf_append_string(out, "{}");
    }
    failed |= buf_append_char(out, '}');
    if (failed) {
        out->length = before;
        status = RPCD_ERR_NO_MEMORY;
    } else {
        slot->question_count++;
    }
    lock_release(&slot->lock);
    return status;
}

static int host_call_input(rpcd_call *call, const char *key, char *out, size_t out_size,
                           size_t *length)
{
    if (contract_begin_meta(key, out, out_size, length) != RPCD_OK || !key)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    js_span answers = {slot->answers.data, slot->answers.length}, value;
    /* The answers are rpcd's copy of what the client sent: one object, each key once. */
    if (answers.length > 0 && js_object_get_decoded(answers, key, strlen(key), &value) == 1)
        status = contract_answer_meta(value.start, value.length, out, out_size, length);
    lock_release(&slot->lock);
    return status;
}

static int host_call_set_state(rpcd_call *call, const char *state, size_t length)
{
    if (contract_check_state(state, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    buf_clear(&slot->next_state);
    int status = buf_append(&slot->next_state, state, length) == 0 ? RPCD_OK : RPCD_ERR_NO_MEMORY;
    slot->has_next_state = status == RPCD_OK && length > 0;
    lock_release(&slot->lock);
    return status;
}

static int host_call_state(rpcd_call *call, char *out, size_t out_size, size_t *length)
{
    if (contract_begin_meta(NULL, out, out_size, length) != RPCD_OK)
        return RPCD_ERR_INVALID_ARGUMENT;
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    int status = RPCD_OK;
    if (slot->has_round_state)
        status = contract_answer_meta(slot->round_state.data, slot->round_state.length, out,
                                      out_size, length);
    lock_release(&slot->lock);
    return status;
}

bool call_asks(const call_slot *slot, int status)
{
    return status == RPCD_INPUT_REQUIRED && slot->method->abi_minor >= 6 &&
           slot->question_count > 0 && slot->asker != NULL;
}

int call_write_asking(call_slot *slot)
{
    const call_round_end ended = {
        .method = slot->method,
        .id = {slot->id.data, slot->id.length},
        .arguments = {slot->params, slot->params_length},
        .call_params = {slot->progress_params.data,
                        slot->has_progress_params ? slot->progress_params.length : 0},
        .questions = slot->questions.data,
        .questions_length = slot->questions.length,
        .question_count = slot->question_count,
        .state = slot->next_state.data,
        .state_length = slot->next_state.length,
        .has_state = slot->has_next_state,
    };
    buf_clear(&slot->line);
    return slot->asker->ask(slot->asker_context, &slot->line, &ended);
}

int call_round_of(rpcd_call *call, call_round_view *view)
{
    call_slot *slot = slot_lock_live(call);
    if (!slot)
        return RPCD_ERR_STALE;
    /* Neither buffer changes while the call lives: they came with its start. */
    *view = (call_round_view){
        .ask_capabilities = slot->ask_capabilities,
        .answers = {slot->answers.data, slot->answers.length},
        .has_state = slot->has_round_state,
        .state = {slot->round_state.data, slot->round_state.length},
    };
    lock_release(&slot->lock);
    return 0;
}

void call_fill_input_api(rpcd_host_api *api)
{
    api->call_ask = host_call_ask;
    api->call_input = host_call_input;
    api->call_set_state = host_call_set_state;
    api->call_state = host_call_state;
}
