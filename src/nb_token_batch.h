/*
 * nb_token_batch.h — tokens from a tokenizer (nb_tokenize.h) gathered into
 * batches of token references for the trainer and the scorer, which take
 * NbTokenRef arrays.  A batch keeps the tokenizer's work buffers for it
 * (nb_tokenize_kept), so that a stable token is referenced where it is;
 * the others, whose bytes live only until the next token, it copies into a
 * buffer of its own.  It hands the references to flush when it is full and
 * at the end, so memory stays bounded however long the text.
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

/*
 * Buffers from nb_alloc, kept for many texts and freed with the memory
 * context the batch was made in.
 */
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
