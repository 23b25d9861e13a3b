# nbc: naive Bayes classifiers inside PostgreSQL (PGXS build)
#
# Layout: src/ the C (nb_*.c pure model code, pg_*.c PostgreSQL glue, nbc.c
# the entry point); sql/install/ the extension's install and update scripts;
# sql/*.sql with expected/*.out the pg_regress tests (REGRESS below); test/
# every other suite.
EXTENSION = nbc
DATA = $(wildcard sql/install/nbc--*.sql)
MODULE_big = nbc

# Pure model code (no PostgreSQL headers) and the PostgreSQL glue.
PURE_OBJS = src/nb_strmap.o src/nb_itemset.o src/nb_item.o src/nb_trainer.o src/nb_format.o src/nb_options.o src/nb_merge.o \
	src/nb_index.o src/nb_doc.o src/nb_scorer.o src/nb_mutual_info.o src/nb_interrupt.o
GLUE_OBJS = src/nbc.o src/pg_alloc.o src/pg_model.o src/pg_type.o src/pg_train.o \
	src/pg_features.o src/pg_prepared.o src/pg_predict.o src/pg_options.o src/pg_jsonb.o src/pg_inspect.o src/pg_compare.o
OBJS = $(PURE_OBJS) $(GLUE_OBJS)

REGRESS = setup type_io train aggregate parallel merge predict options prepared collision inspect citus_path mixed limits compare upgrade
REGRESS_OPTS = --inputdir=. --load-extension=nbc

PG_CFLAGS = -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; the headers are few, so rebuild on any change.
$(OBJS): $(wildcard src/*.h)
