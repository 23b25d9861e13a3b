/*
 * nb_token_batch.h — a tokenizer's tokens gathered into batches of token
 * references for the trainer and the scorer.  A stable token (in the text,
 * or in the tokenizer's kept buffers, nb_tokenize_kept) is referenced where
 * it is; the others, valid only until the next token, are copied.  Full
 * batches go to flush, so memory stays bounded however long the text.
 */
#ifndef NB_TOKEN_BATCH_H
#define NB_TOKEN_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_item.h"
#include "nb_tokenize.h"

/* References and bytes of one batch. */
#define NB_TOKEN_BATCH_REFS 65536
#define NB_TOKEN_BATCH_BYTES ((size_t) 1 << 20)

typedef void (*NbTokenFlush) (void *arg, const NbTokenRef *tokens, uint32_t n);

typedef struct NbTokenBatch
{
	NbTokenRef *refs;
	uint32_t	n;
	char	   *bytes;
	size_t		used;
	NbTokenFlush flush;
	void	   *arg;
	NbTokenizeBuffers text_buffers;	/* for nb_tokenize_kept */
} NbTokenBatch;

/* Buffers kept for many texts, freed with the memory context they came from. */
void		nb_token_batch_init(NbTokenBatch *b);

/* Start a text whose tokens go to flush(arg, ...); the last text's tokens are no longer used. */
void		nb_token_batch_begin(NbTokenBatch *b, NbTokenFlush flush, void *arg);

/*
 * An NbTokenSink (arg: the batch): every token counts once.  A stable
 * token must stay valid until nb_token_batch_end: the text's, or in
 * text_buffers when the tokenizer was given them.
 */
bool		nb_token_batch_add(void *batch, const char *token, uint32_t len, bool stable);

/* Hand over what is left; flush is called at least once per text, with n 0 for a text without tokens. */
void		nb_token_batch_end(NbTokenBatch *b);

#endif
