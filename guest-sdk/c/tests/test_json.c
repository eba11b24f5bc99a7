/*
 * Native tests of the C guest SDK (toolhost_tool.c): the JSON reader, the
 * accessors, the output and error texts, memory ownership, out-of-memory.
 *
 * Plain C11, no dependencies; from the repository root:
 *
 *     gcc -std=c11 -Wall -Wextra -Werror -O1 -g -o /tmp/test_json \
 *         guest-sdk/c/tests/test_json.c && /tmp/test_json
 *
 * (add -fsanitize=address,undefined where available). It includes
 * toolhost_tool.c itself, so that malloc/realloc/free can be counted and
 * made to fail; it calls the exports the way the host does (arguments
 * malloc'ed and handed over, results freed afterwards). Exit status 0 iff
 * every check passed; the last line is "N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Counting, failing allocator ---------------------------------------- */

static long live_allocs;   /* allocations not yet freed */
static long alloc_calls;   /* malloc/realloc calls so far */
static long fail_at = -1;  /* the alloc_calls value whose call fails */

static void *test_malloc(size_t n) {
    if (alloc_calls++ == fail_at) return NULL;
    void *p = malloc(n ? n : 1);
    if (p) live_allocs++;
    return p;
}

static void *test_realloc(void *p, size_t n) {
    if (alloc_calls++ == fail_at) return NULL;
    void *q = realloc(p, n ? n : 1);
    if (q && !p) live_allocs++;
    return q;
}

static void test_free(void *p) {
    if (p) live_allocs--;
    free(p);
}

#define malloc(n) test_malloc(n)
#define realloc(p, n) test_realloc(p, n)
#define free(p) test_free(p)
#include "../toolhost_tool.c"
#undef malloc
#undef realloc
#undef free

/* ---- Tools under test ---------------------------------------------------- */

static bool hex_out(th_ctx *c, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!th_printf(c, "%02x", (unsigned)(unsigned char)s[i])) return false;
    return true;
}

static bool t_any(th_ctx *c) { return th_print(c, "ok"); }

static bool t_str(th_ctx *c) {
    const char *s;
    size_t n;
    if (!th_arg_string(c, "v", &s, &n)) return false;
    if (s[n] != 0) return th_error(c, "not NUL-terminated");
    return hex_out(c, s, n);
}

static bool t_num(th_ctx *c) {
    double d;
    if (!th_arg_number(c, "v", &d)) return false;
    return th_printf(c, "%.17g", d);
}

static bool t_int(th_ctx *c) {
    int64_t v;
    if (!th_arg_int(c, "v", -1000, 1000, &v)) return false;
    return th_printf(c, "%lld", (long long)v);
}

static bool t_i64(th_ctx *c) {
    int64_t v;
    if (!th_arg_int(c, "v", INT64_MIN, INT64_MAX, &v)) return false;
    return th_printf(c, "%lld", (long long)v);
}

static bool t_nonneg(th_ctx *c) {
    int64_t v;
    if (!th_arg_int(c, "v", 0, INT64_MAX, &v)) return false;
    return th_printf(c, "%lld", (long long)v);
}

static bool t_bool(th_ctx *c) {
    bool b;
    if (!th_arg_bool(c, "v", &b)) return false;
    return th_print(c, b ? "true" : "false");
}

static bool t_kind(th_ctx *c) { return th_printf(c, "%d", (int)th_arg_kind(c, "v")); }

static bool t_opt(th_ctx *c) {
    const char *s;
    size_t n;
    int64_t i;
    bool b;
    double d;
    if (!th_opt_string(c, "s", "dflt", &s, &n) || !th_opt_int(c, "i", 0, 10, 7, &i) ||
        !th_opt_bool(c, "b", true, &b) || !th_opt_number(c, "d", 1.5, &d))
        return false;
    return th_printf(c, "s=%.*s i=%lld b=%d d=%g", (int)n, s, (long long)i, (int)b, d);
}

static bool t_json(th_ctx *c) {
    const char *j;
    size_t n;
    if (!th_arg_json(c, "v", &j, &n)) return false;
    return th_write(c, j, n);
}

static bool t_silent(th_ctx *c) {
    (void)c;
    return false;
}

static bool t_badutf8(th_ctx *c) { return th_write(c, "ab\xff", 3); }

static bool t_errutf8(th_ctx *c) { return th_error(c, "bad %s.", "\xff\xc3"); }

static bool t_jsonout(th_ctx *c) {
    const char *s;
    size_t n;
    if (!th_arg_string(c, "v", &s, &n)) return false;
    return th_write_json_string(c, s, n);
}

