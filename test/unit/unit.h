/*
 * unit.h — the test framework shared by every unit test program (test_*.c).
 *
 *   ./test_X                 run every test
 *   ./test_X WORD            run the tests whose name contains WORD
 *
 * Each test is a void function run through run(name, fn).  It prints
 * "ok - name" or "not ok - name: detail" (the first failure, with its line),
 * "# ..." comment lines (note), and unit_done() prints "N passed, N failed"
 * and gives the exit status: 1 if any test failed.  A test that leaves
 * nb_alloc blocks behind fails.
 */
#ifndef UNIT_H
#define UNIT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* Record the first failure of the running test (later ones are ignored). */
void		fail_at(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add to the detail of the recorded failure (the round of a random test, say). */
void		fail_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether the running test has failed. */
bool		unit_failed(void);

/* On failure: record the first failure and leave the test function. */
#define CHECK(cond, ...) \
	do { if (!(cond)) { fail_at(__LINE__, __VA_ARGS__); return; } } while (0)
/* The same, for tests that free their buffers at a label "done". */
#define CHECK_OR_DONE(cond, ...) \
	do { if (!(cond)) { fail_at(__LINE__, __VA_ARGS__); goto done; } } while (0)
#define CHECK_NEAR(got, want, tol, what) \
	do { double g_ = (got), w_ = (want); \
		 CHECK(fabs(g_ - w_) <= (tol), "%s = %.17g, expected %.17g", what, g_, w_); } while (0)

/* A comment line that does not count as a test. */
void		note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef void (*TestFn) (void);

/* Take the name filter from the command line (argv[1], if any). */
void		unit_init(int argc, char **argv);

/* Run one test unless the filter leaves it out. */
void		run(const char *name, TestFn fn);

/* Print the summary line; the exit status of the program. */
int			unit_done(void);

/* The next of a fixed sequence of pseudo-random 64-bit numbers (xorshift). */
uint64_t	unit_random(void);

#endif
