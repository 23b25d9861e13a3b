/*
 * nb_settings.c — which models go together, see nb_settings.h.
 */
#include "nb_settings.h"

uint32_t
nb_feature_input_kind(const char *name, uint32_t len, NbFeatureType type, uint32_t vector_len)
{
	if (len == 0 && type == NB_FEATURE_BAG)
		return NB_INPUT_TOKENS;
	if (type == NB_FEATURE_GAUSSIAN && nb_is_position_name(name, len, vector_len))
		return NB_INPUT_VECTOR;
	return NB_INPUT_KEYS;
}

NbCompat
nb_compat_check(uint32_t kinds_a, const NbSettings *a, uint32_t kinds_b, const NbSettings *b)
{
	if (kinds_a != 0 && kinds_b != 0 && (kinds_a & kinds_b) == 0)
		return NB_COMPAT_INPUTS;
	if (!nb_settings_same_tokenizer(a, b))
		return NB_COMPAT_TOKENIZER;
	if (!nb_settings_same_options(a, b))
		return NB_COMPAT_OPTIONS;
	return NB_COMPAT_OK;
}

const char *
nb_input_kinds_prose(uint32_t kinds)
{
	switch (kinds)
	{
		case 0:
			return "no features";
		case NB_INPUT_TOKENS:
			return "text[], tsvector or text";
		case NB_INPUT_VECTOR:
			return "float8[]";
		case NB_INPUT_KEYS:
			return "jsonb";
		case NB_INPUT_TOKENS | NB_INPUT_KEYS:
			return "jsonb with a bag \"\"";
		default:
			return "rows of several kinds";
	}
}
