/*
 * nb_format.c — the layout and validation of serialized models, see
 * nb_format.h.
 *
 * Validation treats the input as hostile: sizes are checked against
 * the remaining length before any multiplication could overflow, and no
 * allocation is made, so a crafted value can only ever produce an error.
 */
#include "nb_format.h"

#include <math.h>
#include <stdio.h>

#include "nb_hash.h"
#include "nb_interrupt.h"
#include "nb_port.h"

#define FAIL(...) \
	do { snprintf(error->message, sizeof(error->message), __VA_ARGS__); return false; } while (0)

static const unsigned char zeros[8];
static const unsigned char bag_type[4] = {NB_FEATURE_BAG, 0, 0, 0};

/*
 * Point a version 1 view's feature arrays at what that version implies: one
 * bag named "" whose items are all V (the header's count) and that is
 * present in every document (its rows are the class documents).  Its a and
 * b stay NULL (nb_view_a reads 0), its overall statistics are 0.
 */
static void
imply_text_only(NbView *view, const unsigned char *header)
{
	view->n_features = 1;
	view->vector_len = 0;
	view->feature_names = "";
	view->feature_name_len = zeros;
	view->feature_type = bag_type;
	view->feature_items = header + 12;
	view->feature_present = view->class_docs;
	view->feature_rows = zeros;
	view->feature_mean = zeros;
	view->feature_m2 = zeros;
}

/* Claim n items of width w from the remaining bytes; false if they do not fit. */
static bool
take(const unsigned char **cursor, size_t *remaining, uint64_t n, size_t w,
	 const unsigned char **out)
{
	if (n > *remaining / w)
		return false;
	*out = *cursor;
	*cursor += n * w;
	*remaining -= n * w;
	return true;
}

/*
 * Bytes of the counts after the header: F and the vector length, then H,
 * then the sizes of the settings, then the rows skipped for a NULL label
 * (flag NB_FORMAT_FLAG_NULL_LABELS).
 */
static size_t
counts_size(uint16_t version, bool null_labels)
{
	switch (version)
	{
		case NB_FORMAT_VERSION_SETTINGS:
			return null_labels ? 32 : 24;
		case NB_FORMAT_VERSION:
			return 16;
		case NB_FORMAT_VERSION_FEATURES:
			return 8;
		default:
			return 0;
	}
}

/*
 * Whether a model of this version has the sections NB_SECTIONS says appear
 * since version since: those of version 3 are the document lengths, which
 * version 4 may leave out.
 */
static bool
section_present(uint16_t version, bool lengths, int since)
{
	if (since == NB_FORMAT_VERSION)
		return lengths;
	return version >= since;
}

static bool
positive_finite(double v)
{
	return isfinite(v) && v > 0;
}

uint64_t
nb_format_checksum(const unsigned char *data, size_t size)
{
	uint64_t	seed = nb_hash_bytes(data, 24, NB_CHECKSUM_SEED);

	return nb_hash_bytes_long(data + NB_HEADER_SIZE, size - NB_HEADER_SIZE, seed);
}

/*
 * Check the lengths of n strings starting at *off in an area of area_size
 * bytes, and that the strings are strictly increasing (or, with repeats
 * non-NULL, increasing, *repeats set to whether two are equal); advances
 * *off.
 */
static bool
check_strings(const unsigned char *lengths, uint64_t first, uint64_t n,
			  const char *area, size_t area_size, size_t *off,
			  const char *what, bool *repeats, NbFormatError *error)
{
	const char *prev = NULL;
	uint32_t	prev_len = 0;
	uint64_t	work = 0;
	int			cmp;

	for (uint64_t i = first; i < first + n; i++)
	{
		uint32_t	len = nb_read_u32(lengths, i);
		const char *s = area + *off;

		nb_interrupt_count(&work, 1 + len / 64);
		if (len > area_size - *off)
			FAIL("%s %llu extends past the end of the value", what, (unsigned long long) i);
		if (memchr(s, '\0', len) != NULL)
			FAIL("%s %llu contains a zero byte", what, (unsigned long long) i);
		cmp = prev == NULL ? -1 : nb_strcmp(prev, prev_len, s, len);
		if (cmp > 0 || (cmp == 0 && repeats == NULL))
			FAIL("%ss are not in %sincreasing order at %s %llu",
				 what, repeats == NULL ? "strictly " : "", what, (unsigned long long) i);
		if (cmp == 0)
			*repeats = true;
		prev = s;
		prev_len = len;
		*off += len;
	}
	return true;
}

