/* SPDX-License-Identifier: MIT */
/*
 * The offsets and sizes <rpcd/plugin.h> documents for bindings (LP64), checked at compile time:
 * the comment a binding is written from cannot drift from the structures.
 */
#include <rpcd/plugin.h>

#include <assert.h>

#if defined(__LP64__)
#define AT(type, member, offset) static_assert(offsetof(type, member) == (offset), #member)

AT(rpcd_host_api, size, 0);
AT(rpcd_host_api, abi_major, 8);
AT(rpcd_host_api, abi_minor, 12);
AT(rpcd_host_api, register_method, 16);
AT(rpcd_host_api, config_get, 24);
AT(rpcd_host_api, log, 32);
AT(rpcd_host_api, call_result, 40);
AT(rpcd_host_api, call_fail, 48);
AT(rpcd_host_api, call_fail_code, 56);
AT(rpcd_host_api, call_notify, 64);
AT(rpcd_host_api, call_progress, 72);
AT(rpcd_host_api, call_is_cancelled, 80);
AT(rpcd_host_api, call_method, 88);
AT(rpcd_host_api, log_v, 96);
AT(rpcd_host_api, call_complete, 104);
AT(rpcd_host_api, log_text, 112);
AT(rpcd_host_api, call_tool_result, 120);
AT(rpcd_host_api, call_meta, 128);
AT(rpcd_host_api, resource_updated, 136);
AT(rpcd_host_api, call_ask, 144);
AT(rpcd_host_api, call_input, 152);
AT(rpcd_host_api, call_set_state, 160);
AT(rpcd_host_api, call_state, 168);
static_assert(sizeof(rpcd_host_api) == 176, "rpcd_host_api");

AT(rpcd_method, size, 0);
AT(rpcd_method, name, 8);
AT(rpcd_method, handler, 16);
AT(rpcd_method, user_data, 24);
AT(rpcd_method, free_user_data, 32);
AT(rpcd_method, flags, 40);
AT(rpcd_method, description, 48);
AT(rpcd_method, params_schema, 56);
AT(rpcd_method, title, 64);
AT(rpcd_method, annotations, 72);
AT(rpcd_method, output_schema, 80);
AT(rpcd_method, icons, 88);
AT(rpcd_method, mcp_role, 96);
AT(rpcd_method, mcp_descriptor, 104);
static_assert(sizeof(rpcd_method) == 112, "rpcd_method");

AT(rpcd_plugin_info, size, 0);
AT(rpcd_plugin_info, abi_major, 8);
AT(rpcd_plugin_info, abi_minor, 12);
AT(rpcd_plugin_info, name, 16);
AT(rpcd_plugin_info, version, 24);
AT(rpcd_plugin_info, init, 32);
AT(rpcd_plugin_info, shutdown, 40);
static_assert(sizeof(rpcd_plugin_info) == 48, "rpcd_plugin_info");
#endif

/* A translation unit must declare something. */
extern int rpcd_plugin_layout_checked;
int rpcd_plugin_layout_checked;
