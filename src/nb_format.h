/*
 * nb_format.h — the serialized nb_model: layout, writing, validation, read
 * access.  This module is the only one that knows where a section starts:
 * writers fill the sections nb_format_begin lays out, readers walk a view
 * with the accessors and iterators below.
 *
 * The same bytes are the on-disk varlena payload, the binary send/recv form
 * and (base64-encoded) the text form.  Every number is little-endian and read
 * with memcpy, so the format is identical on every platform and a value may
 * sit at any alignment.  The layout of every version, and the canonical
 * order that makes equal models equal bytes: src/README.md (The model's
 * format).
 */
#ifndef NB_FORMAT_H
#define NB_FORMAT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nb_feature_type.h"
#include "nb_hash.h"
#include "nb_port.h"
#include "nb_settings.h"

#define NB_FORMAT_VERSION_SETTINGS 4	/* with a tokenizer or options */
#define NB_FORMAT_VERSION 3		/* with document lengths */
#define NB_FORMAT_VERSION_FEATURES 2
#define NB_FORMAT_VERSION_TEXT 1
#define NB_HEADER_SIZE 32
#define NB_FORMAT_FLAG_NO_LENGTHS 1	/* version 4: the document lengths are unknown */
#define NB_FORMAT_FLAG_JSONB_BAG 2	/* version 4: the bag "" came from jsonb rows */
#define NB_FORMAT_FLAG_NULL_LABELS 4	/* version 4: a count of rows skipped for a NULL label */
#define NB_FORMAT_FLAG_COMPONENTS 8	/* version 4: a class is a run of equal labels */
#define NB_CHECKSUM_SEED UINT64_C(0x6e62632d6d6f646c)

/*
 * The size limit of a model.  Every model nbc makes must survive a text dump
 * and restore, so its text form (base64: 4 characters per 3 bytes, padded,
 * no line breaks) must fit in one PostgreSQL value, which with its varlena
 * header and the closing NUL of the C string fits in PostgreSQL's largest
 * allocation (MaxAllocSize, 1 GB - 1; the glue checks that these agree).
 * The largest n with nb_base64_len(n) <= L is L / 4 * 3: 805306362 bytes.
 */
#define NB_ALLOC_LIMIT UINT64_C(0x3fffffff)
#define NB_TEXT_OVERHEAD 5		/* varlena header 4 and NUL 1 */
#define NB_MODEL_MAX_SIZE ((NB_ALLOC_LIMIT - NB_TEXT_OVERHEAD) / 4 * 3)

/* Characters of the base64 form of n bytes. */
static inline uint64_t
nb_base64_len(uint64_t n)
{
	return (n + 2) / 3 * 4;
}

/*
 * Bytes that base64 text of chars characters (a multiple of 4) ending in
 * padding '=' characters (0, 1 or 2) decodes to.
 */
static inline uint64_t
nb_base64_decoded_len(uint64_t chars, unsigned padding)
{
	return chars / 4 * 3 - (chars == 0 ? 0 : padding);
}

/*
 * The fixed-width sections of a model in layout order (src/README.md): name,
 * width of an element in bytes, number of elements (of C classes, V items,
 * E entries, F features, FC = F * C pairs of feature and class, H length
 * pairs) and the first format version that has it.  The reader, the writer
 * and the size all walk this one list.
 */
#define NB_SECTIONS(X) \
	X(class_docs, 8, C, 1) \
	X(label_len, 4, C, 1) \
	X(token_len, 4, V, 1) \
	X(token_entries, 4, V, 1) \
	X(entry_class, 4, E, 1) \
	X(entry_count, 8, E, 1) \
	X(entry_docs, 8, E, 1) \
	X(feature_name_len, 4, F, 2) \
	X(feature_type, 4, F, 2) \
	X(feature_items, 4, F, 2) \
	X(feature_present, 8, FC, 2) \
	X(feature_a, 8, FC, 2) \
	X(feature_b, 8, FC, 2) \
	X(feature_rows, 8, F, 2) \
	X(feature_mean, 8, F, 2) \
	X(feature_m2, 8, F, 2) \
	X(length_pairs, 4, FC, 3) \
	X(length_value, 8, H, 3) \
	X(length_weight, 8, H, 3)

/* The numbers of elements NB_SECTIONS counts in. */
typedef struct NbSectionCounts
{
	uint64_t	C;
	uint64_t	V;
	uint64_t	E;
	uint64_t	F;
	uint64_t	FC;
	uint64_t	H;
} NbSectionCounts;

