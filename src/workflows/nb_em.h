/*
 * nb_em.h — what semi-supervised training by EM (Nigam, McCallum, Thrun &
 * Mitchell 2000) needs of a model beyond the posteriors scoring gives:
 * each row's log likelihood and the log density of the Dirichlet prior,
 * whose sum EM increases from iteration to iteration.
 *
 * A multinomial model with pseudo-count a > 0 (nb_options_pseudo) is the
 * maximum a posteriori estimate under a Dirichlet prior of parameters a + 1
 * on each class's token probabilities theta_c (and class_alpha + 1 on the
 * class proportions pi when the prior is fitted): training with weighted
 * rows maximizes
 *
 *   sum over rows of w log p(x, y)  +  a sum_{c,t} log theta_ct
 *                                   +  class_alpha sum_c log pi_c,
 *
 * and a Bernoulli model with pseudo-counts b1, b0 > 0 the same with the
 * prior's terms b1 log t_ct + b0 log(1 - t_ct) (Beta(b1 + 1, b0 + 1)) for
 * the probability t_ct that a row of class c has token t,
 *
 * so the model the M-step trains with each unlabelled row counted in every
 * class c with weight lambda p(c | x) is the maximizer of EM's expected
 * objective, and the log likelihood
 *
 *   L = sum_labelled log p(x, y) + lambda sum_unlabelled log sum_c p(x, c)
 *       + a sum_{c,t} log theta_ct + class_alpha sum_c log pi_c
 *
 * never decreases.  log p(x, c) here is log pi_c + sum_t x_t log theta_ct
 * (Bernoulli: log pi_c + sum_t log t_ct or log(1 - t_ct), t over the
 * vocabulary, as the token is in the row or not): the multinomial
 * coefficient of the row and the normalizing constants of the Dirichlet
 * and Beta densities, the same for every model of the rows, are left out.  Tokens the model does not know are left out too (only those of the
 * first model, trained on the labelled rows alone, can be unknown).
 *
 * Pure C: no PostgreSQL.
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

/*
 * Whether EM is defined for the scorer's model and options (see above),
 * pc the options' pseudo-counts.
 */
NbEmStatus	nb_em_check(const NbScorer *scorer, const NbPseudoCounts *pc);

/*
 * The part of log p(x, c) that scoring leaves out because every class
 * shares it (nb_scorer_item_shared): a document's term to add to each
 * class's score.  Call before or after scoring the document.
 */
double		nb_em_shared(const NbScorer *scorer, const NbDoc *doc);

/*
 * After nb_scorer_score of a document with the given shared part: log p(x,
 * c) of class c (-inf for an excluded class), and log p(x) = log sum_c
 * p(x, c).
 */
double		nb_em_log_joint(const NbScorer *scorer, uint32_t cls, double shared);
double		nb_em_log_marginal(const NbScorer *scorer, double shared);

/*
 * The prior's terms of L over the model's vocabulary: a sum_{c,t} log
 * theta_ct (multinomial) or sum_{c,t} [b1 log t_ct + b0 log(1 - t_ct)]
 * (Bernoulli), plus class_alpha sum_c log pi_c (pass 0 when the class
 * prior is not fitted).
 */
double		nb_em_log_prior(const NbScorer *scorer, const NbPseudoCounts *pc, double class_alpha);

#endif
