/*
 * toolhost_tool.h: write toolhost tool modules in C.
 *
 * A module declares its tools once, in a table, and exports it:
 *
 *     static bool greet(th_ctx *ctx) {
 *         const char *name;
 *         size_t len;
 *         if (!th_arg_string(ctx, "name", &name, &len)) return false;
 *         return th_printf(ctx, "Hello, %.*s!", (int)len, name);
 *     }
 *
 *     static const th_tool TOOLS[] = {
 *         {"greet", "Greets someone by name.",
 *          "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
 *          "\"required\":[\"name\"]}",
 *          greet},
 *     };
 *     TOOLHOST_EXPORT_TOOLS(TOOLS);
 *
 * This file's toolhost_tool.c implements the two exports of the world in
 * wit/tool.wit (tool-info and call) on top of the generated bindings in
 * bindings/; a module never touches the bindings itself.
 *
 * A handler returns true for success (the text it wrote with th_write,
 * th_print or th_printf is the result) or false for failure (the message
 * set by th_error, or by an accessor that failed, is the error). Every
 * th_arg_* / th_opt_* accessor and every output function returns false
 * after recording its error, so a handler can simply `return false` when
 * one fails.
 *
 * Memory: strings handed out by the accessors stay valid until the handler
 * returns; everything is freed by the SDK after the call.
 */
#ifndef TOOLHOST_TOOL_H
#define TOOLHOST_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TH_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a)))
#else
#define TH_PRINTF_FORMAT(f, a)
#endif

/* The state of one call: its arguments, its output and its error. */
typedef struct th_ctx th_ctx;

/* A tool's implementation: true = success (the output is the result),
 * false = failure (the recorded error is the result). */
typedef bool (*th_handler)(th_ctx *ctx);

/* One tool of the module. */
typedef struct th_tool {
    /* The module-local name: A-Z a-z 0-9 _ - (the model sees
     * "<module>_<name>"). */
    const char *name;
    /* What the tool does, for the model. */
    const char *description;
    /* The JSON schema of the arguments, a JSON object text embedded in
     * tool-info as it is ({"type":"object","properties":{...}}). NULL
     * means no arguments. With "additionalProperties":false at its top
     * level, arguments with a field not listed in "properties" are refused
     * before the handler runs. */
    const char *parameters;
    /* The implementation. */
    th_handler run;
} th_tool;

/* Exports the module's tools: TABLE is an array of th_tool (not a
 * pointer). Use it exactly once per module, at file scope. */
#define TOOLHOST_EXPORT_TOOLS(TABLE)                                  \
    const th_tool *const toolhost_tools = (TABLE);                    \
    const size_t toolhost_tool_count = sizeof(TABLE) / sizeof((TABLE)[0])

extern const th_tool *const toolhost_tools;
extern const size_t toolhost_tool_count;

/* ---- Arguments ---------------------------------------------------------
 *
 * The arguments are a JSON object (empty or blank text counts as {}),
 * parsed strictly before the handler runs; invalid JSON or a non-object is
 * answered with an error without running the handler. KEY is a top-level
 * field name.
 *
 * Required accessors (th_arg_*) fail with
 *     invalid arguments: missing field 'KEY'
 *     invalid arguments: field 'KEY': expected a string, got a number
 * Optional accessors (th_opt_*) give DEF when the field is missing or null
 * and fail only when it has another type. A field given twice fails with
 *     invalid arguments: duplicate field 'KEY'
 * On failure the outputs are set to "" (length 0), 0 or false.
 */

/* The JSON type of a field, or TH_MISSING. */
typedef enum th_kind {
    TH_MISSING = 0,
    TH_NULL,
    TH_BOOL,
    TH_NUMBER,
    TH_STRING,
    TH_ARRAY,
    TH_OBJECT
} th_kind;

/* The type of field KEY (TH_MISSING if absent). Records no error. */
th_kind th_arg_kind(th_ctx *ctx, const char *key);

/* A string field, unescaped to UTF-8: *S points to *LEN bytes followed by
 * a NUL. The text may itself contain NUL bytes (from \u0000): use *LEN.
 * LEN may be NULL. */
bool th_arg_string(th_ctx *ctx, const char *key, const char **s, size_t *len);
bool th_opt_string(th_ctx *ctx, const char *key, const char *def,
                   const char **s, size_t *len);

/* A number field, as a double (an out-of-range number such as 1e999
 * fails). */
bool th_arg_number(th_ctx *ctx, const char *key, double *out);
bool th_opt_number(th_ctx *ctx, const char *key, double def, double *out);

/* An integer field in [MIN, MAX]: a JSON number without fraction or
 * exponent (2.0 and 1e3 fail), e.g.
 *     invalid arguments: field 'bits': expected an integer from 32 to 64, got 128
 */
bool th_arg_int(th_ctx *ctx, const char *key, int64_t min, int64_t max,
                int64_t *out);
bool th_opt_int(th_ctx *ctx, const char *key, int64_t min, int64_t max,
                int64_t def, int64_t *out);

/* A boolean field. */
bool th_arg_bool(th_ctx *ctx, const char *key, bool *out);
bool th_opt_bool(th_ctx *ctx, const char *key, bool def, bool *out);

/* Any field, as its JSON text exactly as given (not NUL-terminated): for
 * arrays and objects, which the handler parses itself. */
bool th_arg_json(th_ctx *ctx, const char *key, const char **json, size_t *len);

/* The whole arguments text, and the called tool's name. */
void th_args_text(th_ctx *ctx, const char **text, size_t *len);
const char *th_tool_name(th_ctx *ctx);

/* ---- Output ------------------------------------------------------------
 *
 * Appends to the result text. On out-of-memory they return false and the
 * call's result becomes the error "out of memory", whatever the handler
 * returns. The result must be valid UTF-8 (otherwise the call fails with
 * an error saying so).
 */
bool th_write(th_ctx *ctx, const void *data, size_t len);
bool th_print(th_ctx *ctx, const char *s);
bool th_printf(th_ctx *ctx, const char *fmt, ...) TH_PRINTF_FORMAT(2, 3);
/* Appends DATA as a JSON string literal (quoted and escaped; invalid UTF-8
 * becomes U+FFFD), for tools that answer in JSON. */
bool th_write_json_string(th_ctx *ctx, const void *data, size_t len);

/* Sets the error text (replacing any earlier one) and returns false:
 *     return th_error(ctx, "bits must be 32 or 64, got %d", (int)bits);
 */
bool th_error(th_ctx *ctx, const char *fmt, ...) TH_PRINTF_FORMAT(2, 3);

#ifdef __cplusplus
}
#endif

#endif /* TOOLHOST_TOOL_H */
