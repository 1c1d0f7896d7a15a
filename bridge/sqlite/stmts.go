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
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
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

// prepared returns query prepared on the database, preparing it the first
// time.
func (s *Statements) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stmt, ok := s.m[query]; ok {
		return stmt, nil
	}
	stmt, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.m[query] = stmt
	return stmt, nil
}

// ReadRow runs the cached query outside a transaction, on any of the
// pool's connections: a read on the hot path (every accepted send reads
// its place in the queue) that would otherwise be parsed again each time.
func (s *Statements) ReadRow(ctx context.Context, query string, args ...any) *sql.Row {
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		// As in QueryRow: unprepared, so that Scan reports the failure.
		return s.db.QueryRowContext(ctx, query, args...)
	}
	return stmt.QueryRowContext(ctx, args...)
}

// Read is ReadRow for a query of many rows.
func (s *Statements) Read(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
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
