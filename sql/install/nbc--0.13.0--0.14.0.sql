-- nbc 0.13.0 -> 0.14.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.14.0'" to load this file. \quit
