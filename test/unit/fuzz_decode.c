/*
 * fuzz_decode.c — fast libFuzzer target for the model decoder alone.
 *
 * fuzz_model.c uses every accepted value the way the server does (scorers,
 * mutual information, a dense reference), which makes it thorough but slow
 * (hundreds of executions per second).  This target only decodes: every
 * input goes to nb_view_open, and an accepted value is walked through
 * everything the view exposes (classes, features, items, entries, strings)
 * while checking that the view keeps the promises nb_format.h makes, then
 * merged into an empty trainer and re-serialized, which must give the same
 * bytes.  Any broken promise aborts, and AddressSanitizer catches a read
 * outside the input (libFuzzer hands it over in a buffer of exactly its
 * size).
 *
 * Random bytes almost never pass the checksum, so the custom mutator
 * mutates with libFuzzer's own mutations, sometimes also edits one of the
 * count and length fields, and then usually repairs the checksum: the
 * mutation then reaches the checks behind it.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_check.h"
#include "nb_format.h"
#include "nb_trainer.h"

size_t		LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* Keeps the walk from being optimized away. */
static volatile uint64_t sink;

static uint64_t
bits(double x)
{
	uint64_t	u;

	memcpy(&u, &x, 8);
	return u;
}

static void
fail(const NbView *v, const char *what)
{
	fprintf(stderr, "fuzz_decode: accepted value (version %u, C=%u V=%u E=%llu F=%u): %s\n",
			v->version, v->n_classes, v->n_tokens, (unsigned long long) v->n_entries,
			v->n_features, what);
	abort();
}

/* Does [s, s + len) lie inside the input? */
static bool
inside(const uint8_t *data, size_t size, const void *s, size_t len)
{
	const uint8_t *p = s;

	return p >= data && p <= data + size && len <= (size_t) (data + size - p);
}

/*
 * n strings of the lengths at lengths[first..first+n) starting at area:
 * inside the input, without a zero byte, strictly increasing (or, with
 * repeats, never decreasing: a model of mixture components repeats a
 * class's label per component).  Returns their total length.
 */
static size_t
walk_strings(const NbView *v, const uint8_t *data, size_t size,
			 const unsigned char *lengths, uint64_t first, uint64_t n,
			 const char *area, const char *what, bool repeats)
{
	size_t		off = 0;
	const char *prev = NULL;
	uint32_t	prev_len = 0;
	uint64_t	h = 0;

	for (uint64_t i = first; i < first + n; i++)
	{
		uint32_t	len = nb_read_u32(lengths, i);
		const char *s = area + off;

		if (!inside(data, size, s, len))
			fail(v, what);
		if (memchr(s, '\0', len) != NULL)
			fail(v, "a string holds a zero byte");
		if (prev != NULL)
		{
			int			cmp = nb_strcmp(prev, prev_len, s, len);

			if (cmp > 0 || (cmp == 0 && !repeats))
				fail(v, "strings out of order");
		}
		h ^= nb_hash_bytes(s, len, i);
		prev = s;
		prev_len = len;
		off += len;
	}
	sink ^= h;
	return off;
}

/* The length histograms of version 3: runs of bags that add up to H, in order. */
static void
walk_lengths(const NbView *v)
{
	uint64_t	h = 0;

	for (uint32_t j = 0; v->length_pairs != NULL && j < v->n_features; j++)
		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			uint32_t	n = nb_view_length_pairs(v, j, c);
			double		prev = 0;

			if (n > 0 && nb_view_feature_type(v, j) != NB_FEATURE_BAG)
				fail(v, "lengths of a feature that is not a bag");
			if (n > v->n_lengths - h)
				fail(v, "length pairs exceed H");
			for (uint64_t end = h + n; h < end; h++)
			{
				double		len = nb_read_f64(v->length_value, h);
				double		w = nb_read_f64(v->length_weight, h);

				if (!(isfinite(len) && len > prev))
					fail(v, "lengths not positive, finite and increasing");
				if (!(isfinite(w) && w > 0 && w <= nb_view_present(v, j, c)))
					fail(v, "a length weight is not positive or exceeds the bag's rows");
				prev = len;
				sink += bits(w);
			}
		}
	if (h != v->n_lengths)
		fail(v, "length pairs do not add up to H");
}

