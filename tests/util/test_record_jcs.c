/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_jcs.c -- RFC 8785 canonical JSON and the digests over it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "record.h"

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* RFC 8785 Appendix B: IEEE-754 bit patterns and their canonical text. */
static void test_number_vectors(void **state)
{
    static const struct {
        uint64_t bits;
        const char *text;
    } v[] = {
        {0x0000000000000000ULL, "0"},
        {0x8000000000000000ULL, "0"},   /* -0 */
        {0x0000000000000001ULL, "5e-324"},
        {0x8000000000000001ULL, "-5e-324"},
        {0x7fefffffffffffffULL, "1.7976931348623157e+308"},
        {0xffefffffffffffffULL, "-1.7976931348623157e+308"},
        {0x4340000000000000ULL, "9007199254740992"},
        {0xc340000000000000ULL, "-9007199254740992"},
        {0x4430000000000000ULL, "295147905179352830000"},
        {0x44b52d02c7e14af5ULL, "9.999999999999997e+22"},
        {0x44b52d02c7e14af6ULL, "1e+23"},
        {0x44b52d02c7e14af7ULL, "1.0000000000000001e+23"},
        {0x444b1ae4d6e2ef4eULL, "999999999999999700000"},
        {0x444b1ae4d6e2ef4fULL, "999999999999999900000"},
        {0x444b1ae4d6e2ef50ULL, "1e+21"},
        {0x3eb0c6f7a0b5ed8cULL, "9.999999999999997e-7"},
        {0x3eb0c6f7a0b5ed8dULL, "0.000001"},
        {0x41b3de4355555553ULL, "333333333.3333332"},
        {0x41b3de4355555554ULL, "333333333.33333325"},
        {0x41b3de4355555555ULL, "333333333.3333333"},
        {0x41b3de4355555556ULL, "333333333.3333334"},
        {0x41b3de4355555557ULL, "333333333.33333343"},
        {0xbecbf647612f3696ULL, "-0.0000033333333333333333"},
        {0x43143ff3c1cb0959ULL, "1424953923781206.2"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char buf[32];
        assert_int_equal(rg_jcs_number(from_bits(v[i].bits), buf, sizeof buf), 0);
        if (strcmp(buf, v[i].text)) fprintf(stderr, "bits %016llx: got %s want %s\n", (unsigned long long)v[i].bits, buf, v[i].text);
        assert_string_equal(buf, v[i].text);
    }
    /* The notation boundaries of Number.prototype.toString. */
    char buf[32];
    const struct {
        double x;
        const char *text;
    } b[] = {{1e21, "1e+21"},   {1e20, "100000000000000000000"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"},
             {0.000001, "0.000001"}, {123.456, "123.456"}, {-1.0, "-1"}, {4.50, "4.5"}, {2e-3, "0.002"},
             {1e30, "1e+30"}, {0.1, "0.1"}, {100, "100"}};
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        assert_int_equal(rg_jcs_number(b[i].x, buf, sizeof buf), 0);
        assert_string_equal(buf, b[i].text);
    }
    assert_int_equal(rg_jcs_number(NAN, buf, sizeof buf), -1);
    assert_int_equal(rg_jcs_number(INFINITY, buf, sizeof buf), -1);
}

/* Any double's canonical text reads back as the same double, and no shorter
 * text would: checked over pseudo-random bit patterns. */
static void test_number_roundtrip(void **state)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 50000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d = from_bits(x);
        if (!isfinite(d)) continue;
        char buf[32];
        assert_int_equal(rg_jcs_number(d, buf, sizeof buf), 0);
        double back = strtod(buf, NULL);
        if (back != d && !(d == 0 && back == 0)) fail_msg("%.17g -> %s does not read back", d, buf);
        /* No shorter precision round-trips: k significant digits (leading
         * and trailing zeros are not), and k-1 digits must not read back. */
        char dig[40];
        int k = 0;
        for (const char *p = buf; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9' && (k || *p != '0')) dig[k++] = *p;
        while (k > 1 && dig[k - 1] == '0') k--;
        if (k > 1) {
            char shorter[40];
            snprintf(shorter, sizeof shorter, "%.*e", k - 2, d);
            if (strtod(shorter, NULL) == d) fail_msg("%s is not the shortest form of %.17g (%s)", buf, d, shorter);
        }
    }
}

