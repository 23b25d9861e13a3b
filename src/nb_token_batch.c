/*
 * nb_token_batch.c — batches of token references, see nb_token_batch.h.
 */
#include "nb_token_batch.h"

#include <string.h>

#include "nb_alloc.h"

void
nb_token_batch_init(NbTokenBatch *b)
{
	memset(b, 0, sizeof(*b));
	b->refs = nb_alloc(sizeof(NbTokenRef) * NB_TOKEN_BATCH_REFS);
	b->bytes = nb_alloc(NB_TOKEN_BATCH_BYTES);
	nb_tokenize_buffers_init(&b->text_buffers);
}

void
nb_token_batch_begin(NbTokenBatch *b, NbTokenFlush flush, void *arg)
{
	b->n = 0;
	b->used = 0;
	b->flush = flush;
	b->arg = arg;
	nb_tokenize_buffers_shrink(&b->text_buffers);
}

static void
flush_batch(NbTokenBatch *b)
{
	b->flush(b->arg, b->refs, b->n);
	b->n = 0;
	b->used = 0;
}

bool
nb_token_batch_add(void *batch, const char *token, uint32_t len, bool stable)
{
	NbTokenBatch *b = batch;

	if (b->n == NB_TOKEN_BATCH_REFS || (!stable && len > NB_TOKEN_BATCH_BYTES - b->used))
		flush_batch(b);
	if (!stable)
	{
		if (len > NB_TOKEN_BATCH_BYTES)
		{
			/* a token longer than the buffer goes alone, while its bytes are valid */
			NbTokenRef	ref = {token, len, 1.0};

			b->flush(b->arg, &ref, 1);
			return true;
		}
		memcpy(b->bytes + b->used, token, len);
		token = b->bytes + b->used;
		b->used += len;
	}
	b->refs[b->n].str = token;
	b->refs[b->n].len = len;
	b->refs[b->n].count = 1.0;
	b->n++;
	return true;
}

void
nb_token_batch_end(NbTokenBatch *b)
{
	flush_batch(b);
}