/* Sum of n string lengths, failing if they exceed limit bytes. */
static bool
string_bytes(const unsigned char *lengths, uint64_t n, uint64_t limit, uint64_t *total)
{
	*total = 0;
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	len = nb_read_u32(lengths, i);

		nb_interrupt_at(i);
		if (len > limit - *total)
			return false;
		*total += len;
	}
	return true;
}

bool
nb_view_has_bag(const NbView *v)
{
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		nb_interrupt_at(j);
		if (nb_view_feature_type(v, j) == NB_FEATURE_BAG)
			return true;
	}
	return false;
}

/* Whether the view has the bag "" (names are sorted: it is the first feature). */
static bool
has_unnamed_bag(const NbView *v)
{
	return v->n_features > 0 && nb_view_feature_name_len(v, 0) == 0 &&
		nb_view_feature_type(v, 0) == NB_FEATURE_BAG;
}

uint32_t
nb_view_input_kinds(const NbView *v)
{
	uint32_t	kinds = nb_input_kinds_base(v->vector_len, &v->settings);
	NbFeatureIter it = nb_view_features(v);
	NbFeature	f;

	while (nb_feature_next(&it, &f))
	{
		nb_interrupt_at(f.index);
		kinds |= nb_feature_input_kind(f.name, f.name_len, f.type, v->vector_len);
	}
	return kinds;
}

/*
 * The length histograms of a version 3 model: a run of pairs per (feature,
 * class), bags only, adding up to H; in a run, lengths positive, finite and
 * strictly increasing, weights positive and no more than the weighted rows
 * with the bag (a bin sums some of the rows that feature_present sums, in
 * the same order, and rounding is monotonic), and the sums the fit forms
 * finite.  Only bags have lengths, and a model without a bag is version 2.
 */
static bool
check_lengths(const NbView *v, NbFormatError *error)
{
	uint64_t	h = 0;
	uint64_t	work = 0;

	if (!nb_view_has_bag(v))
		FAIL("a model without bag features must be format version 2");
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		bool		bag = nb_view_feature_type(v, j) == NB_FEATURE_BAG;

		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			uint32_t	n = nb_view_length_pairs(v, j, c);
			double		present = nb_view_present(v, j, c);
			double		prev = 0;
			double		rows = 0;
			double		tokens = 0;

			nb_interrupt_count(&work, 1 + (uint64_t) n);
			if (n > 0 && !bag)
				FAIL("feature %u has document lengths but is not a bag", j);
			if (n > v->n_lengths - h)
				FAIL("document length pairs add up to more than the %llu pairs",
					 (unsigned long long) v->n_lengths);
			for (uint64_t end = h + n; h < end; h++)
			{
				double		len = nb_read_f64(v->length_value, h);
				double		w = nb_read_f64(v->length_weight, h);

				if (!positive_finite(len) || len <= prev)
					FAIL("document lengths of feature %u in class %u are not positive and strictly increasing",
						 j, c);
				if (!positive_finite(w) || w > present)
					FAIL("document length %llu has an invalid weight",
						 (unsigned long long) h);
				rows += w;
				tokens += w * len;
				prev = len;
			}
			if (!isfinite(rows) || !isfinite(tokens))
				FAIL("document lengths of feature %u in class %u add up to more than the range of double precision",
					 j, c);
		}
	}
	if (h != v->n_lengths)
		FAIL("document length pairs do not add up to the %llu pairs",
			 (unsigned long long) v->n_lengths);
	return true;
}

/*
 * Zeros must be +0: the trainer writes no -0 there, and a model must come
 * back from a merge byte for byte.
 */
static bool
finite_nonnegative(double v)
{
	return isfinite(v) && v >= 0 && !signbit(v);
}

static bool
is_zero(double v)
{
	return v == 0 && !signbit(v);
}

