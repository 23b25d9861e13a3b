/*
 * pg_em.h — one EM iteration over rows (pg_em.c): each row scored with the
 * current model and added to the next one in the same pass.  nb_train_em's
 * driver (pg_em_run.c) feeds rows here.
 */
#ifndef PG_EM_H
#define PG_EM_H

#include "pg_model.h"

#include "utils/jsonb.h"

#include "pg_prepared.h"

typedef struct EmState EmState;

/*
 * An iteration scoring with pm's scorer for options (the call's options,
 * NULL: none), in ctx: checks that EM is defined for them and that lambda
 * is in [0, 1] (ERROR 22023 otherwise), and starts the next model, which
 * keeps tokenizer (NULL: the defaults) if with_tokenizer.
 */
EmState    *nb_em_begin(MemoryContext ctx, NbPrepared *pm, NbScorer *scorer, Jsonb *options,
						double lambda, bool with_tokenizer, Jsonb *tokenizer);

/* Whether a row with these NULLs adds nothing (no features; unlabelled with lambda 0). */
bool		nb_em_skips_row(const EmState *st, bool label_is_null, bool features_are_null);

/*
 * The tokens of a row's features, a text[] (checked as training checks it)
 * or a tsvector, into *refs, which reserve(arg, n) makes room for; returns
 * how many.  The references point into the detoasted value.
 */
uint32		nb_em_row_tokens(Datum features, bool tsvector_features,
							 NbTokenRef *(*reserve) (void *arg, uint32 n), void *arg,
							 NbTokenRef **refs);

/*
 * Score a row's tokens with the current model and add them to the next: a
 * labelled row (label not NULL) to its class, an unlabelled one to every
 * class by its posterior.
 */
void		nb_em_add_row(EmState *st, NbPrepared *pm, NbScorer *scorer, const text *label,
						  const NbTokenRef *refs, uint32 n);

/* The next model, and the current model's log likelihood over the rows so far (nb_em.h). */
NbExpandedModel *nb_em_model(const EmState *st);
double		nb_em_log_likelihood(const EmState *st);

#endif
