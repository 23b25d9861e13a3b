/*
 * pg_tokenize.h — the tokenizer (nb_tokenize.h) in the server: its options
 * as jsonb, and the tokens of a text value in the database's encoding.
 */
#ifndef PG_TOKENIZE_H
#define PG_TOKENIZE_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "nb_tokenize.h"

/*
 * Parse the options jsonb (NULL = scikit-learn's defaults): analyzer,
 * ngram_range, lowercase, strip_accents, token_pattern, stop_words.  Every
 * unrecognized key and invalid value is an ERROR with SQLSTATE 22023 that
 * names the key.
 */
void		nb_tokenizer_from_jsonb(Jsonb *options, NbTokenizer *t);

/* The options as jsonb, every key, in the canonical form nb_tokenizer_from_jsonb reads. */
Jsonb	   *nb_tokenizer_to_jsonb(const NbTokenizer *t);

/*
 * Hand the tokens of body to sink, each in the database encoding: a UTF-8
 * database's text is tokenized as it is; SQL_ASCII's must be valid UTF-8
 * (else ERROR 22021) and is then read as UTF-8; any other encoding is
 * converted to UTF-8 and each token back (a token the encoding cannot
 * hold, as NFKD's U+2044 of "½" in LATIN1, is ERROR 22P05).  A text longer
 * than nb_tokenize_max_len in UTF-8 is ERROR 54000.  A sink that returns
 * false ends the walk early.  With keep (NULL: none), the work buffers are
 * kept there (nb_tokenize_kept), and a UTF-8 database's tokens can be
 * stable.
 */
void		nb_text_tokenize(const NbTokenizer *t, text *body, NbTokenSink sink, void *arg,
							 NbTokenizeBuffers *keep);

#endif
