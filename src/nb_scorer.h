/*
 * nb_scorer.h — prediction: a model prepared once, scored per document.
 *
 * NbIndex holds a validated model in a form fit for lookups (a token hash
 * and per-token lists of the classes it occurs in).  NbScorer holds, for one
 * set of options, every logarithm that does not depend on the document, so
 * scoring a document costs one hash probe per token plus one addition per
 * (token, class) entry of its tokens, plus O(classes).
 *
 * Zero probabilities (alpha = 0) are tracked exactly instead of as -inf:
 * each score is a pair (f, z) meaning  e^f * alpha^z  as alpha -> 0+, where z
 * counts zero factors.  The posterior is the limit of the smoothed posterior:
 * the classes with the smallest z share the probability in proportion to
 * e^f.  With alpha > 0 every z is 0 and this is the ordinary posterior.
 */
#ifndef NB_SCORER_H
#define NB_SCORER_H

#include <stdbool.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_strmap.h"
#include "nb_trainer.h"

typedef enum NbKind
{
	NB_MULTINOMIAL,
	NB_BERNOULLI,
	NB_COMPLEMENT
} NbKind;

typedef enum NbPriorMode
{
	NB_PRIOR_FIT,				/* documents per class / all documents */
	NB_PRIOR_UNIFORM,
	NB_PRIOR_GIVEN				/* NbOptions.class_prior */
} NbPriorMode;

typedef struct NbOptions
{
	NbKind		kind;
	double		alpha;
	NbPriorMode prior_mode;
	const double *class_prior;	/* per class in model order, >= 0, sum > 0 */
} NbOptions;

typedef struct NbIndex
{
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	NbStrMap	labels;			/* label id = class index */
	NbStrMap	tokens;			/* token id = token index */
	uint64_t   *token_start;	/* entries of token k: [token_start[k], token_start[k+1]) */
	uint32_t   *entry_class;
	double	   *entry_count;
	double	   *entry_docs;
	double	   *class_docs;
	double	   *class_tokens;
	double	   *token_total;	/* F_j: count summed over classes */
	double		total_docs;
	double		total_tokens;
	/* lookup scratch: per token, lookup_seq << 32 | position in the document */
	uint64_t   *lookup_mark;
	uint32_t	lookup_seq;
} NbIndex;

/* One occurrence-count of a known token in a document. */
typedef struct NbDocToken
{
	uint32_t	token;
	double		count;
} NbDocToken;

typedef struct NbScorer
{
	const NbIndex *index;
	NbKind		kind;
	bool	   *excluded;		/* class prior is exactly 0 */
	/* per class: constant part, per token occurrence, per distinct token */
	double	   *base_f, *base_z;
	double	   *occ_f, *occ_z;
	double	   *dist_f, *dist_z;
	/*
	 * Per entry: the difference between the token's term for this class and
	 * its term for a class it never occurred in.  Terms that are the same for
	 * every class are left out: they cancel in the posterior.
	 */
	double	   *entry_f, *entry_z;
	bool		any_entry_z;	/* some entry_z is not 0 (only possible with alpha = 0) */
	/* scratch for one document: score, its rounding compensation, zero factors */
	double	   *f, *fc, *z;
} NbScorer;

void		nb_index_build(NbIndex *index, const NbView *view);
void		nb_index_free(NbIndex *index);

/*
 * Look up a document's tokens: fills doc with its distinct known tokens
 * (index and summed count, in order of first occurrence) and returns how
 * many; unknown tokens are skipped.  Lookups are prefetched as a batch.
 * scratch has room for n values.
 */
uint32_t	nb_index_lookup(NbIndex *index, const NbTokenRef *tokens, uint32_t n,
							int64_t *scratch, NbDocToken *doc);

/* Class index of a label, or -1. */
int64_t		nb_index_class(const NbIndex *index, const char *str, uint32_t len);

void		nb_scorer_build(NbScorer *scorer, const NbIndex *index, const NbOptions *opts);
void		nb_scorer_free(NbScorer *scorer);


/*
 * Score a normalized document.  Fills log_post[C] with natural-log posteriors
 * (-INFINITY for probability 0) and returns the index of the most probable
 * class (exact ties: the lowest index, i.e. the first label in byte order).
 * Returns -1 only if every class is excluded, which options validation
 * prevents.
 */
int64_t		nb_scorer_score(NbScorer *scorer, const NbDocToken *doc, uint32_t n,
							double *log_post);

#endif
