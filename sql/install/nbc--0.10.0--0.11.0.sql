-- nbc 0.10.0 -> 0.11.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.11.0'" to load this file. \quit
