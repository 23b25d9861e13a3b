/*
 * nb_runs.h — building a model out of the sorted runs of others: the pieces
 * that merging (nb_merge.c) and subtracting (nb_subtract.c) share.
 *
 * Serialized models are canonical (nb_format.h), so a model made from others
 * is a walk over their sorted labels, feature names and items.  Both
 * operations describe their result as an NbPlan: the small parts (classes,
 * features, their statistics) in arrays, the items and entries in an
 * NbRunOut written in output order, where a stretch of one input's items is
 * copied whole (nb_copy_run).  nb_plan_write then lays the plan out with
 * nb_format's writer.  Pruning (nb_prune.c) plans its result the same way
 * but knows its items' sizes beforehand, so it copies their runs straight
 * into the model (nb_plan_write_begin, nb_run_out_at).
 */
#ifndef NB_RUNS_H
#define NB_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nb_format.h"
#include "nb_port.h"

#define NB_NONE UINT32_MAX

/* Position of an input in its items: the next item, its first entry and string. */
typedef struct NbCursor
{
	uint32_t	item;
	uint64_t	entry;
	size_t		off;
} NbCursor;

/* The output items and entries as they are made, and where the next ones go. */
typedef struct NbRunOut
{
	unsigned char *token_len;
	unsigned char *token_entries;
	unsigned char *entry_class;
	unsigned char *entry_count;
	unsigned char *entry_docs;
	char	   *tokens_start;
	char	   *tokens;			/* where the next item's string goes */
	uint64_t	k;				/* next item */
	uint64_t	e;				/* next entry */
	uint64_t	work;			/* units since the last cancellation point */
} NbRunOut;

/*
 * A model to be written: classes, features and their statistics (per
 * feature f and class c at f * C + c), the items in out.  Strings point
 * into the inputs.
 */
typedef struct NbPlan
{
	uint32_t	C;
	const char **label;
	uint32_t   *label_len;
	double	   *class_docs;
	uint32_t	F;
	const char **name;
	uint32_t   *name_len;
	uint32_t   *type;
	uint32_t   *items;			/* [F]: items of each feature */
	double	   *present;		/* [F * C] */
	double	   *fa;
	double	   *fb;
	double	   *rows;			/* [F] */
	double	   *mean;
	double	   *m2;
	uint32_t	vector_len;
	bool		text_only;
	NbSettings	settings;		/* the inputs' (they have the same) */
	uint64_t	V;
	uint64_t	E;
	size_t		label_bytes;
	size_t		token_bytes;
	size_t		name_bytes;
	NbRunOut	out;
	/*
	 * Document lengths (format version 3), if lengths: per feature f and
	 * class c at f * C + c a run of pairs, H in all.  Without, a model with
	 * a bag is written as versions 1 or 2 write it: its lengths unknown.
	 */
	bool		lengths;
	uint64_t	H;
	uint32_t   *length_pairs;
	double	   *length_value;
	double	   *length_weight;
} NbPlan;

/*
 * Room in *o for at most max_items items, max_entries entries and
 * max_bytes bytes of strings: only the part written is ever touched, so an
 * overestimate costs address space, not memory.
 */
void		nb_run_out_alloc(NbRunOut *o, uint64_t max_items, uint64_t max_entries,
							 size_t max_bytes);

/*
 * Allocate the arrays of p: room classes (labels and documents), room
 * feature names, then (with p->F and p->C set) the feature statistics.
 */
void		nb_plan_alloc_classes(NbPlan *p, size_t room);
void		nb_plan_alloc_features(NbPlan *p, size_t room);
void		nb_plan_alloc_stats(NbPlan *p);

/* Whether the plan is the bag "" alone, present in every document (nb_format_text_only). */
bool		nb_plan_is_text_only(const NbPlan *p);

/*
 * Whether the plan holds nothing, not even rows skipped for a NULL label:
 * the empty model (SQL's NULL), which is not written.
 */
