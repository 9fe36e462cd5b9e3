// Package jobs holds Lorebase's River workers. store.index builds the
// per-Attribute partial indexes of a branch concurrently:
//
//	CREATE INDEX CONCURRENTLY mat_records_attr_<h> ON mat_records_p<N> ((values ->> 'attr'))
//	    WHERE domain_id = D AND branch_id = B AND kind = 'K'
//
// where mat_records_p<N> is the partition holding Domain D and <h> is the
// first 24 hex digits of sha256("D:B:K:attr") (IndexName). Statements that
// should use such an index name the Domain, branch, Kind and Attribute as
// literals (the read functions of migrations/ do).
package jobs
