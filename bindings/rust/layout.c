/* SPDX-License-Identifier: MIT */
/*
 * Prints the layout of <rpcd/plugin.h>'s structures as Rust constants, for bindings/rust/rpcd.rs
 * to assert against: build it with the header the plugin is built against and pass its output
 * to rustc as RPCD_LAYOUT (see docs/plugins-rust.md).
 */
#include <rpcd/plugin.h>

#include <stdio.h>

#define MEMBER(type, member) printf("    (\"%s\", %zu),\n", #member, offsetof(type, member))
#define FLAG(name) printf("    (\"%s\", %#x),\n", #name, name)
#define END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

int main(void)
{
    printf("// Generated from <rpcd/plugin.h> by bindings/rust/layout.c.\n");
    printf("pub const ABI_MAJOR: u32 = %d;\n", RPCD_ABI_MAJOR);
    printf("pub const ABI_MINOR: u32 = %d;\n", RPCD_ABI_MINOR);
    /* Where the last member the binding knows ends: a later minor may append members. */
    printf("pub const HOST_API_END: usize = %zu;\n", END(rpcd_host_api, call_state));
    printf("pub const METHOD_END: usize = %zu;\n", END(rpcd_method, mcp_descriptor));
    printf("pub const PLUGIN_INFO_END: usize = %zu;\n", END(rpcd_plugin_info, shutdown));

    printf("pub const HOST_API_OFFSETS: &[(&str, usize)] = &[\n");
    MEMBER(rpcd_host_api, size);
    MEMBER(rpcd_host_api, abi_major);
    MEMBER(rpcd_host_api, abi_minor);
    MEMBER(rpcd_host_api, register_method);
    MEMBER(rpcd_host_api, config_get);
    MEMBER(rpcd_host_api, log);
    MEMBER(rpcd_host_api, call_result);
    MEMBER(rpcd_host_api, call_fail);
    MEMBER(rpcd_host_api, call_fail_code);
    MEMBER(rpcd_host_api, call_notify);
    MEMBER(rpcd_host_api, call_progress);
    MEMBER(rpcd_host_api, call_is_cancelled);
    MEMBER(rpcd_host_api, call_method);
    MEMBER(rpcd_host_api, log_v);
    MEMBER(rpcd_host_api, call_complete);
    MEMBER(rpcd_host_api, log_text);
    MEMBER(rpcd_host_api, call_tool_result);
    MEMBER(rpcd_host_api, call_meta);
    MEMBER(rpcd_host_api, resource_updated);
    MEMBER(rpcd_host_api, call_ask);
    MEMBER(rpcd_host_api, call_input);
    MEMBER(rpcd_host_api, call_set_state);
    MEMBER(rpcd_host_api, call_state);
    printf("];\n");

    printf("pub const METHOD_OFFSETS: &[(&str, usize)] = &[\n");
    MEMBER(rpcd_method, size);
    MEMBER(rpcd_method, name);
    MEMBER(rpcd_method, handler);
    MEMBER(rpcd_method, user_data);
    MEMBER(rpcd_method, free_user_data);
    MEMBER(rpcd_method, flags);
    MEMBER(rpcd_method, description);
    MEMBER(rpcd_method, params_schema);
    MEMBER(rpcd_method, title);
    MEMBER(rpcd_method, annotations);
    MEMBER(rpcd_method, output_schema);
    MEMBER(rpcd_method, icons);
    MEMBER(rpcd_method, mcp_role);
    MEMBER(rpcd_method, mcp_descriptor);
    printf("];\n");

    /* The flags' values, which the binding declares as constants of its own. */
    printf("pub const METHOD_FLAGS: &[(&str, u32)] = &[\n");
    FLAG(RPCD_METHOD_SERIALIZED);
    FLAG(RPCD_METHOD_QUICK);
    FLAG(RPCD_METHOD_VALIDATES_ITSELF);
    FLAG(RPCD_METHOD_TASK);
    FLAG(RPCD_METHOD_TASK_REQUIRED);
    printf("];\n");

    printf("pub const PLUGIN_INFO_OFFSETS: &[(&str, usize)] = &[\n");
    MEMBER(rpcd_plugin_info, size);
    MEMBER(rpcd_plugin_info, abi_major);
    MEMBER(rpcd_plugin_info, abi_minor);
    MEMBER(rpcd_plugin_info, name);
    MEMBER(rpcd_plugin_info, version);
    MEMBER(rpcd_plugin_info, init);
    MEMBER(rpcd_plugin_info, shutdown);
    printf("];\n");
    return 0;
}
