REVOKE INSERT (domain_id, branch_id, kind, attribute) ON attribute_indexes FROM lorebase_app;
DROP TRIGGER IF EXISTS attribute_indexes_name ON attribute_indexes;
DROP FUNCTION IF EXISTS lb_attribute_index_name();
DROP FUNCTION IF EXISTS lb_index_name(int, int, text, text);
