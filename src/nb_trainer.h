/*
 * nb_trainer.h — the mutable model: accumulates counts, merges, serializes.
 *
 * This is the in-memory form behind the aggregates' transition state.
 * Statistics are sparse: one hash slot per non-zero (token, class) pair
 * holding the weighted token count and the weighted document frequency.
 */
#ifndef NB_TRAINER_H
#define NB_TRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_strmap.h"

typedef struct NbPairSlot
{
	uint64_t	key;			/* token id << 32 | class id; NB_EMPTY_KEY if free */
	double		count;			/* weighted occurrences */
	double		docs;			/* weighted documents containing the token */
	uint64_t	last_doc;		/* document sequence number that last touched it */
} NbPairSlot;

/* A token of a document: bytes, length and how many times it occurs. */
typedef struct NbTokenRef
{
	const char *str;
	uint32_t	len;
	double		count;
} NbTokenRef;

typedef struct NbTrainer
{
	NbStrMap	classes;
	double	   *class_docs;
	uint32_t	class_cap;
	NbStrMap	tokens;
	NbPairSlot *pairs;
	uint64_t	pair_mask;
	uint64_t	n_pairs;
	uint64_t	doc_seq;		/* current document; 0 means "merged in" */
	uint32_t	doc_class;
	double		doc_weight;
	bool		overflow;		/* some sum stopped being finite */
	/* scratch for one document's tokens */
	uint64_t   *scratch_hash;
	uint32_t   *scratch_id;
	uint32_t	scratch_cap;
} NbTrainer;

NbTrainer  *nb_trainer_create(void);
void		nb_trainer_destroy(NbTrainer *t);

/* Start a document of the given class and weight (> 0, finite). */
void		nb_trainer_begin_doc(NbTrainer *t, const char *label, uint32_t len,
								 double weight);

/*
 * Add a batch of tokens to the current document.  Batches are much faster
 * than single tokens: all hash lookups of the batch are prefetched first.
 * The caller guarantees what the format requires of tokens: no zero bytes
 * (SQL text has none) and counts >= 1.
 */
void		nb_trainer_add_tokens(NbTrainer *t, const NbTokenRef *tokens, uint32_t n);

/* Add every count of a validated serialized model. */
void		nb_trainer_merge_view(NbTrainer *t, const NbView *view);

static inline bool
nb_trainer_is_empty(const NbTrainer *t)
{
	return t->classes.count == 0;
}

/*
 * Whether the serialized form would be valid as far as magnitudes go: every
 * count and every sum of counts finite (nb_view_open checks the same).
 */
bool		nb_trainer_sums_finite(const NbTrainer *t);

/* Exact size of the serialized form, or 0 if it would exceed max_size. */
size_t		nb_trainer_flat_size(const NbTrainer *t, size_t max_size);

/* Write the canonical serialized form into buf of nb_trainer_flat_size bytes. */
void		nb_trainer_write(const NbTrainer *t, unsigned char *buf, size_t size);

#endif
