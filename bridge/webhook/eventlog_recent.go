package webhook

import (
	"context"
	"strings"
)

// recentWindow bounds how far back RecentEvents looks: the last this many
// events of the log, so that a page's read costs the same however long
// the log is.
const recentWindow = 20_000

// RecentEvents reads up to limit of the latest logged events of the given
// types, newest first, among the last recentWindow events of the log (the
// dashboard's calls and blocks).
func (o *Outbox) RecentEvents(ctx context.Context, types []string, limit int) ([]Logged, error) {
	if len(types) == 0 {
		return nil, nil
	}
	args := []any{recentWindow}
	for _, t := range types {
		args = append(args, t)
	}
	args = append(args, limit)
	//nolint:gosec // the concatenation is placeholders, one per type; the types are arguments
	rows, err := o.opts.DB.QueryContext(ctx, `SELECT id, webhook_id, event, payload FROM event_log
		WHERE id > (SELECT coalesce(max(id), 0) FROM event_log) - ? AND event IN (?`+strings.Repeat(", ?", len(types)-1)+`)
		ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	return scanLogged(rows)
}
