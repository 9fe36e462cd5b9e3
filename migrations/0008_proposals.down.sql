DROP FUNCTION IF EXISTS lb_merge_changed(int, bigint, bigint);
DROP FUNCTION IF EXISTS lb_merge_links(int, bigint, text[], text[], text[]);
DROP FUNCTION IF EXISTS lb_merge_records(int, bigint, text[]);
DROP TABLE IF EXISTS proposal_resolutions;
DROP TABLE IF EXISTS proposals;
DROP TABLE IF EXISTS merge_bases;
