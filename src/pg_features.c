/*
 * pg_features.c — text[] and tsvector rows as token references.
 */
#include "pg_features.h"

#include "utils/arrayaccess.h"

uint32
nb_array_tokens(ArrayType *tokens, NbTokenRef *refs)
{
	uint32		n = nb_array_size(tokens);
	uint32		used = 0;
	array_iter	it;

	array_iter_setup(&it, (AnyArrayType *) tokens);
	for (uint32 i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		elem = array_iter_next(&it, &isnull, i, -1, false, TYPALIGN_INT);
		text	   *tok;

		if (isnull)
			continue;
		tok = (text *) DatumGetPointer(elem);
		refs[used].str = VARDATA_ANY(tok);
		refs[used].len = VARSIZE_ANY_EXHDR(tok);
		refs[used].count = 1;
		used++;
	}
	return used;
}

uint32
nb_tsvector_tokens(TSVector tsv, NbTokenRef *refs)
{
	WordEntry  *entries = ARRPTR(tsv);
	char	   *lexemes = STRPTR(tsv);

	for (int i = 0; i < tsv->size; i++)
	{
		int			npos = entries[i].haspos ? POSDATALEN(tsv, &entries[i]) : 0;

		refs[i].str = lexemes + entries[i].pos;
		refs[i].len = entries[i].len;
		refs[i].count = npos > 0 ? npos : 1;
	}
	return tsv->size;
}