static inline NbSectionCounts
nb_section_counts(uint64_t C, uint64_t V, uint64_t E, uint64_t F, uint64_t H)
{
	NbSectionCounts n = {C, V, E, F, F * C, H};

	return n;
}

/* A field per section, for a reader (const) or a writer. */
#define NB_VIEW_SECTION(name, width, count, since) const unsigned char *name;
#define NB_WRITER_SECTION(name, width, count, since) unsigned char *name;

/*
 * A validated serialized model; pointers point into the caller's bytes.
 * Version 1's feature sections point at what it implies, one bag feature
 * (see nb_view_feature_type); the length sections and n_lengths are NULL
 * and 0 unless the model keeps its document lengths (version 3, or 4
 * without NB_FORMAT_FLAG_NO_LENGTHS; see nb_view_has_lengths).
 */
typedef struct NbView
{
	size_t		size;
	uint16_t	version;
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	uint64_t	checksum;
	uint32_t	n_features;
	uint32_t	vector_len;
	uint64_t	n_lengths;
	NbSettings	settings;		/* none but in version 4; options point into the bytes */
	NB_SECTIONS(NB_VIEW_SECTION)
	const char *labels;
	const char *tokens;
	const char *feature_names;
} NbView;

/*
 * The shape of a model to be written: its counts and the bytes of its three
 * string areas.  With settings (nb_settings_any), it is version 4, with or
 * without lengths.  Else with lengths, it is version 3 with n_lengths
 * pairs; without, text_only (nb_format_text_only) is written as version 1
 * (n_features, vector_len and name_bytes are then ignored); anything else
 * is version 2.  nb_format_begin writes the settings itself.
 */
typedef struct NbFormatShape
{
	uint32_t	n_classes;
	uint32_t	n_tokens;
	uint64_t	n_entries;
	uint32_t	n_features;
	uint32_t	vector_len;
	uint64_t	label_bytes;
	uint64_t	token_bytes;
	uint64_t	name_bytes;
	bool		text_only;
	bool		lengths;
	uint64_t	n_lengths;
	NbSettings	settings;
} NbFormatShape;

/*
 * Where each section of a model being written goes, in the caller's buffer
 * (the feature sections NULL in version 1, the length sections unless the
 * shape has lengths).  The writer fills every array and string area, then
 * calls nb_format_finish.
 */
typedef struct NbFormatWriter
{
	unsigned char *buf;
	size_t		size;
	NbFormatShape shape;
	NB_SECTIONS(NB_WRITER_SECTION)
	char	   *labels;
	char	   *tokens;
	char	   *feature_names;
} NbFormatWriter;

/*
 * Exact size of a model of this shape, or 0 if it is more than max_size
 * (whatever the counts: the sum is checked term by term, it never wraps).
 * n_lengths is 0 unless shape->lengths.
 */
size_t		nb_format_size(const NbFormatShape *shape, size_t max_size);

/*
 * Write the header of a model of this shape into buf of nb_format_size
 * bytes (all but the checksum) and point *w at its sections.
 */
void		nb_format_begin(NbFormatWriter *w, const NbFormatShape *shape,
							unsigned char *buf, size_t size);

/*
 * Set the checksum of a filled model.  With view non-NULL, describe the
 * model there as nb_view_open would, without validating it.
 */
void		nb_format_finish(const NbFormatWriter *w, NbView *view);

/*
 * A model rewritten with other settings (nb_with_options): the shape of the
 * view's model with these settings, and its sections copied into a writer
 * begun with that shape (then nb_format_finish).  The version follows the
 * settings: removing the last one gives the bytes of the model without.
 */
NbFormatShape nb_view_shape(const NbView *v, const NbSettings *settings);
void		nb_format_copy(NbFormatWriter *w, const NbView *v);

/*
 * The sums scoring forms over a model: weighted documents over classes,
 * counts and document frequencies over entries.  Each number is finite, and
 * so must their sums be: the trainer adds up what it will write
 * (nb_sums_add_entry, nb_sums_finite), nb_view_open and the merge check a view
 * (nb_view_sums_finite).
 */
typedef struct NbSums
{
	double		docs;
	double		count;
	double		doc_freq;
} NbSums;

static inline void
nb_sums_add_entry(NbSums *s, double count, double doc_freq)
{
	s->count += count;
	s->doc_freq += doc_freq;
}

static inline bool
nb_sums_finite(NbSums s)
{
	return isfinite(s.docs) && isfinite(s.count) && isfinite(s.doc_freq);
}

