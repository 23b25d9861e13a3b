/*
 * raw_model.h — an unvalidated, editable form of a serialized model.
 *
 * Used to build values field by field from the layout documented in
 * src/nb_format.h (independently of nb_trainer_write_view), to corrupt their
 * structure on purpose in the unit tests, and by the fuzzer's custom
 * mutator to make structural changes.  raw_write always produces header
 * counts that match the arrays and a correct checksum; nothing else about
 * the content is checked or fixed (labels may be unsorted, classes out of
 * range, counts NaN, feature items not adding up, ...).
 *
 * Format version 1 (version == 1) has no feature arrays: nf must be 0.
 * Version 2 has nf features; each has per-class arrays of nc numbers, kept
 * in step by raw_add_class / raw_dup_class / raw_del_class.  Tokens are the
 * items of all features in order: feature j owns f[j].items of them.
 * Version 3 (any version but 1 and 2) adds per feature and class a document
 * length histogram (raw_add_length), written in feature and class order.
 */
#ifndef RAW_MODEL_H
#define RAW_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct RawEntry
{
	uint32_t	cls;
	double		count;
	double		docs;
} RawEntry;

typedef struct RawString
{
	unsigned char *s;
	uint32_t	len;
} RawString;

typedef struct RawClass
{
	RawString	label;
	double		docs;
} RawClass;

typedef struct RawToken
{
	RawString	str;
	uint32_t	n;
	RawEntry   *e;
} RawToken;

/* The document length histogram of a feature in a class (version 3). */
typedef struct RawLengths
{
	uint32_t	n;
	double	   *value;
	double	   *weight;
} RawLengths;

typedef struct RawFeature
{
	RawString	name;
	uint32_t	type;			/* NbFeatureType, or anything */
	uint32_t	items;			/* tokens owned, as written (need not add up) */
	double	   *present;		/* [nc] */
	double	   *a;				/* [nc] */
	double	   *b;				/* [nc] */
	double		rows;
	double		mean;
	double		m2;
	RawLengths *lengths;		/* [nc], version 3 */
	uint32_t	lengths_n;		/* entries of lengths allocated (nc unless a caller shrank nc) */
} RawFeature;

typedef struct RawModel
{
	uint16_t	version;		/* 1, 2 or 3 (raw_init: 1) */
	uint32_t	vector_len;		/* versions 2 and 3 */
	uint32_t	nc;
	uint32_t	nt;
	uint32_t	nf;
	RawClass   *c;
	RawToken   *t;
	RawFeature *f;
} RawModel;

void		raw_init(RawModel *m);
/* A version 2 model without classes, tokens or features. */
void		raw_init_v2(RawModel *m);
/* A version 3 model without classes, tokens or features. */
void		raw_init_v3(RawModel *m);
void		raw_free(RawModel *m);

/*
 * Parse a value whose sizes are consistent (header counts fit, string
 * lengths add up, token entry counts add up to E); contents unchecked.
 * Versions 1, 2 and 3 (any other version number is parsed as version 3).
 */
bool		raw_parse(RawModel *m, const unsigned char *buf, size_t size);

/* Serialized size (may be huge: the caller checks it). */
uint64_t	raw_size(const RawModel *m);

/* Write raw_size(m) bytes, with a correct header and checksum. */
void		raw_write(const RawModel *m, unsigned char *buf);

/* Convenience: write into a new malloc'ed buffer. */
unsigned char *raw_serialize(const RawModel *m, size_t *size);

uint32_t	raw_add_class(RawModel *m, const char *label, uint32_t len, double docs);
uint32_t	raw_add_token(RawModel *m, const char *str, uint32_t len);
void		raw_add_entry(RawModel *m, uint32_t token, uint32_t cls, double count, double docs);

/* Version 2: a feature with zero statistics and no items (appended last). */
uint32_t	raw_add_feature(RawModel *m, const char *name, uint32_t len, uint32_t type);
/*
 * Rewrite as another version: 3 keeps everything; 2 drops the document
 * lengths; 1 also drops the features (their items stay as tokens).
 */
void		raw_set_version(RawModel *m, uint16_t version);
/* Version 3: a (length, weight) pair appended to feature j's histogram in class c. */
void		raw_add_length(RawModel *m, uint32_t j, uint32_t c, double length, double weight);
/* Version 2: a token appended as an item of the LAST feature (feature must be m->nf - 1). */
uint32_t	raw_add_item(RawModel *m, uint32_t feature, const char *str, uint32_t len);
/* The feature owning token i by the items counts, or nf if beyond them. */
uint32_t	raw_token_feature(const RawModel *m, uint32_t i);
void		raw_del_feature(RawModel *m, uint32_t j);	/* with its items if they add up */

/* Insert a copy of token i (or class i) right after it; remove token i / class i. */
void		raw_dup_token(RawModel *m, uint32_t i);
void		raw_del_token(RawModel *m, uint32_t i);
void		raw_dup_class(RawModel *m, uint32_t i);
void		raw_del_class(RawModel *m, uint32_t i);
void		raw_set_string(RawString *s, const unsigned char *bytes, uint32_t len);

#endif
