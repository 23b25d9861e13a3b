/*
 * nb_interrupt.h — cancellation points of the pure code's long operations.
 *
 * Every loop whose work grows with an input or a model calls nb_interrupt()
 * at least once per NB_INTERRUPT_EVERY units of work, a unit being about
 * the cost of one token lookup (an entry, an item, 64 bytes hashed or
 * copied), so a cancel is noticed within about a millisecond.  The hot
 * loops pay a counter test, not a call, per unit.
 *
 * Like nb_alloc.h, the function is provided by whoever links the pure code:
 * in the server pg_alloc.c runs CHECK_FOR_INTERRUPTS(), which may raise an
 * error and so never return: the operation is abandoned halfway.  That is
 * safe because the pure code allocates only in the caller's memory context,
 * which the error discards, and because an object being changed is never
 * used after an error: the aggregates' states and anything being built
 * (a serialized model, a prepared model or scorer, a document) are thrown
 * away with their context, and a read-only operation (writing a model out,
 * validating, scoring) leaves its inputs as they were.  The unit tests link
 * a version that counts calls and can jump out (test/unit/malloc_alloc.c).
 */
#ifndef NB_INTERRUPT_H
#define NB_INTERRUPT_H

#include <stddef.h>
#include <stdint.h>

/* Units of work between two checks; a power of two. */
#define NB_INTERRUPT_EVERY 16384

/* Bytes hashed or copied between two checks: 64 bytes make a unit. */
#define NB_INTERRUPT_BYTES (NB_INTERRUPT_EVERY * 64)

/* Check for a cancel; may not return. */
void		nb_interrupt(void);

/* In a loop over i, one unit of work per iteration: check every NB_INTERRUPT_EVERY. */
static inline void
nb_interrupt_at(uint64_t i)
{
	if ((i & (NB_INTERRUPT_EVERY - 1)) == NB_INTERRUPT_EVERY - 1)
		nb_interrupt();
}

/* Add units of work to *work (0 at first); check once they reach NB_INTERRUPT_EVERY. */
static inline void
nb_interrupt_count(uint64_t *work, uint64_t units)
{
	*work += units;
	if (*work >= NB_INTERRUPT_EVERY)
	{
		*work = 0;
		nb_interrupt();
	}
}

/*
 * qsort with cancellation points: sorts runs with qsort, then merges them
 * in a buffer allocated with nb_alloc.  Stable if qsort is (glibc's is, for
 * arrays it can copy); with a total order the result is qsort's either way.
 */
void		nb_sort(void *base, size_t n, size_t size,
					int (*cmp) (const void *, const void *));

/* memcpy with cancellation points, for arrays as large as a model's. */
void		nb_copy(void *dst, const void *src, size_t n);

/* nb_hash_bytes (nb_hash.h), same result, with cancellation points: for whole models. */
uint64_t	nb_hash_bytes_long(const void *data, size_t len, uint64_t seed);

#endif
