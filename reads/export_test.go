package reads

// GetHeadSQLForTest lets the plan tests EXPLAIN the head get.
const GetHeadSQLForTest = getHeadSQL