static bool t_rawjsonout(th_ctx *c) {
    /* Bytes that are not UTF-8 become U+FFFD. */
    return th_write_json_string(c, "a\xff\x01\"\\\n\x7f\xe2\x82\xac", 10);
}

static bool t_empty(th_ctx *c) {
    (void)c;
    return true;
}

static bool t_name(th_ctx *c) { return th_print(c, th_tool_name(c)); }

static bool t_args(th_ctx *c) {
    const char *t;
    size_t n;
    th_args_text(c, &t, &n);
    return th_write(c, t, n);
}

static bool t_big(th_ctx *c) {
    for (int i = 0; i < 100000; i++)
        if (!th_printf(c, "%09d\n", i)) return false;
    return true;
}

static bool t_errthenok(th_ctx *c) {
    th_error(c, "ignored");
    return th_print(c, "fine");
}

static bool t_fmt(th_ctx *c) {
    return th_printf(c, "%s|%5.2f|%x|%c|%zu", "x", 3.14159, 255u, 'q', (size_t)42);
}

static const th_tool TOOLS[] = {
    {"any", "Accepts anything.", NULL, t_any},
    {"str", "s", "{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"string\"}}}", t_str},
    {"num", "n", NULL, t_num},
    {"int", "i", NULL, t_int},
    {"i64", "i", NULL, t_i64},
    {"nonneg", "i", NULL, t_nonneg},
    {"bool", "b", NULL, t_bool},
    {"kind", "k", NULL, t_kind},
    {"opt", "o", NULL, t_opt},
    {"json", "j", NULL, t_json},
    {"closed", "c",
     "{\"type\":\"object\",\"properties\":{\"a\":{},\"b\\u0021\":{}},\"additionalProperties\":false}",
     t_any},
    {"closed0", "c", "{\"type\":\"object\",\"additionalProperties\":false}", t_any},
    {"open", "c", "{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":true}",
     t_any},
    {"badschema", "c", "{\"type\":", t_any},
    {"blank", "b", " \n", t_any},
    {"silent", "s", NULL, t_silent},
    {"badutf8", "u", NULL, t_badutf8},
    {"errutf8", "u", NULL, t_errutf8},
    {"jsonout", "j", NULL, t_jsonout},
    {"rawjsonout", "j", NULL, t_rawjsonout},
    {"empty", "e", NULL, t_empty},
    {"name", "n", NULL, t_name},
    {"args", "a", NULL, t_args},
    {"big", "b", NULL, t_big},
    {"errthenok", "e", NULL, t_errthenok},
    {"fmt", "f", NULL, t_fmt},
    {"say \"hi\"\n", "Quote \" backslash \\ tab \t ctrl \x01 é", NULL, t_any},
};
TOOLHOST_EXPORT_TOOLS(TOOLS);

/* ---- Harness ------------------------------------------------------------- */

static int passed, failed;

/* Calls the export as the host does; *TEXT is a malloc'ed NUL-terminated
 * copy of the result (the original is freed, as post-return would). */
static bool call_n(const char *name, const char *args, size_t args_len, char **text,
                   size_t *text_len) {
    tool_string_t n, a, ret, err;
    n.len = strlen(name);
    n.ptr = n.len ? test_malloc(n.len) : (uint8_t *)1;
    memcpy(n.ptr, name, n.len);
    a.len = args_len;
    a.ptr = args_len ? test_malloc(args_len) : (uint8_t *)1;
    memcpy(a.ptr, args, args_len);
    memset(&ret, 0xAA, sizeof ret);
    memset(&err, 0xAA, sizeof err);
    bool ok = exports_tool_call(&n, &a, &ret, &err);
    tool_string_t *r = ok ? &ret : &err;
    *text = malloc(r->len + 1);
    if (r->len) memcpy(*text, r->ptr, r->len);
    (*text)[r->len] = 0;
    *text_len = r->len;
    if (r->len) test_free(r->ptr); /* what cabi_post_call does */
    return ok;
}

static void check(bool cond, const char *what, const char *detail) {
    if (cond) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s\n      %s\n", what, detail);
    }
}

static void expect_n(const char *tool, const char *args, size_t args_len, bool want_ok,
                     const char *want, size_t want_len, bool prefix) {
    char *text;
    size_t len;
    long before = live_allocs;
    bool ok = call_n(tool, args, args_len, &text, &len);
    bool same = prefix ? len >= want_len && memcmp(text, want, want_len) == 0
                       : len == want_len && memcmp(text, want, want_len) == 0;
    char what[512], detail[1024];
    snprintf(what, sizeof what, "%s %.*s", tool, (int)(args_len > 200 ? 200 : args_len), args);
    snprintf(detail, sizeof detail, "want %s %s'%.*s', got %s '%.*s'", want_ok ? "ok" : "err",
             prefix ? "starting with " : "", (int)want_len, want, ok ? "ok" : "err",
             (int)(len > 400 ? 400 : len), text);
    check(ok == want_ok && same, what, detail);
    check(live_allocs == before, what, "memory leaked or freed twice");
    free(text);
}

