/*
 * model_check.h — checks shared by the unit tests and the fuzzer.
 *
 * nbt_check_model() takes a value that nb_view_open accepted and uses it the
 * way the server does: index, scorers of every kind and smoothing, mutual
 * information, merging into a trainer and re-serializing.  It checks the
 * invariants that must hold for ANY accepted value (no NaN, posteriors sum
 * to 1, the round trip is byte-identical, ...) and, for "well-conditioned"
 * models, compares posteriors and mutual information with a dense,
 * independent long-double implementation of the formulas (including the
 * alpha -> 0 limit), so wrong results are caught, not only crashes.
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

/* Token index of one string through nb_index_lookup, or -1 if unknown. */
int64_t		nbt_index_token(NbIndex *ix, const char *str, uint32_t len);

/* Sort a document by token and merge duplicates; returns the distinct count. */
uint32_t	nbt_doc_normalize(NbDocToken *doc, uint32_t n);

/* Small deterministic PRNG (splitmix64). */
uint64_t	nbt_rand(uint64_t *state);

typedef struct NbtStats
{
	uint64_t	scored;			/* documents scored */
	uint64_t	ref_compared;	/* posteriors compared with the reference */
	uint64_t	mi_compared;	/* mutual information compared with the reference */
	uint64_t	known_tolerated;	/* results of known bugs let through (NBT_TOLERATE_KNOWN) */
} NbtStats;

/* Flags of nbt_check_model. */
/*
 * Let through the known bugs reported with these tests, so a long fuzz run
 * can look for others: infinite mutual information when theta_j is
 * subnormal; NaN posteriors when a total over the model overflows double
 * (prevented by nb_view_open since commit 638febd).
 */
#define NBT_TOLERATE_KNOWN 1
#define NBT_NO_REFERENCE 2		/* skip the reference comparison */

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
 * Reference posterior (dense, long double) of a normalized document:
 * prob[c] in [0, 1]; returns the index of the most probable class, or -1 if
 * the formulas are undefined for this model (then prob is not filled).
 */
int64_t		nbt_ref_posterior(const NbView *view, const NbOptions *opts,
							  const NbDocToken *doc, uint32_t n, long double *prob);

/* Reference mutual information of every token (dense, long double). */
void		nbt_ref_mutual_info(const NbView *view, long double *mi);

#endif