static void
walk(const NbView *v, const uint8_t *data, size_t size)
{
	double		docs = 0;
	uint64_t	entry = 0;
	uint64_t	items = 0;
	size_t		token_off = 0;
	size_t		label_bytes;
	size_t		name_bytes = 0;

	/* no class: a model of rows that all had a NULL label, their count alone */
	if (v->size != size ||
		(v->n_classes == 0 && (v->settings.null_labels == 0 || v->n_features != 0 ||
							   v->n_tokens != 0 || v->vector_len != 0)) ||
		v->version < 1 || v->version > 4 ||
		(v->version == 1 && (v->n_features != 1 || v->vector_len != 0)) ||
		(v->version < 4 && (v->version == 3) != (v->length_pairs != NULL)) ||
		(v->version < 4 && (v->settings.has_tokenizer || v->settings.options_len != 0 ||
							v->settings.jsonb_bag)))
		fail(v, "inconsistent header fields");

	/* classes */
	label_bytes = walk_strings(v, data, size, v->label_len, 0, v->n_classes,
							   v->labels, "label outside the value", v->settings.components);
	for (uint32_t c = 0; c < v->n_classes; c++)
	{
		double		d = nb_read_f64(v->class_docs, c);

		if (!(isfinite(d) && d > 0))
			fail(v, "a class document count is not positive and finite");
		docs += d;
	}
	if (!isfinite(docs))
		fail(v, "the document counts add up to infinity");
	if (v->tokens != v->labels + label_bytes)
		fail(v, "items do not follow the labels");

	/* features, with their items and entries */
	if (v->version != 1)
		name_bytes = walk_strings(v, data, size, v->feature_name_len, 0, v->n_features,
								  v->feature_names, "feature name outside the value", false);
	for (uint32_t j = 0; j < v->n_features; j++)
	{
		NbFeatureType type = nb_view_feature_type(v, j);
		uint32_t	n_items = nb_view_feature_items(v, j);

		if (type < NB_FEATURE_BAG || type > NB_FEATURE_TYPE_MAX)
			fail(v, "a feature of unknown type");
		if (n_items > 0 && type != NB_FEATURE_BAG && type != NB_FEATURE_CATEGORICAL)
			fail(v, "items of a feature that has none");
		if (n_items > v->n_tokens - items)
			fail(v, "feature items exceed the items");
		for (uint32_t c = 0; c < v->n_classes; c++)
		{
			double		present = nb_view_present(v, j, c);
			double		a = nb_view_a(v, j, c);
			double		b = nb_view_b(v, j, c);

			if (!(present >= 0 && present <= nb_read_f64(v->class_docs, c)))
				fail(v, "a feature present in more rows than its class has");
			if (!isfinite(a) || !(b >= 0 && isfinite(b)))
				fail(v, "a feature statistic is not finite");
			if (type == NB_FEATURE_BOOLEAN && a > present)
				fail(v, "a boolean true in more rows than present");
			sink += bits(present) ^ bits(b);
		}
		if (v->version != 1)
		{
			double		rows = nb_read_f64(v->feature_rows, j);

			if (!(rows >= 0 && isfinite(rows) && isfinite(nb_read_f64(v->feature_mean, j)) &&
				  isfinite(nb_read_f64(v->feature_m2, j))))
				fail(v, "overall feature statistics are not finite");
		}
		token_off += walk_strings(v, data, size, v->token_len, items, n_items,
								  v->tokens + token_off, "item outside the value", false);
		for (uint64_t t = items; t < items + n_items; t++)
		{
			uint32_t	n = nb_read_u32(v->token_entries, t);
			int64_t		prev_class = -1;

			if (n == 0 || n > v->n_classes || n > v->n_entries - entry)
				fail(v, "an item with an invalid number of entries");
			for (uint32_t k = 0; k < n; k++, entry++)
			{
				uint32_t	c = nb_read_u32(v->entry_class, entry);
				double		count = nb_read_f64(v->entry_count, entry);
				double		d = nb_read_f64(v->entry_docs, entry);

				if (c >= v->n_classes || (int64_t) c <= prev_class)
					fail(v, "an entry of an invalid class");
				if (!(isfinite(count) && count > 0 && isfinite(d) && d > 0))
					fail(v, "an entry count is not positive and finite");
				if (d > nb_view_present(v, j, c))
					fail(v, "an item in more rows than its feature");
				prev_class = c;
				sink += c;
			}
		}
		items += n_items;
	}
	if (items != v->n_tokens || entry != v->n_entries)
		fail(v, "items or entries do not add up");
	walk_lengths(v);
	if (v->version != 1 && v->feature_names != v->tokens + token_off)
		fail(v, "feature names do not follow the items");
	if ((const uint8_t *) (v->version != 1 ? v->feature_names + name_bytes :
						   v->tokens + token_off) != data + size)
		fail(v, "the strings do not end at the end of the value");
	if (nb_format_checksum(data, size) != v->checksum)
		fail(v, "accepted with a wrong checksum");
}

