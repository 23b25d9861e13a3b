-- nbc 0.12.0 -> 0.13.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.13.0'" to load this file. \quit
