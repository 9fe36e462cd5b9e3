DROP FUNCTION IF EXISTS lb_query_by_attribute_at(text, text, text, text, text, int, bigint);
DROP FUNCTION IF EXISTS lb_query_by_attribute_at_sql(text, text, text, text, text, int, bigint);
