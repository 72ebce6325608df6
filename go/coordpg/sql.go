package coordpg

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

// The schema and the statements live once, as the .sql files in sql/ (a
// later Rust driver includes the same files). A statement file is split at
// its "-- name: NAME" lines; each section is one statement, prepared under
// NAME on every connection of the pool.

//go:embed sql/*.sql
var sqlFiles embed.FS

// schemaVersion is the version this driver's migrations bring the schema to.
const schemaVersion = 1

// migrations[v-1] brings the schema from version v-1 to v.
var migrations = []string{"sql/0001_init.sql"}

var statementFiles = []string{"sql/ledger.sql", "sql/anchors.sql", "sql/words.sql", "sql/requests.sql"}

func readSQL(path string) string {
	b, err := sqlFiles.ReadFile(path)
	if err != nil {
		panic("coordpg: missing embedded " + path)
	}
	return string(b)
}

// parseStatements splits text at "-- name: " lines.
func parseStatements(text string) (map[string]string, error) {
	out := map[string]string{}
	name := ""
	var body strings.Builder
	flush := func() error {
		if name == "" {
			return nil
		}
		s := strings.TrimSpace(body.String())
		s = strings.TrimSuffix(s, ";")
		if s == "" {
			return fmt.Errorf("statement %q is empty", name)
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("statement %q twice", name)
		}
		out[name] = s
		return nil
	}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "-- name:"); ok {
			if err := flush(); err != nil {
				return nil, err
			}
			name = strings.TrimSpace(rest)
			body.Reset()
			continue
		}
		if name != "" && !strings.HasPrefix(strings.TrimSpace(line), "--") {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// statements is every named statement of the statement files.
var statements = func() map[string]string {
	all := map[string]string{}
	for _, f := range statementFiles {
		m, err := parseStatements(readSQL(f))
		if err != nil {
			panic("coordpg: " + f + ": " + err.Error())
		}
		for k, v := range m {
			if _, dup := all[k]; dup {
				panic("coordpg: statement " + k + " in two files")
			}
			all[k] = v
		}
	}
	return all
}()

func statementNames() []string {
	names := make([]string, 0, len(statements))
	for n := range statements {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
