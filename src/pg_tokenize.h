/* temporary until the tokenizer branch lands */
#ifndef PG_TOKENIZE_H
#define PG_TOKENIZE_H
#include "postgres.h"
#include "utils/jsonb.h"
#include "nb_tokenize.h"
void nb_tokenizer_from_jsonb(Jsonb *options, NbTokenizer *t);
Jsonb *nb_tokenizer_to_jsonb(const NbTokenizer *t);
void nb_text_tokenize(const NbTokenizer *t, text *body, NbTokenSink sink, void *arg);
#endif
