package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// Statements prepares each query once per database and hands it to
// transactions ready to run. SQLite spends a large share of a small write
// parsing its SQL; database/sql keeps a prepared statement per connection
// and reuses it in every transaction on that connection.
type Statements struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// NewStatements returns an empty cache for db.
func NewStatements(db *sql.DB) *Statements {
	return &Statements{db: db, m: map[string]*sql.Stmt{}}
}

// In returns query prepared for use in tx.
func (s *Statements) In(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	stmt, ok := s.m[query]
	if !ok {
		var err error
		if stmt, err = s.db.PrepareContext(ctx, query); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.m[query] = stmt
	}
	s.mu.Unlock()
	return tx.StmtContext(ctx, stmt), nil
}

// Exec runs the cached query in tx.
func (s *Statements) Exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	stmt, err := s.In(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return stmt.ExecContext(ctx, args...)
}

// QueryRow runs the cached query in tx.
func (s *Statements) QueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	stmt, err := s.In(ctx, tx, query)
	if err != nil {
		// sql.Row carries no error of its own making; run the query
		// unprepared so that Scan reports the failure.
		return tx.QueryRowContext(ctx, query, args...)
	}
	return stmt.QueryRowContext(ctx, args...)
}

// Close closes every prepared statement.
func (s *Statements) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for q, stmt := range s.m {
		if err := stmt.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.m, q)
	}
	return first
}
