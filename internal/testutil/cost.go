package testutil

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
)

// QuerySteps runs query once with args (strings and integers) on one of
// db's connections and returns the SQLite virtual machine steps it took:
// what it read, whatever it returned. A test of a scan's cost compares it
// with the rows a scan must not walk, with no timing involved.
func QuerySteps(tb testing.TB, db *sql.DB, query string, args ...any) int {
	tb.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	var steps int
	err = conn.Raw(func(dc any) error {
		stmt, _, err := dc.(driver.Conn).Raw().Prepare(query)
		if err != nil {
			return err
		}
		defer func() { _ = stmt.Close() }()
		for i, a := range args {
			if err := bind(stmt, i+1, a); err != nil {
				return err
			}
		}
		for stmt.Step() {
		}
		if err := stmt.Err(); err != nil {
			return err
		}
		steps = stmt.Status(sqlite3.STMTSTATUS_VM_STEP, false)
		return nil
	})
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return steps
}

func bind(stmt *sqlite3.Stmt, i int, a any) error {
	switch v := a.(type) {
	case string:
		return stmt.BindText(i, v)
	case int:
		return stmt.BindInt(i, v)
	case int64:
		return stmt.BindInt64(i, v)
	default:
		return fmt.Errorf("argument %d: %T is not bound by QuerySteps", i, a)
	}
}
