/*
 * nb_feature_type.c — the feature type table, and the names of float8[] positions.
 */
#include "nb_feature_type.h"

#include <stddef.h>
#include <stdio.h>

#include "nb_moments.h"

static const NbFeatureTypeInfo feature_types[NB_FEATURE_TYPE_MAX + 1] = {
	[NB_FEATURE_BAG] = {"bag", "a bag of tokens", "tokens", NB_STATS_NONE},
	[NB_FEATURE_CATEGORICAL] = {"categorical", "categorical", "values", NB_STATS_NONE},
	[NB_FEATURE_GAUSSIAN] = {"gaussian", "Gaussian", NULL, NB_STATS_MOMENTS},
	[NB_FEATURE_BOOLEAN] = {"boolean", "boolean", NULL, NB_STATS_TRUE_ROWS},
};

const NbFeatureTypeInfo *
nb_feature_type_info(uint32_t type)
{
	if (type < NB_FEATURE_BAG || type > NB_FEATURE_TYPE_MAX)
		return NULL;
	return &feature_types[type];
}

void
nb_feature_stats_add(NbFeatureType type, double *present, double *a, double *b,
					 double present2, double a2, double b2)
{
	if (nb_feature_type(type)->stats == NB_STATS_MOMENTS)
		nb_moments_add(present, a, b, present2, a2, b2);
	else
	{
		*present += present2;
		*a += a2;
	}
}

uint32_t
nb_position_name(uint32_t position, char *buf)
{
	return (uint32_t) snprintf(buf, NB_POSITION_NAME_SIZE, "%lu",
							   (unsigned long) position + 1);
}

bool
nb_is_position_name(const char *name, uint32_t len, uint32_t n)
{
	uint64_t	value = 0;

	if (len == 0 || len >= NB_POSITION_NAME_SIZE || name[0] == '0')
		return false;
	for (uint32_t i = 0; i < len; i++)
	{
		if (name[i] < '0' || name[i] > '9')
			return false;
		value = value * 10 + (uint64_t) (name[i] - '0');
	}
	return value <= n;
}
