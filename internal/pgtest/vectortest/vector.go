package vectortest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// VectorImage is the PostgreSQL image with pgvector the tests of the HNSW
// path start where a Docker engine is reachable.
const VectorImage = "pgvector/pgvector:pg16"

// VectorSkipReason is what a test of the pgvector path says when it cannot
// run.
const VectorSkipReason = "pgvector tests skipped: no Docker engine and LOREBASE_TEST_DATABASE_URL has no vector extension"

// NewVectorDatabase returns the owner's URL of a fresh migrated database
// on a server with the vector extension: LOREBASE_TEST_DATABASE_URL's
// server when it has pgvector, else a pgvector/pgvector:pg16 container
// started through testcontainers-go when a Docker engine answers. Where
// neither exists the test is skipped with VectorSkipReason; the probe
// takes at most a second, so the normal run is not slowed.
func NewVectorDatabase(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	if u := os.Getenv("LOREBASE_TEST_DATABASE_URL"); u != "" && hasVector(ctx, u) {
		return pgtest.NewDatabase(t)
	}
	if !dockerReachable() {
		t.Skip(VectorSkipReason)
	}
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        VectorImage,
			Env:          map[string]string{"POSTGRES_PASSWORD": "lorebase", "POSTGRES_USER": "postgres"},
			ExposedPorts: []string{"5432/tcp"},
			WaitingFor:   wait.ForLog("database system is ready to accept connections").WithOccurrence(2).WithStartupTimeout(2 * time.Minute),
		},
		Started: true,
	})
	if err != nil {
		t.Fatalf("start %s: %v", VectorImage, err)
	}
	t.Cleanup(func() { _ = c.Terminate(context.Background()) })
	host, err := c.Host(ctx)
	if err != nil {
		t.Fatalf("container host: %v", err)
	}
	port, err := c.MappedPort(ctx, "5432/tcp")
	if err != nil {
		t.Fatalf("container port: %v", err)
	}
	admin := fmt.Sprintf("postgres://postgres:lorebase@%s/postgres?sslmode=disable", net.JoinHostPort(host, port.Port()))
	name := fmt.Sprintf("lorebase_vec_%d", time.Now().UnixNano())
	if err := pgcluster.CreateDatabaseFrom(ctx, admin, name, ""); err != nil {
		t.Fatalf("create database: %v", err)
	}
	u, err := pgcluster.WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, u); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return u
}

// hasVector reports whether the server at u offers the vector extension.
func hasVector(ctx context.Context, u string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	var ok bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')`).Scan(&ok)
	return err == nil && ok
}

// dockerReachable dials the Docker engine (DOCKER_HOST, else the default
// socket) with a one-second timeout.
func dockerReachable() bool {
	network, addr := "unix", "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		u, err := url.Parse(h)
		if err != nil {
			return false
		}
		switch u.Scheme {
		case "unix":
			addr = u.Path
		case "tcp":
			network, addr = "tcp", u.Host
		default:
			return false
		}
	}
	if network == "unix" {
		if _, err := os.Stat(addr); err != nil { //nolint:gosec // the Docker socket the test's own environment names

			return false
		}
	}
	conn, err := net.DialTimeout(network, strings.TrimSpace(addr), time.Second) //nolint:gosec // the Docker engine the test's own environment names
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
