package merge

// OriginsSQLForTest lets a plan test run the read of a merge's origins.
const OriginsSQLForTest = originsSQL
