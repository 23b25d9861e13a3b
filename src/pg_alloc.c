/*
 * pg_alloc.c — nb_alloc.h on top of palloc in CurrentMemoryContext.
 *
 * "Huge" allocations: a large vocabulary's hash tables may pass the 1 GB
 * palloc limit even though the serialized model cannot.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "nb_alloc.h"

void *
nb_alloc(size_t size)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, size);
}

void *
nb_alloc_zero(size_t size)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

void *
nb_realloc(void *ptr, size_t size)
{
	return repalloc_huge(ptr, size);
}

void
nb_free(void *ptr)
{
	pfree(ptr);
}
