/*
 * nb_format.c — validation of serialized models, see nb_format.h.
 *
 * Everything here treats the input as hostile: sizes are checked against
 * the remaining length before any multiplication could overflow, and no
 * allocation is made, so a crafted value can only ever produce an error.
 */
#include "nb_format.h"

#include <math.h>
#include <stdio.h>

#include "nb_hash.h"

#define FAIL(...) \
	do { snprintf(error->message, sizeof(error->message), __VA_ARGS__); return false; } while (0)

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

static bool
positive_finite(double v)
{
	return isfinite(v) && v > 0;
}

uint64_t
nb_format_checksum(const unsigned char *data, size_t size)
{
	uint64_t	seed = nb_hash_bytes(data, 24, NB_CHECKSUM_SEED);

	return nb_hash_bytes(data + NB_HEADER_SIZE, size - NB_HEADER_SIZE, seed);
}

bool
nb_peek_checksum(const void *data, size_t size, uint64_t *checksum)
{
	if (size < NB_HEADER_SIZE)
		return false;
	*checksum = nb_read_le64((const unsigned char *) data + 24);
	return true;
}

/* Check the string lengths of one area and that the strings are strictly increasing. */
static bool
check_strings(const unsigned char *lengths, uint64_t n, const char *area,
			  size_t area_size, const char *what, NbFormatError *error)
{
	size_t		off = 0;
	const char *prev = NULL;
	uint32_t	prev_len = 0;

	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	len = nb_read_u32(lengths, i);
		const char *s = area + off;

		if (len > area_size - off)
			FAIL("%s %llu extends past the end of the value", what, (unsigned long long) i);
		if (memchr(s, '\0', len) != NULL)
			FAIL("%s %llu contains a zero byte", what, (unsigned long long) i);
		if (prev != NULL && nb_strcmp(prev, prev_len, s, len) >= 0)
			FAIL("%ss are not in strictly increasing order at %s %llu",
				 what, what, (unsigned long long) i);
		prev = s;
		prev_len = len;
		off += len;
	}
	if (off != area_size)
		FAIL("%s lengths do not add up to the %s bytes", what, what);
	return true;
}

bool
nb_view_open(NbView *view, const void *data, size_t size, NbFormatError *error)
{
	const unsigned char *p = data;
	const unsigned char *cursor;
	size_t		remaining;
	uint16_t	version;
	uint16_t	flags;
	size_t		label_bytes = 0;
	uint64_t	entry = 0;

	memset(view, 0, sizeof(*view));
	if (size < NB_HEADER_SIZE)
		FAIL("value is %zu bytes, shorter than the %d-byte header", size, NB_HEADER_SIZE);
	if (memcmp(p, "NBCM", 4) != 0)
		FAIL("bad magic number");
	memcpy(&version, p + 4, 2);
	memcpy(&flags, p + 6, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	version = __builtin_bswap16(version);
	flags = __builtin_bswap16(flags);
#endif
	if (version != NB_FORMAT_VERSION)
		FAIL("unsupported format version %u", (unsigned) version);
	if (flags != 0)
		FAIL("unsupported flags 0x%04x", (unsigned) flags);

	view->size = size;
	view->n_classes = nb_read_u32(p + 8, 0);
	view->n_tokens = nb_read_u32(p + 12, 0);
	view->n_entries = nb_read_le64(p + 16);
	view->checksum = nb_read_le64(p + 24);
	if (view->n_classes == 0)
		FAIL("model has no classes");

	cursor = p + NB_HEADER_SIZE;
	remaining = size - NB_HEADER_SIZE;
	if (!take(&cursor, &remaining, view->n_classes, 8, &view->class_docs) ||
		!take(&cursor, &remaining, view->n_classes, 4, &view->label_len) ||
		!take(&cursor, &remaining, view->n_tokens, 4, &view->token_len) ||
		!take(&cursor, &remaining, view->n_tokens, 4, &view->token_entries) ||
		!take(&cursor, &remaining, view->n_entries, 4, &view->entry_class) ||
		!take(&cursor, &remaining, view->n_entries, 8, &view->entry_count) ||
		!take(&cursor, &remaining, view->n_entries, 8, &view->entry_docs))
		FAIL("counts in the header do not fit the value's %zu bytes", size);

	if (nb_format_checksum(p, size) != view->checksum)
		FAIL("checksum mismatch");

	for (uint32_t c = 0; c < view->n_classes; c++)
	{
		uint32_t	len = nb_read_u32(view->label_len, c);

		if (!positive_finite(nb_read_f64(view->class_docs, c)))
			FAIL("document count of class %u is not a positive finite number", c);
		if (len > remaining - label_bytes)
			FAIL("labels extend past the end of the value");
		label_bytes += len;
	}
	view->labels = (const char *) cursor;
	view->tokens = view->labels + label_bytes;
	if (!check_strings(view->label_len, view->n_classes, view->labels,
					   label_bytes, "label", error) ||
		!check_strings(view->token_len, view->n_tokens, view->tokens,
					   remaining - label_bytes, "token", error))
		return false;

	for (uint32_t t = 0; t < view->n_tokens; t++)
	{
		uint32_t	n = nb_read_u32(view->token_entries, t);
		int64_t		prev_class = -1;

		if (n == 0 || n > view->n_classes || n > view->n_entries - entry)
			FAIL("token %u has an invalid number of entries (%u)", t, n);
		for (uint32_t k = 0; k < n; k++, entry++)
		{
			uint32_t	c = nb_read_u32(view->entry_class, entry);

			if (c >= view->n_classes || (int64_t) c <= prev_class)
				FAIL("entry %llu has an invalid class %u",
					 (unsigned long long) entry, c);
			if (!positive_finite(nb_read_f64(view->entry_count, entry)) ||
				!positive_finite(nb_read_f64(view->entry_docs, entry)))
				FAIL("entry %llu has a count that is not a positive finite number",
					 (unsigned long long) entry);

			/*
			 * Documents containing a token are a subset of the class's
			 * documents; summing positive weights rounds monotonically, so
			 * this holds exactly for every value the trainer writes.
			 */
			if (nb_read_f64(view->entry_docs, entry) > nb_read_f64(view->class_docs, c))
				FAIL("entry %llu has more documents than its class",
					 (unsigned long long) entry);
			prev_class = c;
		}
	}
	if (entry != view->n_entries)
		FAIL("token entries do not add up to the %llu entries",
			 (unsigned long long) view->n_entries);

	/* scoring sums counts over classes and tokens: the sums must be finite too */
	{
		double		docs = 0;
		double		count = 0;
		double		doc_freq = 0;

		for (uint32_t c = 0; c < view->n_classes; c++)
			docs += nb_read_f64(view->class_docs, c);
		for (uint64_t e = 0; e < view->n_entries; e++)
		{
			count += nb_read_f64(view->entry_count, e);
			doc_freq += nb_read_f64(view->entry_docs, e);
		}
		if (!isfinite(docs) || !isfinite(count) || !isfinite(doc_freq))
			FAIL("counts add up to more than the range of double precision");
	}
	return true;
}