/* The significant digits of a JCS number's text, trailing zeros dropped. */
static void digits_of(const char *text, char *dig, size_t n)
{
    size_t k = 0;
    for (const char *p = text; *p && *p != 'e' && k + 1 < n; p++)
        if (*p >= '0' && *p <= '9' && (k || *p != '0')) dig[k++] = *p;
    while (k > 1 && dig[k - 1] == '0') k--;
    dig[k] = 0;
}

/* The shortest digits that read back as d > 0, searched over every
 * precision 1..17 (each: the correctly rounded decimal, else the closer of
 * its two neighbours that reads back): the definition, slowly. */
static void reference_digits(double d, char *dig, size_t n)
{
    for (int p = 1; p <= 17; p++) {
        char buf[48];
        snprintf(buf, sizeof buf, "%.*e", p - 1, d);
        if (strtod(buf, NULL) == d) {
            digits_of(buf, dig, n);
            return;
        }
        char *e = strchr(buf, 'e');
        long long s = 0;
        for (char *c = buf; c < e; c++)
            if (*c >= '0' && *c <= '9') s = s * 10 + (*c - '0');
        int scale = atoi(e + 1) - (p - 1);
        char lo[48], hi[48];
        snprintf(lo, sizeof lo, "%llde%d", s - 1, scale);
        snprintf(hi, sizeof hi, "%llde%d", s + 1, scale);
        int okl = strtod(lo, NULL) == d && s - 1 > 0, okh = strtod(hi, NULL) == d;
        if (okl && okh) okl = fabsl(strtold(lo, NULL) - d) <= fabsl(strtold(hi, NULL) - d), okh = !okl;
        if (okl || okh) {
            snprintf(buf, sizeof buf, "%llde0", okl ? s - 1 : s + 1);
            digits_of(buf, dig, n);
            return;
        }
    }
    fail_msg("no precision up to 17 reads back %.17g", d);
}

/* Decimals of 1 to 17 digits at exponents over the whole range (subnormals
 * included): the canonical digits are the shortest that read back, the ones
 * a search over every precision finds (jcs.c tries 15 to 17 only for normal
 * numbers; this checks that the shorter ones come out of the 15-digit try). */
static void test_number_short_decimals(void **state)
{
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int ndig = 1 + (int)(x % 17), exp10 = (int)((x >> 8) % 640) - 330;
        char text[64];
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)((x >> 20) % 100000000000000000ULL), exp10);
        text[ndig] = 0;   /* keep ndig digits */
        snprintf(text + strlen(text), sizeof text - strlen(text), "e%d", exp10);
        double d = strtod(text, NULL);
        if (!(d > 0) || !isfinite(d)) continue;
        char buf[32], got[40], want[40];
        assert_int_equal(rg_jcs_number(d, buf, sizeof buf), 0);
        digits_of(buf, got, sizeof got);
        reference_digits(d, want, sizeof want);
        if (strcmp(got, want)) fail_msg("%s (%.17g): canonical %s, shortest digits %s", text, d, buf, want);
    }
}

/* RFC 8785 section 3.2.2's example. */
static void test_rfc_example(void **state)
{
    const char *in = "{\"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],"
                     " \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\","
                     " \"literals\": [null, true, false]}";
    const char *want = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
                       "\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
    cJSON *j = cJSON_Parse(in);
    assert_non_null(j);
    char err[256];
    char *s = rg_jcs_serialize(j, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
    cJSON_Delete(j);
}

/* RFC 8785 section 3.2.3: members sorted by UTF-16 code units, so the emoji
 * (surrogates D83D DE00) sorts before U+FB33 although its code point is larger. */
static void test_key_order(void **state)
{
    const char *in = "{\"\\u20ac\": \"Euro Sign\", \"\\r\": \"Carriage Return\", \"\\ufb33\": \"Hebrew Letter Dalet With "
                     "Dagesh\", \"1\": \"One\", \"\\ud83d\\ude00\": \"Emoji: Grinning Face\", \"\\u0080\": \"Control\", "
                     "\"\\u00f6\": \"Latin Small Letter O With Diaeresis\"}";
    const char *want = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\",\"\xc3\xb6\":\"Latin Small "
                       "Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\",\"\xf0\x9f\x98\x80\":\"Emoji: Grinning "
                       "Face\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet With Dagesh\"}";
    cJSON *j = cJSON_Parse(in);
    assert_non_null(j);
    char err[256];
    char *s = rg_jcs_serialize(j, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(s, want);
    free(s);
    cJSON_Delete(j);
}

static void test_errors(void **state)
{
    char err[256];
    cJSON *dup = cJSON_Parse("{\"a\":1,\"b\":2,\"a\":3}");
    assert_null(rg_jcs_serialize(dup, err, sizeof err));
    assert_non_null(strstr(err, "duplicate"));
    cJSON_Delete(dup);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "x", NAN);
    assert_null(rg_jcs_serialize(o, err, sizeof err));
    cJSON_Delete(o);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "bad", "\xc3\x28");   /* invalid UTF-8 */
    assert_null(rg_jcs_serialize(o, err, sizeof err));
    cJSON_Delete(o);
    assert_null(rg_jcs_serialize(NULL, err, sizeof err));
}

