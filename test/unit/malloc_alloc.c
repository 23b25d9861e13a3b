/*
 * malloc_alloc.c — the test side of the pure code's hooks: nb_alloc.h over
 * malloc/calloc/realloc/free, and nb_interrupt.h counting its calls, for the
 * unit tests and the fuzzer.
 *
 * Mirrors the contract of the server version (pg_alloc.c, palloc):
 *  - never returns NULL: on failure it prints a message and aborts;
 *  - a 0-byte request is valid and returns a unique pointer (palloc(0) does);
 *  - nb_realloc(NULL, n) and nb_free(NULL) abort: repalloc/pfree would crash
 *    in the server, so the pure code must never do that.
 * It also counts live blocks so tests can assert that an API call left no
 * allocation behind, even without ASan or valgrind, and keeps them in a
 * list so that a test can free every block allocated since a point, as an
 * error frees a memory context in the server (nb_test_free_since).
 */
#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "malloc_alloc.h"

#include <stdio.h>
#include <stdlib.h>

/* In front of every block; 32 bytes keep malloc's 16-byte alignment. */
typedef struct Block
{
	struct Block *prev;
	struct Block *next;
	unsigned long seq;			/* when it was allocated */
	unsigned long pad;
} Block;

static Block blocks = {&blocks, &blocks, 0, 0};
static unsigned long alloc_seq;
static long live_blocks;
static long interrupts;
static void (*on_interrupt) (long calls);

static void
die(const char *what, size_t size)
{
	fprintf(stderr, "malloc_alloc: %s(%zu) failed\n", what, size);
	abort();
}

static void
link_block(Block *b)
{
	b->prev = blocks.prev;
	b->next = &blocks;
	blocks.prev->next = b;
	blocks.prev = b;
}

static void
unlink_block(Block *b)
{
	b->prev->next = b->next;
	b->next->prev = b->prev;
}

static void *
new_block(Block *b, const char *what, size_t size)
{
	if (b == NULL)
		die(what, size);
	b->seq = ++alloc_seq;
	link_block(b);
	live_blocks++;
	return b + 1;
}

void *
nb_alloc(size_t size)
{
	return new_block(malloc(sizeof(Block) + size), "nb_alloc", size);
}

void *
nb_alloc_zero(size_t size)
{
	return new_block(calloc(1, sizeof(Block) + size), "nb_alloc_zero", size);
}

void *
nb_realloc(void *ptr, size_t size)
{
	Block	   *b;

	if (ptr == NULL)
	{
		fprintf(stderr, "malloc_alloc: nb_realloc(NULL, %zu) (repalloc would crash)\n", size);
		abort();
	}
	/* the block keeps its place in time, as repalloc keeps the context */
	b = (Block *) ptr - 1;
	unlink_block(b);
	b = realloc(b, sizeof(Block) + size);
	if (b == NULL)
		die("nb_realloc", size);
	link_block(b);
	return b + 1;
}

void
nb_free(void *ptr)
{
	Block	   *b;

	if (ptr == NULL)
	{
		fprintf(stderr, "malloc_alloc: nb_free(NULL) (pfree would crash)\n");
		abort();
	}
	b = (Block *) ptr - 1;
	unlink_block(b);
	live_blocks--;
	free(b);
}

long
nb_test_live_blocks(void)
{
	return live_blocks;
}

unsigned long
nb_test_alloc_mark(void)
{
	return alloc_seq;
}

void
nb_test_free_since(unsigned long mark)
{
	Block	   *b = blocks.next;

	while (b != &blocks)
	{
		Block	   *next = b->next;

		if (b->seq > mark)
			nb_free(b + 1);
		b = next;
	}
}

void
nb_interrupt(void)
{
	interrupts++;
	if (on_interrupt != NULL)
		on_interrupt(interrupts);
}

long
nb_test_interrupts(void)
{
	return interrupts;
}

void
nb_test_on_interrupt(void (*fn) (long calls))
{
	on_interrupt = fn;
}
