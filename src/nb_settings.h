/*
 * nb_settings.h — what a model keeps besides its counts: the tokenizer its
 * text was tokenized with, and the prediction options it applies unless a
 * call gives its own.  Both are part of the model's value (format version
 * 4, nb_format.h), so equal training gives equal bytes, and models with
 * different settings are not merged: their counts do not describe the same
 * features (another tokenizer) or would be scored differently.
 */
#ifndef NB_SETTINGS_H
#define NB_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nb_feature_type.h"
#include "nb_tokenize.h"

typedef struct NbSettings
{
	bool		has_tokenizer;
	NbTokenizer tokenizer;
	/*
	 * The options as canonical JSON text (the glue writes and reads it), or
	 * NULL; options_len bytes, no zero byte, not terminated.
	 */
	const char *options;
	uint32_t	options_len;

	/*
	 * The bag "" came, in part at least, from jsonb rows (their key ""): the
	 * model is then a model of jsonb rows too, whatever rows a part of it
	 * saw.  Not a setting to agree on: a merge has it if a part has.
	 */
	bool		jsonb_bag;

	/*
	 * The model's classes (its labels) are mixture components (EM-CM): the
	 * labels repeat, a class being the run of its components (nb_format.h).
	 */
	bool		components;

	/*
	 * Rows the trainer skipped for their NULL label (at most
	 * NB_NULL_LABELS_MAX).  Not a setting to agree on either: merging adds
	 * the counts, subtracting subtracts them.
	 */
	uint64_t	null_labels;
} NbSettings;

#define NB_NULL_LABELS_MAX ((uint64_t) INT64_MAX)

/*
 * The sum of two counts of rows skipped for a NULL label, b at most
 * NB_NULL_LABELS_MAX; past it, NB_NULL_LABELS_MAX + 1, which no model
 * holds (its writer reports the overflow).
 */
static inline uint64_t
nb_null_labels_add(uint64_t a, uint64_t b)
{
	return a > NB_NULL_LABELS_MAX - b ? NB_NULL_LABELS_MAX + 1 : a + b;
}

static inline bool
nb_settings_any(const NbSettings *s)
{
	return s->has_tokenizer || s->options_len > 0 || s->jsonb_bag || s->components ||
		s->null_labels > 0;
}

static inline bool
nb_settings_same_tokenizer(const NbSettings *a, const NbSettings *b)
{
	unsigned char x[NB_TOKENIZER_SIZE];
	unsigned char y[NB_TOKENIZER_SIZE];

	if (a->has_tokenizer != b->has_tokenizer)
		return false;
	if (!a->has_tokenizer)
		return true;
	nb_tokenizer_encode(&a->tokenizer, x);
	nb_tokenizer_encode(&b->tokenizer, y);
	return memcmp(x, y, NB_TOKENIZER_SIZE) == 0;
}

static inline bool
nb_settings_same_options(const NbSettings *a, const NbSettings *b)
{
	return a->options_len == b->options_len &&
		(a->options_len == 0 || memcmp(a->options, b->options, a->options_len) == 0);
}

/*
 * The kinds of row a model's features came from, as the features show
 * them: rows of one kind make features of that kind only, and models of
 * different kinds do not describe the same features.
 */
#define NB_INPUT_TOKENS 1		/* the bag "" (text[], tsvector, text; jsonb's key "") */
#define NB_INPUT_VECTOR 2		/* the positions "1".."n" of float8[] rows */
#define NB_INPUT_KEYS 4			/* named features: jsonb objects */

/*
 * The kind of rows a feature named name (len bytes) of this type came from,
 * in a model of vector_len float8[] positions (whose features are the
 * Gaussian ones named "1".."vector_len").  A model's kinds are those of its
 * features added up, with NB_INPUT_VECTOR if vector_len > 0 and
 * NB_INPUT_KEYS if s->jsonb_bag (a bag "" of jsonb rows is jsonb too): see
 * nb_input_kinds_base.
 */
uint32_t	nb_feature_input_kind(const char *name, uint32_t len, NbFeatureType type,
								  uint32_t vector_len);

/* The kinds a model has whatever its features: of its vector and its settings. */
static inline uint32_t
nb_input_kinds_base(uint32_t vector_len, const NbSettings *s)
{
	return (vector_len > 0 ? NB_INPUT_VECTOR : 0) | (s->jsonb_bag ? NB_INPUT_KEYS : 0);
}

/* Why two models cannot be merged, or one subtracted from the other. */
typedef enum NbCompat
{
	NB_COMPAT_OK,
	NB_COMPAT_INPUTS,			/* trained on different kinds of rows */
	NB_COMPAT_TOKENIZER,		/* with different tokenizers (or one without) */
	NB_COMPAT_OPTIONS			/* with different stored prediction options */
} NbCompat;

/*
 * Whether models of these kinds and settings describe the same features
 * and are scored the same way: they must share a kind of rows (a model of
 * jsonb rows whose bag "" is text[] tokens goes with a text[] model), and
 * a model without features (the prior of rows without any) goes with any.
 */
NbCompat	nb_compat_check(uint32_t kinds_a, const NbSettings *a,
							uint32_t kinds_b, const NbSettings *b);

/* The kinds of rows, as a phrase for messages ("jsonb", "float8[]", ...). */
const char *nb_input_kinds_prose(uint32_t kinds);

#endif
