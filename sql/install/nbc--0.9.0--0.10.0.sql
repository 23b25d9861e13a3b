-- nbc 0.9.0 -> 0.10.0: live models, learning from unlabelled rows,
-- calibrated probabilities, evaluation that distributes.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.10.0'" to load this file. \quit
