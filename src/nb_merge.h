/*
 * nb_merge.h — merging serialized models without rebuilding them.
 *
 * Serialized models are canonical (nb_format.h): labels, feature names and
 * the items of each feature are sorted, and the entries of an item are
 * ordered by class.  The model of the union of the rows of several models
 * is therefore a linear merge of sorted runs; nothing needs hashing.  The
 * result is byte for byte what merging the same inputs in the same order
 * into an empty trainer (nb_trainer_merge_view) and writing it
 * (nb_trainer_write_view) gives: every sum is formed in input order, and
 * Gaussian statistics are combined by the one function both use,
 * nb_moments_add.
 */
#ifndef NB_MERGE_H
#define NB_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"

/* Why a merge was refused; nothing has changed then. */
typedef enum NbMergeStatus
{
	NB_MERGE_OK,
	NB_MERGE_TYPE_CONFLICT,		/* a feature of the view has another type here */
	NB_MERGE_VECTOR_CONFLICT,	/* float8[] rows of different lengths */
	NB_MERGE_INPUT_CONFLICT,	/* trained on different kinds of rows */
	NB_MERGE_TOKENIZER_CONFLICT,	/* tokenized differently */
	NB_MERGE_OPTIONS_CONFLICT,	/* with different stored prediction options */
	NB_MERGE_TOO_LARGE			/* the result would pass the trainer's size_limit */
} NbMergeStatus;

/* What conflicts, for the error message. */
typedef struct NbMergeConflict
{
	uint32_t	feature;		/* the conflicting feature of the new view */
	NbFeatureType earlier_type; /* its type in the earlier views */
	uint32_t	earlier_vector_len; /* the earlier views' float8[] length */
	uint32_t	earlier_inputs; /* the kinds of rows of the earlier views, and of the new one */
	uint32_t	inputs;
} NbMergeConflict;

/* The merge status of models that nb_compat_check found incompatible for this reason. */
NbMergeStatus nb_merge_compat_status(NbCompat compat);

/*
 * Whether view v can be merged after the n views before it (which do not
 * conflict among themselves), checked as nb_trainer_merge_view would: the
 * kinds of rows and settings first (nb_compat_check), then the vector
 * length, then the first feature of v whose type differs.
 */
NbMergeStatus nb_merge_check(const NbView *earlier, uint32_t n, const NbView *v,
							 NbMergeConflict *conflict);

typedef struct NbMerger NbMerger;

/*
 * Plan the merge of n (at least 1) validated views that nb_merge_check
 * accepted one after the other.  The views must stay valid until
 * nb_merger_destroy.
 */
NbMerger   *nb_merger_create(const NbView *inputs, uint32_t n);

/* Exact size of the merged model, or 0 if it would exceed max_size. */
size_t		nb_merger_size(const NbMerger *m, size_t max_size);

/*
 * Write the merged model into buf of nb_merger_size bytes and describe it
 * in *out (a view of buf, as nb_view_open would make it).  False, with buf
 * undefined, if a count or a sum of counts is not finite: the error the
 * trainer reports as an overflow.
 */
bool		nb_merger_write(NbMerger *m, unsigned char *buf, size_t size, NbView *out);

void		nb_merger_destroy(NbMerger *m);

#endif
