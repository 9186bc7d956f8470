/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sign.c -- Ed25519 signatures over the run digest (OpenSSL), see record.h.
 *
 * What a signature adds to a digest: a digest only proves that a manifest is
 * self-consistent (anyone can edit a figure and recompute every digest); a
 * valid signature by a key you trust proves that the holder of that key
 * vouched for exactly this run digest. It does not prove the figures were
 * measured honestly.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "record.h"
#include "rg_util.h"

#define RG_SIG_ALG "ed25519"

static int raw_public(EVP_PKEY *k, unsigned char pub[32])
{
    size_t n = 32;
    return EVP_PKEY_get_raw_public_key(k, pub, &n) == 1 && n == 32 ? 0 : -1;
}

static void key_id_of(const unsigned char pub[32], char out[RG_DIGEST_LEN])
{
    char hex[65];
    rg_sha256_hex(pub, 32, hex);
    snprintf(out, RG_DIGEST_LEN, "sha256:%s", hex);
}

static int b64(const unsigned char *in, int n, char *out, size_t cap)
{
    if ((size_t)(4 * ((n + 2) / 3) + 1) > cap) return -1;
    EVP_EncodeBlock((unsigned char *)out, in, n);
    return 0;
}

/* Decodes base64 of exactly want bytes. */
static int unb64(const char *in, unsigned char *out, int want)
{
    size_t len = strlen(in);
    if (len == 0 || len % 4 || len > 200) return -1;
    unsigned char buf[160];
    int n = EVP_DecodeBlock(buf, (const unsigned char *)in, (int)len);
    if (n < 0) return -1;
    int pad = (in[len - 1] == '=') + (len > 1 && in[len - 2] == '=');
    n -= pad;
    if (n != want) return -1;
    memcpy(out, buf, (size_t)want);
    return 0;
}

static EVP_PKEY *read_key(const char *path, int private_key, char *err, size_t errlen)
{
    size_t n;
    char *text = private_key ? rg_read_secret_file(path, 1 << 16, &n, err, errlen)
                             : rg_read_file_bounded(path, 1 << 16, &n, err, errlen);
    if (!text) return NULL;
    BIO *bio = BIO_new_mem_buf(text, (int)n);
    EVP_PKEY *k = bio ? (private_key ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)
                                     : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL))
                      : NULL;
    BIO_free(bio);
    free(text);
    if (!k || EVP_PKEY_get_id(k) != EVP_PKEY_ED25519) {
        snprintf(err, errlen, "%s: not an Ed25519 %s key (PEM)", path, private_key ? "private" : "public");
        EVP_PKEY_free(k);
        return NULL;
    }
    return k;
}