/* Per-feature statistics of a version 2 or 3 model, as NbFeatureType describes. */
static bool
check_feature_stats(const NbView *v, NbFormatError *error)
{
	uint64_t	items = 0;
	uint64_t	work = 0;

	for (uint32_t j = 0; j < v->n_features; j++)
	{
		NbFeatureType type = nb_view_feature_type(v, j);
		const NbFeatureTypeInfo *info = nb_feature_type_info((uint32_t) type);
		uint32_t	n_items = nb_view_feature_items(v, j);
		double		rows = nb_read_f64(v->feature_rows, j);
		double		mean = nb_read_f64(v->feature_mean, j);
		double		m2 = nb_read_f64(v->feature_m2, j);

		nb_interrupt_count(&work, 1 + (uint64_t) v->n_classes);
		if (info == NULL)
			FAIL("feature %u has an unknown type %u", j, (unsigned) type);
		if (n_items > 0 && info->items == NULL)
			FAIL("feature %u has items but is neither a bag nor categorical", j);
		items += n_items;
		/* Gaussian rows are counted one by one: 0, or a whole number >= 1 */
		if (info->stats == NB_STATS_MOMENTS ?
			!(finite_nonnegative(rows) && rows == floor(rows) && isfinite(mean) &&
			  finite_nonnegative(m2) && (rows > 0 || (is_zero(mean) && is_zero(m2)))) :
			!(is_zero(rows) && is_zero(mean) && is_zero(m2)))
			FAIL("feature %u has invalid overall statistics", j);
		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			double		present = nb_view_present(v, j, c);
			double		a = nb_view_a(v, j, c);
			double		b = nb_view_b(v, j, c);
			bool		ok;

			if (!finite_nonnegative(present) || present > nb_read_f64(v->class_docs, c))
				FAIL("feature %u has an invalid row count for class %u", j, c);
			switch (info->stats)
			{
				case NB_STATS_MOMENTS:
					ok = present > 0 ? isfinite(a) && finite_nonnegative(b) :
						is_zero(a) && is_zero(b);
					break;
				case NB_STATS_TRUE_ROWS:
					ok = finite_nonnegative(a) && a <= present && is_zero(b);
					break;
				case NB_STATS_NONE:
				default:
					ok = is_zero(a) && is_zero(b);
					break;
			}
			if (!ok)
				FAIL("feature %u has invalid statistics for class %u", j, c);
		}
	}
	if (items != v->n_tokens)
		FAIL("feature items do not add up to the %u items", v->n_tokens);
	return true;
}

/* The fixed header: magic number, version, flags and the first counts. */
static bool
open_header(NbView *view, const unsigned char *p, size_t size, uint16_t *flags,
			NbFormatError *error)
{
	if (size < NB_HEADER_SIZE)
		FAIL("value is %zu bytes, shorter than the %d-byte header", size, NB_HEADER_SIZE);
	if (memcmp(p, "NBCM", 4) != 0)
		FAIL("bad magic number");
	/* the version, then the flags: two little-endian 16-bit numbers */
	view->version = (uint16_t) nb_read_u32(p + 4, 0);
	*flags = (uint16_t) (nb_read_u32(p + 4, 0) >> 16);
	if (view->version < NB_FORMAT_VERSION_TEXT || view->version > NB_FORMAT_VERSION_SETTINGS)
		FAIL("unsupported format version %u", (unsigned) view->version);
	if (view->version == NB_FORMAT_VERSION_SETTINGS ?
		(*flags & ~(NB_FORMAT_FLAG_NO_LENGTHS | NB_FORMAT_FLAG_JSONB_BAG |
					NB_FORMAT_FLAG_NULL_LABELS | NB_FORMAT_FLAG_COMPONENTS)) != 0 : *flags != 0)
		FAIL("unsupported flags 0x%04x", (unsigned) *flags);
	view->settings.jsonb_bag = (*flags & NB_FORMAT_FLAG_JSONB_BAG) != 0;
	view->settings.components = (*flags & NB_FORMAT_FLAG_COMPONENTS) != 0;
	view->size = size;
	view->n_classes = nb_read_u32(p + 8, 0);
	view->n_tokens = nb_read_u32(p + 12, 0);
	view->n_entries = nb_read_le64(p + 16);
	view->checksum = nb_read_le64(p + 24);
	/* a model of rows that all had a NULL label has no class, and nothing but their count */
	if (view->n_classes == 0 && !(*flags & NB_FORMAT_FLAG_NULL_LABELS))
		FAIL("model has no classes");
	return true;
}

