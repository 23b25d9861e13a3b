/*
 * malloc_alloc.h — test-only extras of the test implementations of nb_alloc.h
 * and nb_interrupt.h (malloc_alloc.c).
 */
#ifndef MALLOC_ALLOC_H
#define MALLOC_ALLOC_H

#include <stddef.h>

/* Blocks handed out by nb_alloc/nb_alloc_zero and not yet given to nb_free. */
long		nb_test_live_blocks(void);

/*
 * A point in the sequence of allocations, and freeing every live block
 * allocated after it: what an error does to the server's memory context.
 */
unsigned long nb_test_alloc_mark(void);
void		nb_test_free_since(unsigned long mark);

/* Calls of nb_interrupt() so far. */
long		nb_test_interrupts(void);

/*
 * From now on nb_interrupt() calls fn with the number of calls so far
 * (which may longjmp out, as CHECK_FOR_INTERRUPTS does); NULL: nothing.
 */
void		nb_test_on_interrupt(void (*fn) (long calls));

#endif