#define OK(tool, args, want) expect_n(tool, args, strlen(args), true, want, strlen(want), false)
#define ERR(tool, args, want) expect_n(tool, args, strlen(args), false, want, strlen(want), false)
#define ERR_N(tool, args, args_len, want) \
    expect_n(tool, args, args_len, false, want, strlen(want), false)
#define ERR_PREFIX(tool, args, want) \
    expect_n(tool, args, strlen(args), false, want, strlen(want), true)
/* Syntax errors: the message up to " at byte". */
#define BAD(args, want) ERR("any", args, "invalid arguments: not valid JSON: " want)

static char *repeat(const char *a, int n, const char *mid, const char *b) {
    size_t la = strlen(a), lb = strlen(b), lm = strlen(mid);
    char *s = malloc(la * (size_t)n + lm + lb * (size_t)n + 1), *p = s;
    for (int i = 0; i < n; i++, p += la) memcpy(p, a, la);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < n; i++, p += lb) memcpy(p, b, lb);
    *p = 0;
    return s;
}

/* ---- Cases --------------------------------------------------------------- */

static void test_valid_json(void) {
    static const char *valid[] = {
        "{}",
        " \t\r\n{ \t\r\n} \t\r\n",
        "",
        "   ",
        "{\"a\":1}",
        "{\"a\":[]}",
        "{\"a\":{}}",
        "{\"a\":[1,2,[3,[4,{\"b\":[{}]}]]]}",
        "{\"a\" : [ 1 , \"x\" , true , false , null , { } , [ ] ] }",
        "{\"a\":0,\"b\":-0,\"c\":1.5,\"d\":-1.5e10,\"e\":1E+2,\"f\":1e-2,\"g\":0.0e0}",
        "{\"a\":123456789012345678901234567890}",
        "{\"a\":1e400}",
        "{\"\":\"\"}",
        "{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u00e9\\uFFFF\\uD83D\\uDE00\"}",
        "{\"a\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf\"}",
        "{\"a\":\"\x7f\"}",
        "{\"nested\":{\"\\ud800\\udc00\":[\"\\u0041\"]}}",
        "{\"a\":true,\"a\":false}", /* duplicates only matter when read */
    };
    for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) OK("any", valid[i], "ok");
}

