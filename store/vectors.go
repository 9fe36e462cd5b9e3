package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// How semantic search finds vectors (lb_vector_search).
const (
	// VectorSearchHNSW: pgvector is installed; a spec's HNSW index is
	// scanned once built.
	VectorSearchHNSW = "hnsw"
	// VectorSearchExact: no pgvector; every search compares exactly.
	VectorSearchExact = "exact"
)

// rowQuerier is what VectorSearch needs of a pool, connection or
// transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// VectorSearch says how semantic search finds vectors in the database:
// VectorSearchHNSW where pgvector is installed, else VectorSearchExact. It
// asks lb_vector_search, the one probe of pgvector.
func VectorSearch(ctx context.Context, q rowQuerier) (string, error) {
	var path string
	if err := q.QueryRow(ctx, `SELECT lb_vector_search()`).Scan(&path); err != nil {
		return "", fmt.Errorf("probe pgvector: %w", err)
	}
	return path, nil
}