int rg_keygen(const char *path, char key_id[RG_DIGEST_LEN], char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf(err, errlen, "no key file given");
        return 2;
    }
    char pub_path[4200];
    snprintf(pub_path, sizeof pub_path, "%s.pub", path);
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    if (!k) {
        snprintf(err, errlen, "cannot make an Ed25519 key");
        return 2;
    }
    BIO *priv = BIO_new(BIO_s_mem()), *pub = BIO_new(BIO_s_mem());
    unsigned char raw[32];
    int rc = 2;
    if (!priv || !pub || !PEM_write_bio_PrivateKey(priv, k, NULL, NULL, 0, NULL, NULL) ||
        !PEM_write_bio_PUBKEY(pub, k) || raw_public(k, raw)) {
        snprintf(err, errlen, "cannot encode the key");
        goto out;
    }
    char *pd, *qd;
    long pn = BIO_get_mem_data(priv, &pd), qn = BIO_get_mem_data(pub, &qd);
    /* The private key: created here, never over an existing file, 0600. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        goto out;
    }
    int ok = write(fd, pd, (size_t)pn) == pn && fsync(fd) == 0;
    if (close(fd) != 0) ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write", path);
        unlink(path);
        goto out;
    }
    if (rg_write_file_atomic(pub_path, qd, (size_t)qn, err, errlen)) {
        unlink(path);
        goto out;
    }
    key_id_of(raw, key_id);
    rc = 0;
out:
    BIO_free(priv);
    BIO_free(pub);
    EVP_PKEY_free(k);
    return rc;
}

int rg_signing_key_check(const char *key_path, char *err, size_t errlen)
{
    EVP_PKEY *k = key_path ? read_key(key_path, 1, err, errlen) : NULL;
    if (!k && !key_path) snprintf(err, errlen, "no key file given");
    EVP_PKEY_free(k);
    return k ? 0 : 2;
}

int rg_manifest_sign(cJSON *doc, const char *key_path, char key_id[RG_DIGEST_LEN], char *err, size_t errlen)
{
    rg_manifest m;
    if (!doc || !key_path || rg_manifest_read(doc, &m, err, errlen)) {
        if (!doc || !key_path) snprintf(err, errlen, "sign: no manifest or no key");
        return 2;
    }
    char digest[RG_DIGEST_LEN];
    snprintf(digest, sizeof digest, "%s", m.obj[RG_ROLE_RUN].digest);
    rg_manifest_free(&m);
    EVP_PKEY *k = read_key(key_path, 1, err, errlen);
    if (!k) return 2;
    unsigned char sig[64], raw[32];
    size_t sn = sizeof sig;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) == 1 &&
             EVP_DigestSign(ctx, sig, &sn, (const unsigned char *)digest, strlen(digest)) == 1 && sn == 64 &&
             !raw_public(k, raw);
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    if (!ok) {
        snprintf(err, errlen, "%s: cannot sign with this key", key_path);
        return 2;
    }
    char sig64[100], pub64[64];
    b64(sig, 64, sig64, sizeof sig64);
    b64(raw, 32, pub64, sizeof pub64);
    key_id_of(raw, key_id);
    cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "signatures");
    if (!list) list = cJSON_AddArrayToObject(doc, "signatures");
    if (!cJSON_IsArray(list)) {
        snprintf(err, errlen, "sign: the manifest's signatures member is not a list");
        return 2;
    }
    for (cJSON *s = list->child; s; s = s->next) {
        const char *id = rg_json_str(s, "keyId");
        if (id && !strcmp(id, key_id)) {
            cJSON_DetachItemViaPointer(list, s);
            cJSON_Delete(s);
            break;
        }
    }
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "keyId", key_id);
    cJSON_AddStringToObject(s, "algorithm", RG_SIG_ALG);
    cJSON_AddStringToObject(s, "publicKey", pub64);
    cJSON_AddStringToObject(s, "value", sig64);
    cJSON_AddItemToArray(list, s);
    return 0;
}

/* Key ids of the trusted public keys: one PEM file, or *.pub / *.pem in a folder. */
static int load_trusted(const char *trusted, char (**ids)[RG_DIGEST_LEN], size_t *n, char *err, size_t errlen)
{
    *ids = NULL;
    *n = 0;
    struct stat st;
    if (stat(trusted, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read the trusted keys: %s", trusted, strerror(errno));
        return 2;
    }
    char **paths = NULL;
    size_t np = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(trusted);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l < 5 || (strcmp(e->d_name + l - 4, ".pub") && strcmp(e->d_name + l - 4, ".pem"))) continue;
            char **np2 = realloc(paths, (np + 1) * sizeof *paths);
            if (!np2) break;
            paths = np2;
            size_t pl = strlen(trusted) + l + 2;
            paths[np] = malloc(pl);
            if (!paths[np]) break;
            snprintf(paths[np++], pl, "%s/%s", trusted, e->d_name);
        }
        if (d) closedir(d);
    } else {
        paths = malloc(sizeof *paths);
        if (paths && (paths[0] = strdup(trusted))) np = 1;
    }
    int rc = 0;
    *ids = calloc(np ? np : 1, sizeof **ids);
    for (size_t i = 0; i < np; i++) {
        EVP_PKEY *k = rc || !*ids ? NULL : read_key(paths[i], 0, err, errlen);
        unsigned char raw[32];
        if (!rc && (!k || raw_public(k, raw))) rc = 2;
        if (!rc) key_id_of(raw, (*ids)[(*n)++]);
        EVP_PKEY_free(k);
        free(paths[i]);
    }
    free(paths);
    if (!rc && *n == 0) {
        snprintf(err, errlen, "%s: no public keys (*.pub, *.pem)", trusted);
        rc = 2;
    }
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

int rg_trusted_keys_check(const char *trusted, char *err, size_t errlen)
{
    if (!trusted || !*trusted) {
        snprintf(err, errlen, "--trusted-keys: empty path (give a public key file or a folder of them)");
        return 2;
    }
    char (*ids)[RG_DIGEST_LEN];
    size_t n;
    if (load_trusted(trusted, &ids, &n, err, errlen)) return 2;
    free(ids);
    return 0;
}

int rg_signatures_check(const rg_manifest *m, const char *trusted, char *msg, size_t msglen)
{
    char (*ids)[RG_DIGEST_LEN] = NULL;
    size_t n_ids = 0;
    if (trusted && load_trusted(trusted, &ids, &n_ids, msg, msglen)) return 2;
    const char *digest = m->obj[RG_ROLE_RUN].digest;
    int valid = 0, by_trusted = 0;
    for (size_t i = 0; i < m->n_signatures; i++) {
        const rg_mf_signature *s = &m->signatures[i];
        unsigned char raw[32], sig[64];
        char kid[RG_DIGEST_LEN];
        if (strcmp(s->algorithm, RG_SIG_ALG) || unb64(s->public_key, raw, 32) || unb64(s->value, sig, 64)) {
            snprintf(msg, msglen, "signature %zu: not an ed25519 signature with a publicKey and value (base64)", i + 1);
            free(ids);
            return 1;
        }
        key_id_of(raw, kid);
        EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        int ok = k && ctx && !strcmp(kid, s->key_id) && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1 &&
                 EVP_DigestVerify(ctx, sig, 64, (const unsigned char *)digest, strlen(digest)) == 1;
        EVP_MD_CTX_free(ctx);
        EVP_PKEY_free(k);
        if (!ok) {
            snprintf(msg, msglen, "signature %zu (key %.23s...) does not verify over the run digest %s", i + 1,
                     s->key_id, digest);
            free(ids);
            return 1;
        }
        valid++;
        for (size_t j = 0; j < n_ids; j++)
            if (!strcmp(ids[j], kid)) by_trusted++;
    }
    free(ids);
    if (trusted && !by_trusted) {
        snprintf(msg, msglen, "%d valid signature%s, none by a trusted key (%s)", valid, valid == 1 ? "" : "s", trusted);
        return 1;
    }
    if (!m->n_signatures) snprintf(msg, msglen, "none");
    else if (trusted) snprintf(msg, msglen, "%d valid, %d by a trusted key", valid, by_trusted);
    else snprintf(msg, msglen, "%d valid (no --trusted-keys: who signed is not checked)", valid);
    return 0;
}
