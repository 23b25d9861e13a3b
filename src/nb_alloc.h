/*
 * nb_alloc.h — memory allocation used by the pure model code.
 *
 * The pure code (nb_*.c) never includes postgres.h.  Inside the server these
 * functions are implemented by pg_alloc.c on top of palloc in the current
 * memory context, so an error raised mid-operation frees everything with the
 * context; the caller makes sure that context supports pfree and repalloc
 * (PostgreSQL 17's bump contexts do not).  The standalone unit tests and
 * fuzzers link a malloc version.
 * Allocation failure never returns NULL: the server raises an error, the
 * malloc version aborts.
 */
#ifndef NB_ALLOC_H
#define NB_ALLOC_H

#include <stddef.h>

void	   *nb_alloc(size_t size);
void	   *nb_alloc_zero(size_t size);
void	   *nb_realloc(void *ptr, size_t size);
void		nb_free(void *ptr);

#endif