/* The settings' bytes of a version 4 model, before they are checked. */
typedef struct RawSettings
{
	const unsigned char *tokenizer;
	const unsigned char *options;
	uint32_t	tokenizer_size;
	uint32_t	options_size;
} RawSettings;

/*
 * The counts after the header (from version 2 on), the sections they size
 * and the settings' bytes: *cursor and *remaining are then what is left,
 * the string areas.
 */
static bool
open_sections(NbView *view, uint16_t flags, bool lengths, const unsigned char **cursor,
			  size_t *remaining, RawSettings *raw, NbFormatError *error)
{
	bool		null_labels = (flags & NB_FORMAT_FLAG_NULL_LABELS) != 0;
	NbSectionCounts n;

	view->n_features = 1;
	if (view->version != NB_FORMAT_VERSION_TEXT)
	{
		size_t		counts = counts_size(view->version, null_labels);

		if (*remaining < counts)
			FAIL("counts in the header do not fit the value's %zu bytes", view->size);
		view->n_features = nb_read_u32(*cursor, 0);
		view->vector_len = nb_read_u32(*cursor, 1);
		if (view->version >= NB_FORMAT_VERSION)
			view->n_lengths = nb_read_le64(*cursor + 8);
		if (view->version == NB_FORMAT_VERSION_SETTINGS)
		{
			raw->tokenizer_size = nb_read_u32(*cursor, 4);
			raw->options_size = nb_read_u32(*cursor, 5);
		}
		if (null_labels)
		{
			view->settings.null_labels = nb_read_le64(*cursor + 24);
			if (view->settings.null_labels == 0)
				FAIL("a count of rows skipped for a NULL label of 0 with its flag");
		}
		if (!lengths && view->n_lengths != 0)
			FAIL("a model without document lengths has %llu length pairs",
				 (unsigned long long) view->n_lengths);
		*cursor += counts;
		*remaining -= counts;
	}
	n = nb_section_counts(view->n_classes, view->n_tokens, view->n_entries, view->n_features,
						  view->n_lengths);
#define TAKE_SECTION(name, width, count, since) \
	if (section_present(view->version, lengths, (since)) && \
		!take(cursor, remaining, n.count, (width), &view->name)) \
		FAIL("counts in the header do not fit the value's %zu bytes", view->size);
	NB_SECTIONS(TAKE_SECTION)
#undef TAKE_SECTION
	if (!take(cursor, remaining, raw->tokenizer_size, 1, &raw->tokenizer) ||
		!take(cursor, remaining, raw->options_size, 1, &raw->options))
		FAIL("settings do not fit the value's %zu bytes", view->size);
	return true;
}

/*
 * The rows skipped for a NULL label: flagged only when there are some, and
 * a model of no class (of such rows alone) has nothing but them and its
 * tokenizer.
 */
static bool
check_null_labels(const NbView *view, NbFormatError *error)
{
	if (view->settings.null_labels > NB_NULL_LABELS_MAX)
		FAIL("the count of rows skipped for a NULL label is out of range");
	if (view->n_classes == 0 &&
		(view->n_tokens != 0 || view->n_features != 0 || view->vector_len != 0 ||
		 view->settings.options_len != 0))
		FAIL("a model without classes has more than a count of rows skipped for a NULL label");
	return true;
}

/* The settings: a valid tokenizer, options without a zero byte, a flag that applies. */
static bool
open_settings(NbView *view, const RawSettings *raw, NbFormatError *error)
{
	if (raw->tokenizer_size != 0)
	{
		if (raw->tokenizer_size != NB_TOKENIZER_SIZE ||
			!nb_tokenizer_decode(&view->settings.tokenizer, raw->tokenizer))
			FAIL("invalid tokenizer");
		view->settings.has_tokenizer = true;
	}
	if (raw->options_size != 0)
	{
		if (memchr(raw->options, '\0', raw->options_size) != NULL)
			FAIL("prediction options contain a zero byte");
		view->settings.options = (const char *) raw->options;
		view->settings.options_len = raw->options_size;
	}
	if (view->version == NB_FORMAT_VERSION_SETTINGS && !nb_settings_any(&view->settings))
		FAIL("a model without settings must be an earlier format version");
	if (view->settings.jsonb_bag && !has_unnamed_bag(view))
		FAIL("a bag \"\" of jsonb rows is flagged, but the model has no bag \"\"");
	return check_null_labels(view, error);
}

