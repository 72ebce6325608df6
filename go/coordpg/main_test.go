package coordpg

// The tests run against a real PostgreSQL, never a mock: the server named
// by WKCORE_PG_DSN, or one this test binary starts with scripts/pg (and
// stops at the end). Without a server binary the tests skip with one line,
// unless CI=true, where a missing server fails them.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	testDSN     string
	testCluster string // the folder of the cluster this binary started ("" if none)
	skipReason  string
)

func TestMain(m *testing.M) {
	if os.Getenv("WKCOORD_REPLICA") != "" { // a replica of TestReplicas
		os.Exit(replicaMain())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	testDSN = os.Getenv("WKCORE_PG_DSN")
	if testDSN == "" {
		dir, dsn, err := startCluster()
		if err != nil {
			skipReason = err.Error()
		} else {
			testCluster, testDSN = dir, dsn
			defer stopCluster(dir)
		}
	}
	return m.Run()
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func startCluster() (string, string, error) {
	if _, err := exec.LookPath("initdb"); err != nil {
		if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
			return "", "", fmt.Errorf("no PostgreSQL server binary (initdb) on PATH or under /usr/lib/postgresql: set WKCORE_PG_DSN or install postgresql-15")
		}
	}
	root := repoRoot()
	if err := os.MkdirAll(filepath.Join(root, "target", "pg"), 0o755); err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp(filepath.Join(root, "target", "pg"), "gotest.")
	if err != nil {
		return "", "", err
	}
	out, err := exec.Command(filepath.Join(root, "scripts", "pg"), "start", dir).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", "", fmt.Errorf("scripts/pg start: %v: %s", err, ee.Stderr)
		}
		return "", "", fmt.Errorf("scripts/pg start: %v", err)
	}
	return dir, strings.TrimSpace(string(out)), nil
}

func stopCluster(dir string) {
	_ = exec.Command(filepath.Join(repoRoot(), "scripts", "pg"), "stop", dir).Run()
	_ = os.RemoveAll(dir)
}

// needPG skips (or, under CI=true, fails) a test without a server.
func needPG(t testing.TB) {
	t.Helper()
	if testDSN != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and no PostgreSQL: %s", skipReason)
	}
	t.Skip("no PostgreSQL: " + skipReason)
}

func openStore(t testing.TB, opts Options) *Store {
	t.Helper()
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Open(ctx, testDSN, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// unique is a name no other test (or earlier run) uses.
func unique(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
