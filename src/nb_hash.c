/*
 * nb_hash.c — a fast non-cryptographic 64-bit hash over bytes.
 *
 * Reads 8 bytes at a time with memcpy (no alignment assumptions) and mixes
 * with multiply/rotate steps; the result is the same on every platform
 * because words are assembled in little-endian order.
 */
#include "nb_hash.h"

#include <string.h>

#define NB_P1 UINT64_C(0x9e3779b97f4a7c15)
#define NB_P2 UINT64_C(0xbf58476d1ce4e5b9)

static inline uint64_t
read_le64(const unsigned char *p)
{
	return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 |
		(uint64_t) p[3] << 24 | (uint64_t) p[4] << 32 | (uint64_t) p[5] << 40 |
		(uint64_t) p[6] << 48 | (uint64_t) p[7] << 56;
}

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t
nb_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t	h = seed ^ (len * NB_P1);
	unsigned char tail[8];

	while (len >= 8)
	{
		h ^= rotl64(read_le64(p) * NB_P2, 31) * NB_P1;
		h = rotl64(h, 27) * 5 + 0x52dce729;
		p += 8;
		len -= 8;
	}
	if (len > 0)
	{
		memset(tail, 0, sizeof(tail));
		memcpy(tail, p, len);
		h ^= rotl64(read_le64(tail) * NB_P2, 31) * NB_P1;
	}
	return nb_hash_mix(h);
}
