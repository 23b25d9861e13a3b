/*
 * model_check.h — checks shared by the unit tests and the fuzzer.
 *
 * nbt_check_model() takes a value that nb_view_open accepted (format version
 * 1 or 2) and uses it the way the server does: index, documents built with
 * NbDoc, scorers of every kind and smoothing, mutual information, merging
 * into a trainer and re-serializing, merging flat (nb_merge.c).  It checks
 * the invariants that must hold for ANY accepted value (no NaN, posteriors sum to 1, the round trip
 * is byte-identical, conflicting merges change nothing, ...) and, for
 * "well-conditioned" models, compares posteriors and mutual information
 * with a dense, independent long-double implementation of the formulas in
 * src/nb_scorer.c (bags, categorical, boolean and Gaussian features,
 * including the alpha -> 0 limit), so wrong results are caught, not only
 * crashes.
 */
#ifndef MODEL_CHECK_H
#define MODEL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_scorer.h"

/* Recompute the checksum of a serialized model in place (size >= 32), little-endian at 24. */
void		nbt_fix_checksum(unsigned char *buf, size_t size);

/* Item index of one value of a feature through nb_doc_add_tokens, or -1 if unknown. */
int64_t		nbt_index_item(NbIndex *ix, uint32_t feature, const char *str, uint32_t len);

/* Small deterministic PRNG (splitmix64). */
uint64_t	nbt_rand(uint64_t *state);

typedef struct NbtStats
{
	uint64_t	scored;			/* documents scored */
	uint64_t	ref_compared;	/* posteriors compared with the reference */
	uint64_t	mi_compared;	/* mutual information compared with the reference */
} NbtStats;

/* Flag of nbt_check_model. */
#define NBT_NO_REFERENCE 1		/* skip the reference comparison */

/*
 * Exercise a validated model.  Returns true when every check passed; else
 * false with a description in err.  seed picks the random documents.
 */
bool		nbt_check_model(const unsigned char *bytes, size_t size, const NbView *view,
							uint64_t seed, int flags, NbtStats *stats,
							char *err, size_t errlen);

/* True if sums over the model are exact in double precision (see model_check.c). */
bool		nbt_model_is_nice(const NbView *view);

/*
 * A document for the reference: per feature present or not; bags and
 * categorical features as value strings with counts (unknown ones too),
 * Gaussian and boolean features as a value.
 */
typedef struct NbtDoc
{
	const char *name;
	uint32_t	n_features;
	bool	   *present;		/* [F] */
	double	   *value;			/* [F] */
	uint32_t   *first;			/* [F + 1]: refs of feature j are [first[j], first[j+1]) */
	NbTokenRef *refs;
	uint32_t	n_refs;
} NbtDoc;

/*
 * Build doc into an NbDoc (nb_doc_begin first), its tokens added through
 * nb_scorer_add_tokens when sc is not NULL, else nb_doc_add_tokens.
 */
void		nbt_doc_fill(NbIndex *ix, const NbScorer *sc, NbDoc *doc, const NbtDoc *d);

/*
 * Reference log posterior (dense, long double): prob[c] in [0, 1]; returns
 * the index of the most probable class, or -1 if the formulas are undefined
 * for this model or the document is ill-conditioned (then prob is not filled).
 */
int64_t		nbt_ref_posterior(const NbView *view, const NbOptions *opts,
							  const NbtDoc *doc, long double *prob);

#endif