static void test_invalid_json(void) {
    BAD("{", "unexpected end of input at byte 1");
    BAD("{\"text\": \"a", "unterminated string at byte 11");
    BAD("{\"a\"", "unexpected end of input at byte 4");
    BAD("{\"a\":", "unexpected end of input at byte 5");
    BAD("{\"a\":1", "unexpected end of input at byte 6");
    BAD("{\"a\":1,", "unexpected end of input at byte 7");
    BAD("{\"a\":[1", "unexpected end of input at byte 7");
    BAD("{\"a\":[1,", "unexpected end of input at byte 8");
    BAD("{,}", "expected a string (a member name) at byte 1");
    BAD("{\"a\":1,}", "expected a string (a member name) at byte 7");
    BAD("{\"a\":[1,]}", "expected a value at byte 8");
    BAD("{\"a\":[,1]}", "expected a value at byte 6");
    BAD("{\"a\" 1}", "expected ':' after a member name at byte 5");
    BAD("{\"a\":1 \"b\":2}", "expected ',' or '}' in an object at byte 7");
    BAD("{\"a\":[1 2]}", "expected ',' or ']' in an array at byte 8");
    BAD("{a:1}", "expected a string (a member name) at byte 1");
    BAD("{'a':1}", "expected a string (a member name) at byte 1");
    BAD("{\"a\":'x'}", "expected a value at byte 5");
    BAD("{\"a\":1}}", "trailing characters after the JSON value at byte 7");
    BAD("{\"a\":1} x", "trailing characters after the JSON value at byte 8");
    BAD("{} {}", "trailing characters after the JSON value at byte 3");
    BAD("{\"a\":01}", "invalid number at byte 5");
    BAD("{\"a\":-01}", "invalid number at byte 5");
    BAD("{\"a\":1.}", "invalid number at byte 5");
    BAD("{\"a\":.5}", "expected a value at byte 5");
    BAD("{\"a\":+1}", "expected a value at byte 5");
    BAD("{\"a\":-}", "invalid number at byte 5");
    BAD("{\"a\":1e}", "invalid number at byte 5");
    BAD("{\"a\":1e+}", "invalid number at byte 5");
    BAD("{\"a\":1.5.5}", "invalid number at byte 5");
    BAD("{\"a\":0x10}", "invalid number at byte 5");
    BAD("{\"a\":1-2}", "invalid number at byte 5");
    BAD("{\"a\":NaN}", "expected a value at byte 5");
    BAD("{\"a\":Infinity}", "expected a value at byte 5");
    BAD("{\"a\":-Infinity}", "invalid number at byte 5");
    BAD("{\"a\":tru}", "expected a value at byte 5");
    BAD("{\"a\":tru", "unexpected end of input at byte 8");
    BAD("{\"a\":True}", "expected a value at byte 5");
    BAD("{\"a\":nul}", "expected a value at byte 5");
    BAD("{\"a\":truex}", "expected ',' or '}' in an object at byte 9");
    BAD("{\"a\":\"\\x\"}", "invalid escape in a string at byte 6");
    BAD("{\"a\":\"\\U0041\"}", "invalid escape in a string at byte 6");
    BAD("{\"a\":\"\\u12\"}", "invalid \\u escape (needs 4 hex digits) at byte 6");
    BAD("{\"a\":\"\\u12G4\"}", "invalid \\u escape (needs 4 hex digits) at byte 6");
    BAD("{\"a\":\"\\u", "invalid \\u escape (needs 4 hex digits) at byte 6");
    BAD("{\"a\":\"\\", "unterminated string at byte 7");
    BAD("{\"a\":\"\\ud800\"}", "lone surrogate in a \\u escape at byte 6");
    BAD("{\"a\":\"\\udbff\\u0041\"}", "lone surrogate in a \\u escape at byte 6");
    BAD("{\"a\":\"\\ud800\\ud800\"}", "lone surrogate in a \\u escape at byte 6");
    BAD("{\"a\":\"\\udc00\"}", "lone surrogate in a \\u escape at byte 6");
    BAD("{\"a\":\"x\\ud800\"}", "lone surrogate in a \\u escape at byte 7");
    BAD("{\"a\":\"\\ud800\\\"}", "lone surrogate in a \\u escape at byte 6");
    BAD("{\"a\":\"a\nb\"}", "control character in a string (must be escaped) at byte 7");
    BAD("{\"a\":\"\t\"}", "control character in a string (must be escaped) at byte 6");
    BAD("{\"a\":\"\x1f\"}", "control character in a string (must be escaped) at byte 6");
    BAD("{\"a\":\"\x80\"}", "invalid UTF-8 in a string at byte 6");
    BAD("{\"a\":\"\xc3\"}", "invalid UTF-8 in a string at byte 6");
    BAD("{\"a\":\"\xc0\xaf\"}", "invalid UTF-8 in a string at byte 6");       /* overlong */
    BAD("{\"a\":\"\xe0\x80\xaf\"}", "invalid UTF-8 in a string at byte 6");   /* overlong */
    BAD("{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8 in a string at byte 6");   /* surrogate */
    BAD("{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8 in a string at byte 6"); /* > U+10FFFF */
    BAD("{\"a\":\"\xf8\x88\x80\x80\x80\"}", "invalid UTF-8 in a string at byte 6");
    BAD("{\"\xff\":1}", "invalid UTF-8 in a string at byte 2");
    BAD("\xef\xbb\xbf{}", "expected a value at byte 0"); /* no BOM */
    ERR_N("any", "{\"a\":1}\0", 8,
          "invalid arguments: not valid JSON: trailing characters after the JSON value at byte 7");
    ERR_N("any", "{\"a\":\0}", 7, "invalid arguments: not valid JSON: expected a value at byte 5");
    BAD("/*c*/{}", "expected a value at byte 0");
    BAD("{\"a\":1,\"a\"}", "expected ':' after a member name at byte 10");
    BAD("\f{}", "expected a value at byte 0"); /* \f is not JSON whitespace */
    BAD("[", "unexpected end of input at byte 1");
    BAD("[1,]", "expected a value at byte 3");
    BAD("\"abc", "unterminated string at byte 4");
    BAD("nul", "unexpected end of input at byte 3");
    BAD("}", "expected a value at byte 0");
    /* Embedded NUL inside a string literal. */
    ERR_N("any", "{\"a\":\"x\0\"}", 10,
          "invalid arguments: not valid JSON: control character in a string (must be escaped) at byte 7");

    ERR("any", "[1]", "invalid arguments: expected a JSON object, got an array");
    ERR("any", "[]", "invalid arguments: expected a JSON object, got an array");
    ERR("any", "\"{}\"", "invalid arguments: expected a JSON object, got a string");
    ERR("any", " 12 ", "invalid arguments: expected a JSON object, got a number");
    ERR("any", "true", "invalid arguments: expected a JSON object, got a boolean");
    ERR("any", "null", "invalid arguments: expected a JSON object, got null");
}

