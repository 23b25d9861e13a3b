# nbc: naive Bayes classifiers inside PostgreSQL (PGXS build)
#
# Layout: src/ the C (nb_*.c pure model code, pg_*.c PostgreSQL glue, nbc.c
# the entry point); sql/objects/ the one source of the current SQL objects,
# from which the rule below makes the full script; sql/install/ the update
# scripts nbc--A--B.sql of every released version and, once built, the full
# script (sql/objects/README.md: where an SQL change goes); sql/*.sql with
# expected/*.out the pg_regress tests (REGRESS below); test/ every other
# suite.
EXTENSION = nbc
MODULE_big = nbc

# the version being made, in one place: the control file's default_version
NBC_VERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" nbc.control)

# The full script of the current version, concatenated from sql/objects/ in
# the order of the file names (NN_topic.sql: a file uses only what an
# earlier one or itself defines before); built, never committed.
DATA_built = sql/install/nbc--$(NBC_VERSION).sql
DATA = $(wildcard sql/install/nbc--*--*.sql)
NBC_OBJECTS = $(sort $(wildcard sql/objects/*.sql))

# The root of the update chain, 0.1.0's full script: the tests that install
# an older version (sql/upgrade.sql, test/reliability/upgrade.sh and
# nonsuper.sh) install it first, since CREATE EXTENSION nbc VERSION 'X'
# runs it and the updates from 0.1.0 to X.  A user's installation needs no
# old full script, so make install does not install it.
NBC_UPGRADE_ROOT = test/fixtures/nbc--0.1.0.sql
REGRESS_PREP = install-upgrade-root

# Pure model code (no PostgreSQL headers) and the PostgreSQL glue: the
# engine in src/, the workflows built on it (calibration's fit, ...) in
# src/workflows/, which the engine never includes.
PURE_OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/nb_*.c src/workflows/nb_*.c)))
GLUE_OBJS = src/nbc.o $(patsubst %.c,%.o,$(sort $(wildcard src/pg_*.c src/workflows/pg_*.c)))
OBJS = $(PURE_OBJS) $(GLUE_OBJS)

REGRESS = setup type_io train aggregate parallel merge predict predict_top options prepared collision query_constant inspect citus_path mixed limits compare metrics labels null_labels explain estimators subtract prune crossval dcm nonfinite numbers tokens settings unknown_features jsonb_numbers jsonb_objects em em_cv em_components calibrate live signals catalog upgrade
REGRESS_OPTS = --inputdir=. --load-extension=nbc

# libm explicitly: without it the math functions' references carry no symbol
# version, and glibc binds them to their oldest (exp@GLIBC_2.2.5 is a wrapper
# with SVID error handling around the exp of 2.29, which costs the calibration
# fits a sixth of their time)
SHLIB_LINK = -lm

PG_CFLAGS = -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
# the module's version, for PG_MODULE_MAGIC_EXT (PostgreSQL 18)
PG_CPPFLAGS = -DNBC_VERSION='"$(NBC_VERSION)"' -Isrc -Isrc/workflows

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; the headers are few, so rebuild on any change.
$(OBJS): $(wildcard src/*.h src/workflows/*.h)

# The full script, from sql/objects/ (this rule after PGXS's include, so that
# all stays the default goal).  The source holds no history: a DROP, a CREATE
# OR REPLACE or an ALTER of a function belongs in the update script.
sql/install/nbc--$(NBC_VERSION).sql: $(NBC_OBJECTS) nbc.control Makefile
	@if grep -nE '^(DROP|CREATE OR REPLACE|ALTER (FUNCTION|AGGREGATE|EXTENSION)) ' $(NBC_OBJECTS); then \
		echo 'sql/objects/ defines each object once as it now is (see sql/objects/README.md)' >&2; exit 1; fi
	{ printf '%s\n' '\echo Use "CREATE EXTENSION nbc" to load this file. \quit' \
		'-- nbc $(NBC_VERSION), made by make from sql/objects/: edit those files, not this one'; \
	  for f in $(NBC_OBJECTS); do printf '\n-- %s\n' "$$f"; cat "$$f"; done; } > $@

# the root of the update chain, for the tests (NBC_UPGRADE_ROOT above); a
# file target, so that a test run that may not write to the extension
# directory passes once it is installed (test/setup.sh installs it)
NBC_UPGRADE_ROOT_INSTALLED = $(DESTDIR)$(datadir)/$(datamoduledir)/$(notdir $(NBC_UPGRADE_ROOT))
.PHONY: install-upgrade-root
install-upgrade-root: $(NBC_UPGRADE_ROOT_INSTALLED)
$(NBC_UPGRADE_ROOT_INSTALLED): $(NBC_UPGRADE_ROOT)
	$(INSTALL_DATA) $< '$(dir $@)'
