/*
 * nb_explain.h — why a document got its class, and what a model learned,
 * read off the prepared scorer (nb_scorer.h) so that every option its
 * preparation knows applies here too.
 *
 * Explaining: the log posterior odds of class c1 against class c2,
 * log p(c1|x) - log p(c2|x), is the sum of the differences between the two
 * classes' terms of every part of the score: the prior, each known item of
 * the document (its occurrences together), each categorical, boolean or
 * Gaussian value, a categorical value never seen in training, and, for a
 * bag scored per document (Bernoulli), everything absent from it, and, for
 * a bag scored by the DCM, its length.  Each part is one row; its
 * contribution is that difference in nats.
 *
 * An item of a Bernoulli bag is scored as the log-odds u = log t - log(1 -
 * t) of its presence, the bag's base holding log(1 - t) of every item of
 * the vocabulary.  Its row shows log t alone, as the formula reads, and the
 * bag's "absent" row the rest: the base less the log(1 - t) of the present
 * items, log t = -log(1 + e^-u).
 *
 * The DCM's bag splits into a row per known token and a "length" row, and
 * zero factors (alpha = 0) count as the posterior counts them: both as
 * src/README.md (Explanations and pruning) states.
 */
#ifndef NB_EXPLAIN_H
#define NB_EXPLAIN_H

#include <stdint.h>

#include "nb_doc.h"
#include "nb_scorer.h"

typedef enum NbExplainPart
{
	NB_EXPLAIN_PRIOR,			/* the class prior */
	NB_EXPLAIN_VALUE,			/* a boolean, Gaussian or unseen categorical value */
	NB_EXPLAIN_ITEM,			/* a known token or categorical value */
	NB_EXPLAIN_ABSENT,			/* a per-document bag's absent tokens */
	NB_EXPLAIN_LENGTH			/* a DCM bag's known occurrences */
} NbExplainPart;

typedef struct NbExplainRow
{
	NbExplainPart part;
	uint32_t	feature;		/* not for the prior */
	uint32_t	item;			/* NB_EXPLAIN_ITEM: the index's item */
	double		count;			/* ITEM: its occurrences; ABSENT: the bag's items
								 * absent; LENGTH: the bag's known occurrences */
	double		contribution;	/* nats, to log p(c1|x) - log p(c2|x) */
	double		zero_factors;	/* c1's less c2's (alpha = 0) */
} NbExplainRow;

/* Room for the rows of a document: the prior, a row per present feature and per item. */
uint64_t	nb_explain_max_rows(const NbDoc *doc);

/*
 * The rows of doc, scored by sc, for classes c1 against c2, largest
 * absolute contribution first (ties: prior, then feature and item order).
 * rows has nb_explain_max_rows room; returns how many were written.
 */
uint64_t	nb_explain(const NbScorer *sc, const NbDoc *doc, uint32_t c1, uint32_t c2,
					   NbExplainRow *rows);

/*
 * The smoothed log-probability per class (log_prob[C], -infinity for
 * probability 0) that the scorer gives item k of feature j (a bag or
 * categorical feature) occurring once: log theta_jc of the formulas; for a
 * bag scored per document, log t (the probability that a document has it).
 */
void		nb_item_log_prob(const NbScorer *sc, uint32_t feature, uint32_t item,
							 double *log_prob);

/* The same for a boolean feature having value x (0 or 1): log t or log(1 - t). */
void		nb_boolean_log_prob(const NbScorer *sc, uint32_t feature, double x,
								double *log_prob);

#endif
