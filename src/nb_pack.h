/*
 * nb_pack.h — the packed form of a serialized model, in which a partial
 * state travels from a Citus worker to the coordinator (pg_type.c).
 *
 * A model's counts are mostly small whole numbers stored as 8-byte doubles,
 * and its ids and lengths small numbers stored in 4 bytes: packed, each
 * takes a byte or two, and a training model about a quarter of its bytes.
 * The form is the magic "NBCP", the model's size as a varint (7 bits a
 * byte, least significant first, the high bit set on every byte but the
 * last), then segments that rebuild the model's bytes in order, each a
 * varint n * 4 + kind followed by its n elements:
 *
 *   0  n bytes as they are (the header, strings, settings);
 *   1  n 4-byte numbers, each a varint;
 *   2  n doubles, each the varint 2k for a whole number k (0 <= k <= 2^53;
 *      not -0), or the varint 1 followed by the double's 8 bytes.
 *
 * Packing is lossless for any bytes; unpacking knows nothing of the layout,
 * so the unpacked bytes are validated as any model's are.
 */
#ifndef NB_PACK_H
#define NB_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"

/* The most bytes the packed form of a model of size bytes takes. */
size_t		nb_pack_bound(size_t size);

/*
 * Pack the model view (validated, or as its writer describes it) of the
 * bytes data into out, of nb_pack_bound(view->size) bytes; the bytes written.
 */
size_t		nb_pack(const NbView *view, const unsigned char *data, unsigned char *out);

/*
 * Whether the n bytes at in begin as a packed model does; then the size of
 * the model (which may be anything: nb_unpack checks the rest).
 */
bool		nb_packed_size(const unsigned char *in, size_t n, uint64_t *size);

/*
 * Unpack the packed model of n bytes at in into out, of exactly the size
 * nb_packed_size gave; false if the bytes are not a packed model of that size.
 */
bool		nb_unpack(const unsigned char *in, size_t n, unsigned char *out, uint64_t size);

#endif
