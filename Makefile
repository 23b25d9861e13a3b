# nbc: naive Bayes classifiers inside PostgreSQL (PGXS build)
EXTENSION = nbc
DATA = sql/nbc--0.1.0.sql sql/nbc--0.1.0--0.2.0.sql
MODULE_big = nbc

# Pure model code (no PostgreSQL headers) and the PostgreSQL glue.
PURE_OBJS = src/nb_strmap.o src/nb_itemset.o src/nb_trainer.o src/nb_format.o \
	src/nb_scorer.o src/nb_mutual_info.o src/nb_interrupt.o
GLUE_OBJS = src/pg_alloc.o src/pg_model.o src/pg_type.o src/pg_train.o \
	src/pg_features.o src/pg_prepared.o src/pg_predict.o src/pg_options.o src/pg_jsonb.o src/pg_inspect.o
OBJS = $(PURE_OBJS) $(GLUE_OBJS)

REGRESS = setup type_io train aggregate parallel merge predict options prepared inspect citus_path mixed
REGRESS_OPTS = --inputdir=. --load-extension=nbc

PG_CFLAGS = -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; the headers are few, so rebuild on any change.
$(OBJS): $(wildcard src/*.h)
