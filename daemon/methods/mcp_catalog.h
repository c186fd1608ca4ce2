/* SPDX-License-Identifier: MIT */
/*
 * What MCP offers besides tools (ABI 1.5): the resources, resource templates, prompts and
 * completions plugins registered as method roles, checked at registration, listed, and found
 * by URI, name or reference when a client asks for one.
 */
#ifndef RPCD_MCP_CATALOG_H
#define RPCD_MCP_CATALOG_H

#include "base/buffer.h"
#include "json/json_scan.h"
#include "methods/registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Why a method's role and descriptor (NULL: not given) cannot be registered (static text for a
 * log line), or NULL when they can.
 */
const char *mcp_catalog_refusal(uint32_t role, const char *descriptor);

typedef struct mcp_catalog mcp_catalog;

/*
 * Builds the catalog of methods' roles. Two prompts of one name, two resources of one URI,
 * two templates of one uriTemplate or two completions of one reference are refused with a
 * one-line message naming both methods. Returns 0 and *out (new), or -1 with error.
 */
int mcp_catalog_new(const registry *methods, mcp_catalog **out, char *error, size_t error_size);
void mcp_catalog_free(mcp_catalog *catalog);

struct tool_policy;

/*
 * Moves what policy (borrowed; NULL serves all) does not serve to the catalog's hidden part,
 * order kept: a resource, template, prompt or completion whose method pol_served denies, and
 * a completion whose prompt or resource is hidden. What is hidden is not listed, counted nor
 * found, exactly as if it were not there; mcp_catalog_hidden finds it, for the access log.
 * Once, before the catalog is shared; needs no memory.
 */
void mcp_catalog_hide(mcp_catalog *catalog, const struct tool_policy *policy);

/* The hidden part of a catalog (a catalog that lists it), or NULL. */
const mcp_catalog *mcp_catalog_hidden(const mcp_catalog *catalog);

/* What a catalog lists. */
typedef enum mcp_catalog_list {
    MCP_LIST_RESOURCES,
    MCP_LIST_TEMPLATES,
    MCP_LIST_PROMPTS,
} mcp_catalog_list;

/* How many resources and templates, prompts or completions there are (by role). */
size_t mcp_catalog_count(const mcp_catalog *catalog, uint32_t role);

/*
 * Appends a page of a list's result ({"resources":[...],"nextCursor":...}, and so on), the page
 * starting where params' cursor says. Returns 0, -2 for an invalid cursor, -1 for memory.
 */
int mcp_catalog_answer_list(const mcp_catalog *catalog, mcp_catalog_list list, js_span params,
                            buffer *out);

/*
 * The page a paginated list starts at, from params' "cursor" (ours: a decimal position no
 * greater than count). Returns 0 and *start (0 without a cursor), or -2 for an invalid one.
 */
int mcp_page_start(js_span params, size_t count, size_t *start);

/* The items of one page. */
enum { MCP_PAGE_SIZE = 100 };

/*
 * The method serving uri (length bytes, decoded): a resource of that URI, else the first
 * template (load order) it matches, whose variables are appended to variables as the members
 * of a JSON object, without braces ("day":"mon"), and *templated set. NULL when none serves
 * it. Thread-safe.
 */
const reg_method *mcp_catalog_resource(const mcp_catalog *catalog, const char *uri, size_t length,
                                       buffer *variables, bool *templated);

/* The method of the prompt named name (length bytes, decoded), or NULL. Thread-safe. */
const reg_method *mcp_catalog_prompt(const mcp_catalog *catalog, const char *name, size_t length);

/*
 * Why arguments (a JSON object, or an empty span: none) cannot be given to the prompt of method
 * (static text), or NULL: each required argument must be there and every value a string.
 */
const char *mcp_catalog_prompt_arguments_problem(const reg_method *method, js_span arguments);

/*
 * The completion method of a reference: kind "ref/prompt" with a prompt's name, or
 * "ref/resource" with a template's uriTemplate (or a resource's URI); both decoded. NULL when
 * none completes it. Thread-safe.
 */
const reg_method *mcp_catalog_completion(const mcp_catalog *catalog, bool prompt, const char *key,
                                         size_t length);

#endif
