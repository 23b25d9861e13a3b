/*
 * test_class_sums.c — unit tests of class weights summed in double-double
 * (src/nb_class_sums.c): what a live model's check lets through and what
 * it sees.
 *
 *   ./test_class_sums       run every test
 *   ./test_class_sums WORD  run the tests whose name contains WORD
 *
 * Output: see unit.h.
 */
#include <stdlib.h>

#include "fixtures.h"
#include "nb_class_sums.h"
#include "nb_merge.h"
#include "unit.h"

/* A model of the rows and its view; the buffer is the caller's to free. */
static unsigned char *
model_of(const Row *rows, int n, NbView *v)
{
	size_t		size;
	unsigned char *buf = serialize_rows(rows, n, &size);
	char		why[200];

	if (!open_view(v, buf, size, why, sizeof(why)))
		fail_at(__LINE__, "model does not open: %s", why);
	return buf;
}

static void
test_class_sums_fractional_order(void)
{
	/*
	 * Rows of fractional weights added in one order (the result, trained
	 * from all of them) and summed class by class from three parts: the
	 * parts' sums round differently in their last bits, within the
	 * tolerance.
	 */
	enum {N = 300};
	static Row	rows[N];
	static char labels[3][4] = {"a", "b", "c"};
	NbView		all, part[3];
	unsigned char *bufs[4];
	NbClassSums *s = nb_class_sums_create();

	for (int i = 0; i < N; i++)
	{
		rows[i].label = labels[i % 3];
		rows[i].weight = 1.0 / (1 + i % 7) + (i % 11) * 1e-3;
		rows[i].tokens[0] = "t";
		rows[i].tokens[1] = NULL;
	}
	bufs[0] = model_of(rows, N, &all);
	for (int p = 0; p < 3; p++)
	{
		bufs[p + 1] = model_of(rows + p * (N / 3), N / 3, &part[p]);
		nb_class_sums_add(s, &part[p], 1);
	}
	CHECK(nb_class_sums_match(s, &all, 1e-9), "the model of all rows has the parts' class sums");
	/* the parts less one of them: the other two's model */
	nb_class_sums_add(s, &part[0], -1);
	CHECK(!nb_class_sums_match(s, &all, 1e-9), "a class sum a third smaller does not match");
	nb_class_sums_add(s, &part[1], -1);
	nb_class_sums_add(s, &part[2], -1);
	CHECK(nb_class_sums_match(s, NULL, 1e-9), "everything subtracted matches the model of no rows");
	nb_class_sums_destroy(s);
	for (int i = 0; i < 4; i++)
		free(bufs[i]);
}

static void
test_class_sums_cancellation(void)
{
	/*
	 * 1e15 and 0.001 of class ham from two statements, then the first
	 * deleted: merged in double the class weighs 1e15, and subtracting
	 * 1e15 leaves nothing, where the rows left weigh 0.001.
	 */
	Row			big[] = {{"ham", 1e15, {"big", NULL}}};
	Row			small[] = {{"ham", 0.001, {"small", NULL}}, {"spam", 0.5, {"other", NULL}}};
	Row			spam_only[] = {{"spam", 0.5, {"other", NULL}}};
	NbView		vbig, vsmall, vspam;
	unsigned char *b1 = model_of(big, 1, &vbig);
	unsigned char *b2 = model_of(small, 2, &vsmall);
	unsigned char *b3 = model_of(spam_only, 1, &vspam);
	NbClassSums *s = nb_class_sums_create();

	nb_class_sums_add(s, &vbig, 1);
	nb_class_sums_add(s, &vsmall, 1);
	nb_class_sums_add(s, &vbig, -1);
	CHECK(!nb_class_sums_match(s, &vspam, 1e-9), "ham's 0.001 lost by the merge is seen");
	CHECK(nb_class_sums_match(s, &vsmall, 1e-9), "the rows left match");
	nb_class_sums_destroy(s);
	/* a class of the result that no input has */
	s = nb_class_sums_create();
	nb_class_sums_add(s, &vspam, 1);
	CHECK(!nb_class_sums_match(s, &vsmall, 1e-9), "a class from nowhere does not match");
	nb_class_sums_destroy(s);
	free(b1);
	free(b2);
	free(b3);
}

int
main(int argc, char **argv)
{
	unit_init(argc, argv);
	run("class sums: fractional weights summed in another order match", test_class_sums_fractional_order);
	run("class sums: a weight rounded away and cancelled is seen", test_class_sums_cancellation);
	return unit_done();
}