/*
 * The string areas, which fill the rest exactly: labels, items and feature
 * names, the labels and names each in order; the items' bytes in
 * *token_bytes.
 */
static bool
open_strings(NbView *view, const unsigned char *cursor, size_t remaining, uint64_t *token_bytes,
			 NbFormatError *error)
{
	bool		features = view->version != NB_FORMAT_VERSION_TEXT;
	uint64_t	label_bytes;
	uint64_t	name_bytes;
	size_t		off = 0;
	bool		repeats = false;

	if (!string_bytes(view->label_len, view->n_classes, remaining, &label_bytes))
		FAIL("labels extend past the end of the value");
	if (!string_bytes(view->token_len, view->n_tokens, remaining - label_bytes, token_bytes))
		FAIL("tokens extend past the end of the value");
	name_bytes = remaining - label_bytes - *token_bytes;
	if (features)
	{
		uint64_t	names;

		if (!string_bytes(view->feature_name_len, view->n_features, name_bytes, &names) ||
			names != name_bytes)
			FAIL("feature name lengths do not add up to the feature name bytes");
	}
	else if (name_bytes != 0)
		FAIL("token lengths do not add up to the token bytes");
	view->labels = (const char *) cursor;
	view->tokens = view->labels + label_bytes;
	if (features)
		view->feature_names = view->tokens + *token_bytes;
	if (!check_strings(view->label_len, 0, view->n_classes, view->labels, label_bytes, &off,
					   "label", view->settings.components ? &repeats : NULL, error))
		return false;
	/* a model whose classes are one component each is written without the flag */
	if (view->settings.components && !repeats)
		FAIL("model is flagged as one of mixture components but no label repeats");
	off = 0;
	return !features ||
		check_strings(view->feature_name_len, 0, view->n_features,
					  view->feature_names, name_bytes, &off, "feature name", NULL, error);
}

/* The n entries of item t (of feature j) from entry *entry on: classes ascending, counts valid. */
static bool
check_item_entries(const NbView *view, uint32_t j, uint32_t t, uint32_t n, uint64_t *entry,
				   NbFormatError *error)
{
	int64_t		prev_class = -1;

	if (n == 0 || n > view->n_classes || n > view->n_entries - *entry)
		FAIL("token %u has an invalid number of entries (%u)", t, n);
	for (uint32_t k = 0; k < n; k++, (*entry)++)
	{
		uint32_t	c = nb_read_u32(view->entry_class, *entry);

		if (c >= view->n_classes || (int64_t) c <= prev_class)
			FAIL("entry %llu has an invalid class %u", (unsigned long long) *entry, c);
		if (!positive_finite(nb_read_f64(view->entry_count, *entry)) ||
			!positive_finite(nb_read_f64(view->entry_docs, *entry)))
			FAIL("entry %llu has a count that is not a positive finite number",
				 (unsigned long long) *entry);

		/*
		 * Documents containing an item are a subset of the documents with
		 * its feature; summing positive weights rounds monotonically, so
		 * this holds exactly for every value the trainer writes.
		 */
		if (nb_read_f64(view->entry_docs, *entry) > nb_view_present(view, j, c))
			FAIL("entry %llu has more documents than its class", (unsigned long long) *entry);
		prev_class = c;
	}
	return true;
}

/* Items: sorted within each feature; entries no more than the feature's rows. */
static bool
check_items(const NbView *view, uint64_t token_bytes, NbFormatError *error)
{
	size_t		off = 0;
	uint64_t	entry = 0;
	uint64_t	work = 0;

	for (uint32_t j = 0, t = 0; j < view->n_features; j++)
	{
		uint32_t	n_items = nb_view_feature_items(view, j);

		if (!check_strings(view->token_len, t, n_items, view->tokens, token_bytes,
						   &off, "token", NULL, error))
			return false;
		for (uint32_t end = t + n_items; t < end; t++)
		{
			uint32_t	n = nb_read_u32(view->token_entries, t);

			nb_interrupt_count(&work, 1 + (uint64_t) n);
			if (!check_item_entries(view, j, t, n, &entry, error))
				return false;
		}
	}
	if (entry != view->n_entries)
		FAIL("token entries do not add up to the %llu entries",
			 (unsigned long long) view->n_entries);
	return true;
}

