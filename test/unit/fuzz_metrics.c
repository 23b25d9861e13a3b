/*
 * fuzz_metrics.c — libFuzzer target for the serialized form of nb_metrics'
 * states (src/README.md, Metrics), which nb_metrics_state's input functions read from
 * outside the server (Citus ships it as text).
 *
 * The input is one state's bytes (the header, checked by the unit tests,
 * left out so that every mutation reaches the state).  A state that
 * nb_metrics_read accepts must have its metrics computed without a fault,
 * merge into an empty state of its form, and write back the same bytes it
 * was read from (and as many as nb_metrics_serial_size says).
 * AddressSanitizer catches a read outside the input (libFuzzer hands it
 * over in a buffer of exactly its size); a broken promise aborts.
 *
 *   make fuzz-metrics && ./fuzz_metrics -max_total_time=60
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nb_metrics.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	NbMetrics	m;
	NbMetricsIn in = {data, data + size, NULL};

	if (nb_metrics_read(&m, &in))
	{
		size_t		used = (size_t) (in.p - data);
		uint64_t	want = nb_metrics_serial_size(&m);
		unsigned char *out = malloc(want + 1);
		unsigned char *end = nb_metrics_write(&m, out);
		NbMetricsResult r;
		NbMetrics	sum;

		if ((uint64_t) (end - out) != want || want != used || memcmp(out, data, used) != 0)
		{
			fprintf(stderr, "read %zu bytes, wrote %lld, the size says %llu\n", used,
					(long long) (end - out), (unsigned long long) want);
			abort();
		}
		nb_metrics_init(&sum, m.scored, m.ranked, m.weighted);
		sum.scores_only = m.scores_only;
		nb_metrics_merge(&sum, &m);
		nb_metrics_compute(&sum, &r);
		nb_metrics_result_free(&r);
		nb_metrics_compute(&m, &r);
		nb_metrics_result_free(&r);
		nb_metrics_free(&sum);
		free(out);
	}
	nb_metrics_free(&m);
	return 0;
}
