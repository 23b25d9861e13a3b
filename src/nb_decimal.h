/*
 * nb_decimal.h — decimal numbers to the nearest double (pure C).
 */
#ifndef NB_DECIMAL_H
#define NB_DECIMAL_H

#include <stdint.h>

/*
 * The double nearest to digits * 10^exp10 (ties to even), as strtod gives
 * it, faster than strtod on the number's text.  Out of double's range: as
 * strtod, infinity or zero (or a subnormal).
 */
double		nb_decimal_to_double(uint64_t digits, int32_t exp10);

#endif
