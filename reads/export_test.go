package reads

// GetHeadSQLForTest lets the plan tests EXPLAIN the head get.
const GetHeadSQLForTest = getHeadSQL

// HistorySQLForTest lets the tests count the functions a history page calls.
const HistorySQLForTest = historySQL
