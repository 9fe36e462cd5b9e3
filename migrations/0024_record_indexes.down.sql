REVOKE INSERT ON attribute_indexes FROM lorebase_app;
