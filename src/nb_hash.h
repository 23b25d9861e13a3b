/*
 * nb_hash.h — the 64-bit hash used for tokens, labels and the format checksum.
 */
#ifndef NB_HASH_H
#define NB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#define NB_P1 UINT64_C(0x9e3779b97f4a7c15)
#define NB_P2 UINT64_C(0xbf58476d1ce4e5b9)

static inline uint64_t
nb_read_le64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint64_t
nb_rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/*
 * A fast non-cryptographic 64-bit hash over bytes, the same on every
 * platform (words are read little-endian).  Inline because hashing tokens
 * is on the hot path of training and scoring.
 */
static inline uint64_t
nb_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t	h = seed ^ (len * NB_P1);
	unsigned char tail[8];

	while (len >= 8)
	{
		h ^= nb_rotl64(nb_read_le64(p) * NB_P2, 31) * NB_P1;
		h = nb_rotl64(h, 27) * 5 + 0x52dce729;
		p += 8;
		len -= 8;
	}
	if (len > 0)
	{
		memset(tail, 0, sizeof(tail));
		memcpy(tail, p, len);
		h ^= nb_rotl64(nb_read_le64(tail) * NB_P2, 31) * NB_P1;
	}
	return nb_hash_mix(h);
}

#endif
