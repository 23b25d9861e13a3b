/*
 * nb_hash.h — the 64-bit hash used for tokens, labels and the format checksum.
 */
#ifndef NB_HASH_H
#define NB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb_port.h"

/* Finalizer that spreads a 64-bit integer key over all bits. */
static inline uint64_t
nb_hash_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/*
 * How many elements ahead batched hash-table work prefetches: far enough
 * for a miss to complete, near enough not to exhaust the outstanding-miss
 * buffers of the CPU (prefetching a whole batch at once stalls on them).
 */
#define NB_PREFETCH_DISTANCE 12

#define NB_P1 UINT64_C(0x9e3779b97f4a7c15)
#define NB_P2 UINT64_C(0xbf58476d1ce4e5b9)

static inline uint64_t
nb_read_le64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return nb_le64(v);
}

static inline uint64_t
nb_rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* nb_hash_bytes over n whole 8-byte words at p, continuing from state h. */
NB_HOT_INLINE uint64_t
nb_hash_words(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++, p += 8)
	{
		h ^= nb_rotl64(nb_read_le64(p) * NB_P2, 31) * NB_P1;
		h = nb_rotl64(h, 27) * 5 + 0x52dce729;
	}
	return h;
}

/* nb_hash_bytes's result from state h and the last len bytes at p (len < 8). */
static inline uint64_t
nb_hash_tail(uint64_t h, const unsigned char *p, size_t len)
{
	unsigned char tail[8];

	if (len > 0)
	{
		memset(tail, 0, sizeof(tail));
		memcpy(tail, p, len);
		h ^= nb_rotl64(nb_read_le64(tail) * NB_P2, 31) * NB_P1;
	}
	return nb_hash_mix(h);
}

/*
 * A fast non-cryptographic 64-bit hash over bytes, the same on every
 * platform (words are read little-endian).  Inline because hashing tokens
 * is on the hot path of training and scoring.  Split into nb_hash_words and
 * nb_hash_tail so that long inputs can be hashed in pieces
 * (nb_hash_bytes_long in nb_interrupt.h).
 */
NB_HOT_INLINE uint64_t
nb_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t	h = nb_hash_words(seed ^ (len * NB_P1), p, len / 8);

	return nb_hash_tail(h, p + len / 8 * 8, len % 8);
}

static inline uint32_t
nb_read_le32(const unsigned char *p)
{
	uint32_t	v;

	memcpy(&v, p, 4);
	return nb_le32(v);
}

static inline void
nb_write_le32(unsigned char *p, uint32_t v)
{
	v = nb_le32(v);
	memcpy(p, &v, 4);
}

static inline void
nb_write_le64(unsigned char *p, uint64_t v)
{
	v = nb_le64(v);
	memcpy(p, &v, 8);
}

/*
 * The last up-to-8 bytes of a string as one word, without reading outside
 * it and without a byte copy (a copy through memory stalls the load that
 * follows it): overlapping 4- or 8-byte loads, or three single bytes.
 */
static inline uint64_t
nb_tail_word(const unsigned char *p, size_t len, size_t total)
{
	if (total >= 8)
		return nb_read_le64(p + len - 8);
	if (len >= 4)
		return (uint64_t) nb_read_le32(p) << 32 | nb_read_le32(p + len - 4);
	if (len > 0)
		return (uint64_t) p[0] << 16 | (uint64_t) p[len >> 1] << 8 | p[len - 1];
	return 0;
}

/*
 * The hash of a token or label for the in-memory hash tables.  Never stored,
 * so unlike nb_hash_bytes it may change; it is tuned for short strings.
 */
NB_HOT_INLINE uint64_t
nb_hash_token(const char *str, size_t len)
{
	const unsigned char *p = (const unsigned char *) str;
	uint64_t	h = UINT64_C(0x6e62632d746f6b31) ^ (len * NB_P1);
	size_t		rest = len;

	while (rest > 8)
	{
		h = (h ^ nb_read_le64(p)) * NB_P2;
		h = nb_rotl64(h, 29);
		p += 8;
		rest -= 8;
	}
	h = (h ^ nb_tail_word(p, rest, len)) * NB_P1;
	return nb_hash_mix(h);
}

/* memcmp(a, b, len) == 0, inline for the short strings tokens usually are. */
static inline int
nb_bytes_equal(const char *a, const char *b, size_t len)
{
	const unsigned char *x = (const unsigned char *) a;
	const unsigned char *y = (const unsigned char *) b;

	if (len > 16)
		return memcmp(a, b, len) == 0;
	if (len > 8)
		return nb_read_le64(x) == nb_read_le64(y) &&
			nb_read_le64(x + len - 8) == nb_read_le64(y + len - 8);
	return nb_tail_word(x, len, len) == nb_tail_word(y, len, len);
}

#endif
