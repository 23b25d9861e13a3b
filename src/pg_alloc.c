/*
 * pg_alloc.c — the server side of the pure code's hooks: nb_alloc.h on top
 * of palloc in CurrentMemoryContext, nb_interrupt.h on CHECK_FOR_INTERRUPTS.
 *
 * The pure code frees and reallocates what it allocates, so it must run in a
 * context that allows that: one nbc created (an expanded model's, a prepared
 * model's, a scratch context) or the executor's context of a function call.
 * A bump context (PostgreSQL 17 and later) does not, and PostgreSQL may
 * call nbc's expanded-object methods inside one (see pg_model.c).
 *
 * "Huge" allocations: a large vocabulary's hash tables may pass the 1 GB
 * palloc limit even though the serialized model cannot.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "nb_alloc.h"
#include "nb_interrupt.h"
#include "pg_progress.h"

/*
 * Large tables (a big vocabulary's hash tables, the pair table) are probed
 * at random: with 4 kB pages nearly every probe also misses the TLB.  Ask
 * Linux for transparent huge pages on the 2 MB-aligned part of such a
 * block, before it is first written so the pages are huge from the start
 * (with THP in "madvise" mode, Debian's default, only advised memory gets
 * them).  Purely a hint: without THP nothing changes.
 */
static void
advise_huge_pages(void *ptr, size_t size)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	start = ((uintptr_t) ptr + NB_HUGE_PAGE - 1) & ~(uintptr_t) (NB_HUGE_PAGE - 1);
	uintptr_t	end = ((uintptr_t) ptr + size) & ~(uintptr_t) (NB_HUGE_PAGE - 1);

	if (size >= 2 * NB_HUGE_PAGE && end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

/*
 * The context for the pure code's allocations.  A bump context here is a bug
 * in the glue: raise it before a later nb_free corrupts memory.
 */
static MemoryContext
core_context(void)
{
#if PG_VERSION_NUM >= 170000
	if (IsA(CurrentMemoryContext, BumpContext))
		elog(ERROR, "nbc core code called in bump memory context \"%s\"",
			 CurrentMemoryContext->name);
#endif
	return CurrentMemoryContext;
}

void *
nb_alloc(size_t size)
{
	void	   *ptr = MemoryContextAllocHuge(core_context(), size);

	advise_huge_pages(ptr, size);
	return ptr;
}

/*
 * Zeroed in pieces with cancellation points: a large document's item set or
 * a large vocabulary's tables take hundreds of megabytes.  Allocation can
 * fail with an error anyway, so a cancel here is nothing new to callers.
 */
void *
nb_alloc_zero(size_t size)
{
	char	   *ptr = nb_alloc(size);

	for (size_t off = 0; off < size; off += NB_INTERRUPT_BYTES)
	{
		memset(ptr + off, 0, Min(size - off, NB_INTERRUPT_BYTES));
		if (size - off > NB_INTERRUPT_BYTES)
			CHECK_FOR_INTERRUPTS();
	}
	return ptr;
}

void *
nb_realloc(void *ptr, size_t size)
{
	ptr = repalloc_huge(ptr, size);
	advise_huge_pages(ptr, size);
	return ptr;
}

void
nb_free(void *ptr)
{
	pfree(ptr);
}

/*
 * A cancel or a timeout raises an error from here, in the middle of a pure
 * operation: see nb_interrupt.h for why that is safe.  A one-call
 * operation's progress NOTICE comes from here too (pg_progress.h).
 */
void
nb_interrupt(void)
{
	CHECK_FOR_INTERRUPTS();
	nb_progress_tick();
}
