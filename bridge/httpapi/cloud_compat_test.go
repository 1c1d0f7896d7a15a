package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/cloudapi"
)

// graphCall is one row of the compatibility table.
type graphCall struct {
	client, call, method, path, body, status, answer, note string
}

func readGraphCalls(t *testing.T) []graphCall {
	t.Helper()
	f, err := os.Open("../cloudapi/testdata/graph_calls.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []graphCall
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 8 {
			t.Fatalf("graph_calls.tsv: %d columns, want 8: %s", len(c), line)
		}
		if header {
			header = false
			continue
		}
		rows = append(rows, graphCall{c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]})
	}
	return rows
}

// The compatibility table (bridge/cloudapi/testdata/graph_calls.tsv): every
// Graph call that Chatwoot, Typebot, n8n's WhatsApp node and the SDKs make,
// in order, against the door, each answered as the row says. A client's
// new call is a new row.
func TestGraphCalls(t *testing.T) {
	e := newCloudEnv(t, 0)
	vars := map[string]string{
		"{phone}": cloudAccount, "{waba}": cloudapi.WABAID(cloudAccount), "{token}": testAPIKey,
		"{user}": e.ids.For(bridge.PhoneRecipient("4915100000002")), "{app}": "1234567890123456",
	}
	expand := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return s
	}
	vars["{media}"] = e.upload(t, "first.pdf", "application/pdf", []byte("%PDF-1.4 the first document"))
	for _, row := range readGraphCalls(t) {
		name := row.client + ": " + row.call
		path, token, contentType, body := expand(row.path), testAPIKey, "", ""
		kind, rest, _ := strings.Cut(row.body, ":")
		switch kind {
		case "json":
			contentType, body = "application/json", expand(rest)
		case "token":
			token = rest
		case "multipart":
			file, mimeType, _ := strings.Cut(rest, ":")
			vars["{media}"] = e.upload(t, file, mimeType, []byte("%PDF-1.4 a document"))
			continue // the upload is the call
		}
		headers := []string{"Authorization: Bearer " + token}
		if contentType != "" {
			headers = append(headers, "Content-Type: "+contentType)
		}
		var status int
		var raw string
		if strings.HasPrefix(path, "/v") && row.status != "404" {
			status, raw = call(t, row.method, e.base+path, strings.NewReader(body), headers...)
		} else {
			resp, got := e.plain(t, row.method, path, "", body, headers...)
			status, raw = resp.StatusCode, got
		}
		want := regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(expand(row.answer)), regexp.QuoteMeta("{any}"), `[^"]*`))
		if row.status != http.StatusText(0) && status != atoi(row.status) || !want.MatchString(raw) {
			t.Errorf("%s (%s %s): %d %s\n\twant %s with %s", name, row.method, path, status, raw, row.status, row.answer)
			continue
		}
		var sent struct {
			Messages []struct{ ID string } `json:"messages"`
		}
		if json.Unmarshal([]byte(raw), &sent) == nil && len(sent.Messages) == 1 {
			vars["{sent}"] = sent.Messages[0].ID
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// The user documentation lists every row of the table
// (docs/user/cloud-api-compatibility.md): a row added to the table and not
// to the page fails here.
func TestGraphCallsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/user/cloud-api-compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range readGraphCalls(t) {
		if !strings.Contains(string(doc), "| "+row.client+" | "+row.call+" | `"+row.method+" "+row.path+"`") {
			t.Errorf("docs/user/cloud-api-compatibility.md lacks the row %s: %s (%s %s)", row.client, row.call, row.method, row.path)
		}
	}
}
