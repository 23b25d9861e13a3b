/*
 * nb_item.c — the prefixed keys of the items of features other than the
 * bag "", see nb_item.h.
 */
#include "nb_item.h"

#include <string.h>

#include "nb_alloc.h"
#include "nb_format.h"
#include "nb_interrupt.h"

const NbTokenRef *
nb_item_keys(NbItemKeys *keys, uint32_t feature, const NbTokenRef *tokens, uint32_t n)
{
	size_t		bytes = 0;
	char	   *p;

	for (uint32_t i = 0; i < n; i++)
		bytes += NB_ITEM_PREFIX + tokens[i].len;
	if (n > keys->refs_cap)
	{
		nb_free_if(keys->refs);
		keys->refs_cap = n > 2 * keys->refs_cap ? n : 2 * keys->refs_cap;
		keys->refs = nb_alloc(sizeof(NbTokenRef) * keys->refs_cap);
	}
	if (bytes > keys->bytes_cap)
	{
		nb_free_if(keys->bytes);
		keys->bytes_cap = bytes > 2 * keys->bytes_cap ? bytes : 2 * keys->bytes_cap;
		keys->bytes = nb_alloc(keys->bytes_cap);
	}
	p = keys->bytes;
	for (uint32_t i = 0; i < n; i++)
	{
		nb_interrupt_at(i);
		nb_item_key_prefix(p, feature);
		memcpy(p + NB_ITEM_PREFIX, tokens[i].str, tokens[i].len);
		keys->refs[i].str = p;
		keys->refs[i].len = NB_ITEM_PREFIX + tokens[i].len;
		keys->refs[i].count = tokens[i].count;
		p += NB_ITEM_PREFIX + tokens[i].len;
	}
	return keys->refs;
}

void
nb_item_keys_free(NbItemKeys *keys)
{
	nb_free_if(keys->refs);
	nb_free_if(keys->bytes);
	memset(keys, 0, sizeof(*keys));
}
