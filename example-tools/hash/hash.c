/*
 * hash: checksums and digests of a text (its UTF-8 bytes), as lowercase hex.
 * A toolhost tool module written in C with guest-sdk/c (see its README).
 */
#include "toolhost_tool.h"

#include <stdint.h>
#include <string.h>

/* ---- CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) ------------ */

static uint32_t crc32_ieee(const uint8_t *data, size_t len) {
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

/* ---- FNV-1a ------------------------------------------------------------ */

static uint32_t fnv1a32(const uint8_t *data, size_t len) {
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < len; i++) h = (h ^ data[i]) * 0x01000193u;
    return h;
}

static uint64_t fnv1a64(const uint8_t *data, size_t len) {
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < len; i++) h = (h ^ data[i]) * 0x00000100000001B3u;
    return h;
}

/* ---- SHA-256 (FIPS 180-4) ---------------------------------------------- */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* Processes one 64-byte block into the state H. */
static void sha256_block(uint32_t h[8], const uint8_t *block) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

static void sha256(const uint8_t *data, size_t len, uint8_t out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t full = len / 64 * 64;
    for (size_t i = 0; i < full; i += 64) sha256_block(h, data + i);
    /* The tail, the 0x80 byte, zeros and the bit length: one or two blocks. */
    uint8_t tail[128] = {0};
    size_t rest = len - full;
    memcpy(tail, data + full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (size_t i = 0; i < 8; i++) tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tail_len; i += 64) sha256_block(h, tail + i);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

/* ---- The tools ---------------------------------------------------------- */

static bool tool_crc32(th_ctx *ctx) {
    const char *text;
    size_t len;
    if (!th_arg_string(ctx, "text", &text, &len)) return false;
    return th_printf(ctx, "%08lx", (unsigned long)crc32_ieee((const uint8_t *)text, len));
}

static bool tool_fnv1a(th_ctx *ctx) {
    const char *text;
    size_t len;
    int64_t bits;
    if (!th_arg_string(ctx, "text", &text, &len)) return false;
    if (!th_opt_int(ctx, "bits", INT64_MIN, INT64_MAX, 64, &bits)) return false;
    if (bits == 32)
        return th_printf(ctx, "%08lx", (unsigned long)fnv1a32((const uint8_t *)text, len));
    if (bits == 64)
        return th_printf(ctx, "%016llx", (unsigned long long)fnv1a64((const uint8_t *)text, len));
    return th_error(ctx, "invalid arguments: field 'bits': expected 32 or 64, got %lld",
                    (long long)bits);
}

static bool tool_sha256(th_ctx *ctx) {
    const char *text;
    size_t len;
    if (!th_arg_string(ctx, "text", &text, &len)) return false;
    uint8_t digest[32];
    sha256((const uint8_t *)text, len, digest);
    static const char hex[] = "0123456789abcdef";
    char out[64];
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    return th_write(ctx, out, sizeof out);
}

#define TEXT_PARAM                                                                        \
    "\"text\":{\"type\":\"string\",\"description\":\"The text to hash; its UTF-8 bytes are " \
    "hashed exactly as given (no trimming, no trailing newline added).\"}"

static const th_tool TOOLS[] = {
    {"crc32",
     "CRC-32 checksum (IEEE 802.3, as in zip, gzip and PNG) of a text's UTF-8 bytes, as 8 "
     "lowercase hex digits. Example: \"123456789\" gives cbf43926.",
     "{\"type\":\"object\",\"properties\":{" TEXT_PARAM "},\"required\":[\"text\"],"
     "\"additionalProperties\":false}",
     tool_crc32},
    {"fnv1a",
     "FNV-1a hash (non-cryptographic) of a text's UTF-8 bytes, as lowercase hex: 16 digits for "
     "64 bits (the default), 8 digits for 32 bits.",
     "{\"type\":\"object\",\"properties\":{" TEXT_PARAM ",\"bits\":{\"type\":\"integer\","
     "\"enum\":[32,64],\"default\":64,\"description\":\"The hash size: 32 or 64 (default "
     "64).\"}},\"required\":[\"text\"],\"additionalProperties\":false}",
     tool_fnv1a},
    {"sha256",
     "SHA-256 digest (FIPS 180-4) of a text's UTF-8 bytes, as 64 lowercase hex digits, e.g. to "
     "compare with a published checksum.",
     "{\"type\":\"object\",\"properties\":{" TEXT_PARAM "},\"required\":[\"text\"],"
     "\"additionalProperties\":false}",
     tool_sha256},
};

TOOLHOST_EXPORT_TOOLS(TOOLS);
