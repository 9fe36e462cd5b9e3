package jobs

// BuildIndexPaused is BuildIndex with pause run after the first backfill,
// before the index is created.
var BuildIndexPaused = buildIndex