static void test_digests(void **state)
{
    char hex[65], d1[RG_DIGEST_LEN], d2[RG_DIGEST_LEN], d3[RG_DIGEST_LEN], err[256];
    /* FIPS 180-2 test vector. */
    assert_int_equal(rg_sha256_hex("abc", 3, hex), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* Same spec, other member order and layout -> same digest. */
    cJSON *a = cJSON_Parse("{\"warmup\": 10, \"iterations\": 50, \"nested\": {\"y\": [1, 2.50], \"x\": \"s\"}}");
    cJSON *b = cJSON_Parse("{\"nested\":{\"x\":\"s\",\"y\":[1,2.5]},\n  \"iterations\":50.0,\"warmup\":1e1}");
    cJSON *c = cJSON_Parse("{\"nested\":{\"x\":\"s\",\"y\":[2.5,1]},\"iterations\":50,\"warmup\":10}");
    assert_int_equal(rg_digest_json(a, d1, err, sizeof err), 0);
    assert_int_equal(rg_digest_json(b, d2, err, sizeof err), 0);
    assert_int_equal(rg_digest_json(c, d3, err, sizeof err), 0);
    assert_string_equal(d1, d2);
    assert_string_not_equal(d1, d3);   /* array order is meaningful */
    assert_true(rg_digest_valid(d1));
    assert_int_equal(strlen(d1), 71);
    /* The digest is SHA-256 of exactly the canonical text. */
    char *canon = rg_jcs_serialize(a, err, sizeof err);
    assert_string_equal(canon, "{\"iterations\":50,\"nested\":{\"x\":\"s\",\"y\":[1,2.5]},\"warmup\":10}");
    rg_sha256_hex(canon, strlen(canon), hex);
    assert_string_equal(d1 + 7, hex);
    free(canon);
    assert_false(rg_digest_valid("sha256:XYZ"));
    assert_false(rg_digest_valid("md5:0123"));
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    /* The build embedded an implementation digest. */
    assert_true(rg_digest_valid(rg_implementation_digest()));
}

/* rg_json_print keeps order and reads back to the same digest. */
static void test_print_roundtrip(void **state)
{
    char err[256], d1[RG_DIGEST_LEN], d2[RG_DIGEST_LEN];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "third", 1.0 / 3.0);
    cJSON_AddNumberToObject(o, "big", 123456789.12345679);
    cJSON_AddNumberToObject(o, "tiny", 4.9406564584124654e-324);
    cJSON_AddStringToObject(o, "s", "tab\there \"q\" \xe2\x82\xac");
    assert_int_equal(rg_digest_json(o, d1, err, sizeof err), 0);
    char *text = rg_json_print(o, 1, err, sizeof err);
    assert_non_null(text);
    assert_true(strstr(text, "\"third\"") < strstr(text, "\"big\""));
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    assert_int_equal(rg_digest_json(back, d2, err, sizeof err), 0);
    assert_string_equal(d1, d2);
    free(text);
    cJSON_Delete(back);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_vectors), cmocka_unit_test(test_number_roundtrip),
        cmocka_unit_test(test_number_short_decimals),
        cmocka_unit_test(test_rfc_example),    cmocka_unit_test(test_key_order),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_digests),
        cmocka_unit_test(test_print_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
