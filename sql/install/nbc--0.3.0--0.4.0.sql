-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- Unlearning: nb_subtract.



-- Evaluation: nb_metrics.



-- Cross-validation and tuning.



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.



-- Smaller models: nb_prune.