/* Whether the sums over a view, in view order, are finite. */
bool		nb_view_sums_finite(const NbView *view);

/*
 * The rule of format version 1: whether a model is the bag "" alone, present
 * in every document (what text[] and tsvector rows train), which is written
 * as version 1 when its document lengths are unknown, and only then.  That
 * is: one feature, a bag named "", that each class's documents all have.
 * Writers and readers hold a model differently: they give the name length
 * and type of its first feature (any value when it has none) and answer
 * through rows, on model, with the weighted documents of class c and the
 * weighted rows of that class with the first feature.
 */
typedef void (*NbClassRows) (const void *model, uint32_t c, double *docs, double *present);

bool		nb_format_text_only(const void *model, uint32_t n_features, uint32_t first_name_len,
								NbFeatureType first_type, uint32_t n_classes, NbClassRows rows);

/* nb_format_text_only of a view (true for every version 1 view). */
bool		nb_view_text_only(const NbView *view);

/* Why a byte string is not a valid model. */
typedef struct NbFormatError
{
	char		message[160];
} NbFormatError;

/*
 * Validate bytes as a model and fill *view: every count against the actual
 * length (no arithmetic can overflow), the checksum, the order of strings,
 * every number and the length histograms.  Strings must not contain NUL
 * bytes; their character encoding is the caller's business.
 */
bool		nb_view_open(NbView *view, const void *data, size_t size,
						 NbFormatError *error);

/*
 * The checksum of a serialized model of size >= NB_HEADER_SIZE: the hash of
 * the bytes after the header, seeded with the hash of the header's first 24
 * bytes, so it covers everything but itself.
 */
uint64_t	nb_format_checksum(const unsigned char *data, size_t size);

/* Element i of an array of little-endian numbers (nb_hash.h reads them). */
static inline uint32_t
nb_read_u32(const unsigned char *base, uint64_t i)
{
	return nb_read_le32(base + i * 4);
}

static inline double
nb_read_f64(const unsigned char *base, uint64_t i)
{
	uint64_t	u = nb_read_le64(base + i * 8);
	double		v;

	memcpy(&v, &u, 8);
	return v;
}

static inline void
nb_write_u32(unsigned char *base, uint64_t i, uint32_t v)
{
	nb_write_le32(base + i * 4, v);
}

static inline void
nb_write_f64(unsigned char *base, uint64_t i, double v)
{
	uint64_t	u;

	memcpy(&u, &v, 8);
	nb_write_le64(base + i * 8, u);
}

/*
 * The prefix of an item key of a feature other than the bag "" (nb_item.h):
 * a zero byte, then the feature's id as a little-endian number.
 */
static inline void
nb_item_key_prefix(char *key, uint32_t feature)
{
	key[0] = '\0';
	nb_write_u32((unsigned char *) key + 1, 0, feature);
}

static inline uint32_t
nb_item_key_feature(const char *key)
{
	return nb_read_u32((const unsigned char *) key + 1, 0);
}

/*
 * Typed reads of a view's sections: every part of nbc reads a model through
 * these and the iterators below, so that a change of the stored form
 * changes this file and nb_format.c only.  A version 1 view's feature
 * arrays point at what that version implies (one bag named "" of all the
 * items, present in every document); only feature_a and feature_b stay
 * NULL there: a bag's are 0.
 */
static inline NbFeatureType
nb_view_feature_type(const NbView *v, uint32_t j)
{
	return (NbFeatureType) nb_read_u32(v->feature_type, j);
}

static inline uint32_t
nb_view_feature_items(const NbView *v, uint32_t j)
{
	return nb_read_u32(v->feature_items, j);
}

static inline uint32_t
nb_view_feature_name_len(const NbView *v, uint32_t j)
{
	return nb_read_u32(v->feature_name_len, j);
}

/* Weighted rows of class c in which feature j is present. */
static inline double
nb_view_present(const NbView *v, uint32_t j, uint32_t c)
{
	return nb_read_f64(v->feature_present, (uint64_t) j * v->n_classes + c);
}

static inline double
nb_view_a(const NbView *v, uint32_t j, uint32_t c)
{
	return v->feature_a == NULL ? 0 : nb_read_f64(v->feature_a, (uint64_t) j * v->n_classes + c);
}

static inline double
nb_view_b(const NbView *v, uint32_t j, uint32_t c)
{
	return v->feature_b == NULL ? 0 : nb_read_f64(v->feature_b, (uint64_t) j * v->n_classes + c);
}

