/*
 * nb_hash.h — the 64-bit hash used for tokens, labels and the format checksum.
 */
#ifndef NB_HASH_H
#define NB_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t	nb_hash_bytes(const void *data, size_t len, uint64_t seed);

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

#endif