/*
 * float8[] positions name Gaussian features "1".."n": names are unique, so
 * n features of the vector's kind are exactly those.
 */
static bool
check_positions(const NbView *view, NbFormatError *error)
{
	NbStringIter names = nb_view_feature_names(view);
	const char *name;
	uint32_t	len;
	uint32_t	found = 0;

	if (view->vector_len == 0)
		return true;
	for (uint32_t j = 0; nb_string_next(&names, &name, &len); j++)
	{
		nb_interrupt_at(j);
		if (nb_feature_input_kind(name, len, nb_view_feature_type(view, j),
								  view->vector_len) == NB_INPUT_VECTOR)
			found++;
	}
	if (found != view->vector_len)
		FAIL("a position of the %u-element vector is not a Gaussian feature", view->vector_len);
	return true;
}

bool
nb_view_open(NbView *view, const void *data, size_t size, NbFormatError *error)
{
	const unsigned char *p = data;
	const unsigned char *cursor = p + NB_HEADER_SIZE;
	size_t		remaining;
	RawSettings raw = {NULL, NULL, 0, 0};
	uint64_t	token_bytes;
	uint16_t	flags;
	bool		lengths;

	memset(view, 0, sizeof(*view));
	if (!open_header(view, p, size, &flags, error))
		return false;
	remaining = size - NB_HEADER_SIZE;
	lengths = view->version == NB_FORMAT_VERSION ||
		(view->version == NB_FORMAT_VERSION_SETTINGS && !(flags & NB_FORMAT_FLAG_NO_LENGTHS));
	if (!open_sections(view, flags, lengths, &cursor, &remaining, &raw, error))
		return false;
	if (view->version == NB_FORMAT_VERSION_TEXT)
		imply_text_only(view, p);
	if (nb_format_checksum(p, size) != view->checksum)
		FAIL("checksum mismatch");
	if (!open_settings(view, &raw, error) ||
		!open_strings(view, cursor, remaining, &token_bytes, error))
		return false;
	for (uint32_t c = 0; c < view->n_classes; c++)
	{
		nb_interrupt_at(c);
		if (!positive_finite(nb_read_f64(view->class_docs, c)))
			FAIL("document count of class %u is not a positive finite number", c);
	}
	if (view->version != NB_FORMAT_VERSION_TEXT && !check_feature_stats(view, error))
		return false;
	if ((lengths && !check_lengths(view, error)) ||
		!check_items(view, token_bytes, error) || !check_positions(view, error))
		return false;

	/* one model, one byte string: what version 1 holds is written as version 1 */
	if (view->version == NB_FORMAT_VERSION_FEATURES && nb_view_text_only(view))
		FAIL("a model of the bag \"\" alone, present in every document, must be format version 1");

	/* scoring sums counts over classes and tokens: the sums must be finite too */
	if (!nb_view_sums_finite(view))
		FAIL("counts add up to more than the range of double precision");
	return true;
}

bool
nb_view_sums_finite(const NbView *view)
{
	NbSums		sums = {0, 0, 0};

	for (uint32_t c = 0; c < view->n_classes; c++)
		sums.docs += nb_read_f64(view->class_docs, c);
	for (uint64_t e = 0; e < view->n_entries; e++)
	{
		nb_interrupt_at(e);
		nb_sums_add_entry(&sums, nb_read_f64(view->entry_count, e),
						  nb_read_f64(view->entry_docs, e));
	}
	return nb_sums_finite(sums);
}

bool
nb_format_text_only(const void *model, uint32_t n_features, uint32_t first_name_len,
					NbFeatureType first_type, uint32_t n_classes, NbClassRows rows)
{
	if (n_features != 1 || first_name_len != 0 || first_type != NB_FEATURE_BAG)
		return false;
	for (uint32_t c = 0; c < n_classes; c++)
	{
		double		docs;
		double		present;

		rows(model, c, &docs, &present);
		if (present != docs)
			return false;
	}
	return true;
}

static void
view_rows(const void *model, uint32_t c, double *docs, double *present)
{
	*docs = nb_read_f64(((const NbView *) model)->class_docs, c);
	*present = nb_view_present(model, 0, c);
}

