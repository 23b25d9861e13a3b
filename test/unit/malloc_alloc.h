/*
 * malloc_alloc.h — test-only extras of the malloc implementation of
 * nb_alloc.h (malloc_alloc.c).
 */
#ifndef MALLOC_ALLOC_H
#define MALLOC_ALLOC_H

#include <stddef.h>

/* Blocks handed out by nb_alloc/nb_alloc_zero and not yet given to nb_free. */
long		nb_test_live_blocks(void);

#endif
