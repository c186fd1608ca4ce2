/* SPDX-License-Identifier: MIT */
/*
 * Fixture: functions named as jansson's own (json_loadb, json_dumps, json_object), with default
 * visibility and jansson's signatures, that have nothing to do with JSON. In a file of their own,
 * so that the plugin's calls go through its symbol table as any call between files does.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef SYMBOLS_SIDE
#define SYMBOLS_SIDE "a"
#endif

#define VISIBLE __attribute__((visibility("default")))

/* What these functions return: markers the plugin recognises, never a jansson value. */
char symbols_loaded_marker;
char symbols_object_marker;

VISIBLE void *json_loadb(const char *buffer, size_t length, size_t flags, void *error);
VISIBLE void *json_object(void);
VISIBLE char *json_dumps(const void *value, size_t flags);

void *json_loadb(const char *buffer, size_t length, size_t flags, void *error)
{
    (void)buffer, (void)length, (void)flags, (void)error;
    return &symbols_loaded_marker;
}

void *json_object(void)
{
    return &symbols_object_marker;
}

/* "SIDE-own" (new, free()), for the markers only. */
char *json_dumps(const void *value, size_t flags)
{
    (void)flags;
    if (value != &symbols_loaded_marker && value != &symbols_object_marker)
        return NULL;
    return strdup(SYMBOLS_SIDE "-own");
}
