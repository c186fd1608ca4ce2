/* SPDX-License-Identifier: MIT */
/*
 * rpcd list: the methods a config (or one plugin) gives, as serving would have them: each
 * with its plugin, flags, description, params schema, the MCP tool it is served as and what
 * that tool says beyond (title, annotations, output schema).
 */
#include "cli/cli.h"

#include "mcp/mcp.h"

#include <getopt.h>
#include <string.h>

/* The tool name method is served under, read back from the tool table; NULL: not a tool. The
 * candidate is what mcp_tools_new would pick (see mcp.h); out has MCP_PORTABLE_NAME_MAX + 1. */
static const char *tool_name_of(const rpcd_runtime *runtime, const reg_method *method, char *out)
{
    const rpcd_config *config = runtime->config;
    const char *name = NULL;
    for (size_t i = 0; i < config->mcp_name_count && !name; i++)
        if (strcmp(config->mcp_names[i].key, method->name) == 0)
            name = config->mcp_names[i].value;
    if (!name && config->mcp_tool_names == CFG_TOOL_NAMES_SPECIFICATION &&
        mcp_valid_tool_name(method->name, method->name_length))
        name = method->name;
    if (!name) {
        mcp_portable_name_of(method->name, out);
        name = out;
    }
    return mcp_tool_method(runtime->tools, name, strlen(name)) == method ? name : NULL;
}

static json_t *flags_json(uint32_t flags)
{
    json_t *array = json_array();
    if (flags & RPCD_METHOD_SERIALIZED)
        json_array_append_new(array, json_string("serialized"));
    if (flags & RPCD_METHOD_QUICK)
        json_array_append_new(array, json_string("quick"));
    if (flags & RPCD_METHOD_VALIDATES_ITSELF)
        json_array_append_new(array, json_string("validates_itself"));
    /* task_required implies task: one name says both. */
    if (flags & RPCD_METHOD_TASK_REQUIRED)
        json_array_append_new(array, json_string("task_required"));
    else if (flags & RPCD_METHOD_TASK)
        json_array_append_new(array, json_string("task"));
    return array;
}

/* A JSON text the registry keeps (checked when registered), or null. */
static json_t *text_json(const char *text)
{
    json_t *value = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    return value ? value : json_null();
}

json_t *cli_methods_json(const rpcd_runtime *runtime)
{
    json_t *methods = json_array();
    for (size_t i = 0; methods && i < reg_count(runtime->methods); i++) {
        const reg_method *method = reg_at(runtime->methods, i);
        char portable[MCP_PORTABLE_NAME_MAX + 1];
        const char *tool = tool_name_of(runtime, method, portable);
        json_t *item = json_pack(
            "{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "method", method->name, "plugin",
            method->owner_name ? method->owner_name : "", "flags", flags_json(method->flags),
            "description", method->description ? json_string(method->description) : json_null(),
            "params_schema", text_json(method->params_schema), "tool",
            tool ? json_string(tool) : json_null(), "title",
            method->title ? json_string(method->title) : json_null(), "annotations",
            text_json(method->annotations), "output_schema", text_json(method->output_schema));
        if (!item || json_array_append_new(methods, item) != 0) {
            json_decref(methods);
            return NULL;
        }
    }
    return methods;
}

void cli_print_methods(const rpcd_runtime *runtime, FILE *stream)
{
    for (size_t i = 0; i < reg_count(runtime->methods); i++) {
        const reg_method *method = reg_at(runtime->methods, i);
        char portable[MCP_PORTABLE_NAME_MAX + 1];
        const char *tool = tool_name_of(runtime, method, portable);
        uint32_t flags = method->flags;
        fprintf(stream, "%s\n  plugin:      %s\n  flags:       %s%s%s%s%s\n", method->name,
                method->owner_name ? method->owner_name : "",
                flags & RPCD_METHOD_SERIALIZED ? "serialized " : "",
                flags & RPCD_METHOD_QUICK ? "quick " : "",
                flags & RPCD_METHOD_VALIDATES_ITSELF ? "validates_itself " : "",
                flags & RPCD_METHOD_TASK_REQUIRED ? "task_required "
                : flags & RPCD_METHOD_TASK        ? "task "
                                                  : "",
                flags ? "" : "-");
        fprintf(stream, "  tool:        %s\n", tool ? tool : "- (not an MCP tool)");
        if (method->title)
            fprintf(stream, "  title:       %s\n", method->title);
        if (method->description)
            fprintf(stream, "  description: %s\n", method->description);
        if (method->params_schema)
            fprintf(stream, "  params:      %s\n", method->params_schema);
        if (method->annotations)
            fprintf(stream, "  annotations: %s\n", method->annotations);
        if (method->output_schema)
            fprintf(stream, "  output:      %s\n", method->output_schema);
    }
}

int cli_print_json(json_t *value)
{
    if (!value) {
        fprintf(stderr, "rpcd: out of memory\n");
        return CLI_EXIT_SOFTWARE;
    }
    FILE *out = cli_output();
    json_dumpf(value, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(value);
    return fflush(out) == 0 ? CLI_EXIT_OK : CLI_EXIT_SOFTWARE;
}

int cli_list_main(int argc, char **argv)
{
    enum { OPT_JSON = 2000 };
    static const struct option options[] = {
        CLI_SOURCE_OPTIONS, {"json", no_argument, NULL, OPT_JSON}, {NULL, 0, NULL, 0}};
    cli_source source = {.log_level = -1};
    bool as_json = false;
    int option;
    optind = 1;
    while ((option = getopt_long(argc, argv, "c:vq", options, NULL)) != -1) {
        int taken = cli_source_option(&source, option, optarg);
        if (taken < 0)
            return CLI_EXIT_USAGE;
        if (!taken && option != OPT_JSON) {
            fprintf(stderr, "rpcd list: try rpcd --help\n");
            return CLI_EXIT_USAGE;
        }
        as_json |= option == OPT_JSON;
    }
    if (optind < argc) {
        fprintf(stderr, "rpcd list: unexpected argument '%s' (try rpcd --help)\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    rpcd_runtime runtime;
    int status = cli_start(&source, &runtime);
    if (status != 0)
        return status;
    if (as_json)
        status = cli_print_json(cli_methods_json(&runtime));
    else
        cli_print_methods(&runtime, cli_output());
    rt_stop(&runtime);
    return status;
}
