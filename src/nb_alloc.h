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
#include <stdint.h>

void	   *nb_alloc(size_t size);
void	   *nb_alloc_zero(size_t size);
void	   *nb_realloc(void *ptr, size_t size);
void		nb_free(void *ptr);

/* nb_free, for a pointer that may be NULL. */
static inline void
nb_free_if(void *ptr)
{
	if (ptr != NULL)
		nb_free(ptr);
}

/*
 * An array of NB_HUGE_PAGE bytes on a 2 MB boundary, so that one huge page
 * can back it, for memory written in order by the megabyte (nb_metrics'
 * columns of scores).  Its block is twice that: the server's nb_alloc
 * advises the 2 MB-aligned part of any block of 4 MB and more for huge
 * pages, and this array is in it.  The block is kept just before the
 * array; only nb_free_huge_page frees it.
 */
#define NB_HUGE_PAGE ((size_t) 2 * 1024 * 1024)

static inline void *
nb_alloc_huge_page(void)
{
	char	   *block = nb_alloc(sizeof(void *) + 2 * NB_HUGE_PAGE);
	char	   *page = (char *) (((uintptr_t) block + sizeof(void *) + NB_HUGE_PAGE - 1) &
								 ~(uintptr_t) (NB_HUGE_PAGE - 1));

	((char **) page)[-1] = block;
	return page;
}

static inline void
nb_free_huge_page(void *page)
{
	nb_free(((char **) page)[-1]);
}

#endif
