DROP TABLE IF EXISTS proposal_resolutions;
DROP TABLE IF EXISTS proposals;
DROP TABLE IF EXISTS merge_bases;
