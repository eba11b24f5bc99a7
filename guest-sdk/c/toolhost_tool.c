/*
 * toolhost_tool.c: the tool-info and call exports of wit/tool.wit, built
 * from the module's th_tool table; a strict JSON reader for the arguments;
 * the output and error buffers. See toolhost_tool.h.
 */
#include "toolhost_tool.h"

#include "bindings/tool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Containers nested deeper than this are refused (the reader recurses). */
#define TH_MAX_DEPTH 128

/* ---- Growable byte buffer ---------------------------------------------- */

typedef struct th_buf {
    uint8_t *ptr;
    size_t len, cap;
} th_buf;

static bool buf_reserve(th_buf *b, size_t extra) {
    if (extra <= b->cap - b->len) return true;
    if (extra > SIZE_MAX - b->len) return false;
    size_t need = b->len + extra;
    size_t cap = b->cap < 64 ? 64 : b->cap;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->ptr, cap);
    if (!p) return false;
    b->ptr = p;
    b->cap = cap;
    return true;
}

static bool buf_append(th_buf *b, const void *data, size_t len) {
    if (len == 0) return true;
    if (!buf_reserve(b, len)) return false;
    memcpy(b->ptr + b->len, data, len);
    b->len += len;
    return true;
}

static bool buf_str(th_buf *b, const char *s) { return buf_append(b, s, strlen(s)); }

