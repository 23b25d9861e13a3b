/*
 * malloc_alloc.c — nb_alloc.h over malloc/calloc/realloc/free for the unit
 * tests and the fuzzer.
 *
 * Mirrors the contract of the server version (pg_alloc.c, palloc):
 *  - never returns NULL: on failure it prints a message and aborts;
 *  - a 0-byte request is valid and returns a unique pointer (palloc(0) does);
 *  - nb_realloc(NULL, n) and nb_free(NULL) abort: repalloc/pfree would crash
 *    in the server, so the pure code must never do that.
 * It also counts live blocks so tests can assert that an API call left no
 * allocation behind, even without ASan or valgrind.
 */
#include "nb_alloc.h"
#include "malloc_alloc.h"

#include <stdio.h>
#include <stdlib.h>

static long live_blocks;

static void
die(const char *what, size_t size)
{
	fprintf(stderr, "malloc_alloc: %s(%zu) failed\n", what, size);
	abort();
}

void *
nb_alloc(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		die("nb_alloc", size);
	live_blocks++;
	return p;
}

void *
nb_alloc_zero(size_t size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
		die("nb_alloc_zero", size);
	live_blocks++;
	return p;
}

void *
nb_realloc(void *ptr, size_t size)
{
	void	   *p;

	if (ptr == NULL)
	{
		fprintf(stderr, "malloc_alloc: nb_realloc(NULL, %zu) (repalloc would crash)\n", size);
		abort();
	}
	p = realloc(ptr, size ? size : 1);
	if (p == NULL)
		die("nb_realloc", size);
	return p;
}

void
nb_free(void *ptr)
{
	if (ptr == NULL)
	{
		fprintf(stderr, "malloc_alloc: nb_free(NULL) (pfree would crash)\n");
		abort();
	}
	live_blocks--;
	free(ptr);
}

long
nb_test_live_blocks(void)
{
	return live_blocks;
}
