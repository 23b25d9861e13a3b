/*
 * nb_format.h — the serialized nb_model: layout, validation, read access.
 *
 * The same bytes are the on-disk varlena payload, the binary send/recv form
 * and (base64-encoded) the text form.  Every number is little-endian and read
 * with memcpy, so the format is identical on every platform and a value may
 * sit at any alignment.
 *
 * Layout of format version 1 (offsets in bytes):
 *   0   magic "NBCM"
 *   4   uint16 format version (1)
 *   6   uint16 flags (0; reserved)
 *   8   uint32 C, number of classes (>= 1)
 *   12  uint32 V, number of tokens (vocabulary)
 *   16  uint64 E, number of non-zero (token, class) entries
 *   24  uint64 checksum: nb_format_checksum, a hash of every other byte
 *   32  float64 docs[C]            weighted documents per class (> 0)
 *       uint32  label_len[C]
 *       uint32  token_len[V]
 *       uint32  token_entries[V]   entries of each token (1..C)
 *       uint32  entry_class[E]     class of each entry, increasing per token
 *       float64 entry_count[E]     weighted token count N_jc (> 0)
 *       float64 entry_docs[E]      weighted document frequency d_jc (> 0)
 *       labels, concatenated, strictly increasing in byte order
 *       tokens, concatenated, strictly increasing in byte order
 * The canonical order makes equal models byte-identical; nothing refers to
 * an OID or anything else local to one database.
 */
#ifndef NB_FORMAT_H
#define NB_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb_hash.h"

#define NB_FORMAT_VERSION 1
#define NB_HEADER_SIZE 32
#define NB_CHECKSUM_SEED UINT64_C(0x6e62632d6d6f646c)

/* A validated serialized model; pointers point into the caller's bytes. */
typedef struct NbView
{
	size_t		size;
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	uint64_t	checksum;
	const unsigned char *class_docs;
	const unsigned char *label_len;
	const unsigned char *token_len;
	const unsigned char *token_entries;
	const unsigned char *entry_class;
	const unsigned char *entry_count;
	const unsigned char *entry_docs;
	const char *labels;
	const char *tokens;
} NbView;

/* Why a byte string is not a valid model. */
typedef struct NbFormatError
{
	char		message[160];
} NbFormatError;

/*
 * Validate bytes as a model and fill *view.  Checks magic, version, every
 * count against the actual length (no arithmetic can overflow), the
 * checksum, ordering and uniqueness of labels and tokens, entry classes,
 * and that every number is finite and positive.  Strings must not contain
 * NUL bytes; their character encoding is the caller's business.
 */
bool		nb_view_open(NbView *view, const void *data, size_t size,
						 NbFormatError *error);

/*
 * The checksum of a serialized model of size >= NB_HEADER_SIZE: the hash of
 * the bytes after the header, seeded with the hash of the header's first 24
 * bytes, so it covers everything but itself.
 */
uint64_t	nb_format_checksum(const unsigned char *data, size_t size);

/* Cheap header peek for cache keys: size and checksum without validation. */
bool		nb_peek_checksum(const void *data, size_t size, uint64_t *checksum);

static inline uint32_t
nb_read_u32(const unsigned char *base, uint64_t i)
{
	uint32_t	v;

	memcpy(&v, base + i * 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline double
nb_read_f64(const unsigned char *base, uint64_t i)
{
	uint64_t	u;
	double		v;

	memcpy(&u, base + i * 8, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	u = __builtin_bswap64(u);
#endif
	memcpy(&v, &u, 8);
	return v;
}

static inline void
nb_write_u32(unsigned char *base, uint64_t i, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(base + i * 4, &v, 4);
}

static inline void
nb_write_f64(unsigned char *base, uint64_t i, double v)
{
	uint64_t	u;

	memcpy(&u, &v, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	u = __builtin_bswap64(u);
#endif
	memcpy(base + i * 8, &u, 8);
}

/* Byte-order comparison of two strings: memcmp, then shorter first. */
static inline int
nb_strcmp(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

#endif
