/*
 * nb_interrupt.c — long operations of general use with cancellation
 * points, see nb_interrupt.h.
 */
#include "nb_interrupt.h"

#include <stdlib.h>
#include <string.h>

#include "nb_alloc.h"
#include "nb_hash.h"

/* Elements sorted by one qsort call: a few milliseconds of comparisons at most. */
#define NB_SORT_RUN 4096

/* Merge the sorted runs a[0, na) and b[0, nb) into out, checking as it goes. */
static void
merge_runs(const char *a, size_t na, const char *b, size_t nb, char *out, size_t size,
		   int (*cmp) (const void *, const void *), uint64_t *work)
{
	const char *a_end = a + na * size;
	const char *b_end = b + nb * size;

	while (a < a_end && b < b_end)
	{
		/* ties take from a, the earlier run: the merge is stable */
		if (cmp(b, a) < 0)
		{
			memcpy(out, b, size);
			b += size;
		}
		else
		{
			memcpy(out, a, size);
			a += size;
		}
		out += size;
		nb_interrupt_count(work, 1);
	}
	memcpy(out, a, a_end - a);
	out += a_end - a;
	memcpy(out, b, b_end - b);
	nb_interrupt_count(work, (uint64_t) ((a_end - a) + (b_end - b)) / 64);
}

void
nb_sort(void *base, size_t n, size_t size, int (*cmp) (const void *, const void *))
{
	char	   *src = base;
	char	   *dst;
	char	   *buf;
	uint64_t	work = 0;

	if (n <= NB_SORT_RUN)
	{
		qsort(base, n, size, cmp);
		return;
	}
	for (size_t lo = 0; lo < n; lo += NB_SORT_RUN)
	{
		qsort(src + lo * size, n - lo < NB_SORT_RUN ? n - lo : NB_SORT_RUN, size, cmp);
		nb_interrupt();
	}
	buf = nb_alloc(n * size);
	dst = buf;
	for (size_t width = NB_SORT_RUN; width < n; width *= 2)
	{
		char	   *t;

		for (size_t lo = 0; lo < n; lo += 2 * width)
		{
			size_t		na = n - lo < width ? n - lo : width;
			size_t		nb = n - lo - na < width ? n - lo - na : width;

			merge_runs(src + lo * size, na, src + (lo + na) * size, nb,
					   dst + lo * size, size, cmp, &work);
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != base)
		nb_copy(base, src, n * size);
	nb_free(buf);
}

uint64_t
nb_hash_bytes_long(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t	h = seed ^ (len * NB_P1);
	size_t		words = len / 8;

	while (words > 0)
	{
		size_t		n = words < NB_INTERRUPT_BYTES / 8 ? words : NB_INTERRUPT_BYTES / 8;

		h = nb_hash_words(h, p, n);
		p += n * 8;
		words -= n;
		nb_interrupt();
	}
	return nb_hash_tail(h, p, len % 8);
}

void
nb_copy(void *dst, const void *src, size_t n)
{
	char	   *d = dst;
	const char *s = src;

	while (n > NB_INTERRUPT_BYTES)
	{
		memcpy(d, s, NB_INTERRUPT_BYTES);
		d += NB_INTERRUPT_BYTES;
		s += NB_INTERRUPT_BYTES;
		n -= NB_INTERRUPT_BYTES;
		nb_interrupt();
	}
	memcpy(d, s, n);
}
