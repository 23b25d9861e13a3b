/*
 * pg_train.h — the training aggregates' transition functions, as the
 * constant proof (pg_query_constant.c) needs to know them.
 */
#ifndef PG_TRAIN_H
#define PG_TRAIN_H

#include "postgres.h"

/*
 * Is fn (a function's OID) one of the training aggregates' transition
 * functions?  Over the same rows they make the same model whatever the
 * session's state, but for a label that is not text, converted to text by
 * nb_label_arg (pg_label.h): that is why their forms with a label of any
 * type are declared STABLE.
 */
bool		nb_is_train_transfn(Oid fn);

#endif
