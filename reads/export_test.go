package reads

// GetLevelsSQLForTest and GetOwnedSQLForTest let the plan tests EXPLAIN
// the head gets.
const (
	GetLevelsSQLForTest = getLevelsSQL
	GetOwnedSQLForTest  = getOwnedSQL
)

// ReadsThroughLevels reports whether r reads the branch of the Domain by
// getLevelsSQL.
func ReadsThroughLevels(r *Reader, domain int32, branch string) bool {
	return r.levels.Contains(levelsHint{domain, branch})
}

// HistorySQLForTest lets the tests count the functions a history page calls.
const HistorySQLForTest = historySQL

// LineageSQLForTest lets a plan test EXPLAIN the lineage read.
const LineageSQLForTest = lineageSQL