static void test_depth(void) {
    char *s;
    /* 128 containers in all (the object included) are fine; 129 are not. */
    s = repeat("[", 127, "", "]");
    char *doc = malloc(strlen(s) + 16);
    if (!doc) abort();
    sprintf(doc, "{\"a\":%s}", s);
    OK("any", doc, "ok");
    free(s);
    free(doc);
    s = repeat("[", 128, "", "]");
    doc = malloc(strlen(s) + 16);
    if (!doc) abort();
    sprintf(doc, "{\"a\":%s}", s);
    BAD(doc, "nested deeper than 128 levels at byte 132");
    free(s);
    free(doc);
    s = repeat("{\"a\":", 127, "1", "}");
    OK("any", s, "ok");
    free(s);
    s = repeat("{\"a\":", 129, "1", "}");
    BAD(s, "nested deeper than 128 levels at byte 640");
    free(s);
    /* Very deep, unbalanced: an error, not a crash. */
    s = repeat("[", 100000, "", "");
    BAD(s, "nested deeper than 128 levels at byte 128");
    free(s);
    s = repeat("{\"a\":[", 50000, "", "");
    BAD(s, "nested deeper than 128 levels at byte 384");
    free(s);
}

static void test_strings(void) {
    OK("str", "{\"v\":\"\"}", "");
    OK("str", "{\"v\":\"abc\"}", "616263");
    OK("str", "{\"v\":\"\\u00e9\"}", "c3a9");
    OK("str", "{\"v\":\"\xc3\xa9\"}", "c3a9");
    OK("str", "{\"v\":\"\\u20AC\"}", "e282ac");
    OK("str", "{\"v\":\"\\uD83D\\uDE00\"}", "f09f9880");
    OK("str", "{\"v\":\"\\udbff\\udfff\"}", "f48fbfbf");
    OK("str", "{\"v\":\"\\u0000\"}", "00");
    OK("str", "{\"v\":\"a\\u0000b\"}", "610062");
    OK("str", "{\"v\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "225c2f080c0a0d09");
    OK("str", "{\"v\":\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"}", "7fc280dfbfe0a080efbfbf");
    OK("str", "{\"x\":[\"\\u00e9\"],\"v\":\"z\"}", "7a");
    OK("str", "{\"\\u0076\":\"k\"}", "6b"); /* escaped key */
    ERR("str", "{}", "invalid arguments: missing field 'v'");
    ERR("str", "{\"V\":\"a\"}", "invalid arguments: missing field 'v'");
    ERR("str", "{\"v\\u0000\":\"a\"}", "invalid arguments: missing field 'v'");
    ERR("str", "{\"v\":5}", "invalid arguments: field 'v': expected a string, got 5");
    ERR("str", "{\"v\":-1.5e3}", "invalid arguments: field 'v': expected a string, got -1.5e3");
    ERR("str", "{\"v\":null}", "invalid arguments: field 'v': expected a string, got null");
    ERR("str", "{\"v\":true}", "invalid arguments: field 'v': expected a string, got true");
    ERR("str", "{\"v\":false}", "invalid arguments: field 'v': expected a string, got false");
    ERR("str", "{\"v\":[\"a\"]}", "invalid arguments: field 'v': expected a string, got an array");
    ERR("str", "{\"v\":{}}", "invalid arguments: field 'v': expected a string, got an object");
    ERR("str", "{\"v\":\"a\",\"v\":\"b\"}", "invalid arguments: duplicate field 'v'");
    ERR("str", "{\"v\":\"a\",\"\\u0076\":\"b\"}", "invalid arguments: duplicate field 'v'");
    ERR("str", "{\"v\":123456789012345678901234567890123456789012345678901234567890}",
        "invalid arguments: field 'v': expected a string, got "
        "1234567890123456789012345678901234567890...");
    /* Big strings: linear, exact. */
    size_t n = 600000;
    char *s = malloc(n + 16);
    strcpy(s, "{\"v\":\"");
    for (size_t i = 0; i < n / 6; i++) memcpy(s + 6 + i * 6, "\\u00e9", 6);
    strcpy(s + 6 + n / 6 * 6, "\"}");
    char *want = malloc(n / 6 * 4 + 1);
    for (size_t i = 0; i < n / 6; i++) memcpy(want + i * 4, "c3a9", 4);
    want[n / 6 * 4] = 0;
    OK("str", s, want);
    free(s);
    free(want);
}

static void test_numbers(void) {
    OK("num", "{\"v\":0}", "0");
    OK("num", "{\"v\":-0}", "-0");
    OK("num", "{\"v\":1.5}", "1.5");
    OK("num", "{\"v\":-2.5E-3}", "-0.0025000000000000001");
    OK("num", "{\"v\":1e2}", "100");
    OK("num", "{\"v\":1e-400}", "0");
    OK("num", "{\"v\":123456789012345678901234567890}", "1.2345678901234568e+29");
    ERR("num", "{\"v\":1e400}", "invalid arguments: field 'v': number out of range");
    ERR("num", "{\"v\":-1e400}", "invalid arguments: field 'v': number out of range");
    ERR("num", "{\"v\":\"1\"}", "invalid arguments: field 'v': expected a number, got a string");
    ERR("num", "{}", "invalid arguments: missing field 'v'");
    OK("int", "{\"v\":0}", "0");
    OK("int", "{\"v\":-0}", "0");
    OK("int", "{\"v\":1000}", "1000");
    OK("int", "{\"v\":-1000}", "-1000");
    ERR("int", "{\"v\":1001}",
        "invalid arguments: field 'v': expected an integer from -1000 to 1000, got 1001");
    ERR("int", "{\"v\":2.0}",
        "invalid arguments: field 'v': expected an integer from -1000 to 1000, got 2.0");
    ERR("int", "{\"v\":1e2}",
        "invalid arguments: field 'v': expected an integer from -1000 to 1000, got 1e2");
    ERR("int", "{\"v\":\"5\"}",
        "invalid arguments: field 'v': expected an integer from -1000 to 1000, got a string");
    ERR("int", "{\"v\":null}", "invalid arguments: field 'v': expected an integer, got null");
    OK("i64", "{\"v\":9223372036854775807}", "9223372036854775807");
    OK("i64", "{\"v\":-9223372036854775808}", "-9223372036854775808");
    ERR("i64", "{\"v\":9223372036854775808}",
        "invalid arguments: field 'v': expected an integer, got 9223372036854775808");
    ERR("i64", "{\"v\":-9223372036854775809}",
        "invalid arguments: field 'v': expected an integer, got -9223372036854775809");
    ERR("i64", "{\"v\":18446744073709551616}",
        "invalid arguments: field 'v': expected an integer, got 18446744073709551616");
    ERR("i64", "{\"v\":99999999999999999999999999}",
        "invalid arguments: field 'v': expected an integer, got 99999999999999999999999999");
    ERR("nonneg", "{\"v\":-1}",
        "invalid arguments: field 'v': expected an integer of at least 0, got -1");
    OK("bool", "{\"v\":true}", "true");
    OK("bool", "{\"v\":false}", "false");
    ERR("bool", "{\"v\":1}", "invalid arguments: field 'v': expected a boolean, got 1");
    ERR("bool", "{\"v\":\"true\"}", "invalid arguments: field 'v': expected a boolean, got a string");
    ERR("bool", "{}", "invalid arguments: missing field 'v'");
}

static void test_optional_and_kinds(void) {
    OK("opt", "{}", "s=dflt i=7 b=1 d=1.5");
    OK("opt", "", "s=dflt i=7 b=1 d=1.5");
    OK("opt", "{\"s\":null,\"i\":null,\"b\":null,\"d\":null}", "s=dflt i=7 b=1 d=1.5");
    OK("opt", "{\"s\":\"x\",\"i\":3,\"b\":false,\"d\":-2}", "s=x i=3 b=0 d=-2");
    ERR("opt", "{\"s\":1}", "invalid arguments: field 's': expected a string, got 1");
    ERR("opt", "{\"i\":11}", "invalid arguments: field 'i': expected an integer from 0 to 10, got 11");
    ERR("opt", "{\"b\":0}", "invalid arguments: field 'b': expected a boolean, got 0");
    ERR("opt", "{\"d\":[]}", "invalid arguments: field 'd': expected a number, got an array");
    ERR("opt", "{\"s\":\"a\",\"s\":null}", "invalid arguments: duplicate field 's'");
    OK("kind", "{}", "0");
    OK("kind", "{\"v\":null}", "1");
    OK("kind", "{\"v\":true}", "2");
    OK("kind", "{\"v\":1}", "3");
    OK("kind", "{\"v\":\"\"}", "4");
    OK("kind", "{\"v\":[]}", "5");
    OK("kind", "{\"v\":{}}", "6");
    OK("json", "{\"v\": {\"a\" : [1, \"\\u00e9\"]} }", "{\"a\" : [1, \"\\u00e9\"]}");
    OK("json", "{\"v\":-1.5e+3}", "-1.5e+3");
    OK("json", "{\"v\":\"a\\nb\"}", "\"a\\nb\"");
    ERR("json", "{}", "invalid arguments: missing field 'v'");
    OK("args", " {\"x\": 1} ", " {\"x\": 1} ");
}

static void test_fields_and_dispatch(void) {
    OK("closed", "{}", "ok");
    OK("closed", "{\"a\":1,\"b!\":2}", "ok");
    ERR("closed", "{\"a\":1,\"c\":2}", "invalid arguments: unknown field 'c' (expected: a, b!)");
    ERR("closed0", "{\"c\":2}", "invalid arguments: unknown field 'c' (expected: none)");
    OK("closed0", "{}", "ok");
    OK("open", "{\"zzz\":1}", "ok");
    ERR("badschema", "{}", "tool 'badschema' has a parameters schema that is not a JSON object");
    /* Syntax errors come before unknown fields. */
    BAD("{\"c\":", "unexpected end of input at byte 5");
    ERR("nope", "{}",
        "this module has no tool 'nope' (it has: any, str, num, int, i64, nonneg, bool, kind, "
        "opt, json, closed, closed0, open, badschema, blank, silent, badutf8, errutf8, jsonout, "
        "rawjsonout, empty, name, args, big, errthenok, fmt, say \"hi\"\n)");
    ERR_PREFIX("", "{}", "this module has no tool '' (it has: any, ");
    ERR("silent", "{}", "tool 'silent' failed without an error message");
    ERR("badutf8", "{}", "tool 'badutf8' wrote output that is not valid UTF-8 (at byte 2)");
    ERR("errutf8", "{}", "bad ??.");
    OK("jsonout", "{\"v\":\"a\\\"b\\\\c\\n\\u0001\\u00e9\\ud83d\\ude00\\u007f\"}",
       "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\xf0\x9f\x98\x80\x7f\"");
    OK("rawjsonout", "{}", "\"a\xef\xbf\xbd\\u0001\\\"\\\\\\n\x7f\xe2\x82\xac\"");
    OK("empty", "{}", "");
    OK("name", "{}", "name");
    OK("errthenok", "{}", "fine");
    OK("fmt", "{}", "x| 3.14|ff|q|42");
    /* Invalid arguments never reach the handler. */
    ERR("silent", "[", "invalid arguments: not valid JSON: unexpected end of input at byte 1");
    /* A big output. */
    char *text;
    size_t len;
    bool ok = call_n("big", "{}", 2, &text, &len);
    check(ok && len == 1000000 && memcmp(text + len - 10, "000099999\n", 10) == 0, "big output",
          "wrong length or content");
    free(text);
}

static void test_tool_info(void) {
    long before = live_allocs;
    tool_string_t info;
    exports_tool_tool_info(&info);
    /* It must be valid JSON (an array): feed it back as arguments. */
    char *text;
    size_t len;
    call_n("any", (const char *)info.ptr, info.len, &text, &len);
    check(strcmp(text, "invalid arguments: expected a JSON object, got an array") == 0,
          "tool-info is valid JSON", text);
    free(text);
    const char *start = "[{\"type\":\"function\",\"function\":{\"name\":\"any\",\"description\":"
                        "\"Accepts anything.\",\"parameters\":{\"type\":\"object\",\"properties\":"
                        "{}}}},{\"type\":\"function\",\"function\":{\"name\":\"str\",\"description\":"
                        "\"s\",\"parameters\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":"
                        "\"string\"}}}}},";
    check(info.len > strlen(start) && memcmp(info.ptr, start, strlen(start)) == 0,
          "tool-info starts as expected", (const char *)info.ptr);
    const char *end = "{\"type\":\"function\",\"function\":{\"name\":\"say \\\"hi\\\"\\n\","
                      "\"description\":\"Quote \\\" backslash \\\\ tab \\t ctrl \\u0001 \xc3\xa9\","
                      "\"parameters\":{\"type\":\"object\",\"properties\":{}}}}]";
    check(info.len > strlen(end) &&
              memcmp(info.ptr + info.len - strlen(end), end, strlen(end)) == 0,
          "tool-info escapes names and descriptions", end);
    const char *bad = "\"name\":\"badschema\",\"description\":\"c\",\"parameters\":\"the "
                      "parameters schema in the C source is not valid JSON: unexpected end of "
                      "input at byte 8\"}}";
    char *copy = malloc(info.len + 1);
    memcpy(copy, info.ptr, info.len);
    copy[info.len] = 0;
    check(strstr(copy, bad) != NULL, "tool-info replaces a broken schema", copy);
    check(strstr(copy, "\"name\":\"blank\",\"description\":\"b\",\"parameters\":{\"type\":"
                       "\"object\",\"properties\":{}}}}") != NULL,
          "tool-info: blank schema", copy);
    free(copy);
    test_free(info.ptr);
    check(live_allocs == before, "tool-info frees", "leak");
}

/* Every allocation failure gives "out of memory" (or the right answer when
 * the failing allocation was not needed), with nothing leaked. */
static void test_out_of_memory(void) {
    static const struct {
        const char *tool, *args, *want;
    } cases[] = {
        {"str", "{\"v\":\"\\u00e9\",\"w\":[1,2]}", "c3a9"},
        {"opt", "{\"s\":\"x\"}", "s=x i=7 b=1 d=1.5"},
        {"closed", "{\"a\":1,\"c\":2}", "invalid arguments: unknown field 'c' (expected: a, b!)"},
        {"nope", "{}", NULL},
        {"any", "[", "invalid arguments: not valid JSON: unexpected end of input at byte 1"},
        {"big", "{}", NULL},
        {"jsonout", "{\"v\":\"abc\"}", "\"abc\""},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int ooms = 0;
        for (long k = 1;; k++) {
            long before = live_allocs;
            alloc_calls = 0;
            fail_at = k + 2; /* the first two are the test's copies of name and args */
            char *text;
            size_t len;
            bool ok = call_n(cases[c].tool, cases[c].args, strlen(cases[c].args), &text, &len);
            bool hit = alloc_calls > fail_at;
            fail_at = -1;
            bool fine = strcmp(text, "out of memory") == 0 ? (ooms++, !ok)
                        : cases[c].want                  ? strcmp(text, cases[c].want) == 0
                                                         : true;
            char what[200];
            snprintf(what, sizeof what, "out of memory at allocation %ld in %s", k, cases[c].tool);
            check(fine, what, text);
            check(live_allocs == before, what, "memory leaked or freed twice");
            free(text);
            if (!hit) break; /* the failure point is past the last allocation */
        }
        check(ooms > 0, cases[c].tool, "no allocation failure was exercised");
    }
}

/* Random mutations of valid documents: must never crash or leak (run under
 * a sanitizer to see memory errors). */
static void test_fuzz(void) {
    static const char *seeds[] = {
        "{\"v\":\"a\\u00e9\\ud83d\\ude00\\n\",\"x\":[1,-2.5e3,true,false,null,{\"y\":{}}]}",
        "{\"a\":{\"b\":[[[]]],\"c\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"},\"v\":0}",
    };
    static const char alphabet[] = "{}[]\",:\\u0123456789abcdefABCDEF.-+eEtrunlsx \t\n\x01\x80\xc3\xed\xf0\xff";
    uint32_t seed = 12345;
    long oks = 0, errs = 0;
    char buf[256];
    for (int iter = 0; iter < 40000; iter++) {
        const char *base = seeds[iter % 2];
        size_t n = strlen(base);
        memcpy(buf, base, n);
        int edits = 1 + (int)(seed % 4);
        for (int e = 0; e < edits; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t pos = (seed >> 8) % (n ? n : 1);
            seed = seed * 1103515245u + 12345u;
            char ch = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
            switch ((seed >> 20) % 3) {
            case 0: buf[pos] = ch; break; /* replace */
            case 1:                       /* delete */
                if (n > 1) {
                    memmove(buf + pos, buf + pos + 1, n - pos - 1);
                    n--;
                }
                break;
            default: /* insert */
                if (n < sizeof buf - 1) {
                    memmove(buf + pos + 1, buf + pos, n - pos);
                    buf[pos] = ch;
                    n++;
                }
            }
        }
        char *text;
        size_t len;
        long before = live_allocs;
        const char *tool = iter % 3 == 0 ? "str" : iter % 3 == 1 ? "json" : "any";
        bool ok = call_n(tool, buf, n, &text, &len);
        if (ok) oks++;
        else errs++;
        if (live_allocs != before) {
            check(false, "fuzz", "leak");
            free(text);
            return;
        }
        free(text);
    }
    check(oks > 1000 && errs > 1000, "fuzz reached both outcomes", "");
}

int main(void) {
    test_valid_json();
    test_invalid_json();
    test_depth();
    test_strings();
    test_numbers();
    test_optional_and_kinds();
    test_fields_and_dispatch();
    test_tool_info();
    test_out_of_memory();
    test_fuzz();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
