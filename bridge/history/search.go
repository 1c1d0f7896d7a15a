package history

import (
	"context"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// The bounds of a search query: what a person types, not a document.
const (
	MaxQueryBytes = 512
	maxQueryWords = 16
)

// MatchExpression turns what a person (or an assistant) typed into an FTS5
// query that finds the messages holding every word, the last one also as
// the start of a longer word ("invo" finds "invoice"). Words are runs of
// letters and digits, each quoted, so nothing typed is read as FTS5's
// syntax (AND, NEAR, column filters, quotes): any input is a valid query or
// a clear error, never an SQL error.
func MatchExpression(query string) (string, error) {
	if len(query) > MaxQueryBytes {
		return "", bridge.Invalid(bridge.CodeInvalidSearch, "the query is longer than %d bytes", MaxQueryBytes)
	}
	if !utf8.ValidString(query) {
		return "", bridge.Invalid(bridge.CodeInvalidSearch, "the query is not valid UTF-8")
	}
	words := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	if len(words) == 0 {
		return "", bridge.Invalid(bridge.CodeInvalidSearch, "the query needs at least one word (letters or digits)")
	}
	if len(words) > maxQueryWords {
		words = words[:maxQueryWords]
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + w + `"` // a word holds no quote: FieldsFunc split there
	}
	quoted[len(quoted)-1] += "*"
	return strings.Join(quoted, " "), nil
}

// Search returns the limit newest messages, either way, whose text holds
// every word of query; only chat's when chat is not zero. Each index is
// read newest first by its own numbers (given in the order messages are
// stored), so a common word stops after a page instead of sorting every
// message that holds it.
func (s *Store) Search(ctx context.Context, query string, chat bridge.Recipient, limit int) ([]Message, error) {
	if limit < 1 {
		return nil, bridge.Invalid(bridge.CodeInvalidLimit, "limit must be at least 1")
	}
	match, err := MatchExpression(query)
	if err != nil {
		return nil, err
	}
	inWhere, outWhere := "", ""
	inArgs, outArgs := []any{match, limit}, []any{match, limit}
	if !chat.IsZero() {
		inWhere, outWhere = " AND i.chat = ?3", " AND m.recipient = ?3"
		inArgs, outArgs = append(inArgs, chat.String()), append(outArgs, chat.JID())
	}
	in, err := s.searchRows(ctx, `SELECT `+inboxColumns+` FROM inbox_search
		JOIN inbox i ON i.id = inbox_search.rowid WHERE inbox_search MATCH ?1`+inWhere+
		` ORDER BY inbox_search.rowid DESC LIMIT ?2`, inArgs...)
	if err != nil {
		return nil, err
	}
	out, err := s.searchRows(ctx, `SELECT `+messageLogColumns+` FROM messages_search
		JOIN messages_search_ids n ON n.number = messages_search.rowid JOIN messages m ON m.id = n.message_id
		WHERE messages_search MATCH ?1`+outWhere+` ORDER BY messages_search.rowid DESC LIMIT ?2`, outArgs...)
	if err != nil {
		return nil, err
	}
	all := slices.Concat(in, out)
	sort.SliceStable(all, func(a, b int) bool { return all[a].At.After(all[b].At) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func (s *Store) searchRows(ctx context.Context, query string, args ...any) ([]Message, error) {
	rows, err := s.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, readFailed(err)
	}
	msgs, _, err := scanMessages(rows)
	if err != nil {
		return nil, readFailed(err)
	}
	return msgs, nil
}
