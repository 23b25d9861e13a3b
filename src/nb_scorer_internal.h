/*
 * nb_scorer_internal.h — what the scorer's files share, for them only
 * (callers use nb_scorer.h): nb_scorer_build.c makes a scorer from a
 * model, nb_scorer.c scores a document with it, nb_scorer_set.c scores
 * with several option sets at once.
 */
#ifndef NB_SCORER_INTERNAL_H
#define NB_SCORER_INTERNAL_H

#include "nb_exact.h"
#include "nb_scorer.h"

/*
 * Whether two option sets differ in the class prior only (or in the
 * calibration, applied after the terms): their scorers then have the same
 * terms but the prior's.  Not DCM, whose repeats read the entries a copy
 * lacks.
 */
bool		nb_scorer_same_but_prior(const NbOptions *a, const NbOptions *b);

/*
 * A scorer for options o that differ from src's in the prior only: src's
 * terms, copied, and o's prior and calibration.  Without entries or rows:
 * scored through a set, in src's column.
 */
void		nb_scorer_copy_with_prior(NbScorer *dst, const NbScorer *src, const NbOptions *o);

/* How many tables per (feature, class) a scorer of the index needs. */
uint32_t	nb_scorer_tables_per_pair(const NbIndex *ix);

/* Start a score: the prior and the terms of the present features. */
void		nb_scorer_score_begin(NbScorer *sc, const NbDoc *doc);

/* End a score whose item terms are in: the posterior, as nb_scorer_score. */
int64_t		nb_scorer_score_end(NbScorer *sc, const NbDoc *doc, double *log_post);

#endif