bool
nb_view_text_only(const NbView *view)
{
	bool		any = view->n_features > 0;

	return nb_format_text_only(view, view->n_features,
							   any ? nb_view_feature_name_len(view, 0) : 0,
							   any ? nb_view_feature_type(view, 0) : NB_FEATURE_BAG,
							   view->n_classes, view_rows);
}

/* The version a shape is written as. */
static uint16_t
shape_version(const NbFormatShape *s)
{
	if (nb_settings_any(&s->settings))
		return NB_FORMAT_VERSION_SETTINGS;
	if (s->lengths)
		return NB_FORMAT_VERSION;
	return s->text_only ? NB_FORMAT_VERSION_TEXT : NB_FORMAT_VERSION_FEATURES;
}

/* *size += n * width, false if that passes limit. */
static bool
add_bytes(uint64_t *size, uint64_t n, uint64_t width, uint64_t limit)
{
	if (*size > limit || n > (limit - *size) / width)
		return false;
	*size += n * width;
	return true;
}

size_t
nb_format_size(const NbFormatShape *s, size_t max_size)
{
	uint16_t	version = shape_version(s);
	NbSectionCounts n = nb_section_counts(s->n_classes, s->n_tokens, s->n_entries, s->n_features,
										  s->n_lengths);
	uint64_t	size = NB_HEADER_SIZE + counts_size(version, s->settings.null_labels > 0);

#define SECTION_BYTES(name, width, count, since) \
	if (section_present(version, s->lengths, (since)) && \
		!add_bytes(&size, n.count, (width), max_size)) \
		return 0;
	NB_SECTIONS(SECTION_BYTES)
#undef SECTION_BYTES
	if (!add_bytes(&size, s->settings.has_tokenizer ? NB_TOKENIZER_SIZE : 0, 1, max_size) ||
		!add_bytes(&size, s->settings.options_len, 1, max_size))
		return 0;
	if (!add_bytes(&size, s->label_bytes, 1, max_size) ||
		!add_bytes(&size, s->token_bytes, 1, max_size) ||
		(version >= NB_FORMAT_VERSION_FEATURES && !add_bytes(&size, s->name_bytes, 1, max_size)))
		return 0;
	return (size_t) size;
}

void
nb_format_begin(NbFormatWriter *w, const NbFormatShape *s, unsigned char *buf, size_t size)
{
	NbSectionCounts n = nb_section_counts(s->n_classes, s->n_tokens, s->n_entries, s->n_features,
										  s->n_lengths);
	uint16_t	version = shape_version(s);
	bool		features = version != NB_FORMAT_VERSION_TEXT;
	uint16_t	flags = 0;
	unsigned char *p;

	if (version == NB_FORMAT_VERSION_SETTINGS && !s->lengths)
		flags |= NB_FORMAT_FLAG_NO_LENGTHS;
	if (s->settings.jsonb_bag)
		flags |= NB_FORMAT_FLAG_JSONB_BAG;
	if (s->settings.null_labels > 0)
		flags |= NB_FORMAT_FLAG_NULL_LABELS;
	if (s->settings.components)
		flags |= NB_FORMAT_FLAG_COMPONENTS;
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->size = size;
	w->shape = *s;
	memset(buf, 0, NB_HEADER_SIZE);
	memcpy(buf, "NBCM", 4);
	nb_write_u32(buf + 4, 0, version | (uint32_t) flags << 16);
	nb_write_u32(buf + 8, 0, s->n_classes);
	nb_write_u32(buf + 12, 0, s->n_tokens);
	nb_write_u32(buf + 16, 0, (uint32_t) s->n_entries);
	nb_write_u32(buf + 20, 0, (uint32_t) (s->n_entries >> 32));

	p = buf + NB_HEADER_SIZE;
	if (features)
	{
		nb_write_u32(p, 0, s->n_features);
		nb_write_u32(p, 1, s->vector_len);
	}
	if (version >= NB_FORMAT_VERSION)
	{
		nb_write_u32(p, 2, (uint32_t) s->n_lengths);
		nb_write_u32(p, 3, (uint32_t) (s->n_lengths >> 32));
	}
	if (version == NB_FORMAT_VERSION_SETTINGS)
	{
		nb_write_u32(p, 4, s->settings.has_tokenizer ? NB_TOKENIZER_SIZE : 0);
		nb_write_u32(p, 5, s->settings.options_len);
		if (s->settings.null_labels > 0)
		{
			nb_write_u32(p, 6, (uint32_t) s->settings.null_labels);
			nb_write_u32(p, 7, (uint32_t) (s->settings.null_labels >> 32));
		}
	}
	p += counts_size(version, s->settings.null_labels > 0);
#define PLACE_SECTION(name, width, count, since) \
	if (section_present(version, s->lengths, (since))) \
	{ \
		w->name = p; \
		p += n.count * (width); \
	}
	NB_SECTIONS(PLACE_SECTION)
#undef PLACE_SECTION
	if (s->settings.has_tokenizer)
	{
		nb_tokenizer_encode(&s->settings.tokenizer, p);
		p += NB_TOKENIZER_SIZE;
	}
	w->shape.settings.options = NULL;
	if (s->settings.options_len > 0)
	{
		memcpy(p, s->settings.options, s->settings.options_len);
		w->shape.settings.options = (const char *) p;
		p += s->settings.options_len;
	}
	w->labels = (char *) p;
	w->tokens = w->labels + s->label_bytes;
	w->feature_names = features ? w->tokens + s->token_bytes : NULL;
}

