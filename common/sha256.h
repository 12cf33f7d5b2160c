/* sha256.h: SHA-256 (FIPS 180-4), for content hashes and cache keys, and
 * its HMAC, for what a server signs. */
#ifndef RMS_SHA256_H
#define RMS_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t len;          /* bytes hashed so far */
    unsigned char buf[64];
    size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, unsigned char out[32]);
/* One call: hex digest (65 bytes with the NUL) of data. */
void sha256_hex(const void *data, size_t n, char out[65]);
/* HMAC-SHA-256 (RFC 2104) of data under key: a value only the key's holder
 * can make (a state a client hands back unchanged). */
void sha256_hmac(const void *key, size_t klen, const void *data, size_t n, unsigned char out[32]);

#endif
