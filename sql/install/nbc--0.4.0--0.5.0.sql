-- nbc 0.4.0 -> 0.5.0: cross-validation that scores every option set in
-- one pass over each fold.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.5.0'" to load this file. \quit