void
nb_format_finish(const NbFormatWriter *w, NbView *view)
{
	uint64_t	u = nb_format_checksum(w->buf, w->size);

	nb_write_u32(w->buf + 24, 0, (uint32_t) u);
	nb_write_u32(w->buf + 28, 0, (uint32_t) (u >> 32));
	if (view == NULL)
		return;
	memset(view, 0, sizeof(*view));
	view->size = w->size;
	view->version = shape_version(&w->shape);
	view->n_classes = w->shape.n_classes;
	view->n_tokens = w->shape.n_tokens;
	view->n_entries = w->shape.n_entries;
	view->checksum = u;
	view->n_features = w->shape.n_features;
	view->vector_len = w->shape.vector_len;
#define COPY_SECTION(name, width, count, since) view->name = w->name;
	NB_SECTIONS(COPY_SECTION)
#undef COPY_SECTION
	view->labels = w->labels;
	view->tokens = w->tokens;
	view->feature_names = w->feature_names;
	view->settings = w->shape.settings;
	if (w->shape.lengths)
		view->n_lengths = w->shape.n_lengths;
	else if (view->version == NB_FORMAT_VERSION_TEXT)
		imply_text_only(view, w->buf);
}

NbFormatShape
nb_view_shape(const NbView *v, const NbSettings *settings)
{
	NbFormatShape s;

	memset(&s, 0, sizeof(s));
	s.n_classes = v->n_classes;
	s.n_tokens = v->n_tokens;
	s.n_entries = v->n_entries;
	s.n_features = v->n_features;
	s.vector_len = v->vector_len;
	s.label_bytes = (uint64_t) (v->tokens - v->labels);
	(void) string_bytes(v->token_len, v->n_tokens, UINT64_MAX, &s.token_bytes);
	(void) string_bytes(v->feature_name_len, v->n_features, UINT64_MAX, &s.name_bytes);
	s.text_only = nb_view_text_only(v);
	s.lengths = nb_view_has_lengths(v);
	s.n_lengths = v->n_lengths;
	s.settings = *settings;
	return s;
}

void
nb_format_copy(NbFormatWriter *w, const NbView *v)
{
	NbSectionCounts n = nb_section_counts(v->n_classes, v->n_tokens, v->n_entries, v->n_features,
										  v->n_lengths);

	/*
	 * Every section the writer has, the view has too (a version 1 view's
	 * implied ones point at arrays of its one feature), but feature_a and
	 * feature_b, NULL where they are implied zeros.
	 */
#define COPY_SECTION(name, width, count, since) \
	if (w->name != NULL) \
	{ \
		if (v->name != NULL) \
			nb_copy(w->name, v->name, n.count * (width)); \
		else \
			memset(w->name, 0, n.count * (width)); \
	}
	NB_SECTIONS(COPY_SECTION)
#undef COPY_SECTION
	nb_copy(w->labels, v->labels, w->shape.label_bytes);
	nb_copy(w->tokens, v->tokens, w->shape.token_bytes);
	if (w->feature_names != NULL)
		nb_copy(w->feature_names, v->feature_names, w->shape.name_bytes);
}
