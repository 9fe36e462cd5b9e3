-- Several-word searches rank by ts_rank of the OR of their terms (a sum of
-- per-word ranks, which lb_search_postings bounds): lb_search_full_sql
-- takes the terms instead of their AND.
DROP FUNCTION IF EXISTS lb_search_full_sql(text, text, tsquery, integer, integer, boolean);
