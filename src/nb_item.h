/*
 * nb_item.h — the items of a document, as trainer and scorer both see them:
 * a token reference (NbTokenRef) and the keys under which the items of a
 * feature other than the bag "" are kept in the item map (NB_ITEM_PREFIX).
 */
#ifndef NB_ITEM_H
#define NB_ITEM_H

#include <stddef.h>
#include <stdint.h>

/* A token of a document: bytes, length and how many times it occurs. */
typedef struct NbTokenRef
{
	const char *str;
	uint32_t	len;
	double		count;
} NbTokenRef;

/*
 * Items (bag tokens, categorical values) of all features share one string
 * map.  Those of the bag named "" (what text[] and tsvector rows feed) are
 * the bare token, the hot path; any other feature's are NB_ITEM_PREFIX bytes
 * (a zero byte, which no SQL text contains, and the feature id) followed by
 * the value.
 */
#define NB_ITEM_PREFIX 5

/* Scratch space for the prefixed keys of a batch of items. */
typedef struct NbItemKeys
{
	NbTokenRef *refs;
	uint32_t	refs_cap;
	char	   *bytes;
	size_t		bytes_cap;
} NbItemKeys;

/*
 * The keys of n items of a feature other than the bag "": NB_ITEM_PREFIX
 * bytes naming the feature, then the value; in keys's space, valid until
 * its next use.  nb_item_keys_free releases the space.
 */
const NbTokenRef *nb_item_keys(NbItemKeys *keys, uint32_t feature,
							   const NbTokenRef *tokens, uint32_t n);
void		nb_item_keys_free(NbItemKeys *keys);

#endif
