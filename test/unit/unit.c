/*
 * unit.c — the test framework shared by the unit test programs (see unit.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "malloc_alloc.h"
#include "unit.h"

static int	n_passed;
static int	n_failed;
static bool cur_failed;
static char cur_detail[1024];
static const char *filter;

void
fail_at(int line, const char *fmt, ...)
{
	va_list		ap;
	int			n;

	if (cur_failed)
		return;
	cur_failed = true;
	n = snprintf(cur_detail, sizeof(cur_detail), "line %d: ", line);
	va_start(ap, fmt);
	vsnprintf(cur_detail + n, sizeof(cur_detail) - n, fmt, ap);
	va_end(ap);
}

void
fail_append(const char *fmt, ...)
{
	va_list		ap;
	size_t		n = strlen(cur_detail);

	va_start(ap, fmt);
	vsnprintf(cur_detail + n, sizeof(cur_detail) - n, fmt, ap);
	va_end(ap);
}

bool
unit_failed(void)
{
	return cur_failed;
}

void
note(const char *fmt, ...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

void
unit_init(int argc, char **argv)
{
	if (argc > 1)
		filter = argv[1];
}

void
run(const char *name, TestFn fn)
{
	long		live;

	if (filter != NULL && strstr(name, filter) == NULL)
		return;
	cur_failed = false;
	cur_detail[0] = '\0';
	live = nb_test_live_blocks();
	fn();
	if (!cur_failed && nb_test_live_blocks() != live)
		fail_at(0, "%ld nb_alloc blocks not freed", nb_test_live_blocks() - live);
	if (cur_failed)
	{
		printf("not ok - %s: %s\n", name, cur_detail);
		n_failed++;
	}
	else
	{
		printf("ok - %s\n", name);
		n_passed++;
	}
	fflush(stdout);
}

int
unit_done(void)
{
	printf("%d passed, %d failed\n", n_passed, n_failed);
	return n_failed > 0;
}

uint64_t
unit_random(void)
{
	static uint64_t state = 88172645463325252ULL;

	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}
