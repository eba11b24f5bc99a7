/*
 * A toolhost tool module in C: copy this file, rename the tools, build it
 * as guest-sdk/c/README.md shows. The module name is the .wasm file's stem;
 * the model sees each tool as <module>_<tool>.
 */
#include "toolhost_tool.h"

/* greet: {"name": "Ada"} -> "Hello, Ada!" */
static bool greet(th_ctx *ctx) {
    const char *name;
    size_t len;
    if (!th_arg_string(ctx, "name", &name, &len)) return false; /* missing or not a string */
    if (len == 0) return th_error(ctx, "name must not be empty");
    return th_print(ctx, "Hello, ") && th_write(ctx, name, len) && th_print(ctx, "!");
}

static const th_tool TOOLS[] = {
    {"greet", "Greets someone by name.",
     "{\"type\":\"object\","
     "\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Who to greet.\"}},"
     "\"required\":[\"name\"],\"additionalProperties\":false}",
     greet},
};

TOOLHOST_EXPORT_TOOLS(TOOLS);