static inline bool
nb_plan_is_empty(const NbPlan *p)
{
	return p->C == 0 && p->settings.null_labels == 0;
}

/* Exact size of the planned model, or 0 if it would exceed max_size. */
size_t		nb_plan_size(const NbPlan *p, size_t max_size);

/* Write the planned model into buf of nb_plan_size bytes; *out describes it. */
void		nb_plan_write(const NbPlan *p, unsigned char *buf, size_t size, NbView *out);

/*
 * Write all of the planned model but its items and entries (p->out is not
 * read) into buf of nb_plan_size bytes; the caller writes them into w's
 * sections (through nb_run_out_at) and calls nb_format_finish.
 */
void		nb_plan_write_begin(const NbPlan *p, unsigned char *buf, size_t size,
								NbFormatWriter *w);

/* Point *o at the item and entry sections of w, to write p->V items there. */
void		nb_run_out_at(NbRunOut *o, const NbFormatWriter *w);

/*
 * Allocate the length arrays of p (with p->F and p->C set): room for
 * max_pairs pairs; sets p->lengths.
 */
void		nb_plan_alloc_lengths(NbPlan *p, uint64_t max_pairs);

/*
 * Where v's run of document length pairs of feature f and class c starts,
 * at f * C + c, and after the last the total ([F * C + 1]; all 0 without
 * lengths).
 */
uint64_t   *nb_length_starts(const NbView *v);

/* Free what nb_run_out_alloc (if called) and the nb_plan_alloc_* allocated. */
void		nb_plan_free(NbPlan *p);

/* nb_plan_free, and the plan itself (nb_subtract_plan's). */
void		nb_plan_destroy(NbPlan *p);

/*
 * An input's current item: its first 8 bytes as a big-endian number
 * (zero-padded) decide most comparisons without touching the rest.
 */
typedef struct NbHead
{
	uint64_t	prefix;
	const char *s;
	uint32_t	len;
	uint32_t	input;
} NbHead;

/* Item number item of view v (input number input), whose string starts at off. */
static inline void
nb_head_set(NbHead *h, const NbView *v, uint32_t input, uint32_t item, size_t off)
{
	const char *s = v->tokens + off;
	uint32_t	len = nb_read_u32(v->token_len, item);
	uint64_t	p = 0;

	if (len >= 8)
	{
		memcpy(&p, s, 8);
		p = nb_be64(p);
	}
	else
		for (uint32_t b = 0; b < len; b++)
			p |= (uint64_t) (unsigned char) s[b] << (56 - 8 * b);
	h->prefix = p;
	h->s = s;
	h->len = len;
	h->input = input;
}

/*
 * Byte order of two items.  Items contain no zero byte (nb_view_open checks
 * that), so equal prefixes with a string of at most 8 bytes leave only the
 * lengths to compare.
 */
static inline int
nb_head_cmp(const NbHead *a, const NbHead *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	if (a->len > 8 && b->len > 8)
		return nb_strcmp(a->s + 8, a->len - 8, b->s + 8, b->len - 8);
	return (a->len > b->len) - (a->len < b->len);
}

/* Step a cursor of view v past its current item. */
static inline void
nb_cursor_advance(const NbView *v, NbCursor *cur)
{
	cur->off += nb_read_u32(v->token_len, cur->item);
	cur->entry += nb_read_u32(v->token_entries, cur->item);
	cur->item++;
}

/*
 * The item after the run of v's items from cur's (which is smaller than
 * other) up to end that all sort before other.
 */
uint32_t	nb_run_end(const NbView *v, const NbCursor *cur, uint32_t end, const NbHead *other);

/*
 * Copy the next r items of v, which make r output items alone: their arrays
 * as they are, but for the classes, which go through cmap (v's class ->
 * output class) unless v has all C output classes (cmap is then the
 * identity).
 */
void		nb_copy_run(const NbView *v, const uint32_t *cmap, uint32_t C, NbCursor *cur,
						uint64_t r, NbRunOut *o);

#endif