/* Merge into an empty trainer and write again: the same bytes. */
static void
round_trip(const NbView *v, const uint8_t *data, size_t size)
{
	NbTrainer  *t = nb_trainer_create();
	uint32_t	conflict = UINT32_MAX;
	unsigned char *out = NULL;
	const char *err = NULL;
	size_t		n;

	if (nb_trainer_merge_view(t, v, &conflict) != NB_MERGE_OK)
		err = "merging a valid model into an empty trainer is refused";
	else if (t->overflow || !nb_trainer_sums_finite(t))
		err = "merging one valid model into an empty trainer reports an overflow";
	else if ((n = nb_trainer_flat_size(t, SIZE_MAX)) != size)
		err = "round trip: the re-serialized model has another size";
	else
	{
		out = malloc(n);
		nb_trainer_write_view(t, out, n, NULL);
		if (memcmp(out, data, size) != 0)
			err = "round trip: the re-serialized model differs";
	}
	free(out);
	nb_trainer_destroy(t);
	if (err != NULL)
		fail(v, err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	NbView		view;
	NbFormatError error;

	memset(error.message, 'x', sizeof(error.message));
	if (!nb_view_open(&view, data, size, &error))
	{
		if (memchr(error.message, '\0', sizeof(error.message)) == NULL || error.message[0] == '\0')
		{
			fprintf(stderr, "fuzz_decode: rejected without a terminated error message\n");
			abort();
		}
		return 0;
	}
	walk(&view, data, size);
	/* a trainer keys classes by label: mixture components are never merged (nb_merge refuses them) */
	if (!view.settings.components)
		round_trip(&view, data, size);
	return 0;
}

/*
 * Offsets of the count fields in the header (C, V, E low and high words,
 * for versions 2 and 3 F and the vector length, for version 3 H).
 */
static const size_t count_fields[] = {8, 12, 16, 20, 32, 36, 40, 44};

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t	s = seed * UINT64_C(0x9e3779b97f4a7c15) + size;
	uint64_t	r = nbt_rand(&s);
	size_t		n = LLVMFuzzerMutate(data, size, max_size);

	if (n < NB_HEADER_SIZE)
		return n;
	/* one time in four, nudge a count or a length field by a small amount */
	if ((r & 3) == 0)
	{
		size_t		off;
		uint32_t	v;
		int32_t		delta = (int32_t) ((r >> 8) % 5) - 2;

		if ((r >> 4) & 1)
			off = count_fields[(r >> 16) % (data[4] == NB_FORMAT_VERSION_TEXT ? 4 :
											data[4] == NB_FORMAT_VERSION_FEATURES ? 6 : 8)];
		else
			off = NB_HEADER_SIZE + 4 * ((r >> 16) % ((n - NB_HEADER_SIZE) / 4 + 1));
		if (off + 4 <= n)
		{
			v = nb_read_u32(data + off, 0);
			nb_write_u32(data + off, 0, v + (uint32_t) (delta == 0 ? 1 : delta));
		}
	}
	/* seven times in eight, a valid checksum so the mutation gets past it */
	if (((r >> 32) & 7) != 0)
		nbt_fix_checksum(data, n);
	return n;
}
