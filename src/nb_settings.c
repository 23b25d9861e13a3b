/*
 * nb_settings.c — which models go together, see nb_settings.h.
 */
#include "nb_settings.h"

#include "nb_format.h"
#include "nb_interrupt.h"

uint32_t
nb_input_kinds(const void *model, uint32_t n_features, uint32_t vector_len,
			   NbFeatureNameAt name, const NbSettings *s)
{
	uint32_t	kinds = vector_len > 0 ? NB_INPUT_VECTOR : 0;

	if (s->jsonb_bag)
		kinds |= NB_INPUT_KEYS;

	for (uint32_t j = 0; j < n_features; j++)
	{
		uint32_t	len;
		NbFeatureType type;
		const char *s = name(model, j, &len, &type);

		nb_interrupt_at(j);
		if (len == 0 && type == NB_FEATURE_BAG)
			kinds |= NB_INPUT_TOKENS;
		else if (!(type == NB_FEATURE_GAUSSIAN && nb_is_position_name(s, len, vector_len)))
			kinds |= NB_INPUT_KEYS;
	}
	return kinds;
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
