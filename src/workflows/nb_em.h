/*
 * nb_em.h — what EM (Nigam, McCallum, Thrun & Mitchell 2000) needs of a
 * model beyond scoring: each row's log likelihood and the log density of
 * the prior, whose sum L (src/README.md, EM) no iteration lowers, and which
 * models it is defined for.  Pure C: no PostgreSQL.
 */
#ifndef NB_EM_H
#define NB_EM_H

#include <stdint.h>

#include "nb_doc.h"
#include "nb_scorer.h"

typedef enum NbEmStatus
{
	NB_EM_OK,
	NB_EM_KIND,					/* neither multinomial nor Bernoulli */
	NB_EM_NOT_SMOOTHED,			/* a pseudo-count 0: a log probability can be -inf */
	NB_EM_NOT_BAGS				/* a feature that is not a bag of tokens */
} NbEmStatus;

/* Whether EM is defined for the scorer's model and options, pc their pseudo-counts. */
NbEmStatus	nb_em_check(const NbScorer *scorer, const NbPseudoCounts *pc);

/*
 * The part of log p(x, c) that scoring leaves out because every class
 * shares it (nb_scorer_item_shared): a document's term to add to each
 * class's score.  Call before or after scoring the document.
 */
double		nb_em_shared(const NbScorer *scorer, const NbDoc *doc);

/*
 * After nb_scorer_score of a document with the given shared part: log p(x,
 * k) of label k (nb_index.h; -inf for an excluded class), the sum over its
 * components in a model of mixture components, and log p(x) = log sum_c
 * p(x, c).
 */
double		nb_em_log_joint(const NbScorer *scorer, uint32_t label, double shared);
double		nb_em_log_marginal(const NbScorer *scorer, double shared);

/*
 * The prior's terms of L over the model's vocabulary: a sum_{c,t} log
 * theta_ct (multinomial) or sum_{c,t} [b1 log t_ct + b0 log(1 - t_ct)]
 * (Bernoulli), plus class_alpha sum_c log pi_c (pass 0 when the class
 * prior is not fitted).
 */
double		nb_em_log_prior(const NbScorer *scorer, const NbPseudoCounts *pc, double class_alpha);

#endif