/* Whether the view keeps the document lengths of its bags (version 3 or 4). */
static inline bool
nb_view_has_lengths(const NbView *v)
{
	return v->length_pairs != NULL;
}

/* Pairs of the length histogram of feature j in class c (version 3). */
static inline uint32_t
nb_view_length_pairs(const NbView *v, uint32_t j, uint32_t c)
{
	return nb_read_u32(v->length_pairs, (uint64_t) j * v->n_classes + c);
}

bool		nb_view_has_bag(const NbView *v);

/* The kinds of rows the view's features came from (NB_INPUT_*, nb_settings.h). */
uint32_t	nb_view_input_kinds(const NbView *v);

/* Bytes of label c, and the weighted documents of class c. */
static inline uint32_t
nb_view_label_len(const NbView *v, uint32_t c)
{
	return nb_read_u32(v->label_len, c);
}

static inline double
nb_view_class_docs(const NbView *v, uint32_t c)
{
	return nb_read_f64(v->class_docs, c);
}

/* Bytes of item k's string, and its entries (one per class that has it). */
static inline uint32_t
nb_view_token_len(const NbView *v, uint64_t k)
{
	return nb_read_u32(v->token_len, k);
}

static inline uint32_t
nb_view_token_entries(const NbView *v, uint64_t k)
{
	return nb_read_u32(v->token_entries, k);
}

/* Entry e: its class, count and weighted documents (nb_view_entry reads all three). */
static inline uint32_t
nb_view_entry_class(const NbView *v, uint64_t e)
{
	return nb_read_u32(v->entry_class, e);
}

static inline double
nb_view_entry_count(const NbView *v, uint64_t e)
{
	return nb_read_f64(v->entry_count, e);
}

static inline double
nb_view_entry_docs(const NbView *v, uint64_t e)
{
	return nb_read_f64(v->entry_docs, e);
}

/* A Gaussian feature j's overall moments: unweighted rows, mean, sum of squared deviations. */
static inline double
nb_view_feature_rows(const NbView *v, uint32_t j)
{
	return nb_read_f64(v->feature_rows, j);
}

static inline double
nb_view_feature_mean(const NbView *v, uint32_t j)
{
	return nb_read_f64(v->feature_mean, j);
}

static inline double
nb_view_feature_m2(const NbView *v, uint32_t j)
{
	return nb_read_f64(v->feature_m2, j);
}

/*
 * The length histograms (version 3): the pairs of the histogram at
 * jc = j * n_classes + c (nb_view_length_pairs by feature and class), and
 * pair h's length and weight.
 */
static inline uint32_t
nb_view_length_pairs_at(const NbView *v, uint64_t jc)
{
	return nb_read_u32(v->length_pairs, jc);
}

static inline double
nb_view_length_value(const NbView *v, uint64_t h)
{
	return nb_read_f64(v->length_value, h);
}

static inline double
nb_view_length_weight(const NbView *v, uint64_t h)
{
	return nb_read_f64(v->length_weight, h);
}

/*
 * A walk over one of a view's string areas (labels, items, feature names):
 * nb_string_next yields each string in order as a pointer and a length.
 */
typedef struct NbStringIter
{
	const unsigned char *lengths;
	const char *next;
	uint64_t	i;
	uint64_t	end;
} NbStringIter;

/* The strings first .. first + n - 1 of an area whose string first starts at start. */
static inline NbStringIter
nb_string_iter(const unsigned char *lengths, const char *start, uint64_t first, uint64_t n)
{
	NbStringIter it = {lengths, start, first, first + n};

	return it;
}

static inline NbStringIter
nb_view_labels(const NbView *v)
{
	return nb_string_iter(v->label_len, v->labels, 0, v->n_classes);
}

/* All items, feature after feature. */
static inline NbStringIter
nb_view_items(const NbView *v)
{
	return nb_string_iter(v->token_len, v->tokens, 0, v->n_tokens);
}

static inline NbStringIter
nb_view_feature_names(const NbView *v)
{
	return nb_string_iter(v->feature_name_len, v->feature_names, 0, v->n_features);
}

static inline bool
nb_string_next(NbStringIter *it, const char **str, uint32_t *len)
{
	if (it->i >= it->end)
		return false;
	*len = nb_read_u32(it->lengths, it->i++);
	*str = it->next;
	it->next += *len;
	return true;
}

