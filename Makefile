# nbc: naive Bayes classifiers inside PostgreSQL (PGXS build)
#
# Layout: src/ the C (nb_*.c pure model code, pg_*.c PostgreSQL glue, nbc.c
# the entry point); sql/install/ the extension's scripts (nbc--X.Y.Z.sql the
# full script of the current version and of 0.1.0, nbc--A--B.sql the updates;
# a new version adds its update and its full script, which the reliability
# suite's upgrade part compares);
# sql/*.sql with expected/*.out the pg_regress tests (REGRESS below); test/
# every other suite.
EXTENSION = nbc
DATA = $(wildcard sql/install/nbc--*.sql)
MODULE_big = nbc

# Pure model code (no PostgreSQL headers) and the PostgreSQL glue.
PURE_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/nb_*.c src/workflows/nb_*.c)))
GLUE_OBJS = src/nbc.o $(patsubst %.c,%.o,$(sort $(wildcard src/pg_*.c src/workflows/pg_*.c)))
OBJS = $(PURE_OBJS) $(GLUE_OBJS)

REGRESS = setup type_io train aggregate parallel merge predict predict_top options prepared collision query_constant inspect citus_path mixed limits compare metrics labels explain estimators subtract prune crossval dcm nonfinite numbers tokens settings unknown_features jsonb_numbers jsonb_objects em em_cv calibrate live catalog upgrade
REGRESS_OPTS = --inputdir=. --load-extension=nbc

# libm explicitly: without it the math functions' references carry no symbol
# version, and glibc binds them to their oldest (exp@GLIBC_2.2.5 is a wrapper
# with SVID error handling around the exp of 2.29, which costs the calibration
# fits a sixth of their time)
SHLIB_LINK = -lm

PG_CFLAGS = -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
# the module's version, for PG_MODULE_MAGIC_EXT (PostgreSQL 18): the control file's
NBC_VERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" nbc.control)
# src/workflows/ includes the engine's headers by their names
PG_CPPFLAGS = -DNBC_VERSION='"$(NBC_VERSION)"' -Isrc

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; the headers are few, so rebuild on any change.
$(OBJS): $(wildcard src/*.h src/workflows/*.h)