/* 1 = ok, 0 = out of memory, -1 = format error. */
static int buf_vprintf(th_buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return -1;
    if (!buf_reserve(b, (size_t)n + 1)) return 0;
    vsnprintf((char *)b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 1;
}

/* ---- UTF-8 ------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at S (N bytes available), or 0. */
static size_t utf8_seq(const uint8_t *s, size_t n) {
    uint8_t c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        else if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;      /* no overlong forms */
        else if (c == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

/* The offset of the first invalid byte, or N if all is valid UTF-8. */
static size_t utf8_check(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(s + i, n - i);
        if (k == 0) return i;
        i += k;
    }
    return n;
}

static size_t utf8_put(uint8_t *d, uint32_t cp) {
    if (cp < 0x80) {
        d[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (uint8_t)(0xC0 | (cp >> 6));
        d[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (uint8_t)(0xE0 | (cp >> 12));
        d[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | (cp >> 18));
    d[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Appends DATA as a quoted JSON string; invalid UTF-8 becomes U+FFFD. */
static bool buf_json_string(th_buf *b, const uint8_t *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    if (!buf_append(b, "\"", 1)) return false;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        if (!buf_append(b, s + i, run - i)) return false;
        i = run;
        if (i >= n) break;
        uint8_t c = s[i];
        if (c >= 0x80) {
            size_t k = utf8_seq(s + i, n - i);
            if (k == 0) {
                if (!buf_append(b, "\xEF\xBF\xBD", 3)) return false;
                i++;
            } else {
                if (!buf_append(b, s + i, k)) return false;
                i += k;
            }
            continue;
        }
        char esc[7];
        size_t elen = 2;
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        if (!buf_append(b, esc, elen)) return false;
        i++;
    }
    return buf_append(b, "\"", 1);
}

/* ---- Strict JSON reader (RFC 8259) ------------------------------------- */

/* A member of a parsed top-level object. */
typedef struct th_member {
    const uint8_t *key; /* unescaped, NUL-terminated, in the arena */
    size_t key_len;
    th_kind kind;
    size_t start, end;  /* the value's JSON text: input[start..end) */
    const uint8_t *str; /* TH_STRING: unescaped, NUL-terminated, in the arena */
    size_t str_len;
} th_member;

/* A parsed top-level object: its members, in input order. */
typedef struct th_doc {
    const uint8_t *text;
    size_t text_len;
    th_member *members;
    size_t count, cap;
    uint8_t *arena; /* unescaped strings; never larger than the input */
    size_t arena_len;
} th_doc;

typedef struct th_parser {
    const uint8_t *s;
    size_t n, i;
    const char *what; /* the first error, or NULL */
    size_t at;
    bool oom;
    th_doc *doc; /* where top-level members go */
} th_parser;

static bool jfail(th_parser *p, const char *what, size_t at) {
    if (!p->what && !p->oom) {
        p->what = what;
        p->at = at;
    }
    return false;
}

/* An error at the current position; at the end of the input, that's it. */
static bool jfail_here(th_parser *p, const char *what) {
    if (p->i >= p->n) return jfail(p, "unexpected end of input", p->n);
    return jfail(p, what, p->i);
}

static void jws(th_parser *p) {
    while (p->i < p->n) {
        uint8_t c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->i++;
    }
}

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits at S[I..], or -1. */
static long hex4(const uint8_t *s, size_t n, size_t i) {
    if (n < 4 || i > n - 4) return -1;
    long v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = hexval(s[i + k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* A string at p->i (the opening quote). With DST, writes the unescaped
 * bytes there (at most the raw length minus 2) plus a NUL. */
static bool jstring(th_parser *p, uint8_t *dst, size_t *dlen) {
    const uint8_t *s = p->s;
    size_t n = p->n, i = p->i + 1, d = 0;
    for (;;) {
        if (i >= n) {
            p->i = i;
            return jfail(p, "unterminated string", n);
        }
        uint8_t c = s[i];
        if (c == '"') {
            i++;
            break;
        }
        if (c < 0x20) {
            p->i = i;
            return jfail(p, "control character in a string (must be escaped)", i);
        }
        if (c >= 0x80) {
            size_t k = utf8_seq(s + i, n - i);
            if (k == 0) {
                p->i = i;
                return jfail(p, "invalid UTF-8 in a string", i);
            }
            if (dst) memcpy(dst + d, s + i, k);
            d += k;
            i += k;
            continue;
        }
        if (c != '\\') {
            if (dst) dst[d] = c;
            d++;
            i++;
            continue;
        }
        /* An escape. */
        size_t esc = i;
        if (i + 1 >= n) {
            p->i = i;
            return jfail(p, "unterminated string", n);
        }
        uint8_t e = s[i + 1];
        uint8_t out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u': {
            long u = hex4(s, n, i + 2);
            if (u < 0) {
                p->i = esc;
                return jfail(p, "invalid \\u escape (needs 4 hex digits)", esc);
            }
            uint32_t cp = (uint32_t)u;
            i += 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF) {
                p->i = esc;
                return jfail(p, "lone surrogate in a \\u escape", esc);
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = -1;
                if (i + 1 < n && s[i] == '\\' && s[i + 1] == 'u') lo = hex4(s, n, i + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    p->i = esc;
                    return jfail(p, "lone surrogate in a \\u escape", esc);
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                i += 6;
            }
            if (dst) {
                d += utf8_put(dst + d, cp);
            } else {
                d += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            }
            continue;
        }
        default:
            p->i = esc;
            return jfail(p, "invalid escape in a string", esc);
        }
        if (dst) dst[d] = out;
        d++;
        i += 2;
    }
    if (dst) dst[d] = 0;
    if (dlen) *dlen = d;
    p->i = i;
    return true;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static bool jnumber(th_parser *p) {
    const uint8_t *s = p->s;
    size_t n = p->n, i = p->i, start = p->i;
    if (i < n && s[i] == '-') i++;
    if (i >= n) return jfail(p, "unexpected end of input", n);
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && is_digit(s[i])) i++;
    } else {
        return jfail(p, "invalid number", start);
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n) return jfail(p, "unexpected end of input", n);
        if (!is_digit(s[i])) return jfail(p, "invalid number", start);
        while (i < n && is_digit(s[i])) i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n) return jfail(p, "unexpected end of input", n);
        if (!is_digit(s[i])) return jfail(p, "invalid number", start);
        while (i < n && is_digit(s[i])) i++;
    }
    /* "01", "1.2.3", "1x": a number glued to more number-like text. */
    if (i < n) {
        uint8_t c = s[i];
        if (is_digit(c) || c == '.' || c == '+' || c == '-' || (c >= 'a' && c <= 'z') ||
            (c >= 'A' && c <= 'Z'))
            return jfail(p, "invalid number", start);
    }
    p->i = i;
    return true;
}

static bool jliteral(th_parser *p, const char *word) {
    size_t len = strlen(word);
    for (size_t k = 0; k < len; k++) {
        if (p->i + k >= p->n) return jfail(p, "unexpected end of input", p->n);
        if (p->s[p->i + k] != (uint8_t)word[k]) return jfail(p, "expected a value", p->i);
    }
    p->i += len;
    return true;
}

static bool jvalue(th_parser *p, int depth, th_kind *kind);

static bool jarray(th_parser *p, int depth) {
    p->i++; /* [ */
    jws(p);
    if (p->i < p->n && p->s[p->i] == ']') {
        p->i++;
        return true;
    }
    for (;;) {
        th_kind k;
        if (!jvalue(p, depth, &k)) return false;
        jws(p);
        if (p->i >= p->n) return jfail(p, "unexpected end of input", p->n);
        uint8_t c = p->s[p->i];
        if (c == ']') {
            p->i++;
            return true;
        }
        if (c != ',') return jfail(p, "expected ',' or ']' in an array", p->i);
        p->i++;
        jws(p);
    }
}

static bool doc_add(th_parser *p, const th_member *m) {
    th_doc *d = p->doc;
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        th_member *nm = realloc(d->members, cap * sizeof *nm);
        if (!nm) {
            p->oom = true;
            return false;
        }
        d->members = nm;
        d->cap = cap;
    }
    d->members[d->count++] = *m;
    return true;
}

/* An object; RECORD: keep its members in p->doc (the top level only). */
static bool jobject(th_parser *p, int depth, bool record) {
    p->i++; /* { */
    jws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        return true;
    }
    th_doc *d = p->doc;
    for (;;) {
        if (p->i >= p->n || p->s[p->i] != '"')
            return jfail_here(p, "expected a string (a member name)");
        th_member m;
        memset(&m, 0, sizeof m);
        if (record) {
            uint8_t *dst = d->arena + d->arena_len;
            if (!jstring(p, dst, &m.key_len)) return false;
            m.key = dst;
            d->arena_len += m.key_len + 1;
        } else if (!jstring(p, NULL, NULL)) {
            return false;
        }
        jws(p);
        if (p->i >= p->n || p->s[p->i] != ':')
            return jfail_here(p, "expected ':' after a member name");
        p->i++;
        jws(p);
        m.start = p->i;
        if (record && p->i < p->n && p->s[p->i] == '"') {
            uint8_t *dst = d->arena + d->arena_len;
            if (!jstring(p, dst, &m.str_len)) return false;
            m.str = dst;
            m.kind = TH_STRING;
            d->arena_len += m.str_len + 1;
        } else if (!jvalue(p, depth, &m.kind)) {
            return false;
        }
        m.end = p->i;
        if (record && !doc_add(p, &m)) return false;
        jws(p);
        if (p->i >= p->n) return jfail(p, "unexpected end of input", p->n);
        uint8_t c = p->s[p->i];
        if (c == '}') {
            p->i++;
            return true;
        }
        if (c != ',') return jfail(p, "expected ',' or '}' in an object", p->i);
        p->i++;
        jws(p);
    }
}

/* A value at p->i (whitespace skipped), inside DEPTH containers. */
static bool jvalue(th_parser *p, int depth, th_kind *kind) {
    if (p->i >= p->n) return jfail(p, "unexpected end of input", p->n);
    switch (p->s[p->i]) {
    case '{':
    case '[':
        if (depth >= TH_MAX_DEPTH) return jfail(p, "nested deeper than 128 levels", p->i);
        if (p->s[p->i] == '{') {
            *kind = TH_OBJECT;
            return jobject(p, depth + 1, depth == 0 && p->doc != NULL);
        }
        *kind = TH_ARRAY;
        return jarray(p, depth + 1);
    case '"':
        *kind = TH_STRING;
        return jstring(p, NULL, NULL);
    case 't':
        *kind = TH_BOOL;
        return jliteral(p, "true");
    case 'f':
        *kind = TH_BOOL;
        return jliteral(p, "false");
    case 'n':
        *kind = TH_NULL;
        return jliteral(p, "null");
    default:
        if (p->s[p->i] == '-' || is_digit(p->s[p->i])) {
            *kind = TH_NUMBER;
            return jnumber(p);
        }
        return jfail(p, "expected a value", p->i);
    }
}

static void doc_free(th_doc *d) {
    free(d->members);
    free(d->arena);
    memset(d, 0, sizeof *d);
}

enum { DOC_OK, DOC_SYNTAX, DOC_NOT_OBJECT, DOC_OOM };

static const char *kind_name(th_kind k) {
    switch (k) {
    case TH_NULL: return "null";
    case TH_BOOL: return "a boolean";
    case TH_NUMBER: return "a number";
    case TH_STRING: return "a string";
    case TH_ARRAY: return "an array";
    case TH_OBJECT: return "an object";
    default: return "nothing";
    }
}

/* Parses TEXT, which must be one JSON object (blank text counts as {}).
 * DOC_SYNTAX: *WHAT, *AT tell the error; DOC_NOT_OBJECT: *WHAT is the kind
 * that was found. */
static int doc_parse(th_doc *d, const uint8_t *text, size_t len, const char **what, size_t *at) {
    memset(d, 0, sizeof *d);
    d->text = text;
    d->text_len = len;
    d->arena = malloc(len + 1);
    if (!d->arena) return DOC_OOM;
    th_parser p;
    memset(&p, 0, sizeof p);
    p.s = text;
    p.n = len;
    p.doc = d;
    jws(&p);
    if (p.i == p.n) return DOC_OK; /* blank: {} */
    th_kind kind = TH_MISSING;
    bool ok = jvalue(&p, 0, &kind);
    if (ok) {
        jws(&p);
        if (p.i < p.n) ok = jfail(&p, "trailing characters after the JSON value", p.i);
    }
    if (!ok) {
        if (p.oom) return DOC_OOM;
        *what = p.what;
        *at = p.at;
        return DOC_SYNTAX;
    }
    if (kind != TH_OBJECT) {
        *what = kind_name(kind);
        return DOC_NOT_OBJECT;
    }
    return DOC_OK;
}

/* ---- The call context -------------------------------------------------- */

struct th_ctx {
    const th_tool *tool;
    th_doc args;
    th_buf out;
    th_buf err;
    bool oom;
};

static bool set_oom(th_ctx *ctx) {
    ctx->oom = true;
    return false;
}

static bool th_verror(th_ctx *ctx, const char *fmt, va_list ap) {
    if (ctx->oom) return false;
    ctx->err.len = 0;
    int r = buf_vprintf(&ctx->err, fmt, ap);
    if (r == 0) return set_oom(ctx);
    if (r < 0) {
        ctx->err.len = 0;
        if (!buf_str(&ctx->err, "the tool's error message could not be formatted"))
            return set_oom(ctx);
    }
    return false;
}

bool th_error(th_ctx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    th_verror(ctx, fmt, ap);
    va_end(ap);
    return false;
}

bool th_write(th_ctx *ctx, const void *data, size_t len) {
    if (ctx->oom) return false;
    return buf_append(&ctx->out, data, len) || set_oom(ctx);
}

bool th_print(th_ctx *ctx, const char *s) { return th_write(ctx, s, strlen(s)); }

bool th_printf(th_ctx *ctx, const char *fmt, ...) {
    if (ctx->oom) return false;
    va_list ap;
    va_start(ap, fmt);
    int r = buf_vprintf(&ctx->out, fmt, ap);
    va_end(ap);
    if (r == 0) return set_oom(ctx);
    if (r < 0) return th_error(ctx, "th_printf: the format could not be applied");
    return true;
}

bool th_write_json_string(th_ctx *ctx, const void *data, size_t len) {
    if (ctx->oom) return false;
    return buf_json_string(&ctx->out, data, len) || set_oom(ctx);
}

void th_args_text(th_ctx *ctx, const char **text, size_t *len) {
    *text = (const char *)ctx->args.text;
    *len = ctx->args.text_len;
}

const char *th_tool_name(th_ctx *ctx) { return ctx->tool ? ctx->tool->name : ""; }

/* ---- Accessors --------------------------------------------------------- */

/* 1: found (*M), 0: missing, -1: error recorded (a duplicate). */
static int lookup(th_ctx *ctx, const char *key, const th_member **m) {
    size_t klen = strlen(key);
    const th_member *found = NULL;
    for (size_t i = 0; i < ctx->args.count; i++) {
        const th_member *c = &ctx->args.members[i];
        if (c->key_len == klen && memcmp(c->key, key, klen) == 0) {
            if (found) {
                th_error(ctx, "invalid arguments: duplicate field '%s'", key);
                return -1;
            }
            found = c;
        }
    }
    *m = found;
    return found ? 1 : 0;
}

/* The JSON text of M, shortened for an error message. */
static bool mismatch(th_ctx *ctx, const char *key, const char *expected, const th_member *m) {
    if (m->kind == TH_NUMBER) {
        size_t len = m->end - m->start;
        const char *more = "";
        if (len > 40) {
            len = 40;
            more = "...";
        }
        return th_error(ctx, "invalid arguments: field '%s': expected %s, got %.*s%s", key,
                        expected, (int)len, (const char *)ctx->args.text + m->start, more);
    }
    if (m->kind == TH_BOOL) {
        return th_error(ctx, "invalid arguments: field '%s': expected %s, got %s", key, expected,
                        ctx->args.text[m->start] == 't' ? "true" : "false");
    }
    return th_error(ctx, "invalid arguments: field '%s': expected %s, got %s", key, expected,
                    kind_name(m->kind));
}

static bool missing(th_ctx *ctx, const char *key) {
    return th_error(ctx, "invalid arguments: missing field '%s'", key);
}

th_kind th_arg_kind(th_ctx *ctx, const char *key) {
    size_t klen = strlen(key);
    for (size_t i = 0; i < ctx->args.count; i++) {
        const th_member *c = &ctx->args.members[i];
        if (c->key_len == klen && memcmp(c->key, key, klen) == 0) return c->kind;
    }
    return TH_MISSING;
}

/* Finds KEY for an accessor: 1 present (non-null unless ALLOW_NULL), 0 use
 * the default (OPTIONAL and missing or null), -1 failed. */
static int field(th_ctx *ctx, const char *key, bool optional, const char *expected,
                 const th_member **m) {
    int r = lookup(ctx, key, m);
    if (r < 0) return -1;
    if (r == 0) {
        if (optional) return 0;
        missing(ctx, key);
        return -1;
    }
    if ((*m)->kind == TH_NULL) {
        if (optional) return 0;
        mismatch(ctx, key, expected, *m);
        return -1;
    }
    return 1;
}

static bool get_string(th_ctx *ctx, const char *key, bool optional, const char *def,
                       const char **s, size_t *len) {
    *s = "";
    if (len) *len = 0;
    const th_member *m;
    int r = field(ctx, key, optional, "a string", &m);
    if (r < 0) return false;
    if (r == 0) {
        *s = def;
        if (len) *len = def ? strlen(def) : 0;
        return true;
    }
    if (m->kind != TH_STRING) return mismatch(ctx, key, "a string", m);
    *s = (const char *)m->str;
    if (len) *len = m->str_len;
    return true;
}

bool th_arg_string(th_ctx *ctx, const char *key, const char **s, size_t *len) {
    return get_string(ctx, key, false, NULL, s, len);
}

bool th_opt_string(th_ctx *ctx, const char *key, const char *def, const char **s, size_t *len) {
    return get_string(ctx, key, true, def, s, len);
}

static bool get_number(th_ctx *ctx, const char *key, bool optional, double def, double *out) {
    *out = 0;
    const th_member *m;
    int r = field(ctx, key, optional, "a number", &m);
    if (r < 0) return false;
    if (r == 0) {
        *out = def;
        return true;
    }
    if (m->kind != TH_NUMBER) return mismatch(ctx, key, "a number", m);
    size_t len = m->end - m->start;
    char small[64];
    char *text = len < sizeof small ? small : malloc(len + 1);
    if (!text) return set_oom(ctx);
    memcpy(text, ctx->args.text + m->start, len);
    text[len] = 0;
    errno = 0;
    double v = strtod(text, NULL);
    bool range = errno == ERANGE && (v > 1.0 || v < -1.0); /* underflow is fine */
    if (text != small) free(text);
    if (range) return th_error(ctx, "invalid arguments: field '%s': number out of range", key);
    *out = v;
    return true;
}

bool th_arg_number(th_ctx *ctx, const char *key, double *out) {
    return get_number(ctx, key, false, 0, out);
}

bool th_opt_number(th_ctx *ctx, const char *key, double def, double *out) {
    return get_number(ctx, key, true, def, out);
}

static bool int_expected(th_ctx *ctx, const char *key, int64_t min, int64_t max,
                         const th_member *m) {
    char what[80];
    if (min == INT64_MIN && max == INT64_MAX)
        snprintf(what, sizeof what, "an integer");
    else if (max == INT64_MAX)
        snprintf(what, sizeof what, "an integer of at least %lld", (long long)min);
    else if (min == INT64_MIN)
        snprintf(what, sizeof what, "an integer of at most %lld", (long long)max);
    else
        snprintf(what, sizeof what, "an integer from %lld to %lld", (long long)min, (long long)max);
    return mismatch(ctx, key, what, m);
}

static bool get_int(th_ctx *ctx, const char *key, bool optional, int64_t min, int64_t max,
                    int64_t def, int64_t *out) {
    *out = 0;
    const th_member *m;
    int r = field(ctx, key, optional, "an integer", &m);
    if (r < 0) return false;
    if (r == 0) {
        *out = def;
        return true;
    }
    if (m->kind != TH_NUMBER) return int_expected(ctx, key, min, max, m);
    const uint8_t *s = ctx->args.text + m->start;
    size_t len = m->end - m->start, i = 0;
    bool neg = s[0] == '-';
    if (neg) i++;
    /* Magnitude as unsigned, up to 2^63; larger is out of range. */
    uint64_t mag = 0;
    bool over = false;
    for (; i < len; i++) {
        if (!is_digit(s[i])) return int_expected(ctx, key, min, max, m); /* . or e */
        unsigned dgt = (unsigned)(s[i] - '0');
        if (mag > (UINT64_MAX - dgt) / 10) over = true;
        else mag = mag * 10 + dgt;
    }
    const uint64_t lim = (uint64_t)INT64_MAX + (neg ? 1u : 0u);
    if (over || mag > lim) return int_expected(ctx, key, min, max, m);
    int64_t v;
    if (neg) v = mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag;
    else v = (int64_t)mag;
    if (v < min || v > max) return int_expected(ctx, key, min, max, m);
    *out = v;
    return true;
}

bool th_arg_int(th_ctx *ctx, const char *key, int64_t min, int64_t max, int64_t *out) {
    return get_int(ctx, key, false, min, max, 0, out);
}

bool th_opt_int(th_ctx *ctx, const char *key, int64_t min, int64_t max, int64_t def,
                int64_t *out) {
    return get_int(ctx, key, true, min, max, def, out);
}

static bool get_bool(th_ctx *ctx, const char *key, bool optional, bool def, bool *out) {
    *out = false;
    const th_member *m;
    int r = field(ctx, key, optional, "a boolean", &m);
    if (r < 0) return false;
    if (r == 0) {
        *out = def;
        return true;
    }
    if (m->kind != TH_BOOL) return mismatch(ctx, key, "a boolean", m);
    *out = ctx->args.text[m->start] == 't';
    return true;
}

bool th_arg_bool(th_ctx *ctx, const char *key, bool *out) {
    return get_bool(ctx, key, false, false, out);
}

bool th_opt_bool(th_ctx *ctx, const char *key, bool def, bool *out) {
    return get_bool(ctx, key, true, def, out);
}

bool th_arg_json(th_ctx *ctx, const char *key, const char **json, size_t *len) {
    *json = "";
    *len = 0;
    const th_member *m;
    int r = lookup(ctx, key, &m);
    if (r < 0) return false;
    if (r == 0) return missing(ctx, key);
    *json = (const char *)ctx->args.text + m->start;
    *len = m->end - m->start;
    return true;
}

/* ---- The exports ------------------------------------------------------- */

static const char NO_PARAMETERS[] = "{\"type\":\"object\",\"properties\":{}}";

static const char *parameters_of(const th_tool *t) {
    const char *p = t->parameters;
    if (!p) return NO_PARAMETERS;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return *p ? t->parameters : NO_PARAMETERS;
}

/* Appends tool T's parameters schema. One that is not valid JSON becomes a
 * JSON string saying so (the host then names the tool in its error). */
static bool info_parameters(th_buf *b, const th_tool *t) {
    const char *schema = parameters_of(t);
    th_doc d;
    const char *what = NULL;
    size_t at = 0;
    int r = doc_parse(&d, (const uint8_t *)schema, strlen(schema), &what, &at);
    doc_free(&d);
    if (r == DOC_OOM) return false;
    if (r != DOC_SYNTAX) return buf_str(b, schema);
    char msg[160];
    snprintf(msg, sizeof msg,
             "the parameters schema in the C source is not valid JSON: %s at byte %zu", what, at);
    return buf_json_string(b, (const uint8_t *)msg, strlen(msg));
}

void exports_tool_tool_info(tool_string_t *ret) {
    th_buf b = {0};
    bool ok = buf_append(&b, "[", 1);
    for (size_t i = 0; ok && i < toolhost_tool_count; i++) {
        const th_tool *t = &toolhost_tools[i];
        const char *desc = t->description ? t->description : "";
        ok = (i == 0 || buf_append(&b, ",", 1)) &&
             buf_str(&b, "{\"type\":\"function\",\"function\":{\"name\":") &&
             buf_json_string(&b, (const uint8_t *)t->name, strlen(t->name)) &&
             buf_str(&b, ",\"description\":") &&
             buf_json_string(&b, (const uint8_t *)desc, strlen(desc)) &&
             buf_str(&b, ",\"parameters\":") && info_parameters(&b, t) && buf_str(&b, "}}");
    }
    ok = ok && buf_append(&b, "]", 1);
    /* tool-info cannot answer an error: with no memory, trap. */
    if (!ok) __builtin_trap();
    ret->ptr = b.ptr;
    ret->len = b.len;
}

/* With "additionalProperties": false in the tool's schema, refuses fields
 * not in its "properties". False with the error recorded. */
static bool check_fields(th_ctx *ctx) {
    const char *schema = parameters_of(ctx->tool);
    th_doc sd, props;
    const char *what = NULL;
    size_t at = 0;
    int r = doc_parse(&sd, (const uint8_t *)schema, strlen(schema), &what, &at);
    if (r == DOC_OOM) {
        doc_free(&sd);
        return set_oom(ctx);
    }
    if (r != DOC_OK) {
        doc_free(&sd);
        return th_error(ctx, "tool '%s' has a parameters schema that is not a JSON object",
                        ctx->tool->name);
    }
    bool closed = false;
    const th_member *pm = NULL;
    for (size_t i = 0; i < sd.count; i++) {
        const th_member *m = &sd.members[i];
        if (m->key_len == 20 && memcmp(m->key, "additionalProperties", 20) == 0)
            closed = m->kind == TH_BOOL && schema[m->start] == 'f';
        else if (m->key_len == 10 && memcmp(m->key, "properties", 10) == 0 &&
                 m->kind == TH_OBJECT)
            pm = m;
    }
    bool ok = true;
    if (closed) {
        memset(&props, 0, sizeof props);
        if (pm) {
            r = doc_parse(&props, (const uint8_t *)schema + pm->start, pm->end - pm->start, &what,
                          &at);
            if (r == DOC_OOM) ok = set_oom(ctx);
        }
        for (size_t i = 0; ok && i < ctx->args.count; i++) {
            const th_member *a = &ctx->args.members[i];
            bool known = false;
            for (size_t k = 0; !known && k < props.count; k++)
                known = props.members[k].key_len == a->key_len &&
                        memcmp(props.members[k].key, a->key, a->key_len) == 0;
            if (known) continue;
            th_buf list = {0};
            bool lok = true;
            for (size_t k = 0; lok && k < props.count; k++)
                lok = (k == 0 || buf_str(&list, ", ")) &&
                      buf_append(&list, props.members[k].key, props.members[k].key_len);
            ctx->err.len = 0;
            lok = lok && buf_str(&ctx->err, "invalid arguments: unknown field '") &&
                  buf_append(&ctx->err, a->key, a->key_len) &&
                  buf_str(&ctx->err, "' (expected: ") &&
                  buf_append(&ctx->err, list.ptr, list.len) &&
                  buf_str(&ctx->err, props.count ? ")" : "none)");
            if (!lok) set_oom(ctx);
            free(list.ptr);
            ok = false;
        }
        doc_free(&props);
    }
    doc_free(&sd);
    return ok;
}

static bool run_tool(th_ctx *ctx, const uint8_t *name, size_t name_len, const uint8_t *args,
                     size_t args_len) {
    for (size_t i = 0; i < toolhost_tool_count; i++) {
        const th_tool *t = &toolhost_tools[i];
        if (strlen(t->name) == name_len && memcmp(t->name, name, name_len) == 0) {
            ctx->tool = t;
            break;
        }
    }
    if (!ctx->tool) {
        ctx->err.len = 0;
        bool ok = buf_str(&ctx->err, "this module has no tool '") &&
                  buf_append(&ctx->err, name, name_len) && buf_str(&ctx->err, "' (it has: ");
        for (size_t i = 0; ok && i < toolhost_tool_count; i++)
            ok = (i == 0 || buf_str(&ctx->err, ", ")) &&
                 buf_str(&ctx->err, toolhost_tools[i].name);
        ok = ok && buf_str(&ctx->err, ")");
        return ok ? false : set_oom(ctx);
    }
    const char *what = NULL;
    size_t at = 0;
    switch (doc_parse(&ctx->args, args, args_len, &what, &at)) {
    case DOC_OOM:
        return set_oom(ctx);
    case DOC_SYNTAX:
        return th_error(ctx, "invalid arguments: not valid JSON: %s at byte %zu", what, at);
    case DOC_NOT_OBJECT:
        return th_error(ctx, "invalid arguments: expected a JSON object, got %s", what);
    default:
        break;
    }
    if (!check_fields(ctx)) return false;
    if (!ctx->tool->run(ctx)) {
        if (ctx->err.len == 0 && !ctx->oom)
            th_error(ctx, "tool '%s' failed without an error message", ctx->tool->name);
        return false;
    }
    return true;
}

bool exports_tool_call(tool_string_t *name, tool_string_t *arguments, tool_string_t *ret,
                       tool_string_t *err) {
    static const char OOM[] = "out of memory";
    /* Reserved up front so that "out of memory" can always be answered. */
    uint8_t *oom_text = malloc(sizeof OOM - 1);
    if (!oom_text) __builtin_trap();
    memcpy(oom_text, OOM, sizeof OOM - 1);

    th_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    bool ok = run_tool(&ctx, name->ptr, name->len, arguments->ptr, arguments->len);
    if (ok && !ctx.oom) {
        size_t bad = utf8_check(ctx.out.ptr, ctx.out.len);
        if (bad < ctx.out.len) {
            ok = false;
            th_error(&ctx, "tool '%s' wrote output that is not valid UTF-8 (at byte %zu)",
                     ctx.tool->name, bad);
        }
    }
    if (ctx.oom) ok = false;

    doc_free(&ctx.args);
    /* The arguments belong to the callee (canonical ABI): free them. */
    if (name->len) free(name->ptr);
    if (arguments->len) free(arguments->ptr);
    name->ptr = arguments->ptr = NULL;
    name->len = arguments->len = 0;

    /* A zero-length result is not freed by post-return: free it here. */
    if (ok) {
        free(ctx.err.ptr);
        free(oom_text);
        if (ctx.out.len == 0) {
            free(ctx.out.ptr);
            ctx.out.ptr = NULL;
        }
        ret->ptr = ctx.out.ptr;
        ret->len = ctx.out.len;
        return true;
    }
    free(ctx.out.ptr);
    if (ctx.oom) {
        free(ctx.err.ptr);
        err->ptr = oom_text;
        err->len = sizeof OOM - 1;
        return false;
    }
    free(oom_text);
    /* The error text must be UTF-8 too: replace stray bytes. */
    for (size_t i = 0; i < ctx.err.len;) {
        i += utf8_check(ctx.err.ptr + i, ctx.err.len - i);
        if (i < ctx.err.len) ctx.err.ptr[i++] = '?';
    }
    err->ptr = ctx.err.ptr;
    err->len = ctx.err.len;
    return false;
}