/* The string nb_string_next would yield next, without moving on. */
static inline bool
nb_string_peek(const NbStringIter *it, const char **str, uint32_t *len)
{
	NbStringIter copy = *it;

	return nb_string_next(&copy, str, len);
}

/* The strings left to walk. */
static inline uint64_t
nb_string_left(const NbStringIter *it)
{
	return it->end - it->i;
}

/* String k (0: the next) of a walk, walking past the ones before it. */
static inline const char *
nb_string_nth(NbStringIter it, uint64_t k, uint32_t *len)
{
	const char *s = it.next;

	it.end = it.i + k + 1;
	while (nb_string_next(&it, &s, len))
		;
	return s;
}

/* The name of feature j (a walk over the names before it). */
static inline const char *
nb_view_feature_name(const NbView *v, uint32_t j, uint32_t *len)
{
	return nb_string_nth(nb_view_feature_names(v), j, len);
}

/*
 * A walk over a view's features: name, type and the range of its items
 * (first_item .. first_item + n_items - 1), whose strings
 * nb_feature_items walks and whose entries (from first_entry on)
 * nb_feature_item_iter walks with them.
 */
typedef struct NbFeature
{
	uint32_t	index;
	const char *name;
	uint32_t	name_len;
	NbFeatureType type;
	uint32_t	first_item;
	uint32_t	n_items;
	const char *first_item_str; /* where item first_item's string starts */
	uint64_t	first_entry;	/* item first_item's first entry */
} NbFeature;

typedef struct NbFeatureIter
{
	const NbView *view;
	NbStringIter names;
	uint32_t	j;
	uint32_t	item;
	const char *item_str;
	uint64_t	entry;
} NbFeatureIter;

static inline NbFeatureIter
nb_view_features(const NbView *v)
{
	NbFeatureIter it = {v, nb_view_feature_names(v), 0, 0, v->tokens, 0};

	return it;
}

static inline bool
nb_feature_next(NbFeatureIter *it, NbFeature *f)
{
	if (!nb_string_next(&it->names, &f->name, &f->name_len))
		return false;
	f->index = it->j;
	f->type = nb_view_feature_type(it->view, it->j);
	f->first_item = it->item;
	f->n_items = nb_view_feature_items(it->view, it->j);
	f->first_item_str = it->item_str;
	f->first_entry = it->entry;
	for (uint32_t k = 0; k < f->n_items; k++)
	{
		it->item_str += nb_read_u32(it->view->token_len, (uint64_t) it->item + k);
		it->entry += nb_read_u32(it->view->token_entries, (uint64_t) it->item + k);
	}
	it->item += f->n_items;
	it->j++;
	return true;
}

/* The items of a feature the iterator yielded. */
static inline NbStringIter
nb_feature_items(const NbView *v, const NbFeature *f)
{
	return nb_string_iter(v->token_len, f->first_item_str, f->first_item, f->n_items);
}

/*
 * A walk over the items of a feature with their entries: item index is
 * among all the view's items; its entries are first_entry ..
 * first_entry + n_entries - 1, each read with nb_view_entry.
 */
typedef struct NbItem
{
	uint32_t	index;
	const char *str;
	uint32_t	len;
	uint64_t	first_entry;
	uint32_t	n_entries;
} NbItem;

typedef struct NbItemIter
{
	const NbView *view;
	NbStringIter strings;
	uint64_t	entry;
} NbItemIter;

static inline NbItemIter
nb_feature_item_iter(const NbView *v, const NbFeature *f)
{
	NbItemIter	it = {v, nb_feature_items(v, f), f->first_entry};

	return it;
}

static inline bool
nb_item_next(NbItemIter *it, NbItem *item)
{
	item->index = (uint32_t) it->strings.i;
	if (!nb_string_next(&it->strings, &item->str, &item->len))
		return false;
	item->first_entry = it->entry;
	item->n_entries = nb_read_u32(it->view->token_entries, item->index);
	it->entry += item->n_entries;
	return true;
}

/* One (item, class) entry: the class, weighted count N_jc and document frequency d_jc. */
typedef struct NbEntry
{
	uint32_t	cls;
	double		count;
	double		docs;
} NbEntry;

static inline NbEntry
nb_view_entry(const NbView *v, uint64_t e)
{
	NbEntry		en = {nb_read_u32(v->entry_class, e), nb_read_f64(v->entry_count, e),
	nb_read_f64(v->entry_docs, e)};

	return en;
}

/* Byte-order comparison of two strings: memcmp, then shorter first. */
static inline int
nb_strcmp(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

#endif
